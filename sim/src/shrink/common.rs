//! What a shrink keeps and reports, the order it descends, and the guarded
//! replays every pass and search runs on.

use crate::choice::Record;
use crate::engine::{Model, MsgOf, ObsOf, Outcome, RunReport, Sim, Source, TimerOf};
use crate::trace::{NoTrace, Tracer};

/// What must stay the same while shrinking: the invariant and the operation
/// it concerns. The message (amounts, counts) may change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signature {
    /// An invariant broke, for one operation.
    Violation {
        /// The invariant's name.
        invariant: &'static str,
        /// The operation, as the oracle numbers it.
        operation: u64,
    },
    /// A model panicked; any panic counts as the same failure.
    Panic,
}

impl Signature {
    /// The signature of a failing outcome; `None` for one that holds or is inconclusive.
    pub fn of(outcome: &Outcome) -> Option<Signature> {
        match outcome {
            Outcome::Violation(v) => Some(Signature::Violation {
                invariant: v.invariant,
                operation: v.operation,
            }),
            Outcome::Panicked(_) => Some(Signature::Panic),
            Outcome::Holds | Outcome::Inconclusive(_) => None,
        }
    }
}

/// How many times the original failing run's events a kept candidate may
/// run. Fewer faults come first: a fault the failure does not need is noise
/// that misleads the reader, and removing one often makes a run longer (a
/// lost resend no longer saves the hour until the next one). Without the
/// slack such faults stayed in the shrunk trace; with it unbounded, a
/// shrink could trade one fault for a run of any length.
pub const EVENTS_GROWTH_MAX: u64 = 2;

/// The most events a kept candidate of a shrink from a run of
/// `original_events` may have.
pub fn max_shrunk_events(original_events: u64) -> u64 {
    original_events.saturating_mul(EVENTS_GROWTH_MAX)
}

/// Bounds of one shrink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShrinkLimits {
    /// Reruns of candidate records, at most.
    pub max_runs: u32,
}

impl Default for ShrinkLimits {
    fn default() -> Self {
        ShrinkLimits { max_runs: 20_000 }
    }
}

/// Why shrinking stopped before a fixpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// [`ShrinkLimits::max_runs`] reruns were spent.
    MaxRuns,
    /// The caller's `should_stop` said so (a time budget, Ctrl-C).
    Caller,
    /// The failing run makes more decisions than one run may record
    /// ([`MAX_RECORDED_VALUES`](crate::choice::MAX_RECORDED_VALUES)): there
    /// is no record of it to shrink from.
    TooLong,
}

/// Where a shrink stands, for the caller's `should_stop` (progress, budgets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShrinkProgress {
    /// Candidate reruns spent so far.
    pub runs: u32,
    /// Events and nonzero decisions of the smallest failing run so far.
    pub events: u64,
    /// Nonzero decisions of that run.
    pub nonzero: usize,
}

/// A shrunk failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shrunk {
    /// What the shrunk run keeps failing with.
    pub signature: Signature,
    /// The record the shrink started from, and its run.
    pub original: Record,
    /// The run of `original`.
    pub original_report: RunReport,
    /// The smallest failing record found (normalized), and its run.
    pub record: Record,
    /// The run of `record`.
    pub report: RunReport,
    /// Candidate reruns spent.
    pub runs: u32,
    /// True when the passes reached a fixpoint within the bound, so the
    /// result is locally minimal; false when the bound stopped them.
    pub complete: bool,
    /// What stopped it early, when it did not reach a fixpoint.
    pub stopped: Option<Stopped>,
}

/// Replays `record`, turning a panic inside a model into a reported failure.
pub fn replay<M: Model, T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>>(
    sim: &mut Sim<M>,
    model: &M,
    record: &Record,
    log_points: bool,
    tracer: &mut T,
) -> RunReport {
    let source = Source::Replay { record, log_points };
    crate::explore::guarded(|| sim.run(model, source, tracer)).unwrap_or_else(RunReport::panicked)
}

/// [`replay`] without keeping what the run read, in memory that does not
/// grow with the run: for traces and for searches that compare runs, which
/// need no record of the replay and may replay a very long run.
pub fn replay_unrecorded<M: Model, T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>>(
    sim: &mut Sim<M>,
    model: &M,
    record: &Record,
    log_points: bool,
    tracer: &mut T,
) -> RunReport {
    sim.choices.set_record_replays(false);
    let report = replay(sim, model, record, log_points, tracer);
    sim.choices.set_record_replays(true);
    report
}

/// Runs `seed` once, recording its decisions. A run that makes more than
/// [`MAX_RECORDED_VALUES`](crate::choice::MAX_RECORDED_VALUES) decisions
/// gets only the first ones, which replay another run: callers check
/// `sim.choices.recorded_overflowed()` before using the record.
pub fn record_seed<M: Model>(sim: &mut Sim<M>, model: &M, seed: u64) -> (Record, RunReport) {
    let source = Source::Seed { seed, record: true };
    let report = crate::explore::guarded(|| sim.run(model, source, &mut NoTrace))
        .unwrap_or_else(RunReport::panicked);
    (sim.choices.take_recorded(), report)
}

/// The order of records alone: fewer nonzero decisions, then a smaller sum,
/// then a shorter record, then lexicographically smaller values.
pub fn smaller(a: &Record, b: &Record) -> bool {
    key(a, 0) < key(b, 0)
}

/// The order shrinking descends: fewer nonzero decisions, then a smaller sum,
/// then fewer events in the run, then a shorter record, then lexicographically
/// smaller values.
pub fn smaller_run(a: &Record, a_events: u64, b: &Record, b_events: u64) -> bool {
    key(a, a_events) < key(b, b_events)
}

fn key(r: &Record, events: u64) -> (usize, u128, u64, usize, Vec<u64>) {
    let sum: u128 = r
        .streams
        .iter()
        .flat_map(|s| s.iter())
        .map(|&v| u128::from(v))
        .sum();
    let len: usize = r.streams.iter().map(Vec::len).sum();
    let flat: Vec<u64> = r.streams.iter().flat_map(|s| s.iter().copied()).collect();
    (r.nonzero_count(), sum, events, len, flat)
}
