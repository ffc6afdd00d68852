//! Services in any language: a user's program plays an actor's role, speaking
//! JSON Lines on its stdin and stdout (docs/protocol.md).
//!
//! idemsim owns time and the network: the program gets `start`, `msg` and
//! `timer` lines and answers each with what it does (`send`, `set_timer`,
//! `cancel_timer`, `effect`, `store`, `log`) and a closing `done`. Each
//! handler is one atomic step of an ordinary [`sim::Actor`], so crashes fall
//! between handlers, the ledger judges the effects the program reports, and
//! replay, shrinking and the determinism check work unchanged.
//!
//! This folder knows no model: a model gives a program a role by
//! implementing [`Role`] (the messaging consumer's is in
//! `messaging/program.rs`). It is the only simulated code that does I/O, and
//! only [`process`] touches the process: writing a line and waiting, with a
//! wall-clock bound, for the answer. The built-in actors never reach it.

mod actor;
pub mod keys;
mod names;
pub mod process;
pub mod protocol;
mod session;

pub use actor::{
    CheckMode, External, ExternalConfig, ExternalState, ExternalStorage, ExternalTimer, Role,
    MAX_STORED_BYTES, MAX_STORED_KEYS, MAX_TIMERS,
};
pub use names::{MAX_TIMER_NAMES, MAX_TIMER_NAME_BYTES};
pub use protocol::{Out, PayloadError, MAX_DRAW_BOUND, PROTOCOL};
pub use session::{Exchange, Program, Session, KEEP_STATE, MAX_LINES_PER_HANDLER, STATE_DIR_VAR};

use crate::core::input::{invalid, Invalid, Seg};
use std::path::{Path, PathBuf};

/// How a protocol error's panic message starts: the command line tells it
/// from a bug in idemsim by this, and reports it as bad input (exit 2).
pub const PROTOCOL_ERROR: &str = "protocol error: ";

/// The report of a protocol error, if `panic` is one.
pub fn protocol_error(panic: &str) -> Option<&str> {
    panic.strip_prefix(PROTOCOL_ERROR)
}

/// Wall-clock milliseconds a handler may take by default.
pub const DEFAULT_HANDLER_TIMEOUT_MS: u64 = 10_000;

/// Script extensions: an argument ending in one names a file.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "py", "js", "mjs", "cjs", "ts", "rb", "pl", "sh", "php", "lua", "jar", "exs", "r", "jl",
];

/// Whether a program argument names a file that must exist: a path with a
/// `/`, or a script name (`consumer.py`); never a flag or a URL.
fn names_a_file(arg: &str) -> bool {
    if arg.starts_with('-') || arg.contains("://") {
        return false;
    }
    arg.contains('/')
        || Path::new(arg)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Where `command` is found on `PATH`: the first executable file of that
/// name, as a shell finds it (it skips one that is not executable), or the
/// first such file that is not executable, or nothing.
fn on_path(command: &str) -> Found {
    let mut found = Found::Nothing;
    let Some(paths) = std::env::var_os("PATH") else {
        return found;
    };
    for d in std::env::split_paths(&paths) {
        let p = d.join(command);
        if !p.is_file() {
            continue;
        }
        if is_executable(&p) {
            return Found::Executable;
        }
        if found == Found::Nothing {
            found = Found::NotExecutable(p);
        }
    }
    found
}

#[derive(Debug, PartialEq, Eq)]
enum Found {
    Executable,
    NotExecutable(PathBuf),
    Nothing,
}

/// How a scenario writes `program`: shown in the fixes of its errors.
const PROGRAM_EXAMPLE: &str = "program = [\"python3\", \"consumer.py\", \"--dedup=store\"]";

/// Checks a scenario's `program` at load time: the command exists (on
/// `PATH`, or relative to the scenario's folder when it has a `/`), and so
/// does every argument that names a file. `at` is where the array is written.
pub fn resolve_program(
    argv: &[String],
    dir: Option<&Path>,
    at: &[Seg],
) -> Result<Program, Invalid> {
    let Some(command) = argv.first().filter(|c| !c.trim().is_empty()) else {
        return Err(invalid(
            at.to_vec(),
            "the program is empty",
            format!("give the command and its arguments: {PROGRAM_EXAMPLE}"),
        ));
    };
    let dir = scenario_dir(dir, at)?;
    if command.contains('/') {
        check_relative_command(command, &dir, at)?;
    } else {
        check_command_on_path(command, at)?;
    }
    for (i, arg) in argv.iter().enumerate().skip(1) {
        if names_a_file(arg) && !dir.join(arg).exists() {
            return Err(invalid(
                at_index(at, i),
                format!("{arg} does not exist in {}", dir.display()),
                "paths in program are relative to the scenario file's folder",
            ));
        }
    }
    Ok(Program {
        argv: argv.to_vec(),
        dir,
        state_folder: false,
    })
}

/// Where the `i`th item of the array at `at` is written.
fn at_index(at: &[Seg], i: usize) -> Vec<Seg> {
    let mut p = at.to_vec();
    p.push(Seg::Index(i));
    p
}

/// The folder a program runs in: its scenario file's, made absolute so
/// the process finds it wherever idemsim was started.
fn scenario_dir(dir: Option<&Path>, at: &[Seg]) -> Result<PathBuf, Invalid> {
    let Some(dir) = dir else {
        return Err(invalid(
            at.to_vec(),
            "a program runs in its scenario file's folder, and this scenario is no file",
            "put the scenario in a .toml file beside the program and give its path",
        ));
    };
    std::fs::canonicalize(dir).map_err(|e| {
        invalid(
            at.to_vec(),
            format!(
                "the scenario's folder {} cannot be used: {e}",
                dir.display()
            ),
            "run idemsim where the scenario file's folder exists",
        )
    })
}

/// A command with a `/`: an executable file relative to the scenario's folder.
fn check_relative_command(command: &str, dir: &Path, at: &[Seg]) -> Result<(), Invalid> {
    let p = dir.join(command);
    if p.is_dir() {
        return Err(invalid(
            at_index(at, 0),
            format!("the program {command} is a folder in {}", dir.display()),
            format!(
                "name the file to run in it, or its interpreter and the file: {PROGRAM_EXAMPLE}"
            ),
        ));
    }
    if !p.is_file() {
        return Err(invalid(
            at_index(at, 0),
            format!("the program {command} does not exist in {}", dir.display()),
            "paths in program are relative to the scenario file's folder",
        ));
    }
    if !is_executable(&p) {
        return Err(invalid(
            at_index(at, 0),
            format!("{command} is not executable"),
            format!("chmod +x {command}, or run it through its interpreter: {PROGRAM_EXAMPLE}"),
        ));
    }
    Ok(())
}

/// A command without a `/`: an executable found on `PATH`.
fn check_command_on_path(command: &str, at: &[Seg]) -> Result<(), Invalid> {
    match on_path(command) {
        Found::Executable => Ok(()),
        Found::NotExecutable(p) => Err(invalid(
            at_index(at, 0),
            format!(
                "the command `{command}` on PATH ({}) is not executable",
                p.display()
            ),
            format!(
                "chmod +x {}, or run it through its interpreter: {PROGRAM_EXAMPLE}",
                p.display()
            ),
        )),
        Found::Nothing => Err(invalid(
            at_index(at, 0),
            format!("no command `{command}` on PATH"),
            format!(
                "install it, or give a path relative to the scenario file's folder (./{command})"
            ),
        )),
    }
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &Path) -> bool {
    true
}

/// Where two runs of the same seed first differ: the actor, the handler's
/// index in its transcript, and both answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The actor whose program answered differently.
    pub actor: String,
    /// The handler's index in its transcript.
    pub handler: usize,
    /// The virtual time of that handler.
    pub now_us: u64,
    /// The first run's exchange (none: that run had ended).
    pub first: Option<Exchange>,
    /// The second run's exchange (none: that run had ended).
    pub second: Option<Exchange>,
}

/// The first difference between two transcripts of one actor, if any.
pub fn first_difference(actor: &str, a: &[Exchange], b: &[Exchange]) -> Option<Difference> {
    let n = a.len().max(b.len());
    (0..n).find_map(|i| {
        let (x, y) = (a.get(i), b.get(i));
        let same = matches!((x, y), (Some(x), Some(y)) if x.same(y));
        (!same).then(|| Difference {
            actor: actor.to_string(),
            handler: i,
            now_us: x.or(y).map_or(0, |e| e.now_us),
            first: x.cloned(),
            second: y.cloned(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_arguments_are_told_from_flags_and_words() {
        assert!(names_a_file("consumer.py"));
        assert!(names_a_file("lib/consumer"));
        assert!(!names_a_file("--dedup=store"));
        assert!(!names_a_file("--config=a/b.py"));
        assert!(!names_a_file("http://example.com/x.py"));
        assert!(!names_a_file("store"));
        assert!(!names_a_file("1.5"));
    }

    #[test]
    fn a_missing_program_is_refused_where_it_is_written() {
        let at = vec![Seg::Key("consumer"), Seg::Key("program")];
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let e = resolve_program(&["no-such-command-xyz".into()], Some(dir), &at).unwrap_err();
        assert!(e.message.contains("on PATH"), "{e:?}");
        assert_eq!(e.path.last(), Some(&Seg::Index(0)));
        let e = resolve_program(&["sh".into(), "missing.py".into()], Some(dir), &at).unwrap_err();
        assert!(e.message.contains("missing.py does not exist"), "{e:?}");
        assert_eq!(e.path.last(), Some(&Seg::Index(1)));
        let e = resolve_program(&[], Some(dir), &at).unwrap_err();
        assert!(e.message.contains("empty"), "{e:?}");
        let e = resolve_program(&["sh".into()], None, &at).unwrap_err();
        assert!(e.message.contains("no file"), "{e:?}");
        let ok = resolve_program(&["sh".into(), "Cargo.toml".into()], Some(dir), &at).unwrap();
        assert!(ok.dir.is_absolute());
    }

    #[test]
    fn a_relative_command_must_be_an_executable_file() {
        let at = vec![Seg::Key("program")];
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let e = check_relative_command("./src", dir, &at).unwrap_err();
        assert!(e.message.contains("is a folder"), "{e:?}");
        let e = check_relative_command("./nope.py", dir, &at).unwrap_err();
        assert!(e.message.contains("does not exist"), "{e:?}");
        let e = check_relative_command("./Cargo.toml", dir, &at).unwrap_err();
        assert_eq!(e.message, "./Cargo.toml is not executable");
        assert_eq!(e.path, vec![Seg::Key("program"), Seg::Index(0)]);
    }

    #[test]
    fn the_first_differing_handler_is_named() {
        let ex = |i: &str, o: &str| Exchange {
            now_us: 7,
            input: i.into(),
            output: vec![o.into()],
            written: vec![o.into(), format!("log {i}")],
        };
        let a = vec![ex("s", "x"), ex("m", "y")];
        let b = vec![ex("s", "x"), ex("m", "z")];
        let d = first_difference("c", &a, &b).unwrap();
        assert_eq!(d.handler, 1);
        // Log lines are no part of the answer.
        let mut logged = a.clone();
        logged[1].written.push("another log".into());
        assert!(first_difference("c", &a, &logged).is_none());
        assert!(first_difference("c", &a, &a).is_none());
        let d = first_difference("c", &a, &a[..1]).unwrap();
        assert_eq!((d.handler, d.second), (1, None));
    }
}
