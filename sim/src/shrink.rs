//! Shrinking a failing run to a locally minimal one, generic over every [`Model`].
//!
//! It works on the run's recorded decisions ([`Record`]), never on the model:
//! a record is one list of decision values per stream, every list of numbers
//! is a valid run (replay reads zeros past the end and clamps values), and zero
//! is always the least eventful value. So shrinking is Hypothesis's reduction:
//! delete spans of decisions, cut streams short, set single values to zero and
//! lower the rest by binary search; rerun each candidate; keep it when the run
//! still fails with the same [`Signature`] and its record is smaller.
//!
//! "Smaller" is the order [`smaller_run`]: fewer nonzero decisions first, then
//! a smaller sum of values, then fewer events, then a shorter record, then
//! lexicographic. A candidate is kept only if its run is also no longer in
//! events than the original run, so a shrunk trace is never longer than the
//! one it came from. Every kept change strictly descends this well-founded
//! order, so shrinking terminates; a budget of reruns (and whatever the caller
//! adds through `should_stop`, such as wall time) caps its cost anyway. When
//! the passes reach a fixpoint within the budget, the result is locally
//! minimal: zeroing any one remaining nonzero decision (a lost message, a
//! duplicate, a crash, a delay above the link's minimum, a drawn fault rate)
//! changes the signature or makes the run longer than the original, because
//! such a candidate, had it kept the failure, would have been smaller and kept.
//!
//! Everything here is deterministic: the same failing record always shrinks to
//! the same record. Shrinking runs with [`NoTrace`], off the sweep's hot path.

use crate::choice::{Record, StreamId, StreamKind, StreamLayout};
use crate::engine::{Model, MsgOf, ObsOf, Outcome, RunReport, Sim, Source, TimerOf};
use crate::trace::{NoTrace, Recorder, Tracer};
use crate::world::World;
use std::collections::BTreeSet;

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

/// Runs `seed` once, recording its decisions.
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

/// How often (in reruns) shrinking asks its caller whether to stop.
const ASK_EVERY: u32 = 16;

struct Shrinker<'a, M: Model> {
    sim: &'a mut Sim<M>,
    model: &'a M,
    target: Signature,
    limits: ShrinkLimits,
    /// Events of the original run: no kept candidate runs longer.
    max_events: u64,
    runs: u32,
    best: Record,
    best_report: RunReport,
    tried: BTreeSet<Vec<Vec<u64>>>,
    should_stop: &'a mut dyn FnMut(&ShrinkProgress) -> bool,
    /// The rerun count at which to ask `should_stop` next.
    next_ask: u32,
    stopped: Option<Stopped>,
}

impl<M: Model> Shrinker<'_, M> {
    fn exhausted(&mut self) -> bool {
        if self.stopped.is_some() {
            return true;
        }
        if self.runs >= self.limits.max_runs {
            self.stopped = Some(Stopped::MaxRuns);
        } else if self.runs >= self.next_ask {
            self.next_ask = self.runs.saturating_add(ASK_EVERY);
            let progress = ShrinkProgress {
                runs: self.runs,
                events: self.best_report.events,
                nonzero: self.best.nonzero_count(),
            };
            if (self.should_stop)(&progress) {
                self.stopped = Some(Stopped::Caller);
            }
        }
        self.stopped.is_some()
    }

    /// Reruns `candidate`; keeps what the run actually read if it fails the
    /// same way, is no longer than the original and is smaller than the best so far.
    fn attempt(&mut self, mut candidate: Record) -> bool {
        candidate.normalize();
        if candidate == self.best || self.exhausted() {
            return false;
        }
        if !self.tried.insert(candidate.streams.clone()) {
            return false;
        }
        self.runs += 1;
        let report = replay(self.sim, self.model, &candidate, false, &mut NoTrace);
        if Signature::of(&report.outcome).as_ref() != Some(&self.target)
            || report.events > self.max_events
        {
            return false;
        }
        // What the run read: clamped values, and only the decisions it met.
        let read = self.sim.choices.take_recorded();
        if !smaller_run(&read, report.events, &self.best, self.best_report.events) {
            return false;
        }
        self.best = read;
        self.best_report = report;
        true
    }

    fn stream_len(&self, s: usize) -> usize {
        self.best.streams.get(s).map_or(0, Vec::len)
    }

    fn stream_count(&self) -> usize {
        self.best.streams.len()
    }

    /// Cuts each stream to the shortest prefix that still fails (binary search).
    fn truncate(&mut self) {
        for s in 0..self.stream_count() {
            let mut lo = 0;
            let mut hi = self.stream_len(s);
            while lo < hi && !self.exhausted() {
                let mid = (lo + hi) / 2;
                let mut c = self.best.clone();
                c.streams[s].truncate(mid);
                if self.attempt(c) {
                    hi = self.stream_len(s).min(mid);
                } else {
                    lo = mid + 1;
                }
            }
        }
    }

    /// Deletes spans of decisions, from the back: later decisions move up and
    /// the fault they carry lands on an earlier message or step.
    fn delete_spans(&mut self) {
        for size in [8usize, 4, 2, 1] {
            for s in 0..self.stream_count() {
                let mut end = self.stream_len(s);
                while end >= size && !self.exhausted() {
                    let mut c = self.best.clone();
                    c.streams[s].drain(end - size..end);
                    self.attempt(c);
                    end = (end - 1).min(self.stream_len(s));
                }
            }
        }
    }

    /// Sets single values to zero: removes one fault, delay or draw at a time.
    fn zero_each(&mut self) {
        for s in 0..self.stream_count() {
            let mut i = 0;
            while i < self.stream_len(s) && !self.exhausted() {
                if self.best.streams[s][i] != 0 {
                    let mut c = self.best.clone();
                    c.streams[s][i] = 0;
                    self.attempt(c);
                }
                i += 1;
            }
        }
    }

    /// Lowers each remaining value by binary search to the least that still fails.
    fn lower_each(&mut self) {
        for s in 0..self.stream_count() {
            let mut i = 0;
            while i < self.stream_len(s) && !self.exhausted() {
                let v = self.best.streams[s][i];
                let (mut lo, mut hi) = (1u64, v);
                while lo < hi && !self.exhausted() {
                    let mid = lo + (hi - lo) / 2;
                    let mut c = self.best.clone();
                    if c.streams[s].len() <= i {
                        break;
                    }
                    c.streams[s][i] = mid;
                    if self.attempt(c) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                i += 1;
            }
        }
    }
}

impl<M: Model> Shrinker<'_, M> {
    /// Zeroes a value and deletes one decision of another stream at once.
    /// Zeroing a drawn fault rate can make a decision disappear (a 0‰ chance
    /// is not drawn), which shifts every later decision of that stream; one
    /// change alone then lands the shifted values on the wrong messages.
    fn zero_and_delete(&mut self) {
        for s in 0..self.stream_count() {
            let mut i = 0;
            while i < self.stream_len(s) && !self.exhausted() {
                if self.best.streams[s][i] != 0 {
                    'others: for t in (0..self.stream_count()).filter(|&t| t != s) {
                        for j in 0..self.stream_len(t).min(ZERO_AND_DELETE_REACH) {
                            let mut c = self.best.clone();
                            c.streams[s][i] = 0;
                            c.streams[t].remove(j);
                            if self.attempt(c) {
                                break 'others;
                            }
                            if self.stream_len(s) <= i {
                                break 'others;
                            }
                        }
                    }
                }
                i += 1;
            }
        }
    }
}

/// How far into a stream [`Shrinker::zero_and_delete`] looks for the decision to delete.
const ZERO_AND_DELETE_REACH: usize = 16;

/// Shrinks the failing `record` of `model`. Panics if the record does not fail.
pub fn shrink<M: Model>(
    sim: &mut Sim<M>,
    model: &M,
    record: &Record,
    limits: ShrinkLimits,
) -> Shrunk {
    shrink_with(sim, model, record, limits, &mut |_| false)
}

/// [`shrink`], asking `should_stop` every few reruns whether to stop early
/// (the CLI's wall-clock budget and Ctrl-C: `sim` reads no clock itself).
/// The result is then the smallest failing run found so far.
pub fn shrink_with<M: Model>(
    sim: &mut Sim<M>,
    model: &M,
    record: &Record,
    limits: ShrinkLimits,
    should_stop: &mut dyn FnMut(&ShrinkProgress) -> bool,
) -> Shrunk {
    let mut original = record.clone();
    original.normalize();
    let original_report = replay(sim, model, &original, false, &mut NoTrace);
    let target = Signature::of(&original_report.outcome)
        .expect("shrinking needs a failing record; its replay did not fail");
    let start = sim.choices.take_recorded();
    let mut sh = Shrinker {
        sim,
        model,
        target: target.clone(),
        limits,
        max_events: original_report.events,
        runs: 0,
        best: start,
        best_report: original_report.clone(),
        tried: BTreeSet::new(),
        should_stop,
        next_ask: 0,
        stopped: None,
    };
    let mut complete = false;
    while !sh.exhausted() {
        let before = sh.best.clone();
        sh.truncate();
        sh.delete_spans();
        sh.zero_each();
        sh.lower_each();
        if sh.best == before && !sh.exhausted() {
            sh.zero_and_delete();
            if sh.best == before && !sh.exhausted() {
                complete = true;
                break;
            }
        }
    }
    let stopped = if complete { None } else { sh.stopped };
    let (record, report, runs) = (sh.best, sh.best_report, sh.runs);
    Shrunk {
        signature: target,
        original,
        original_report,
        record,
        report,
        runs,
        complete,
        stopped,
    }
}

/// Runs `seed`, and shrinks it if it fails; `None` if it does not.
pub fn shrink_seed<M: Model>(
    sim: &mut Sim<M>,
    model: &M,
    seed: u64,
    limits: ShrinkLimits,
) -> Option<Shrunk> {
    shrink_seed_with(sim, model, seed, limits, &mut |_| false)
}

/// [`shrink_seed`] with a `should_stop` callback, as [`shrink_with`].
pub fn shrink_seed_with<M: Model>(
    sim: &mut Sim<M>,
    model: &M,
    seed: u64,
    limits: ShrinkLimits,
    should_stop: &mut dyn FnMut(&ShrinkProgress) -> bool,
) -> Option<Shrunk> {
    let (record, report) = record_seed(sim, model, seed);
    Signature::of(&report.outcome)?;
    let mut shrunk = shrink_with(sim, model, &record, limits, should_stop);
    // The seed's own report, not its replay's: they are equal, and this says so.
    debug_assert_eq!(shrunk.original_report.outcome, report.outcome);
    shrunk.original_report = report;
    Some(shrunk)
}

/// The last decision that could still have avoided the failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The engine step at which the alternative first changes the run: after
    /// it, no single different decision avoids the failure.
    pub step: u64,
    /// Index of the first trace entry of the failing run that the alternative changes.
    pub entry: usize,
    /// The stream of the decision that turns it.
    pub stream: StreamId,
    /// Its position in the stream.
    pub index: u32,
    /// The value the failing run drew.
    pub value: u64,
    /// The value that avoids the failure.
    pub alternative: u64,
}

/// Finds the point of no return of a failing record, searching every
/// decision (see [`point_of_no_return_within`]).
pub fn point_of_no_return<M: Model>(sim: &mut Sim<M>, model: &M, record: &Record) -> Option<Turn>
where
    MsgOf<M>: PartialEq,
    ObsOf<M>: PartialEq,
    TimerOf<M>: PartialEq,
{
    point_of_no_return_within(sim, model, record, u64::MAX).turn
}

/// The result of a search for the point of no return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnSearch {
    /// The latest point of no return found, if a single different decision avoids the failure.
    pub turn: Option<Turn>,
    /// Decisions the failing run met, and how many of them (the last ones) were tried.
    pub decisions: usize,
    /// How many of the last decisions were tried.
    pub searched: usize,
}

impl TurnSearch {
    /// True when every decision was tried, so `turn` is exact.
    pub fn complete(&self) -> bool {
        self.searched == self.decisions
    }
}

/// Finds the point of no return of a failing record.
///
/// For every decision the run meets, it tries a few single alternatives (for
/// a yes/no decision the other answer; for a range its minimum, maximum and
/// middle), each with every other decision as recorded. Of those that avoid
/// the failure's signature, the one whose change shows latest in the trace
/// gives the step: up to that step a different decision could still prevent
/// the failure, after it no single one can. `None` if no single change avoids
/// it (a failure already fixed by the configuration).
///
/// Each alternative is one replay of the whole run, so the search costs about
/// (decisions × 4 × events). It goes from the last decision backwards and
/// stops before the replays would pass `max_events` events in all; the
/// result then covers the last `searched` decisions only, which the caller
/// says. Ties go to the earliest decision and alternative, whatever the order
/// of the search, so a bounded and an unbounded search agree when both find
/// the same latest step.
pub fn point_of_no_return_within<M: Model>(
    sim: &mut Sim<M>,
    model: &M,
    record: &Record,
    max_events: u64,
) -> TurnSearch
where
    MsgOf<M>: PartialEq,
    ObsOf<M>: PartialEq,
    TimerOf<M>: PartialEq,
{
    let mut base = Recorder::default();
    let report = replay(sim, model, record, true, &mut base);
    let points = sim.choices.points().to_vec();
    let Some(target) = Signature::of(&report.outcome) else {
        return TurnSearch {
            turn: None,
            decisions: points.len(),
            searched: points.len(),
        };
    };
    let mut spent: u64 = 0;
    let mut searched = 0;
    // (turn, index of its decision point)
    let mut best: Option<(Turn, usize)> = None;
    for (k, p) in points.iter().enumerate().rev() {
        if spent >= max_events {
            break;
        }
        searched += 1;
        let value = record.get(p.stream, p.index as usize).min(p.arity - 1);
        let top = p.arity - 1;
        let mut alts = vec![0, 1, top, top / 2];
        alts.sort_unstable();
        alts.dedup();
        for alt in alts.into_iter().filter(|&a| a != value && a <= top) {
            let mut c = record.clone();
            c.set(p.stream, p.index as usize, alt);
            let mut rec = Recorder::default();
            let r = replay(sim, model, &c, false, &mut rec);
            spent = spent.saturating_add(r.events.max(1));
            if Signature::of(&r.outcome).as_ref() == Some(&target) {
                continue;
            }
            let entry = base
                .entries
                .iter()
                .zip(rec.entries.iter())
                .position(|(a, b)| a != b)
                .unwrap_or(base.entries.len().min(rec.entries.len()));
            let step = base
                .entries
                .get(entry)
                .or(rec.entries.get(entry))
                .map_or(report.events, |e| e.step);
            let better = best
                .as_ref()
                .is_none_or(|(b, bk)| step > b.step || (step == b.step && k < *bk));
            if better {
                best = Some((
                    Turn {
                        step,
                        entry,
                        stream: p.stream,
                        index: p.index,
                        value,
                        alternative: alt,
                    },
                    k,
                ));
            }
        }
    }
    TurnSearch {
        turn: best.map(|(t, _)| t),
        decisions: points.len(),
        searched,
    }
}

/// The stable name of a stream, as repro files key their choices:
/// `swarm`, `link:service->client`, `crash:service`, `actor:client`.
pub fn stream_name(world: &World, stream: StreamId) -> String {
    let layout = StreamLayout {
        actors: world.actor_count(),
    };
    let name = |a: u32| world.actor_names[a as usize].as_str();
    match layout.kind(stream) {
        StreamKind::Swarm => "swarm".into(),
        StreamKind::Link { from, to } => format!("link:{}->{}", name(from), name(to)),
        StreamKind::Crash { actor } => format!("crash:{}", name(actor)),
        StreamKind::Actor { actor } => format!("actor:{}", name(actor)),
    }
}

/// The stream a name from [`stream_name`] refers to in `world`.
pub fn stream_by_name(world: &World, name: &str) -> Option<StreamId> {
    let layout = StreamLayout {
        actors: world.actor_count(),
    };
    (0..layout.count() as StreamId).find(|&s| stream_name(world, s) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(streams: &[&[u64]]) -> Record {
        Record {
            streams: streams.iter().map(|s| s.to_vec()).collect(),
        }
    }

    #[test]
    fn zeroing_or_lowering_a_value_is_always_smaller() {
        let base = rec(&[&[3, 0, 7], &[1]]);
        assert!(smaller(&rec(&[&[0, 0, 7], &[1]]), &base));
        assert!(smaller(&rec(&[&[3, 0, 6], &[1]]), &base));
        // Fewer faults win over a shorter record.
        assert!(smaller(&rec(&[&[0, 0, 0, 0, 9], &[]]), &base));
        assert!(!smaller(&base, &base));
    }

    #[test]
    fn stream_names_are_the_repro_keys() {
        let w = World::new(vec!["client".into(), "service".into()]);
        let l = StreamLayout { actors: 2 };
        assert_eq!(stream_name(&w, StreamLayout::SWARM), "swarm");
        assert_eq!(stream_name(&w, l.link(1, 0)), "link:service->client");
        assert_eq!(stream_name(&w, l.crash(1)), "crash:service");
        assert_eq!(stream_name(&w, l.actor(0)), "actor:client");
        for s in 0..l.count() as StreamId {
            assert_eq!(stream_by_name(&w, &stream_name(&w, s)), Some(s));
        }
        assert_eq!(stream_by_name(&w, "link:bank->client"), None);
    }
}
