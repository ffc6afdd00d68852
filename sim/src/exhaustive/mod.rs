//! Exhaustive bounded exploration: every schedule with at most K decisions
//! that make something happen.
//!
//! Every decision's zero value is the least eventful one, so a schedule is a
//! set of decision points set to a non-zero value. The search replays the
//! all-zero record with its decision points logged, then, depth first, sets one
//! more point that the run met *after* the last point it set, and replays
//! again. A run is deterministic up to its last set point, so each set of points
//! is met exactly once, and no schedule is counted twice.
//!
//! Bounding choices, so that K counts faults rather than timing noise:
//! - a decision takes zero or its largest value only: a message is lost or not,
//!   duplicated or not, a crash happens or not, a delay is its minimum or its
//!   maximum;
//! - the swarm stream is fixed at every range's maximum, so each fault the
//!   scenario allows "may happen" at every place it can (a probability of zero
//!   would be no decision at all); it is never enumerated.

mod parallel;

use crate::choice::{ChoicePoint, Record, StreamLayout};
use crate::engine::{swarm_max_decisions, Limit, Model, Outcome, RunReport, Sim, Source};
use crate::explore::{broken_off_by_stop, guarded, Tally};
use crate::trace::NoTrace;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A failing schedule: its record replays it exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// Its decisions.
    pub record: Record,
    /// Decisions set to non-zero, swarm mix not counted.
    pub faults: u32,
    /// Events the engine handled (deliveries, timers, restarts, drops).
    pub events: u64,
    /// How it ended.
    pub outcome: Outcome,
}

/// What an exhaustive enumeration found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExhaustiveReport {
    /// The most nonzero decisions per schedule enumerated.
    pub max_faults: u32,
    /// Counts over every schedule run.
    pub tally: Tally,
    /// Fewest faults, then fewest events; the first met on a tie.
    pub shortest: Option<Counterexample>,
    /// The first inconclusive schedule met, for a repro when nothing failed.
    pub first_inconclusive: Option<(Record, Limit)>,
    /// The enumeration hit `max_schedules` or `max_events` before it was complete.
    pub truncated: bool,
    /// A run met more decision points than one run may log
    /// ([`MAX_LOGGED_POINTS`](crate::choice::MAX_LOGGED_POINTS)): its
    /// schedules could not be enumerated, so the enumeration is incomplete.
    pub too_many_points: bool,
    /// Stopped from outside (Ctrl-C).
    pub interrupted: bool,
    /// Schedules run with 0, 1, 2, ... faults.
    pub by_faults: Vec<u64>,
}

impl ExhaustiveReport {
    fn new(max_faults: u32) -> Self {
        ExhaustiveReport {
            max_faults,
            ..ExhaustiveReport::default()
        }
    }

    /// Every schedule within the bound ran.
    pub fn complete(&self) -> bool {
        !self.truncated && !self.interrupted && !self.too_many_points
    }
}

/// The record every exhaustive schedule starts from: swarm at its maxima, all else zero.
pub fn base_record<M: Model>(model: &M) -> Record {
    let world = model.world();
    let layout = StreamLayout {
        actors: world.actor_count(),
    };
    let mut r = Record::with_streams(layout.count());
    r.streams[StreamLayout::SWARM as usize] = swarm_max_decisions(world);
    r
}

/// Where a search stands against the bounds and who hears about progress.
struct Shared<'a> {
    bounds: Bounds,
    /// End the search at its first failure (for counting how soon it comes).
    stop_at_failure: bool,
    stop: &'a AtomicBool,
    progress: &'a (dyn Fn(u64) + Sync),
    /// Schedules run so far by every worker, for the progress callback only.
    done: AtomicU64,
}

impl Shared<'_> {
    fn tick(&self) {
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if n & 1023 == 0 {
            (self.progress)(n);
        }
    }
}

/// What one thread reuses from schedule to schedule: its simulator, and the
/// decision points of the run at each depth of the search.
struct Worker<M: Model> {
    sim: Sim<M>,
    points: Vec<Vec<ChoicePoint>>,
}

impl<M: Model> Worker<M> {
    fn new(model: &M) -> Self {
        Worker {
            sim: Sim::new(model),
            points: Vec::new(),
        }
    }
}

/// A depth-first search over one subtree of the enumeration.
struct Search<'a, 's, M: Model> {
    model: &'a M,
    worker: &'s mut Worker<M>,
    max_faults: u32,
    shared: &'a Shared<'a>,
    /// Schedules and events the enumeration ran before this search's first
    /// schedule: the bounds count from there, as in one search from the root.
    prior: (u64, u64),
    /// Set when this search's work is no longer needed (another thread found
    /// the cut before it): it stops, and its report is thrown away.
    abandon: Option<&'a AtomicBool>,
    report: ExhaustiveReport,
}

/// Replays `record` on `sim`, logging its decision points; a model's panic
/// is the run's outcome, not the search's end. Run under [`guarded`], so
/// the command line's panic hook stays quiet about it, as in a seed sweep
/// (a run broken off by Ctrl-C, its program killed, printed its panic).
fn replay_logged<M: Model>(sim: &mut Sim<M>, model: &M, record: &Record) -> RunReport {
    guarded(|| {
        sim.run(
            model,
            Source::Replay {
                record,
                log_points: true,
            },
            &mut NoTrace,
        )
    })
    .unwrap_or_else(RunReport::panicked)
}

impl<M: Model> Search<'_, '_, M> {
    /// Runs `record`, leaving the decision points it met in
    /// `worker.points[faults]`; false when the search must end instead.
    fn run(&mut self, record: &Record, faults: u32) -> bool {
        let abandoned = self.abandon.is_some_and(|a| a.load(Ordering::Relaxed));
        if abandoned || self.shared.stop.load(Ordering::Relaxed) {
            self.report.interrupted = true;
            return false;
        }
        let bounds = self.shared.bounds;
        if self.prior.0 + self.report.tally.schedules >= bounds.max_schedules
            || self.prior.1 + self.report.tally.events >= bounds.max_events
        {
            self.report.truncated = true;
            return false;
        }
        let run = replay_logged(&mut self.worker.sim, self.model, record);
        let r = &mut self.report;
        r.tally.add_counted(&run, self.worker.sim.oracle());
        let k = faults as usize;
        if r.by_faults.len() <= k {
            r.by_faults.resize(k + 1, 0);
        }
        r.by_faults[k] += 1;
        let (outcome, events) = (run.outcome, run.events);
        match &outcome {
            Outcome::Holds => {}
            Outcome::Inconclusive(limit) => {
                if r.first_inconclusive.is_none() {
                    r.first_inconclusive = Some((normalized(record), *limit));
                }
            }
            // A run the stop broke off is no counterexample, and must not
            // displace one found before the stop.
            Outcome::Panicked(_) if broken_off_by_stop(&outcome, self.shared.stop) => {}
            Outcome::Violation(_) | Outcome::Panicked(_) => {
                let better = r
                    .shortest
                    .as_ref()
                    .is_none_or(|c| (faults, events) < (c.faults, c.events));
                if better {
                    r.shortest = Some(Counterexample {
                        record: normalized(record),
                        faults,
                        events,
                        outcome: outcome.clone(),
                    });
                }
                if self.shared.stop_at_failure {
                    return false;
                }
            }
        }
        self.shared.tick();
        if self.worker.sim.choices.points_overflowed() {
            self.report.too_many_points = true;
            return false;
        }
        let w = &mut *self.worker;
        if w.points.len() <= k {
            w.points.resize_with(k + 1, Vec::new);
        }
        w.points[k].clear();
        w.points[k].extend_from_slice(w.sim.choices.points());
        true
    }

    /// Visits `record` and every schedule that sets more points after `from`.
    /// Returns false when the search must end.
    fn visit(&mut self, record: &mut Record, from: usize, faults: u32) -> bool {
        if !self.run(record, faults) {
            return false;
        }
        // Lent out while deeper levels use their own buffers.
        let k = faults as usize;
        let points = std::mem::take(&mut self.worker.points[k]);
        let go_on = self.children(record, &points, from, faults);
        self.worker.points[k] = points;
        go_on
    }

    /// Visits every schedule that sets one more of `points` at or after
    /// `from` in `record` (which has `faults` set), depth first.
    fn children(
        &mut self,
        record: &mut Record,
        points: &[ChoicePoint],
        from: usize,
        faults: u32,
    ) -> bool {
        if faults >= self.max_faults {
            return true;
        }
        for (pos, p) in points.iter().enumerate().skip(from) {
            if p.stream == StreamLayout::SWARM {
                continue;
            }
            debug_assert!(p.arity >= 2, "arity 1 is no decision and is never logged");
            debug_assert_eq!(record.get(p.stream, p.index as usize), 0);
            record.set(p.stream, p.index as usize, p.arity - 1);
            let go_on = self.visit(record, pos + 1, faults + 1);
            record.set(p.stream, p.index as usize, 0);
            if !go_on {
                return false;
            }
        }
        true
    }
}

fn normalized(r: &Record) -> Record {
    let mut r = r.clone();
    r.normalize();
    r
}

/// Limits on an enumeration, so that a scenario whose runs are long (or never
/// end) gives "inconclusive" in bounded time instead of running for hours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Schedules to run at most.
    pub max_schedules: u64,
    /// Engine events over all schedules together.
    pub max_events: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_schedules: 10_000_000,
            max_events: 100_000_000,
        }
    }
}

impl ExhaustiveReport {
    /// Adds the report of the next part of the enumeration, in its order:
    /// sums for the counts, and the first strictly shorter counterexample and
    /// the first inconclusive schedule, as one search would have kept them.
    fn absorb(&mut self, o: ExhaustiveReport) {
        self.tally.merge(&o.tally);
        if self.by_faults.len() < o.by_faults.len() {
            self.by_faults.resize(o.by_faults.len(), 0);
        }
        for (a, b) in self.by_faults.iter_mut().zip(&o.by_faults) {
            *a += b;
        }
        if let Some(c) = o.shortest {
            let better = self
                .shortest
                .as_ref()
                .is_none_or(|s| (c.faults, c.events) < (s.faults, s.events));
            if better {
                self.shortest = Some(c);
            }
        }
        if self.first_inconclusive.is_none() {
            self.first_inconclusive = o.first_inconclusive;
        }
        self.truncated |= o.truncated;
        self.too_many_points |= o.too_many_points;
        self.interrupted |= o.interrupted;
    }
}

/// Runs every schedule of `model` with at most `max_faults` non-zero
/// decisions, within `bounds`, on `jobs` threads. `progress` gets the number
/// run so far. The report is the same for any `jobs`: see the `parallel` module.
pub fn exhaustive<M: Model + Sync>(
    model: &M,
    max_faults: u32,
    bounds: Bounds,
    jobs: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> ExhaustiveReport {
    assert!(
        bounds.max_schedules > 0 && bounds.max_events > 0,
        "bounds allow at least one schedule"
    );
    let shared = Shared {
        bounds,
        stop_at_failure: false,
        stop,
        progress,
        done: AtomicU64::new(0),
    };
    let report = if jobs <= 1 {
        sequential(model, max_faults, &shared)
    } else {
        parallel::search(model, max_faults, jobs, &shared)
    };
    progress(report.tally.schedules);
    report
}

/// How many schedules exhaustive mode runs before its first failure when it
/// deepens: every schedule with 0 faults, then every one with 1, and so on up
/// to `max_faults`, each level in the order of [`exhaustive`] (a level's
/// search re-runs the shallower schedules it needs for their decision points;
/// those are counted once, at their own level). Returns the count and the
/// level, or `None` when no failure comes within `budget` schedules.
pub fn schedules_to_failure<M: Model>(
    model: &M,
    max_faults: u32,
    budget: u64,
    stop: &AtomicBool,
) -> Option<(u64, u32)> {
    // Schedules with fewer faults than the current level.
    let mut before = 0u64;
    for k in 0..=max_faults {
        let shared = Shared {
            // The level re-runs the `before` shallower schedules, then its own.
            bounds: Bounds {
                max_schedules: budget.max(1),
                ..Bounds::default()
            },
            stop_at_failure: true,
            stop,
            progress: &|_| {},
            done: AtomicU64::new(0),
        };
        let r = sequential(model, k, &shared);
        let at_level = r.by_faults.get(k as usize).copied().unwrap_or(0);
        if r.shortest.is_some() {
            return Some((before + at_level, k));
        }
        before += at_level;
        if !r.complete() || before >= budget {
            return None;
        }
    }
    None
}

/// The reference order: one depth-first search from the all-zero schedule.
fn sequential<M: Model>(model: &M, max_faults: u32, shared: &Shared<'_>) -> ExhaustiveReport {
    let mut worker = Worker::new(model);
    let mut search = Search {
        model,
        worker: &mut worker,
        max_faults,
        shared,
        prior: (0, 0),
        abandon: None,
        report: ExhaustiveReport::new(max_faults),
    };
    let mut record = base_record(model);
    search.visit(&mut record, 0, 0);
    search.report
}

#[cfg(test)]
pub(crate) mod tests;
