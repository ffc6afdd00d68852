//! Running the binary as a user or a script would: one [`Case`] per command
//! line, with the exit code and the words it must produce. [`run_case`] also
//! fails on a panic, on a hang, and on an exit-2 message without a fix.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// What to do with the child's stdout.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stdout {
    Read,
    /// Closed before the child writes: every write meets a closed pipe.
    ClosedAtOnce,
    /// Closed after the first line was read.
    ClosedAfterOneLine,
}

pub struct Case {
    what: &'static str,
    pub args: Vec<String>,
    env: Vec<(&'static str, String)>,
    cwd: PathBuf,
    stdout: Stdout,
    /// Send this signal (`INT` for Ctrl-C, or `TERM`) this long after the
    /// handler is installed.
    interrupt_after: Option<(Duration, &'static str)>,
    code: i32,
    out_has: Vec<String>,
    out_lacks: Vec<String>,
    err_has: Vec<String>,
}

pub fn case(what: &'static str, args: &[&str]) -> Case {
    Case {
        what,
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
        cwd: super::root().to_path_buf(),
        stdout: Stdout::Read,
        interrupt_after: None,
        code: 0,
        out_has: Vec::new(),
        out_lacks: Vec::new(),
        err_has: Vec::new(),
    }
}

impl Case {
    pub fn code(mut self, c: i32) -> Self {
        self.code = c;
        self
    }
    pub fn out(mut self, s: &str) -> Self {
        self.out_has.push(s.to_string());
        self
    }
    pub fn not_out(mut self, s: &str) -> Self {
        self.out_lacks.push(s.to_string());
        self
    }
    pub fn err(mut self, s: &str) -> Self {
        self.err_has.push(s.to_string());
        self
    }
    pub fn env(mut self, k: &'static str, v: &str) -> Self {
        self.env.push((k, v.to_string()));
        self
    }
    pub fn cwd(mut self, dir: &Path) -> Self {
        self.cwd = dir.to_path_buf();
        self
    }
    pub fn stdout(mut self, s: Stdout) -> Self {
        self.stdout = s;
        self
    }
    pub fn interrupt(mut self, after: Duration) -> Self {
        self.interrupt_after = Some((after, "-INT"));
        self
    }
    /// As [`Case::interrupt`], with SIGTERM, as a service manager stops a job.
    pub fn terminate(mut self, after: Duration) -> Self {
        self.interrupt_after = Some((after, "-TERM"));
        self
    }
}

/// Longest any case may run before it counts as a hang.
const HANG: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(20);

/// Waits until the process catches SIGINT (Linux shows it in /proc), so the
/// signal is not sent before the handler is installed, however slow the
/// machine; without /proc (not Linux) it gives the process time instead.
pub fn wait_for_sigint_handler(pid: u32) {
    let status = format!("/proc/{pid}/status");
    for _ in 0..600 {
        let caught = std::fs::read_to_string(&status).ok().and_then(|s| {
            let mask = s.lines().find(|l| l.starts_with("SigCgt:"))?;
            u64::from_str_radix(mask.split_whitespace().nth(1)?, 16).ok()
        });
        match caught {
            Some(mask) if mask & (1 << 1) != 0 => return,
            None if !Path::new("/proc/self/status").exists() => break,
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    std::thread::sleep(Duration::from_millis(1500));
}

/// Runs one case and checks everything it promises; returns (stdout, stderr).
#[track_caller]
pub fn run_case(c: &Case) -> (String, String) {
    let mut cmd = Command::new(super::idemsim_bin());
    cmd.args(&c.args)
        .current_dir(&c.cwd)
        .env_remove("IDEMSIM_SCENARIOS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("idemsim starts");
    let mut out_pipe = child.stdout.take().expect("piped");
    let mut err_pipe = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        s
    });
    let stdout_mode = c.stdout;
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        match stdout_mode {
            Stdout::Read => {
                let _ = out_pipe.read_to_end(&mut s);
            }
            Stdout::ClosedAtOnce => drop(out_pipe),
            Stdout::ClosedAfterOneLine => {
                let mut byte = [0u8; 1];
                while out_pipe.read(&mut byte).unwrap_or(0) == 1 {
                    s.push(byte[0]);
                    if byte[0] == b'\n' {
                        break;
                    }
                }
                drop(out_pipe);
            }
        }
        s
    });
    if let Some((after, signal)) = c.interrupt_after {
        wait_for_sigint_handler(child.id());
        std::thread::sleep(after);
        let ok = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(ok.success());
    }
    // Counted in polls rather than read from a clock (clippy.toml keeps clocks out).
    let mut waited = Duration::ZERO;
    let status = loop {
        if let Some(st) = child.try_wait().expect("waitable") {
            break st;
        }
        waited += POLL;
        if waited > HANG {
            let _ = child.kill();
            panic!(
                "{}: idemsim {:?} hangs (killed after {HANG:?})",
                c.what, c.args
            );
        }
        std::thread::sleep(POLL);
    };
    let out = String::from_utf8_lossy(&out_reader.join().expect("reader")).into_owned();
    let err = String::from_utf8_lossy(&err_reader.join().expect("reader")).into_owned();
    let ctx = format!(
        "{}: idemsim {}\nexit: {:?}\nstdout:\n{out}\nstderr:\n{err}",
        c.what,
        c.args.join(" "),
        status.code()
    );
    assert!(!err.contains("panicked"), "a panic\n{ctx}");
    assert_eq!(status.code(), Some(c.code), "exit code\n{ctx}");
    for s in &c.out_has {
        assert!(out.contains(s.as_str()), "stdout lacks `{s}`\n{ctx}");
    }
    for s in &c.out_lacks {
        assert!(!out.contains(s.as_str()), "stdout has `{s}`\n{ctx}");
    }
    for s in &c.err_has {
        assert!(err.contains(s.as_str()), "stderr lacks `{s}`\n{ctx}");
    }
    if c.code == 2 {
        assert!(err.starts_with("error: "), "an exit-2 message\n{ctx}");
        // Ours say `help: ...`; clap's own end with "try '--help'".
        assert!(
            err.contains("\nhelp: ") || err.contains("try '--help'"),
            "a fix\n{ctx}"
        );
    }
    (out, err)
}
