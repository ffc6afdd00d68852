//! The one place in the simulated code that does I/O: a user's program as a
//! child process, one JSON object per line on its stdin and stdout.
//!
//! Everything else in `sim` and `models` is a pure function of its inputs;
//! here a handler writes a line to a real process and waits for its answer.
//! Waiting is bounded in wall time (the program's I/O is not simulated, so
//! a hung program must not hang idemsim), and nothing read from the clock
//! reaches a run: the run sees only the lines the program wrote.
//!
//! The handler's thread reads the program's stdout itself, so a round trip
//! wakes two processes and no third thread (a reader thread and a channel
//! cost a third wake-up per answer, a quarter of the time on a busy machine).
//! std has no read with a time-out on a pipe; a watchdog thread per process
//! looks at the deadline of the answer being read a few times a second and
//! kills a program that is past it, which ends the blocked read. It kills
//! the program's whole process group: a child the program started (a shell
//! script's `sleep`, a tool it runs) holds the same stdout, and the read
//! would wait for that child to end, not for the time-out.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The longest line a program may write; a longer one is a protocol error,
/// not a reason to grow memory without end.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Lines of the program's stderr kept for error reports.
const STDERR_TAIL: usize = 20;

/// How often the watchdog looks at the deadline: the time-out's precision.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// Set on Ctrl-C or SIGTERM ([`interrupt`]): the watchdogs kill every
/// program being waited for, so a hung one cannot hold idemsim.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Programs killed because of [`interrupt`]: their runs are no results.
static KILLED_BY_INTERRUPT: AtomicU64 = AtomicU64::new(0);

/// The process groups of the programs alive, for [`kill_all`]: a slot per
/// program, 0 when free. Atomics alone, so a signal handler may read them.
static LIVE: [AtomicU32; 64] = [const { AtomicU32::new(0) }; 64];

/// Asks every watchdog to kill its program if idemsim is waiting for it
/// (Ctrl-C, SIGTERM). Only stores a flag: safe in a signal handler.
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// How many programs were killed because of [`interrupt`] (each broke off
/// the run it served).
pub fn killed_by_interrupt() -> u64 {
    KILLED_BY_INTERRUPT.load(Ordering::SeqCst)
}

/// Kills every program alive with its process group, at once: for a
/// second Ctrl-C, which quits without waiting. Atomics and kill(2) alone,
/// so a signal handler may call it.
pub fn kill_all() {
    for slot in &LIVE {
        let pid = slot.load(Ordering::SeqCst);
        if pid != 0 {
            kill_group(pid);
        }
    }
}

fn register(pid: u32) -> Option<&'static AtomicU32> {
    LIVE.iter().find(|s| {
        s.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

/// Why a line could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// No complete line before the deadline; the bytes of a line begun but
    /// not ended with a newline, if any (lossy UTF-8, for the message).
    Timeout(String),
    /// The program closed its stdout or exited; its exit status if it
    /// ended, and the bytes of a last line it left without a newline.
    Closed(Option<String>, String),
    /// The line was not UTF-8 or too long.
    Bad(String),
}

/// What the watchdog and the handler's thread share.
#[derive(Default)]
struct Watch {
    /// Nanoseconds after [`epoch`] by which the line being read must come; 0: none.
    deadline_ns: AtomicU64,
    /// The watchdog killed the program for being late.
    fired: AtomicBool,
    /// The process is gone; the watchdog ends.
    over: AtomicBool,
    /// The child was waited for: its id may name another process by now.
    reaped: AtomicBool,
    /// Its slot in [`LIVE`], emptied before the child is waited for.
    slot: OnceLock<&'static AtomicU32>,
}

/// A running program.
pub struct Process {
    child: Arc<Mutex<Child>>,
    /// The child's id, which is also its process group's (see [`kill_group`]).
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    watch: Arc<Watch>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Process {
    /// Starts `argv` in `dir` with piped stdin, stdout and stderr, and
    /// `env` (a variable and the folder it names) set if given.
    pub fn spawn(
        argv: &[String],
        dir: &Path,
        env: Option<(&str, &Path)>,
    ) -> Result<Process, String> {
        let (program, args) = argv.split_first().ok_or("the program is empty")?;
        epoch(); // before any deadline is taken
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(dir)
            .env("IDEMSIM_PROTOCOL", super::protocol::PROTOCOL.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some((name, folder)) = env {
            command.env(name, folder);
        }
        // A group of its own: Ctrl-C at the terminal reaches idemsim alone,
        // which stops the sweep and ends the program; otherwise the program
        // would die mid-answer and its death read as a protocol error.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start `{program}` in {}: {e}", dir.display()))?;
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let stderr = child.stderr.take().expect("stderr is piped");
        let stdin = child.stdin.take();
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let keep = Arc::clone(&tail);
        // Drains stderr, so a chatty program never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut t = lock(&keep);
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let pid = child.id();
        let child = Arc::new(Mutex::new(child));
        let watch = Arc::new(Watch::default());
        if let Some(slot) = register(pid) {
            let _ = watch.slot.set(slot);
        }
        let (c, w) = (Arc::clone(&child), Arc::clone(&watch));
        std::thread::spawn(move || {
            while !w.over.load(Ordering::Relaxed) {
                std::thread::sleep(WATCH_EVERY);
                let d = w.deadline_ns.load(Ordering::Relaxed);
                let interrupted = d != 0 && INTERRUPTED.load(Ordering::SeqCst);
                if d != 0 && (since_epoch_ns() > d || interrupted) {
                    if interrupted {
                        KILLED_BY_INTERRUPT.fetch_add(1, Ordering::SeqCst);
                    }
                    w.fired.store(true, Ordering::Relaxed);
                    let mut child = lock(&c);
                    if !w.reaped.load(Ordering::Relaxed) {
                        kill_group(pid);
                    }
                    let _ = child.kill();
                    break;
                }
            }
        });
        Ok(Process {
            child,
            pid,
            stdin,
            stdout,
            stderr: tail,
            watch,
        })
    }

    /// Writes one line (a newline is added) and flushes it, by `deadline`:
    /// a line longer than the pipe holds waits for the program to read it,
    /// and a program that does not read must not hold idemsim.
    pub fn write_line(&mut self, line: &str, deadline: Instant) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("its stdin is closed")?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.watch
            .deadline_ns
            .store(deadline_ns(deadline), Ordering::Relaxed);
        let written = stdin.write_all(&bytes).and_then(|()| stdin.flush());
        self.watch.deadline_ns.store(0, Ordering::Relaxed);
        written.map_err(|e| format!("writing to its stdin failed: {e}"))
    }

    /// The watchdog killed the program for being late.
    pub fn timed_out(&self) -> bool {
        self.watch.fired.load(Ordering::Relaxed)
    }

    /// The next line, waiting until `deadline` at most.
    pub fn read_line(&mut self, deadline: Instant) -> Result<String, ReadError> {
        self.watch
            .deadline_ns
            .store(deadline_ns(deadline), Ordering::Relaxed);
        let mut buf = Vec::new();
        let read = (&mut self.stdout)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf);
        self.watch.deadline_ns.store(0, Ordering::Relaxed);
        let timed_out = || self.watch.fired.load(Ordering::Relaxed);
        match read {
            // End of file, or a partial line cut by the end: the program is
            // gone, killed by the watchdog or on its own.
            Ok(_) if !buf.ends_with(b"\n") && buf.len() <= MAX_LINE_BYTES => {
                if timed_out() {
                    Err(ReadError::Timeout(
                        String::from_utf8_lossy(&buf).into_owned(),
                    ))
                } else {
                    Err(ReadError::Closed(
                        self.exit_status(),
                        String::from_utf8_lossy(&buf).into_owned(),
                    ))
                }
            }
            Ok(_) if buf.len() > MAX_LINE_BYTES && !buf.ends_with(b"\n") => Err(ReadError::Bad(
                format!("a line longer than {MAX_LINE_BYTES} bytes"),
            )),
            Ok(_) => {
                while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    buf.pop();
                }
                String::from_utf8(buf)
                    .map_err(|_| ReadError::Bad("a line that is not UTF-8 text".into()))
            }
            Err(_) if timed_out() => Err(ReadError::Timeout(String::new())),
            Err(e) => Err(ReadError::Bad(format!("reading its stdout failed: {e}"))),
        }
    }

    /// A line the program wrote without being asked, if its bytes already
    /// came in with the ones read (a second `done` written with the first,
    /// a line before its first input). A line that comes later still is
    /// read as part of the next answer.
    pub fn stray_line(&mut self) -> Option<String> {
        if self.stdout.buffer().is_empty() {
            return None;
        }
        Some(
            self.read_line(now() + Duration::from_secs(1))
                .unwrap_or_else(|_| "(part of a line)".into()),
        )
    }

    /// How the program ended, if it did within a short grace period.
    fn exit_status(&mut self) -> Option<String> {
        for _ in 0..50 {
            if let Ok(Some(status)) = lock(&self.child).try_wait() {
                // Reaped: its id may be another process's from now on.
                if let Some(slot) = self.watch.slot.get() {
                    slot.store(0, Ordering::SeqCst);
                }
                self.watch.reaped.store(true, Ordering::Relaxed);
                return Some(status.to_string());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }

    /// The last lines the program wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        // Give the stderr thread a moment to catch up with a program that just died.
        std::thread::sleep(Duration::from_millis(20));
        lock(&self.stderr).iter().cloned().collect()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // Closing stdin lets a well-behaved program end its loop; the kill
        // makes sure, and the wait reaps it so no zombie stays behind.
        self.watch.over.store(true, Ordering::Relaxed);
        drop(self.stdin.take());
        let mut child = lock(&self.child);
        // The children it started too, so none keeps running, or keeps its pipes open.
        if !self.watch.reaped.load(Ordering::Relaxed) {
            kill_group(self.pid);
        }
        let _ = child.kill();
        if let Some(slot) = self.watch.slot.get() {
            slot.store(0, Ordering::SeqCst);
        }
        let _ = child.wait();
    }
}

/// Kills the process group `pid` leads: the program and every process it
/// started (they inherit its group, set at spawn). Only while the child is
/// not yet waited for: until then its id stays its own, even as a zombie,
/// and callers hold the child's lock, so no wait comes in between.
#[cfg(unix)]
fn kill_group(pid: u32) {
    extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    const SIGKILL: i32 = 9;
    let Ok(pid) = i32::try_from(pid) else { return };
    if pid > 0 {
        // SAFETY: kill(2) takes two integers and reads or writes no memory
        // of this process; a negative pid names a process group.
        unsafe {
            kill(-pid, SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_: u32) {}

/// Wall-clock time, only to bound how long a program may take to answer:
/// the program's I/O is real, and nothing read here flows into a run.
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
}

/// The instant deadlines are counted from, so the watchdog can share them
/// as one atomic number.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(now)
}

/// `deadline` as the watchdog reads it: never 0, which means none.
fn deadline_ns(deadline: Instant) -> u64 {
    u64::try_from(deadline.saturating_duration_since(epoch()).as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

fn since_epoch_ns() -> u64 {
    u64::try_from(now().saturating_duration_since(epoch()).as_nanos()).unwrap_or(u64::MAX)
}
