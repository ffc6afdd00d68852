//! Every byte idemsim prints goes through here.
//!
//! `println!` panics when stdout is a closed pipe (`idemsim list | head -1`).
//! These writers treat a closed pipe as the reader having seen enough: the
//! rest of that stream is dropped quietly and the command finishes with the
//! exit code of its verdict, as if everything had been read. Any other write
//! error on stdout (a full disk behind `> file`) is reported once on stderr
//! and turns the exit code into 2, because the output is incomplete.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Stdout was closed by its reader (EPIPE): further output is dropped.
static OUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Stdout failed for another reason: the command's output is incomplete.
static OUT_FAILED: AtomicBool = AtomicBool::new(false);
/// Stderr is gone: nothing more to say there.
static ERR_CLOSED: AtomicBool = AtomicBool::new(false);

fn failed(e: &io::Error) {
    if e.kind() == io::ErrorKind::BrokenPipe {
        OUT_CLOSED.store(true, Ordering::Relaxed);
    } else if !OUT_FAILED.swap(true, Ordering::Relaxed) {
        OUT_CLOSED.store(true, Ordering::Relaxed);
        write_err(format_args!("error: cannot write to stdout: {e}\n"));
    }
}

/// Writes to stdout; used by [`out!`](crate::out!) and [`outln!`](crate::outln!).
pub fn write_out(args: fmt::Arguments) {
    if OUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut lock = io::stdout().lock();
    if let Err(e) = lock.write_fmt(args) {
        failed(&e);
    }
}

/// Writes to stderr; used by [`eout!`](crate::eout!) and [`eoutln!`](crate::eoutln!). Errors end stderr quietly.
pub fn write_err(args: fmt::Arguments) {
    if ERR_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut lock = io::stderr().lock();
    if lock.write_fmt(args).is_err() {
        ERR_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Flushes stdout at the end of a command; a failure counts like a failed write.
pub fn flush() {
    if OUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = io::stdout().lock().flush() {
        failed(&e);
    }
}

/// True when a write to stdout failed for a reason other than a closed pipe.
pub fn stdout_failed() -> bool {
    OUT_FAILED.load(Ordering::Relaxed)
}

/// `print!` that survives a closed pipe.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write_out(format_args!($($arg)*)) };
}

/// `println!` that survives a closed pipe.
#[macro_export]
macro_rules! outln {
    () => { $crate::out::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that survives a closed stderr.
#[macro_export]
macro_rules! eout {
    ($($arg:tt)*) => { $crate::out::write_err(format_args!($($arg)*)) };
}

/// `eprintln!` that survives a closed stderr.
#[macro_export]
macro_rules! eoutln {
    () => { $crate::out::write_err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}
