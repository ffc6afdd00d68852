//! Ctrl-C (SIGINT) and SIGTERM during a sweep.
//!
//! The first signal asks the sweep to stop after the runs in flight and to
//! print the summary of what ran ([`STOP`]); an external
//! program idemsim is waiting for is killed with its process group at once
//! (`models::external::process::interrupt`), so a hung one cannot hold the
//! summary back, and its broken-off run is no result ([`forget_killed_runs`]).
//! idemsim then exits 130 after SIGINT and 143 after SIGTERM (128 + the
//! signal's number, as shells report a process the signal ended), unless a
//! violation was found. A second signal kills every program's group and
//! quits at once, so no child is ever left behind.
//!
//! `replay` and `report` run one scenario's run (or a few) and poll
//! nothing: with an external program they install the same handler
//! ([`install_for`]), so a signal kills a hung program's group, and
//! [`broke_off`] then says what was done and gives the exit code.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set by Ctrl-C or SIGTERM; sweeps poll it between chunks of seeds.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Exit code after an interrupted sweep that found no violation (128 + SIGINT).
pub const INTERRUPTED: u8 = 130;

/// SIGINT's number (Linux and the BSDs alike).
pub const SIGINT: i32 = 2;
/// SIGTERM's number (Linux and the BSDs alike).
pub const SIGTERM: i32 = 15;

/// The signal that stopped the run, 0 for none.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Installs the handler of SIGINT and SIGTERM for a sweep that polls
/// [`STOP`].
#[cfg(unix)]
pub fn install() {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIG_ERR: usize = usize::MAX;
    for sig in [SIGINT, SIGTERM] {
        // SAFETY: `on_signal` touches atomics and calls async-signal-safe
        // functions (kill(2), _exit(2)) only.
        let previous = unsafe { signal(sig, on_signal as extern "C" fn(i32) as usize) };
        if previous == SIG_ERR {
            crate::eoutln!("warning: the handler of signal {sig} was not installed: a signal ends idemsim without a summary");
        }
    }
}

/// Installs the Ctrl-C handler (no SIGTERM, no process groups here).
#[cfg(not(unix))]
pub fn install() {
    let result = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(INTERRUPTED));
        }
        SIGNAL.store(SIGINT, Ordering::SeqCst);
    });
    if let Err(e) = result {
        crate::eoutln!("warning: Ctrl-C handler not installed: {e}");
    }
}

#[cfg(unix)]
extern "C" fn on_signal(sig: i32) {
    extern "C" {
        fn _exit(code: i32) -> !;
    }
    if STOP.swap(true, Ordering::SeqCst) {
        models::external::process::kill_all();
        // SAFETY: _exit(2) is async-signal-safe and ends the process.
        unsafe { _exit(128 + sig) }
    }
    SIGNAL.store(sig, Ordering::SeqCst);
    models::external::process::interrupt();
}

/// Installs the handler when `s` runs an external program (`replay`,
/// `report`): a signal then kills the program's process group instead of
/// leaving it behind. A scenario of built-in actors keeps the default
/// handling, which ends idemsim at once.
pub fn install_for(s: &models::Scenario) {
    // Asked here, not of `crate::external`, which imports this module.
    if s.system.nodes.iter().any(models::Node::runs_program) {
        install();
    }
}

/// After a command's runs: when a signal came, says on stderr what was
/// done (the program killed with its group, `what` not given) and returns
/// [`INTERRUPTED`], which [`exit_code`] turns into 143 after SIGTERM; the
/// broken-off run is no result, so nothing of it is printed.
pub fn broke_off(what: &str) -> Option<u8> {
    received()?;
    let name = name();
    // A program started after the signal is killed at once too, so a
    // count says nothing a user needs: whether one was waited for does.
    let killed = if killed_a_program() {
        "the external program idemsim waited for was killed with its process group"
    } else {
        "no external program was waiting"
    };
    crate::eoutln!("interrupted ({name}): {killed}; {what}");
    Some(INTERRUPTED)
}

/// The signal that stopped the run as a user says it: "SIGTERM", else
/// "Ctrl-C".
pub fn name() -> &'static str {
    if received() == Some(SIGTERM) {
        "SIGTERM"
    } else {
        "Ctrl-C"
    }
}

/// Whether a rerun of `s` would break off now: after a signal every
/// program idemsim waits for is killed, so a failure found before it is
/// shown as found (its seed or record and its replay line) but neither
/// shrunk nor traced, which would take reruns.
pub fn reruns_break_off(s: &models::Scenario) -> bool {
    received().is_some() && s.system.nodes.iter().any(models::Node::runs_program)
}

/// What is said instead of the trace of `what` when [`reruns_break_off`]:
/// `left` names what it did without (`"not shrunk or traced"`).
pub fn not_rerun_note(what: &str, left: &str) -> String {
    format!(
        "{what}: {left}, since {} stopped idemsim, which kills the external program a rerun needs; its repro line replays it",
        name()
    )
}

/// The signal that stopped the run, if one did.
pub fn received() -> Option<i32> {
    Some(SIGNAL.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// The exit code to give for `code`: an interrupted run's 130 becomes 143
/// when SIGTERM stopped it.
pub fn exit_code(code: u8) -> u8 {
    match received() {
        Some(SIGTERM) if code == INTERRUPTED => 128 + 15,
        _ => code,
    }
}

/// Drops from `sum` the runs broken off by killing their programs on a
/// signal: they failed because idemsim killed the program, which says
/// nothing of the design. Their seeds are counted as run; the failure and
/// panic they left (a protocol error) are not kept.
pub fn forget_killed_runs(sum: &mut sim::Summary) {
    let killed = models::external::process::killed_by_interrupt();
    if killed == 0 {
        return;
    }
    let killed_panic = |m: &str| models::external::protocol_error(m).is_some();
    if sum
        .first_panic
        .as_ref()
        .is_some_and(|(_, m)| killed_panic(m))
    {
        sum.first_panic = None;
    }
    if sum
        .first_failure
        .as_ref()
        .is_some_and(|f| matches!(&f.outcome, sim::Outcome::Panicked(m) if killed_panic(m)))
    {
        sum.first_failure = None;
    }
    sum.tally.panics = sum.tally.panics.saturating_sub(killed);
    sum.interrupted = true;
}

/// [`forget_killed_runs`] for the coverage-guided search, whose schedules
/// are no seed range: the broken-off run is not counted as run either, so
/// the summary's count is of the runs that completed. The search runs one
/// schedule at a time and stops at the signal, so one run broke off,
/// however many of its programs (several consumers) were killed.
pub fn forget_killed_schedules(sum: &mut sim::Summary) {
    let broken = u64::from(killed_a_program());
    forget_killed_runs(sum);
    sum.tally.schedules = sum.tally.schedules.saturating_sub(broken);
}

/// [`forget_killed_runs`] for `check --exhaustive`: a counterexample that
/// is a killed program's broken-off run is none, its runs are not counted,
/// and the enumeration is incomplete (interrupted). Each worker's run in
/// flight broke off; with several programs in a run, each killed one is
/// subtracted, so the count of completed runs is then a lower bound.
pub fn forget_killed_enumeration(r: &mut sim::exhaustive::ExhaustiveReport) {
    let killed = models::external::process::killed_by_interrupt();
    if killed == 0 {
        return;
    }
    if r.shortest.as_ref().is_some_and(|c| killed_run(&c.outcome)) {
        r.shortest = None;
    }
    r.tally.panics = r.tally.panics.saturating_sub(killed);
    r.tally.schedules = r.tally.schedules.saturating_sub(killed);
    r.interrupted = true;
}

/// Whether `outcome` is a run broken off by killing its program: a
/// protocol error (the program stopped answering) after a signal.
pub(crate) fn killed_run(outcome: &sim::Outcome) -> bool {
    matches!(outcome, sim::Outcome::Panicked(m) if models::external::protocol_error(m).is_some())
}

/// Whether a signal stopped the run and killed a program idemsim was
/// waiting for: a protocol error then is idemsim's doing, not bad input.
pub fn killed_a_program() -> bool {
    models::external::process::killed_by_interrupt() > 0
}
