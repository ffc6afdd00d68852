//! The one place in the simulated code that does I/O: a user's program as a
//! child process, one JSON object per line on its stdin and stdout.
//!
//! Everything else in `sim` and `models` is a pure function of its inputs;
//! here a handler writes a line to a real process and waits for its answer.
//! Waiting is bounded in wall time (the program's I/O is not simulated, so
//! a hung program must not hang idemsim), and nothing read from the clock
//! reaches a run: the run sees only the lines the program wrote.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest line a program may write; a longer one is a protocol error,
/// not a reason to grow memory without end.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Lines of the program's stderr kept for error reports.
const STDERR_TAIL: usize = 20;

/// Why a line could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// No complete line within the time left.
    Timeout,
    /// The program closed its stdout or exited; its exit status if it ended.
    Closed(Option<String>),
    /// The line was not UTF-8 or too long.
    Bad(String),
}

/// A running program.
pub struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Result<String, String>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Process {
    /// Starts `argv` in `dir` with piped stdin, stdout and stderr.
    pub fn spawn(argv: &[String], dir: &Path) -> Result<Process, String> {
        let (program, args) = argv.split_first().ok_or("the program is empty")?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .env("IDEMSIM_PROTOCOL", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{program}` in {}: {e}", dir.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = mpsc::channel();
        // A reader thread per stream: std has no read with a timeout on a
        // pipe, but a channel has; the threads end when the process does.
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                let read = (&mut r)
                    .take(MAX_LINE_BYTES as u64 + 1)
                    .read_until(b'\n', &mut buf);
                match read {
                    Ok(0) => break,
                    Ok(_) if buf.len() > MAX_LINE_BYTES => {
                        let _ = tx.send(Err(format!("a line longer than {MAX_LINE_BYTES} bytes")));
                        break;
                    }
                    Ok(_) => {
                        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                            buf.pop();
                        }
                        let line = String::from_utf8(buf)
                            .map_err(|_| "a line that is not UTF-8 text".to_string());
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(format!("reading its stdout failed: {e}")));
                        break;
                    }
                }
            }
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let keep = Arc::clone(&tail);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut t = keep.lock().unwrap_or_else(|p| p.into_inner());
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        Ok(Process {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: tail,
        })
    }

    /// Writes one line (a newline is added) and flushes it.
    pub fn write_line(&mut self, line: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("its stdin is closed")?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("writing to its stdin failed: {e}"))
    }

    /// The next line, waiting until `deadline` at most.
    pub fn read_line(&mut self, deadline: Instant) -> Result<String, ReadError> {
        let left = deadline.saturating_duration_since(now());
        match self.lines.recv_timeout(left) {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(e)) => Err(ReadError::Bad(e)),
            Err(RecvTimeoutError::Timeout) => Err(ReadError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(ReadError::Closed(self.exit_status())),
        }
    }

    /// A line the program wrote without being asked (after its `done`, or
    /// before its first line), if one is waiting: that is a protocol error,
    /// since it would be taken for part of the next answer.
    pub fn stray_line(&mut self) -> Option<String> {
        match self.lines.try_recv() {
            Ok(Ok(line)) => Some(line),
            _ => None,
        }
    }

    /// How the program ended, if it did within a short grace period.
    fn exit_status(&mut self) -> Option<String> {
        for _ in 0..50 {
            if let Ok(Some(status)) = self.child.try_wait() {
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
        let t = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        t.iter().cloned().collect()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // Closing stdin lets a well-behaved program end its loop; the kill
        // makes sure, and the wait reaps it so no zombie stays behind.
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wall-clock time, only to bound how long a program may take to answer:
/// the program's I/O is real, and nothing read here flows into a run.
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
}
