//! The enumeration on a toy model: counts, bounds, stops, and the same
//! report on any number of threads.

use super::*;
use crate::actor::{Actor, ActorId, Ctx, Fresh, Message, Timer};
use crate::engine::{Oracle, Violation};
use crate::world::{LinkConfig, PerMilleRange, World};
use crate::TimeUs;

/// A sender that resends until acked, and a receiver without deduplication:
/// one lost ack or one duplicated request is enough for a second effect.
pub(crate) enum Toy {
    Sender,
    Receiver,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Msg {
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
pub(crate) struct Resend;

impl std::fmt::Display for Resend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("resend")
    }
}

// One timer: the default slot.
impl Timer for Resend {}

impl Actor for Toy {
    type Msg = Msg;
    type Obs = ();
    type Timer = Resend;
    type State = ();
    type Storage = bool;

    fn reset(&self, state: Fresh<'_, ()>, storage: Option<Fresh<'_, bool>>) {
        state.set(());
        if let Some(acked) = storage {
            acked.set(false);
        }
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
pub(crate) struct Count(u32);

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

pub(crate) struct ToyModel {
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

pub(crate) fn toy() -> ToyModel {
    let mut world = World::new(vec!["sender".into(), "receiver".into()]);
    // A swarm range starting at zero: exhaustive mode must still let it happen.
    let lossy = LinkConfig::uniform(10, 20)
        .loss(PerMilleRange { lo: 0, hi: 100 })
        .duplicate(PerMilleRange::fixed(50));
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
    let r = exhaustive(&toy(), 3, bounds, 1, &stop, &|_| {});
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
    let r = exhaustive(&toy(), 0, schedules(1000), 1, &stop, &|_| {});
    assert_eq!(r.tally.schedules, 1);
    assert_eq!(r.tally.holds, 1);
    assert!(r.complete());
}

#[test]
fn one_fault_runs_once_per_decision_point_and_finds_the_shortest() {
    let m = toy();
    let stop = AtomicBool::new(false);
    let r = exhaustive(&m, 1, schedules(1000), 1, &stop, &|_| {});
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
            exhaustive(&toy(), k, schedules(100_000), 1, &stop, &|_| {})
                .tally
                .schedules
        })
        .collect();
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
}

#[test]
fn a_stop_request_ends_the_search_and_says_so() {
    let stop = AtomicBool::new(true);
    let r = exhaustive(&toy(), 2, schedules(1000), 1, &stop, &|_| {});
    assert!(r.interrupted && !r.complete());
    assert_eq!(r.tally.schedules, 0);
}

/// Every report field, for comparing enumerations run on different threads.
fn fingerprint(r: &ExhaustiveReport) -> String {
    format!("{r:?}")
}

#[test]
fn threads_do_not_change_the_report() {
    let stop = AtomicBool::new(false);
    for k in 0..5 {
        let one = exhaustive(&toy(), k, Bounds::default(), 1, &stop, &|_| {});
        assert!(one.complete());
        assert!(one.shortest.is_some() || k == 0);
        for jobs in [2, 3, 8] {
            let many = exhaustive(&toy(), k, Bounds::default(), jobs, &stop, &|_| {});
            assert_eq!(
                fingerprint(&many),
                fingerprint(&one),
                "k = {k}, jobs = {jobs}"
            );
        }
        // The counts by number of faults add up to the schedules.
        assert_eq!(one.by_faults.iter().sum::<u64>(), one.tally.schedules);
        assert_eq!(one.by_faults.len() as u32, k + 1);
    }
}

#[test]
fn bounds_cut_at_the_same_schedule_on_any_number_of_threads() {
    let stop = AtomicBool::new(false);
    let all = exhaustive(&toy(), 3, Bounds::default(), 1, &stop, &|_| {});
    let (n, e) = (all.tally.schedules, all.tally.events);
    assert!(n > 20);
    // Cuts at many places: inside the root's unit boundaries and between them,
    // by schedules and by events, and exactly at the end.
    let mut cuts: Vec<Bounds> = (1..=n + 1)
        .step_by(3)
        .map(|max_schedules| Bounds {
            max_schedules,
            max_events: u64::MAX,
        })
        .collect();
    cuts.extend((1..=e + 1).step_by(37).map(|max_events| Bounds {
        max_schedules: u64::MAX,
        max_events,
    }));
    cuts.push(Bounds {
        max_schedules: n,
        max_events: u64::MAX,
    });
    for b in cuts {
        let one = exhaustive(&toy(), 3, b, 1, &stop, &|_| {});
        for jobs in [2, 4] {
            let many = exhaustive(&toy(), 3, b, jobs, &stop, &|_| {});
            assert_eq!(
                fingerprint(&many),
                fingerprint(&one),
                "{b:?}, jobs = {jobs}"
            );
        }
    }
    // Exactly the whole enumeration is complete, one fewer is not.
    let exact = Bounds {
        max_schedules: n,
        max_events: u64::MAX,
    };
    assert!(exhaustive(&toy(), 3, exact, 2, &stop, &|_| {}).complete());
    let short = Bounds {
        max_schedules: n - 1,
        max_events: u64::MAX,
    };
    assert!(exhaustive(&toy(), 3, short, 2, &stop, &|_| {}).truncated);
}

/// The engine's limits on this toy: once the ack came, the sender's resend
/// timer is cancelled, and what is left in the queue is no event. A run that
/// has nothing more to do holds, whatever the cancelled timer's time.
#[test]
fn a_cancelled_timer_trips_no_limit() {
    let quiet = Record::default();
    for (max_time_us, max_steps) in [(800, u64::MAX), (u64::MAX, 2)] {
        let mut m = toy();
        m.world.fault_phase_us = 500;
        m.world.limits.max_time_us = max_time_us;
        m.world.limits.max_steps = max_steps;
        let mut sim = Sim::new(&m);
        let source = Source::Replay {
            record: &quiet,
            log_points: false,
        };
        let r = sim.run(&m, source, &mut NoTrace);
        // The request and the ack, nothing else.
        assert_eq!(
            (r.outcome, r.events),
            (Outcome::Holds, 2),
            "max_time_us {max_time_us}, max_steps {max_steps}"
        );
        assert!(r.end_time_us <= max_time_us);
    }
}

/// The receiver crashes before the request and draws its longest restart;
/// healing restarts it long before that, so the restart drawn at the crash
/// finds it up: no step, and no reason to call a finished run inconclusive.
#[test]
fn a_restart_that_finds_its_actor_up_trips_no_limit() {
    let mut m = toy();
    m.world.fault_phase_us = 500;
    m.world.limits.max_time_us = 5_000;
    m.world.crashes[1] = crate::world::CrashConfig {
        crash_per_mille: PerMilleRange::fixed(100),
        restart_us_min: 1,
        restart_us_max: 10_000,
    };
    let layout = StreamLayout { actors: 2 };
    let mut crash = Record::default();
    crash.set(layout.crash(1), 0, 1);
    crash.set(layout.crash(1), 1, u64::MAX);
    let mut sim = Sim::new(&m);
    let source = Source::Replay {
        record: &crash,
        log_points: false,
    };
    let r = sim.run(&m, source, &mut NoTrace);
    assert_eq!(r.faults.crashed, 1);
    // The lost request, the restart at healing, the resend timer, the
    // resent request and its ack: the restart drawn at the crash is none.
    assert_eq!((r.outcome, r.events), (Outcome::Holds, 5));
    assert!(r.end_time_us <= 5_000);
}

/// A run with more decision points than one run may log cannot be
/// enumerated: the search stops, incomplete, instead of logging without
/// bound (a run may be allowed a billion steps).
#[test]
fn a_run_with_more_points_than_the_log_holds_stops_the_enumeration() {
    let model = toy();
    let all = points_of_base(&model);
    let stop = AtomicBool::new(false);
    let full = exhaustive(&model, 1, Bounds::default(), 1, &stop, &|_| {});
    assert!(full.complete() && !full.too_many_points);
    crate::choice::TEST_MAX_LOGGED_POINTS.with(|m| m.set(all / 2));
    let r = exhaustive(&model, 1, Bounds::default(), 1, &stop, &|_| {});
    crate::choice::TEST_MAX_LOGGED_POINTS.with(|m| m.set(crate::choice::MAX_LOGGED_POINTS));
    assert!(r.too_many_points && !r.complete(), "{all} points");
    assert_eq!(
        r.tally.schedules, 1,
        "the base run is counted, then the search stops"
    );
}

/// A run past the points bound ends the enumeration on any number of
/// threads: the parallel search must not go on with the units after it,
/// which one search never reaches, and so must report what `--jobs 1` does.
#[test]
fn a_run_past_the_points_bound_ends_the_parallel_enumeration_where_one_search_ends() {
    let model = toy();
    let mut sim = Sim::new(&model);
    let base = base_record(&model);
    sim.run(
        &model,
        Source::Replay {
            record: &base,
            log_points: true,
        },
        &mut NoTrace,
    );
    // The quiet schedule fits; a fault that adds a message does not.
    let bound = sim.choices.points().len();
    let stop = AtomicBool::new(false);
    crate::choice::TEST_MAX_LOGGED_POINTS.with(|m| m.set(bound));
    let one = exhaustive(&model, 1, Bounds::default(), 1, &stop, &|_| {});
    let two = exhaustive(&model, 1, Bounds::default(), 2, &stop, &|_| {});
    crate::choice::TEST_MAX_LOGGED_POINTS.with(|m| m.set(crate::choice::MAX_LOGGED_POINTS));
    assert!(one.too_many_points, "a fault adds decision points");
    assert_eq!(
        (two.tally.schedules, two.too_many_points, &two.by_faults),
        (one.tally.schedules, one.too_many_points, &one.by_faults)
    );
}

/// The toy whose run number `at` (counted on this thread, from 1) asks
/// the search to stop and then panics, as a run does whose external
/// program Ctrl-C killed.
pub(crate) struct BreaksAtStop {
    toy: ToyModel,
    stop: &'static AtomicBool,
    at: u32,
}

thread_local! {
    static RUNS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

pub(crate) struct Breaker {
    count: Count,
    stop: &'static AtomicBool,
    at: u32,
}

impl Oracle for Breaker {
    type Obs = ();
    fn reset(&mut self) {
        self.count.reset();
        let n = RUNS.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        if n == self.at {
            self.stop.store(true, Ordering::Relaxed);
            panic!("the program was killed");
        }
    }
    fn observe(&mut self, t: TimeUs, a: ActorId, o: &()) -> Option<Violation> {
        self.count.observe(t, a, o)
    }
    fn finish(&mut self, t: TimeUs) -> Option<Violation> {
        self.count.finish(t)
    }
}

impl Model for BreaksAtStop {
    type Node = Toy;
    type Oracle = Breaker;
    fn world(&self) -> &World {
        self.toy.world()
    }
    fn nodes(&self) -> &[Toy] {
        self.toy.nodes()
    }
    fn new_oracle(&self) -> Breaker {
        Breaker {
            count: Count::default(),
            stop: self.stop,
            at: self.at,
        }
    }
}

/// A run made since this thread last called it.
pub(crate) fn breaks_at_stop(stop: &'static AtomicBool, at: u32) -> BreaksAtStop {
    RUNS.with(|r| r.set(0));
    BreaksAtStop {
        toy: toy(),
        stop,
        at,
    }
}

#[test]
fn a_run_the_stop_broke_off_does_not_displace_the_counterexample_found_before() {
    static STOP: AtomicBool = AtomicBool::new(false);
    // Every schedule with one fault, on this thread: the last one breaks
    // off, with no events and one fault, which would make it the shortest.
    let all = exhaustive(
        &toy(),
        1,
        schedules(1000),
        1,
        &AtomicBool::new(false),
        &|_| {},
    );
    let found = all.shortest.expect("the toy fails with one fault");
    let last = u32::try_from(all.tally.schedules).unwrap();
    let m = breaks_at_stop(&STOP, last);
    let r = exhaustive(&m, 1, schedules(1000), 1, &STOP, &|_| {});
    assert!(
        STOP.load(Ordering::Relaxed),
        "the last run asked for the stop"
    );
    assert_eq!(r.tally.schedules, all.tally.schedules);
    assert_eq!(r.tally.panics, 1, "the broken-off run is counted as run");
    assert_eq!(r.shortest, Some(found), "and is no counterexample");
}

#[test]
fn a_run_that_panics_with_no_stop_asked_is_a_counterexample() {
    static STOP: AtomicBool = AtomicBool::new(false);
    static NEVER: AtomicBool = AtomicBool::new(false);
    let m = breaks_at_stop(&STOP, 1);
    let r = exhaustive(&m, 1, schedules(1000), 1, &NEVER, &|_| {});
    let c = r.shortest.expect("the panic is a failure");
    assert!(matches!(c.outcome, Outcome::Panicked(_)), "{c:?}");
    assert_eq!(c.faults, 0);
}

/// The same rule in a seed sweep: the seed the stop broke off is counted,
/// but a failing seed found before it stays the one reported, even where
/// the broken-off seed is the lowest failure (another thread's chunk).
#[test]
fn a_seed_the_stop_broke_off_is_not_the_sweeps_failure() {
    static STOP: AtomicBool = AtomicBool::new(false);
    let seeds = crate::SeedRange { start: 0, end: 64 };
    let m = breaks_at_stop(&STOP, 1);
    let sum = crate::explore::explore(&m, seeds, 1, &STOP, &|_| {});
    assert!(STOP.load(Ordering::Relaxed));
    assert_eq!(sum.tally.panics, 1, "seed 0 ran and broke off");
    assert!(sum.first_panic.is_none(), "{:?}", sum.first_panic);
    let f = sum.first_failure.expect("a later seed of the chunk fails");
    assert!(
        f.seed > 0 && matches!(f.outcome, Outcome::Violation(_)),
        "{f:?}"
    );
}
