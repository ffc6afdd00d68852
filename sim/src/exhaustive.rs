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
use crate::engine::{swarm_max_decisions, Limit, Model, Outcome, RunReport, Sim, Source};
use crate::explore::Tally;
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
    pub tally: Tally,
    /// Fewest faults, then fewest events; the first met on a tie.
    pub shortest: Option<Counterexample>,
    /// The first inconclusive schedule met, for a repro when nothing failed.
    pub first_inconclusive: Option<(Record, Limit)>,
    /// The enumeration hit `max_schedules` or `max_events` before it was complete.
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
    bounds: Bounds,
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
        if self.report.tally.schedules >= self.bounds.max_schedules
            || self.report.tally.events >= self.bounds.max_events
        {
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
        let run = result.unwrap_or_else(|payload| {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            RunReport::panicked(msg)
        });
        let r = &mut self.report;
        r.tally.add_counted(&run, self.sim.oracle());
        let (outcome, events) = (run.outcome, run.events);
        match &outcome {
            Outcome::Holds => {}
            Outcome::Inconclusive(limit) => {
                if r.first_inconclusive.is_none() {
                    r.first_inconclusive = Some((normalized(record), *limit));
                }
            }
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
            }
        }
        if r.tally.schedules & 1023 == 0 {
            (self.progress)(r.tally.schedules);
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

/// Limits on an enumeration, so that a scenario whose runs are long (or never
/// end) gives "inconclusive" in bounded time instead of running for hours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
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

/// Runs every schedule of `model` with at most `max_faults` non-zero decisions,
/// within `bounds`. `progress` gets the number run so far.
pub fn exhaustive<M: Model>(
    model: &M,
    max_faults: u32,
    bounds: Bounds,
    stop: &AtomicBool,
    progress: &dyn Fn(u64),
) -> ExhaustiveReport {
    assert!(
        bounds.max_schedules > 0 && bounds.max_events > 0,
        "bounds allow at least one schedule"
    );
    let mut search = Search {
        model,
        sim: Sim::new(model),
        max_faults,
        bounds,
        stop,
        progress,
        report: ExhaustiveReport {
            max_faults,
            ..ExhaustiveReport::default()
        },
    };
    let mut record = base_record(model);
    search.visit(&mut record, 0, 0);
    (search.progress)(search.report.tally.schedules);
    search.report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actor::{Actor, ActorId, Ctx, Message, Timer};
    use crate::engine::{Oracle, Violation};
    use crate::world::{LinkConfig, PerMilleRange, World};
    use crate::TimeUs;

    /// A sender that resends until acked, and a receiver without deduplication:
    /// one lost ack or one duplicated request is enough for a second effect.
    enum Toy {
        Sender,
        Receiver,
    }

    #[derive(Clone, Copy, Debug)]
    enum Msg {
        Req,
        Ack,
    }

    impl std::fmt::Display for Msg {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{self:?}")
        }
    }

    impl Message for Msg {}

    /// The sender's one timer.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Resend;

    impl std::fmt::Display for Resend {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("resend")
        }
    }

    impl Timer for Resend {
        fn slot(&self) -> u32 {
            0
        }
    }

    impl Actor for Toy {
        type Msg = Msg;
        type Obs = ();
        type Timer = Resend;
        type State = ();
        type Storage = bool;

        fn timer_slots(&self) -> u32 {
            1
        }

        fn reset_storage(&self, s: &mut Option<bool>) {
            *s = Some(false);
        }

        fn reset_state(&self, s: &mut Option<()>) {
            *s = Some(());
        }

        fn on_start(&self, _: &mut (), acked: &mut bool, ctx: &mut impl Ctx<Self>) {
            if matches!(self, Toy::Sender) && !*acked {
                ctx.send(1, Msg::Req);
                ctx.set_timer(Resend, 1_000);
            }
        }

        fn on_msg(
            &self,
            _: &mut (),
            acked: &mut bool,
            from: ActorId,
            msg: Msg,
            ctx: &mut impl Ctx<Self>,
        ) {
            match (self, msg) {
                (Toy::Receiver, Msg::Req) => {
                    ctx.observe(());
                    ctx.send(from, Msg::Ack);
                }
                (Toy::Sender, Msg::Ack) => {
                    *acked = true;
                    ctx.cancel_timer(Resend);
                }
                _ => {}
            }
        }

        fn on_timer(&self, _: &mut (), acked: &mut bool, _: Resend, ctx: &mut impl Ctx<Self>) {
            if !*acked {
                ctx.send(1, Msg::Req);
                ctx.set_timer(Resend, 1_000);
            }
        }
    }

    #[derive(Default)]
    struct Count(u32);

    impl Oracle for Count {
        type Obs = ();
        fn reset(&mut self) {
            self.0 = 0;
        }
        fn observe(&mut self, _: TimeUs, _: ActorId, _: &()) -> Option<Violation> {
            self.0 += 1;
            (self.0 > 1).then(|| Violation {
                invariant: "once",
                operation: 0,
                message: "a second effect".into(),
            })
        }
        fn finish(&mut self, _: TimeUs) -> Option<Violation> {
            None
        }
    }

    struct ToyModel {
        world: World,
        nodes: [Toy; 2],
    }

    impl Model for ToyModel {
        type Node = Toy;
        type Oracle = Count;
        fn world(&self) -> &World {
            &self.world
        }
        fn nodes(&self) -> &[Toy] {
            &self.nodes
        }
        fn new_oracle(&self) -> Count {
            Count::default()
        }
    }

    fn toy() -> ToyModel {
        let mut world = World::new(vec!["sender".into(), "receiver".into()]);
        let lossy = LinkConfig {
            // A swarm range starting at zero: exhaustive mode must still let it happen.
            loss_per_mille: PerMilleRange { lo: 0, hi: 100 },
            duplicate_per_mille: PerMilleRange::fixed(50),
            delay_us_min: 10,
            delay_us_max: 20,
        };
        *world.link_mut(0, 1) = lossy;
        *world.link_mut(1, 0) = lossy;
        world.fault_phase_us = 100_000;
        ToyModel {
            world,
            nodes: [Toy::Sender, Toy::Receiver],
        }
    }

    fn schedules(max_schedules: u64) -> Bounds {
        Bounds {
            max_schedules,
            ..Bounds::default()
        }
    }

    #[test]
    fn the_event_bound_truncates() {
        let stop = AtomicBool::new(false);
        let bounds = Bounds {
            max_schedules: 1000,
            max_events: 1,
        };
        let r = exhaustive(&toy(), 3, bounds, &stop, &|_| {});
        assert!(r.truncated && !r.complete());
        assert_eq!(
            r.tally.schedules, 1,
            "the first schedule runs, then the bound holds"
        );
    }

    fn points_of_base(model: &ToyModel) -> usize {
        let mut sim = Sim::new(model);
        let base = base_record(model);
        let r = sim.run(
            model,
            Source::Replay {
                record: &base,
                log_points: true,
            },
            &mut NoTrace,
        );
        assert_eq!(r.outcome, Outcome::Holds, "no fault, no second effect");
        sim.choices
            .points()
            .iter()
            .filter(|p| p.stream != StreamLayout::SWARM)
            .count()
    }

    #[test]
    fn zero_faults_is_the_one_quiet_schedule() {
        let stop = AtomicBool::new(false);
        let r = exhaustive(&toy(), 0, schedules(1000), &stop, &|_| {});
        assert_eq!(r.tally.schedules, 1);
        assert_eq!(r.tally.holds, 1);
        assert!(r.complete());
    }

    #[test]
    fn one_fault_runs_once_per_decision_point_and_finds_the_shortest() {
        let m = toy();
        let stop = AtomicBool::new(false);
        let r = exhaustive(&m, 1, schedules(1000), &stop, &|_| {});
        assert_eq!(r.tally.schedules, 1 + points_of_base(&m) as u64);
        let c = r.shortest.expect("a lost ack or a duplicate breaks it");
        assert_eq!(c.faults, 1);
        assert_eq!(
            c.record.nonzero_count(),
            base_record(&m).nonzero_count() + 1,
            "the swarm mix plus one fault"
        );
        // The record alone replays the failure.
        let mut sim = Sim::new(&m);
        let again = sim.run(
            &m,
            Source::Replay {
                record: &c.record,
                log_points: false,
            },
            &mut NoTrace,
        );
        assert_eq!(again.outcome, c.outcome);
        assert_eq!(again.events, c.events);
    }

    #[test]
    fn more_faults_allowed_means_strictly_more_schedules() {
        let stop = AtomicBool::new(false);
        let counts: Vec<u64> = (0..4)
            .map(|k| {
                exhaustive(&toy(), k, schedules(100_000), &stop, &|_| {})
                    .tally
                    .schedules
            })
            .collect();
        assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    }

    #[test]
    fn a_stop_request_ends_the_search_and_says_so() {
        let stop = AtomicBool::new(true);
        let r = exhaustive(&toy(), 2, schedules(1000), &stop, &|_| {});
        assert!(r.interrupted && !r.complete());
        assert_eq!(r.tally.schedules, 0);
    }
}
