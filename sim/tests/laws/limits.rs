//! Restarts and limits: the shortest restart, the queue limit counting only
//! events still to happen, and healing's restarts under the step limit.

use super::*;

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
