//! The reduction passes and the loop that runs them to a fixpoint or a budget.

use super::common::{
    max_shrunk_events, record_seed, replay, smaller_run, ShrinkLimits, ShrinkProgress, Shrunk,
    Signature, Stopped,
};
use crate::choice::Record;
use crate::engine::{Model, RunReport, Sim};
use crate::trace::NoTrace;
use std::collections::BTreeSet;

/// How often (in reruns) shrinking asks its caller whether to stop.
const ASK_EVERY: u32 = 16;

struct Shrinker<'a, M: Model> {
    sim: &'a mut Sim<M>,
    model: &'a M,
    target: Signature,
    limits: ShrinkLimits,
    /// No kept candidate runs longer ([`max_shrunk_events`] of the original's).
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
    /// same way, is at most twice as long as the original and is smaller than the best so far.
    /// A run too long to record whole does not count as failing the same
    /// way: its record, cut short, would replay another run.
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
            || self.sim.choices.recorded_overflowed()
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
///
/// A run too long to record whole ([`MAX_RECORDED_VALUES`]) cannot be
/// shrunk: the result is `record` itself, unshrunk (exact: it is the
/// caller's), with `complete` false and [`Stopped::TooLong`].
///
/// [`MAX_RECORDED_VALUES`]: crate::choice::MAX_RECORDED_VALUES
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
    if sim.choices.recorded_overflowed() {
        return Shrunk {
            signature: target,
            record: original.clone(),
            report: original_report.clone(),
            original,
            original_report,
            runs: 0,
            complete: false,
            stopped: Some(Stopped::TooLong),
        };
    }
    let mut sh = Shrinker {
        sim,
        model,
        target: target.clone(),
        limits,
        max_events: max_shrunk_events(original_report.events),
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

/// Runs `seed`, and shrinks it if it fails; `None` if it does not, or if
/// its run is too long to record whole (then `sim.choices.recorded_overflowed()`
/// says so, and only the seed reproduces the failure).
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
    if sim.choices.recorded_overflowed() {
        return None;
    }
    let mut shrunk = shrink_with(sim, model, &record, limits, should_stop);
    // The seed's own report, not its replay's: they are equal, and this says so.
    debug_assert_eq!(shrunk.original_report.outcome, report.outcome);
    shrunk.original_report = report;
    Some(shrunk)
}
