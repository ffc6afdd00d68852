//! Laws of the engine, checked with proptest on a toy model that knows nothing
//! of payments: actors pass a token around and count their steps, once in
//! durable storage and once in volatile state.

use proptest::prelude::*;
use sim::{
    Actor, ActorId, CrashConfig, Ctx, Fresh, Message, Model, Oracle, PerMilleRange, Recorder, Sim,
    Source, TimeUs, Timer, TraceEntry, TraceKind, Violation, World, US_PER_MS,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Token {
    hops: u32,
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "token after {} hops", self.hops)
    }
}

impl Message for Token {}

/// Every actor's one timer: it counts a step when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tick;

impl std::fmt::Display for Tick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("tick")
    }
}

// One timer: the default slot.
impl Timer for Tick {}

/// What an actor saw at one step: both counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Counted {
    durable: u64,
    volatile: u64,
}

struct Hopper {
    peers: u32,
    max_hops: u32,
    /// A deliberate model bug under some schedules, for the panic test.
    buggy: bool,
}

#[derive(Debug)]
struct Volatile {
    steps: u64,
}

#[derive(Debug)]
struct Durable {
    steps: u64,
}

impl Actor for Hopper {
    type Msg = Token;
    type Obs = Counted;
    type Timer = Tick;
    type State = Volatile;
    type Storage = Durable;

    fn reset(&self, state: Fresh<'_, Volatile>, storage: Option<Fresh<'_, Durable>>) {
        state.set(Volatile { steps: 0 });
        if let Some(s) = storage {
            s.set(Durable { steps: 0 });
        }
    }

    fn on_start(&self, _st: &mut Volatile, _s: &mut Durable, ctx: &mut impl Ctx<Self>) {
        if ctx.me() == 0 && !ctx.restarted() {
            for _ in 0..3 {
                ctx.send(1 % self.peers, Token { hops: 0 });
            }
        }
        ctx.set_timer(Tick, 5 * US_PER_MS);
    }

    fn on_msg(
        &self,
        st: &mut Volatile,
        s: &mut Durable,
        _from: ActorId,
        msg: Token,
        ctx: &mut impl Ctx<Self>,
    ) {
        assert!(
            !(self.buggy && msg.hops == 7 && ctx.now_us() % 5 == 0),
            "model bug at {} us",
            ctx.now_us()
        );
        st.steps += 1;
        s.steps += 1;
        ctx.observe(Counted {
            durable: s.steps,
            volatile: st.steps,
        });
        if msg.hops < self.max_hops {
            let to = ctx.range(0, u64::from(self.peers - 1)) as u32;
            ctx.send(to, Token { hops: msg.hops + 1 });
        }
    }

    fn on_timer(&self, st: &mut Volatile, s: &mut Durable, _timer: Tick, ctx: &mut impl Ctx<Self>) {
        st.steps += 1;
        s.steps += 1;
        ctx.observe(Counted {
            durable: s.steps,
            volatile: st.steps,
        });
    }

    /// A crash after an odd number of steps since the start "interrupts
    /// something": what the crash law below checks the engine reports.
    fn on_crash(&self, st: &Volatile, _s: &Durable, reached: &mut dyn FnMut(sim::SituationId)) {
        if st.steps % 2 == 1 {
            reached(ODD_CRASH);
        }
    }
}

/// The situation a [`Hopper`] reports when it crashes after an odd number of steps.
const ODD_CRASH: sim::SituationId = 1;

/// Finds nothing, unless told to call the step at which some actor's durable
/// count reaches `violate_at` a violation: a violation in the middle of a
/// handler, with commands still to come after it.
struct StepOracle {
    violate_at: Option<u64>,
}

impl Oracle for StepOracle {
    type Obs = Counted;
    fn reset(&mut self) {}
    fn observe(&mut self, _: TimeUs, actor: ActorId, c: &Counted) -> Option<Violation> {
        (Some(c.durable) == self.violate_at).then(|| Violation {
            invariant: "step-limit",
            operation: u64::from(actor),
            message: format!("actor {actor} took step {}", c.durable),
        })
    }
    fn finish(&mut self, _: TimeUs) -> Option<Violation> {
        None
    }
}

struct Toy {
    world: World,
    nodes: Vec<Hopper>,
    violate_at: Option<u64>,
}

impl Model for Toy {
    type Node = Hopper;
    type Oracle = StepOracle;
    fn world(&self) -> &World {
        &self.world
    }
    fn nodes(&self) -> &[Hopper] {
        &self.nodes
    }
    fn new_oracle(&self) -> StepOracle {
        StepOracle {
            violate_at: self.violate_at,
        }
    }
}

fn toy(actors: u32, loss: u32, dup: u32, crash: u32, delay_ms_max: u64) -> Toy {
    let mut world = World::new((0..actors).map(|i| format!("a{i}")).collect());
    for l in &mut world.links {
        l.loss_per_mille = PerMilleRange { lo: 0, hi: loss };
        l.duplicate_per_mille = PerMilleRange::fixed(dup);
        l.delay_us_min = US_PER_MS;
        l.delay_us_max = delay_ms_max * US_PER_MS;
    }
    for c in &mut world.crashes {
        *c = CrashConfig {
            crash_per_mille: PerMilleRange::fixed(crash),
            restart_us_min: US_PER_MS,
            restart_us_max: 20 * US_PER_MS,
        };
    }
    world.fault_phase_us = 200 * US_PER_MS;
    let nodes = (0..actors)
        .map(|_| Hopper {
            peers: actors,
            max_hops: 40,
            buggy: false,
        })
        .collect();
    Toy {
        world,
        nodes,
        violate_at: None,
    }
}

type Trace = Vec<TraceEntry<Token, Counted, Tick>>;

fn traced(model: &Toy, source: Source<'_>) -> (Trace, sim::RunReport) {
    let mut sim = Sim::new(model);
    let mut rec = Recorder::default();
    let report = sim.run(model, source, &mut rec);
    (rec.entries, report)
}

fn params() -> impl Strategy<Value = (u64, u32, u32, u32, u32, u64)> {
    (
        any::<u64>(),
        2u32..5,
        0u32..400,
        0u32..200,
        0u32..150,
        1u64..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn same_seed_gives_an_identical_trace((seed, n, loss, dup, crash, delay) in params()) {
        let m = toy(n, loss, dup, crash, delay);
        let a = traced(&m, Source::Seed { seed, record: false });
        let b = traced(&m, Source::Seed { seed, record: true });
        prop_assert_eq!(a, b);
    }

    #[test]
    fn replay_from_recorded_choices_gives_an_identical_trace((seed, n, loss, dup, crash, delay) in params()) {
        let m = toy(n, loss, dup, crash, delay);
        let mut sim = Sim::new(&m);
        let mut rec = Recorder::default();
        let first = sim.run(&m, Source::Seed { seed, record: true }, &mut rec);
        let record = sim.choices.take_recorded();
        let (again, report) = traced(&m, Source::Replay { record: &record, log_points: false });
        prop_assert_eq!(rec.entries, again);
        prop_assert_eq!(first, report);
    }

    /// A sweep's run applies each command where the handler gives it, a
    /// traced run buffers them until the handler returns: the two agree, also
    /// when a violation falls in the middle of a handler and the commands
    /// after it must not take effect.
    #[test]
    fn a_sweeps_run_is_the_traced_run((seed, n, loss, dup, crash, delay) in params(), at in proptest::option::of(1u64..12)) {
        let mut m = toy(n, loss, dup, crash, delay);
        m.violate_at = at;
        let (_, traced) = traced(&m, Source::Seed { seed, record: false });
        let mut sim = Sim::new(&m);
        let untraced = sim.run(&m, Source::Seed { seed, record: false }, &mut sim::NoTrace);
        prop_assert_eq!(&untraced, &traced);
        prop_assert_eq!(&sim.run_seed(&m, seed), &traced);
    }

    #[test]
    fn virtual_time_never_goes_backwards((seed, n, loss, dup, crash, delay) in params()) {
        let (trace, _) = traced(&toy(n, loss, dup, crash, delay), Source::Seed { seed, record: false });
        for w in trace.windows(2) {
            prop_assert!(w[0].time_us <= w[1].time_us, "{:?} then {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn every_delivered_message_was_sent((seed, n, loss, dup, crash, delay) in params()) {
        let (trace, _) = traced(&toy(n, loss, dup, crash, delay), Source::Seed { seed, record: false });
        let mut sent: Vec<(u32, ActorId, ActorId, Token, u8)> = Vec::new();
        let mut delivered: Vec<u32> = Vec::new();
        for e in &trace {
            match e.kind {
                TraceKind::Send { from, to, msg, msg_id, copies, .. } => sent.push((msg_id, from, to, msg, copies)),
                TraceKind::Deliver { from, to, msg, msg_id, duplicate } => {
                    let s = sent.iter().find(|s| s.0 == msg_id);
                    prop_assert!(s.is_some(), "message {} delivered but never sent", msg_id);
                    let s = s.unwrap();
                    prop_assert_eq!((s.1, s.2, s.3), (from, to, msg));
                    // A copy beyond the first exists only if the network duplicated the send.
                    let copies = delivered.iter().filter(|&&d| d == msg_id).count() + 1;
                    prop_assert!(copies <= usize::from(s.4));
                    // The copy may overtake the original (delays reorder), so only its existence is checked.
                    if duplicate {
                        prop_assert_eq!(s.4, 2);
                    }
                    delivered.push(msg_id);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_crash_loses_volatile_state_and_keeps_durable_storage((seed, n, loss, dup, _c, delay) in params()) {
        let (trace, report) = traced(&toy(n, loss, dup, 120, delay), Source::Seed { seed, record: false });
        let mut last: Vec<Counted> = vec![Counted { durable: 0, volatile: 0 }; n as usize];
        let mut crashed = vec![false; n as usize];
        for e in &trace {
            match e.kind {
                TraceKind::Crash { actor } => crashed[actor as usize] = true,
                TraceKind::Observe { actor, obs } => {
                    let prev = last[actor as usize];
                    prop_assert_eq!(obs.durable, prev.durable + 1, "storage survives every crash");
                    if crashed[actor as usize] {
                        prop_assert_eq!(obs.volatile, 1, "state starts afresh after a crash");
                        crashed[actor as usize] = false;
                    } else {
                        prop_assert_eq!(obs.volatile, prev.volatile + 1);
                    }
                    last[actor as usize] = obs;
                }
                _ => {}
            }
        }
        prop_assert_eq!(report.faults.crashed as usize, trace.iter().filter(|e| matches!(e.kind, TraceKind::Crash { .. })).count());
    }

    #[test]
    fn a_crash_reports_what_the_state_it_drops_tells((seed, n, loss, dup, _c, delay) in params()) {
        let (trace, report) = traced(&toy(n, loss, dup, 120, delay), Source::Seed { seed, record: false });
        // Steps since the last start, from what each actor observed.
        let mut steps = vec![0u64; n as usize];
        let mut odd_crash = false;
        for (i, e) in trace.iter().enumerate() {
            match e.kind {
                TraceKind::Observe { actor, obs } => steps[actor as usize] = obs.volatile,
                TraceKind::Crash { actor } => {
                    let odd = steps[actor as usize] % 2 == 1;
                    let next = trace.get(i + 1).map(|n| &n.kind);
                    let said = matches!(next, Some(TraceKind::Reached { actor: a, situation: ODD_CRASH }) if *a == actor);
                    // Reported once per run, at the first such crash.
                    prop_assert_eq!(said, odd && !odd_crash, "crash of {} at step {}", actor, e.step);
                    odd_crash |= odd;
                    steps[actor as usize] = 0;
                }
                TraceKind::Reached { situation: ODD_CRASH, .. } => {
                    prop_assert!(i > 0 && matches!(trace[i - 1].kind, TraceKind::Crash { .. }), "only at a crash");
                }
                _ => {}
            }
        }
        prop_assert_eq!(report.situations.contains(ODD_CRASH), odd_crash);
    }
}

#[test]
fn crashes_do_happen_in_the_crash_law() {
    // Guards the law above against vacuity: with these parameters crashes fire.
    let m = toy(3, 0, 0, 120, 5);
    let crashes: u64 = (0..50)
        .map(|seed| {
            traced(
                &m,
                Source::Seed {
                    seed,
                    record: false,
                },
            )
            .1
            .faults
            .crashed
        })
        .sum();
    assert!(crashes > 10, "only {crashes} crashes in 50 seeds");
}

#[test]
fn crashes_after_odd_and_after_even_steps_both_happen_in_the_report_law() {
    // Guards the law above against vacuity: some runs report the situation
    // at a crash, others crash and report nothing.
    let m = toy(3, 0, 0, 120, 5);
    let (mut said, mut silent) = (0, 0);
    for seed in 0..50 {
        let (_, r) = traced(
            &m,
            Source::Seed {
                seed,
                record: false,
            },
        );
        if r.situations.contains(ODD_CRASH) {
            said += 1;
        } else if r.faults.crashed > 0 {
            silent += 1;
        }
    }
    assert!(
        said > 5 && silent > 0,
        "{said} runs reported, {silent} crashed silently"
    );
}

#[test]
fn hitting_the_step_limit_is_inconclusive_not_a_hang() {
    let mut m = toy(3, 0, 0, 0, 5);
    m.world.limits.max_steps = 10;
    let (_, report) = traced(
        &m,
        Source::Seed {
            seed: 1,
            record: false,
        },
    );
    assert_eq!(
        report.outcome,
        sim::Outcome::Inconclusive(sim::Limit::Steps)
    );
}

#[test]
fn healing_restarts_every_crashed_actor_and_the_run_ends_quiet() {
    let m = toy(3, 100, 50, 150, 5);
    for seed in 0..30 {
        let (trace, report) = traced(
            &m,
            Source::Seed {
                seed,
                record: false,
            },
        );
        assert_eq!(report.outcome, sim::Outcome::Holds);
        let heal = trace
            .iter()
            .position(|e| matches!(e.kind, TraceKind::HealingStarts))
            .expect("every run reaches the healing phase");
        // No faults after healing starts.
        assert!(!trace[heal..].iter().any(|e| matches!(
            e.kind,
            TraceKind::Crash { .. }
                | TraceKind::Drop {
                    reason: sim::DropReason::Lost | sim::DropReason::Partitioned,
                    ..
                }
        )));
    }
}

/// `fault_phase_us` says until when faults happen: with 0 there is no fault
/// phase, so what the actors send as they start (at time 0) is not lost.
#[test]
fn a_zero_fault_phase_has_no_faults_not_even_at_the_starts() {
    let mut m = toy(2, 0, 0, 0, 5);
    for l in &mut m.world.links {
        l.loss_per_mille = PerMilleRange::fixed(1000);
    }
    m.world.fault_phase_us = 0;
    for (sweep, seed) in [(false, 1), (true, 2)] {
        let report = if sweep {
            Sim::new(&m).run_seed(&m, seed)
        } else {
            traced(
                &m,
                Source::Seed {
                    seed,
                    record: false,
                },
            )
            .1
        };
        assert_eq!(report.outcome, sim::Outcome::Holds);
        assert_eq!(report.faults, sim::FaultCounts::default(), "sweep={sweep}");
    }
    let (trace, _) = traced(
        &m,
        Source::Seed {
            seed: 1,
            record: false,
        },
    );
    let heal = trace
        .iter()
        .position(|e| matches!(e.kind, TraceKind::HealingStarts))
        .expect("the run heals");
    let first_start = trace
        .iter()
        .position(|e| matches!(e.kind, TraceKind::Start { .. }))
        .expect("actors start");
    assert!(heal < first_start, "healing starts before the actors do");
}

#[test]
fn a_panic_in_a_model_is_a_failure_of_its_seed_not_a_crash_of_the_sweep() {
    let mut m = toy(2, 0, 300, 0, 30);
    for n in &mut m.nodes {
        n.buggy = true;
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let sum = sim::explore(&m, sim::SeedRange { start: 0, end: 200 }, 2, &stop, &|_| {});
    let mut sim = Sim::new(&m);
    let f = sum.first_failure.clone().expect("a failing seed");
    let below: Vec<bool> = (0..=f.seed)
        .map(|seed| sim::run_guarded(&mut sim, &m, seed).outcome.is_failure())
        .collect();
    // A panic leaves the simulator fit for the next seed: the seeds after it
    // run as on a simulator that never saw a panic.
    let later = f.seed + 1..f.seed + 40;
    let after: Vec<_> = later
        .clone()
        .map(|seed| sim::run_guarded(&mut sim, &m, seed))
        .collect();
    let fresh: Vec<_> = later
        .map(|seed| sim::run_guarded(&mut Sim::new(&m), &m, seed))
        .collect();
    std::panic::set_hook(hook);
    assert_eq!(after, fresh);
    assert_eq!(sum.tally.schedules, 200, "the sweep finished every seed");
    assert!(
        sum.tally.panics > 0 && sum.tally.panics < 200,
        "{} panics",
        sum.tally.panics
    );
    assert!(matches!(&f.outcome, sim::Outcome::Panicked(m) if m.contains("model bug")));

    // It is the lowest seed that panics, whichever thread found it.
    assert_eq!(below.iter().position(|&b| b), Some(f.seed as usize));
}

#[test]
fn partitions_cut_one_way_or_both_ways_only_inside_their_window() {
    let window_us = 100 * US_PER_MS;
    for both_ways in [false, true] {
        let mut m = toy(2, 0, 0, 0, 5);
        // Cuts a1 -> a0, and with both_ways a0 -> a1 too.
        m.world.partitions.push(sim::Partition {
            a: 1,
            b: 0,
            both_ways,
            start_us: 0,
            end_us: window_us,
        });
        let (trace, report) = traced(
            &m,
            Source::Seed {
                seed: 3,
                record: false,
            },
        );
        assert!(report.faults.partitioned > 0, "both_ways={both_ways}");
        let mut forward_in_window = 0;
        for e in &trace {
            let inside = e.time_us < window_us;
            match e.kind {
                TraceKind::Send { from, to, .. } if inside && from != to => {
                    assert!(!both_ways && from == 0, "{e:?} crossed the partition");
                    forward_in_window += 1;
                }
                TraceKind::Drop {
                    from,
                    reason: sim::DropReason::Partitioned,
                    ..
                } => {
                    assert!(inside, "{e:?} dropped outside the window");
                    assert!(
                        both_ways || from == 1,
                        "{e:?} dropped in the open direction"
                    );
                }
                _ => {}
            }
        }
        assert_eq!(forward_in_window > 0, !both_ways);
    }
}

/// A tracer that asks for snapshots and keeps them.
#[derive(Default)]
struct Snapshots {
    taken: Vec<(u64, ActorId, Option<String>, String)>,
}

impl sim::Tracer<Token, Counted, Tick> for Snapshots {
    const ENABLED: bool = true;
    const SNAPSHOTS: bool = true;
    fn record(&mut self, _: TraceEntry<Token, Counted, Tick>) {}
    fn snapshot(
        &mut self,
        step: u64,
        actor: ActorId,
        state: Option<&dyn std::fmt::Debug>,
        storage: &dyn std::fmt::Debug,
    ) {
        self.taken.push((
            step,
            actor,
            state.map(|s| format!("{s:?}")),
            format!("{storage:?}"),
        ));
    }
}

#[test]
fn snapshots_show_volatile_state_gone_after_a_crash_and_storage_kept() {
    let m = toy(3, 0, 0, 120, 5);
    let mut saw_crash = false;
    for seed in 0..20 {
        let mut sim = Sim::new(&m);
        let mut snaps = Snapshots::default();
        let plain = sim.run_seed(&m, seed);
        let r = sim.run(
            &m,
            Source::Seed {
                seed,
                record: false,
            },
            &mut snaps,
        );
        assert_eq!(r, plain, "asking for snapshots changes nothing");
        for (i, (_, actor, state, storage)) in snaps.taken.iter().enumerate() {
            if state.is_none() {
                saw_crash = true;
                // The storage a crash leaves is the storage the actor had.
                let before = snaps.taken[..i].iter().rev().find(|t| t.1 == *actor);
                if let Some(b) = before {
                    assert_eq!(&b.3, storage);
                }
            }
        }
    }
    assert!(saw_crash, "crashes happen with these parameters");
}

/// The toy with restarts of 30 to 60 ms: long against its 200 ms fault phase,
/// so that some crashes fall within a restart's shortest time of its end.
fn slow_restarts(seed_crash: u32) -> Toy {
    let mut m = toy(3, 0, 0, seed_crash, 5);
    for c in &mut m.world.crashes {
        c.restart_us_min = 30 * US_PER_MS;
        c.restart_us_max = 60 * US_PER_MS;
    }
    m
}

/// Each restart in `trace`, with the time of the crash before it.
fn restarts(trace: &Trace, n: usize) -> Vec<(TimeUs, TimeUs)> {
    let mut crashed_at: Vec<Option<TimeUs>> = vec![None; n];
    let mut out = Vec::new();
    for e in trace {
        match e.kind {
            TraceKind::Crash { actor } => crashed_at[actor as usize] = Some(e.time_us),
            TraceKind::Restart { actor } => {
                let at = crashed_at[actor as usize]
                    .take()
                    .expect("a restart follows a crash");
                out.push((at, e.time_us));
            }
            _ => {}
        }
    }
    out
}

/// The end of the fault phase stops faults, not the time a restart takes:
/// no actor is back sooner than `restart_us_min` after its crash, and none
/// later than the end of the fault phase or that, whichever comes last.
/// Some of these runs crash an actor less than its shortest restart before
/// healing starts (counted, so that the law is not vacuous).
#[test]
fn a_restart_never_comes_sooner_than_its_shortest_time() {
    let mut late = 0;
    for crash in [60, 150] {
        let m = slow_restarts(crash);
        let fault_end = m.world.fault_phase_us;
        for seed in 0..300 {
            let (trace, _) = traced(
                &m,
                Source::Seed {
                    seed,
                    record: false,
                },
            );
            for (crashed, back) in restarts(&trace, 3) {
                assert!(
                    back >= crashed + 30 * US_PER_MS,
                    "seed {seed}: crashed at {crashed} µs, back at {back} µs"
                );
                assert!(
                    back <= (crashed + 60 * US_PER_MS).max(fault_end),
                    "seed {seed}: crashed at {crashed} µs, back at {back} µs"
                );
                if crashed + 30 * US_PER_MS > fault_end {
                    late += 1;
                }
            }
        }
    }
    assert!(late > 0, "no crash within 30 ms of the fault phase's end");
}

/// An actor that arms its one timer `arms` times as it starts, each arming
/// replacing the last (the latest arming is the soonest), and sends `sends`
/// tokens to itself that do nothing: the queue then holds `arms - 1`
/// replaced timers that will never fire, next to `sends + 1` real events.
struct Rearm {
    arms: u64,
    sends: u32,
}

impl Actor for Rearm {
    type Msg = Token;
    type Obs = Counted;
    type Timer = Tick;
    type State = Volatile;
    type Storage = Durable;

    fn reset(&self, state: Fresh<'_, Volatile>, storage: Option<Fresh<'_, Durable>>) {
        state.set(Volatile { steps: 0 });
        if let Some(s) = storage {
            s.set(Durable { steps: 0 });
        }
    }
    fn on_start(&self, _st: &mut Volatile, _s: &mut Durable, ctx: &mut impl Ctx<Self>) {
        for i in 0..self.arms {
            ctx.set_timer(Tick, (100 + self.arms - i) * US_PER_MS);
        }
        for hops in 0..self.sends {
            ctx.send(0, Token { hops });
        }
    }
    fn on_msg(
        &self,
        _: &mut Volatile,
        _: &mut Durable,
        _: ActorId,
        _: Token,
        _: &mut impl Ctx<Self>,
    ) {
    }
    fn on_timer(&self, _: &mut Volatile, _: &mut Durable, _: Tick, _: &mut impl Ctx<Self>) {}
}

struct RearmModel {
    world: World,
    nodes: Vec<Rearm>,
}

impl Model for RearmModel {
    type Node = Rearm;
    type Oracle = StepOracle;
    fn world(&self) -> &World {
        &self.world
    }
    fn nodes(&self) -> &[Rearm] {
        &self.nodes
    }
    fn new_oracle(&self) -> StepOracle {
        StepOracle { violate_at: None }
    }
}

fn rearm(arms: u64, sends: u32, max_queue: usize) -> sim::RunReport {
    let mut world = World::new(vec!["a0".to_string()]);
    world.fault_phase_us = 0;
    world.limits.max_queue = max_queue;
    let model = RearmModel {
        world,
        nodes: vec![Rearm { arms, sends }],
    };
    let mut sim = Sim::new(&model);
    let mut rec = Recorder::default();
    sim.run(
        &model,
        Source::Seed {
            seed: 3,
            record: false,
        },
        &mut rec,
    )
}

/// `max_queue` limits the events still to happen. Timers replaced before they
/// fired will never happen, so twenty of them under a limit of five leave a
/// run that holds, ending when the last of them would have fired; twenty
/// messages under the same limit are over it.
#[test]
fn the_queue_limit_counts_events_still_to_happen_not_replaced_timers() {
    let replaced = rearm(20, 1, 5);
    assert_eq!(replaced.outcome, sim::Outcome::Holds);
    assert_eq!(replaced.events, 2, "one token and the one live timer");
    assert_eq!(
        replaced.end_time_us,
        120 * US_PER_MS,
        "the clock still reaches the first arming, the latest"
    );
    let sent = rearm(1, 20, 5);
    assert_eq!(sent.outcome, sim::Outcome::Inconclusive(sim::Limit::Queue));
}

/// The restarts at the start of the healing phase are steps under
/// `max_steps` like any other: no run takes more steps than the limit.
/// Some runs here hit the limit with actors down when healing starts.
#[test]
fn healing_restarts_stay_within_the_step_limit() {
    let mut hit_at_healing = 0;
    for max_steps in [3, 5, 8, 13] {
        let mut m = toy(3, 0, 0, 400, 5);
        m.world.limits.max_steps = max_steps;
        m.world.fault_phase_us = 3 * US_PER_MS;
        for seed in 0..200 {
            let (trace, report) = traced(
                &m,
                Source::Seed {
                    seed,
                    record: false,
                },
            );
            assert!(
                report.events <= max_steps,
                "seed {seed}: {} steps over max_steps = {max_steps}",
                report.events
            );
            let heal = trace
                .iter()
                .position(|e| matches!(e.kind, TraceKind::HealingStarts));
            let down_at_heal = heal.is_some_and(|h| {
                let crashes = trace[..h]
                    .iter()
                    .filter(|e| matches!(e.kind, TraceKind::Crash { .. }))
                    .count();
                let restarts = trace[..h]
                    .iter()
                    .filter(|e| matches!(e.kind, TraceKind::Restart { .. }))
                    .count();
                crashes > restarts
            });
            if down_at_heal && report.outcome == sim::Outcome::Inconclusive(sim::Limit::Steps) {
                hit_at_healing += 1;
            }
        }
    }
    assert!(
        hit_at_healing > 0,
        "no run hit the limit with actors down at healing"
    );
}
