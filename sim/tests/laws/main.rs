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

// The laws, by what they are about; each module uses the toy above.
mod limits;
mod props;
mod runs;
