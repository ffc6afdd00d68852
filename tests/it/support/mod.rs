//! The one shared harness of the integration tests: loading scenarios, running
//! seed ranges through the library, running the binary, and reading traces.
//! Every area of the `it` binary uses what it needs from here, so no helper
//! (the checkout's root, a scratch folder) is written twice.

pub mod browser;
pub mod cli;
pub mod docs;
pub mod tools;

#[allow(unused_imports)]
pub use cli::{case, run_case, Case, Stdout};
use models::scenario::{Override, Verdict};
use models::{Msg, NodeTimer, Obs, Scenario, ScenarioError};
use sim::{Outcome, Recorder, SeedRange, Sim, SituationId, Source, Summary, TraceEntry};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;

/// Threads for sweeps in tests: the output never depends on it.
pub const JOBS: usize = 2;

/// Seeds per scenario in the test profile: enough for every expectation,
/// small enough to keep the whole catalog well under a minute.
pub const TEST_BUDGET: u64 = 300;

pub type Entry = TraceEntry<Msg, Obs, NodeTimer>;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn scenario_dir() -> PathBuf {
    root().join("scenarios")
}

/// Every scenario file of the catalog, sorted.
pub fn scenario_files() -> Vec<PathBuf> {
    toml_files_in(&scenario_dir())
}

/// Every `.toml` file in `dir` (not below it), sorted.
pub fn toml_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

pub fn name_of(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// A catalog scenario with `sets` applied (`key.path=value`).
#[track_caller]
pub fn load(name: &str, sets: &[&str]) -> Scenario {
    let path = scenario_dir().join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).expect("scenario file exists");
    load_text(&path.to_string_lossy(), &text, sets)
}

/// A scenario from its text (a case written in a test), with `sets` applied.
#[track_caller]
pub fn load_text(file: &str, text: &str, sets: &[&str]) -> Scenario {
    let overrides: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse(s).expect("well-formed override"))
        .collect();
    Scenario::load_with(file, text, &overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// The error a scenario text gives on loading (it must give one).
#[track_caller]
pub fn load_error(file: &str, text: &str) -> ScenarioError {
    match Scenario::load(file, text) {
        Ok(s) => panic!("{file} loads, as {}", s.name),
        Err(e) => e,
    }
}

/// Bad input is refused with its place and a fix: each case is a text
/// appended to `base`, words the error's message must contain, and words
/// its help must contain; the error must point into the file, past line 1.
#[track_caller]
pub fn refuses(base: &str, cases: &[(&str, &str, &str)]) {
    for (tail, message, help) in cases {
        let e = load_error("bad.toml", &format!("{base}{tail}"));
        assert!(e.message.contains(message), "{tail}: {e}");
        assert!(
            e.help.as_deref().is_some_and(|h| h.contains(help)),
            "{tail}: {e}"
        );
        assert!(e.line > 1, "{tail}: the error points into the file: {e}");
    }
}

/// A scenario file anywhere (relative to the checkout), with `sets` applied;
/// its relative paths (an external program) point into its folder.
#[track_caller]
pub fn load_path(path: &str, sets: &[&str]) -> Scenario {
    let path = root().join(path);
    let text = std::fs::read_to_string(&path).expect("scenario file exists");
    load_text(&path.to_string_lossy(), &text, sets)
}

/// Attempts per operation over `seeds` seeds of `s`, and the text of its
/// design warning `id` if it gives one: where a rule and the runs must agree.
pub fn attempts_per_op_and_warning(s: &Scenario, seeds: u64, id: &str) -> (u64, Option<String>) {
    let sum = sweep(s, seeds);
    let count = |name| sum.tally.counter(name).expect("a ledger counter")[0];
    let per_op = count(models::core::ledger::counter::ATTEMPTS)
        / count(models::core::ledger::counter::OPERATIONS);
    let warning = s
        .design_warnings
        .iter()
        .find(|h| h.id == id)
        .map(|h| h.text.clone());
    (per_op, warning)
}

/// Seeds `0..seeds` of `s`, or as many schedules of its coverage-guided
/// search when the scenario asks for one (`run.strategy`): the file's own
/// search ([`Scenario::search`]), nothing after it. A file whose seeds
/// miss what `check`'s searches find is judged by [`judged`].
pub fn sweep(s: &Scenario, seeds: u64) -> Summary {
    let stop = AtomicBool::new(false);
    s.search(
        SeedRange {
            start: 0,
            end: seeds.into(),
        },
        JOBS,
        &stop,
    )
}

/// The summary `check` of `s` judges its `[expect]` by over seeds
/// `0..seeds`: [`sweep`]'s, and when `check` runs its portfolio and no seed
/// failed, what its two searches found and reached
/// (`idemsim::testing::shown::judged`).
pub fn judged(s: &Scenario, seeds: u64) -> Summary {
    let stop = AtomicBool::new(false);
    let range = SeedRange {
        start: 0,
        end: seeds.into(),
    };
    idemsim::testing::shown::judged(s, &s.file, range, JOBS, &stop)
        .unwrap_or_else(|e| panic!("{}: bad input: {e}", s.file))
}

/// The one data-driven check: a scenario (with overrides) gives `verdict`
/// (and `invariant`, for a violation) within `seeds`.
#[track_caller]
pub fn check(name: &str, sets: &[&str], seeds: u64, verdict: Verdict, invariant: Option<&str>) {
    check_scenario(
        &load(name, sets),
        seeds,
        verdict,
        invariant,
        &format!("{name} {sets:?}"),
    );
}

#[track_caller]
pub fn check_scenario(
    s: &Scenario,
    seeds: u64,
    verdict: Verdict,
    invariant: Option<&str>,
    what: &str,
) {
    let sum = sweep(s, seeds);
    assert_eq!(
        sum.tally.panics, 0,
        "{what}: a model panicked: {:?}",
        sum.first_failure
    );
    let found = s.judge(&sum);
    assert_eq!(
        (found.found, found.invariant),
        (verdict, invariant),
        "{what} over {seeds} seeds: {:?}",
        sum.first_failure.map(|f| f.outcome)
    );
}

/// The trace and outcome of one seed of `s`.
pub fn trace_of(s: &Scenario, seed: u64) -> (Vec<Entry>, Outcome) {
    let mut sim = Sim::new(&s.system);
    let mut rec = Recorder::default();
    let r = sim.run(
        &s.system,
        Source::Seed {
            seed,
            record: false,
        },
        &mut rec,
    );
    (rec.entries, r.outcome)
}

/// The trace of the lowest failing seed of a catalog scenario.
#[track_caller]
pub fn failing_trace(name: &str) -> (Vec<Entry>, Outcome) {
    let s = load(name, &[]);
    assert_eq!(
        s.strategy,
        models::scenario::Strategy::Seeds,
        "{name}: a coverage-guided failure has no seed"
    );
    let sum = sweep(&s, TEST_BUDGET);
    let seed = sum.first_failure.expect("the scenario fails").seed;
    trace_of(&s, seed)
}

/// Whether the trace reports `situation`.
pub fn reached(entries: &[Entry], situation: SituationId) -> bool {
    entries
        .iter()
        .any(|e| matches!(e.kind, sim::TraceKind::Reached { situation: s, .. } if s == situation))
}

/// The `idemsim` binary of this build. It belongs to the `idemsim-cli`
/// package, so cargo does not set `CARGO_BIN_EXE_idemsim` for these tests:
/// the first call builds it (a no-op when it is fresh) with the profile the
/// tests were built with, into the same target folder.
///
/// The build names this test target (`--test it`) beside the binary so that
/// cargo resolves features as `cargo test` did, with the dev-dependencies:
/// a plain `cargo build -p idemsim-cli` resolves without them (once_cell
/// without its default feature, so tempfile, proptest and the idemsim
/// library differ), and compiled the library a second time while every
/// test that runs the binary waited. The `it` target itself is fresh, as
/// it is the binary running this.
pub fn idemsim_bin() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let deps = std::env::current_exe().expect("the test binary's path");
        let profile_dir = deps
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>/deps");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("release") => "release",
            _ => "test",
        };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "-p",
                "idemsim-cli",
                "-p",
                "idemsim",
                "--bin",
                "idemsim",
                "--test",
                "it",
                "--profile",
                profile,
            ])
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the idemsim binary failed");
        profile_dir.join(format!("idemsim{}", std::env::consts::EXE_SUFFIX))
    })
}

/// Runs the binary in the checkout.
pub fn idemsim(args: &[&str]) -> Output {
    Command::new(idemsim_bin())
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs")
}

/// Runs the binary in `dir` with extra environment variables: what a user's
/// own project runs (`ci_recipe`).
pub fn idemsim_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(idemsim_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("IDEMSIM_REGRESSIONS")
        .env_remove("IDEMSIM_SCENARIOS")
        .envs(env.iter().copied())
        .output()
        .expect("the binary runs")
}

/// [`run`] in `dir`: checks the exit code; returns stdout and stderr.
#[track_caller]
pub fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)], code: i32) -> (String, String) {
    let out = idemsim_in(dir, args, env);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(code),
        "idemsim {args:?} in {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        dir.display()
    );
    (stdout, stderr)
}

/// A fresh, empty folder for one test's files: `name` under the target
/// directory's scratch space (`CARGO_TARGET_TMPDIR`), emptied first so a
/// rerun starts clean. The tests of the binary run in parallel, so each
/// names its own folder, `area/what` (`"html/report"`).
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the binary in the checkout and checks its exit code (and, through
/// [`run_case`], that it neither panicked nor hung); returns stdout and stderr.
#[track_caller]
pub fn run(args: &[&str], code: i32) -> (String, String) {
    run_case(&case("idemsim", args).code(code))
}

/// Stdout of a command that must give an outcome (holds, violation or
/// inconclusive: exit 0, 1 or 3), never bad input or a crash.
#[track_caller]
pub fn outcome(args: &[&str]) -> String {
    let out = idemsim(args);
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "idemsim {args:?} exited with {:?}: {}",
        out.status.code(),
        text(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The `data` of the last `summary` line of JSON Lines output.
#[track_caller]
pub fn summary(jsonl: &str) -> serde_json::Value {
    let line = jsonl
        .lines()
        .rev()
        .find(|l| l.contains("\"type\":\"summary\""))
        .unwrap_or_else(|| panic!("a summary line in {jsonl}"));
    let v: serde_json::Value = serde_json::from_str(line).expect("valid JSON");
    v["data"].clone()
}

/// Runs the binary in a process group of its own, as a shell runs a
/// foreground job, and sends SIGINT to the whole group `after` it caught
/// SIGINT (Ctrl-C at a terminal reaches every process of the group).
/// Returns the exit code, stdout and stderr.
#[cfg(unix)]
pub fn interrupt_group(args: &[&str], after: std::time::Duration) -> (Option<i32>, String, String) {
    use std::os::unix::process::CommandExt;
    let child = Command::new(idemsim_bin())
        .args(args)
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("the binary runs");
    let pid = child.id();
    cli::wait_for_sigint_handler(pid);
    std::thread::sleep(after);
    let sent = Command::new("kill")
        .args(["-INT", "--", &format!("-{pid}")])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let out = child.wait_with_output().expect("the binary ends");
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// `f` of each item, on up to `at_most` threads (as many as there are
/// cores, two at least), returned in the items' order: a test whose work is
/// many independent runs finishes sooner and reads the same, its first
/// failure in order checked by the caller. A panic in `f` fails the test.
pub fn par_map<T: Sync, R: Send>(
    items: &[T],
    at_most: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(2, std::num::NonZeroUsize::get)
        .clamp(2, at_most.max(2));
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut ran = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break ran };
                        ran.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|d| d.0);
    assert_eq!(done.len(), items.len(), "every item ran");
    done.into_iter().map(|d| d.1).collect()
}
