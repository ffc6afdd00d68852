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

use crate::choice::{ChoicePoint, Record, StreamLayout};
use crate::engine::{swarm_max_decisions, FaultCounts, Limit, Model, Outcome, Sim, Source};
use crate::trace::NoTrace;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// A failing schedule: its record replays it exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    pub record: Record,
    /// Decisions set to non-zero, swarm mix not counted.
    pub faults: u32,
    pub events: u64,
    pub outcome: Outcome,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExhaustiveReport {
    pub max_faults: u32,
    pub schedules: u64,
    pub events: u64,
    pub holds: u64,
    pub violations: u64,
    pub panics: u64,
    pub inconclusive: u64,
    /// Fewest faults, then fewest events; the first met on a tie.
    pub shortest: Option<Counterexample>,
    /// The first inconclusive schedule met, for a repro when nothing failed.
    pub first_inconclusive: Option<(Record, Limit)>,
    pub faults: FaultCounts,
    pub situations: u64,
    /// The enumeration hit `max_schedules` before it was complete.
    pub truncated: bool,
    /// Stopped from outside (Ctrl-C).
    pub interrupted: bool,
}

impl ExhaustiveReport {
    /// Every schedule within the bound ran.
    pub fn complete(&self) -> bool {
        !self.truncated && !self.interrupted
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

struct Search<'a, M: Model> {
    model: &'a M,
    sim: Sim<M>,
    max_faults: u32,
    max_schedules: u64,
    stop: &'a AtomicBool,
    progress: &'a dyn Fn(u64),
    report: ExhaustiveReport,
}

impl<M: Model> Search<'_, M> {
    /// Runs `record` and returns the decision points it met, or None when the search must end.
    fn run(&mut self, record: &Record, faults: u32) -> Option<Vec<ChoicePoint>> {
        if self.stop.load(Ordering::Relaxed) {
            self.report.interrupted = true;
            return None;
        }
        if self.report.schedules >= self.max_schedules {
            self.report.truncated = true;
            return None;
        }
        let sim = &mut self.sim;
        let model = self.model;
        let result = catch_unwind(AssertUnwindSafe(|| {
            sim.run(
                model,
                Source::Replay {
                    record,
                    log_points: true,
                },
                &mut NoTrace,
            )
        }));
        let r = &mut self.report;
        r.schedules += 1;
        let (outcome, events) = match result {
            Ok(run) => {
                r.events += run.events;
                r.faults.add(&run.faults);
                r.situations |= run.situations;
                (run.outcome, run.events)
            }
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".into());
                (Outcome::Panicked(msg), 0)
            }
        };
        match &outcome {
            Outcome::Holds => r.holds += 1,
            Outcome::Inconclusive(limit) => {
                r.inconclusive += 1;
                if r.first_inconclusive.is_none() {
                    r.first_inconclusive = Some((normalized(record), *limit));
                }
            }
            Outcome::Violation(_) | Outcome::Panicked(_) => {
                if matches!(outcome, Outcome::Panicked(_)) {
                    r.panics += 1;
                } else {
                    r.violations += 1;
                }
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
            }
        }
        if r.schedules & 1023 == 0 {
            (self.progress)(r.schedules);
        }
        Some(self.sim.choices.points().to_vec())
    }

    /// Visits `record` and every schedule that sets more points after `from`.
    /// Returns false when the search must end.
    fn visit(&mut self, record: &mut Record, from: usize, faults: u32) -> bool {
        let Some(points) = self.run(record, faults) else {
            return false;
        };
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

/// Runs every schedule of `model` with at most `max_faults` non-zero decisions,
/// up to `max_schedules` of them. `progress` gets the number run so far.
pub fn exhaustive<M: Model>(
    model: &M,
    max_faults: u32,
    max_schedules: u64,
    stop: &AtomicBool,
    progress: &dyn Fn(u64),
) -> ExhaustiveReport {
    assert!(max_schedules > 0, "at least one schedule");
    let mut search = Search {
        model,
        sim: Sim::new(model),
        max_faults,
        max_schedules,
        stop,
        progress,
        report: ExhaustiveReport {
            max_faults,
            ..ExhaustiveReport::default()
        },
    };
    let mut record = base_record(model);
    search.visit(&mut record, 0, 0);
    (search.progress)(search.report.schedules);
    search.report
}
