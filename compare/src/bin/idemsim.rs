//! The same at-least-once sender/receiver as `stateright.rs`, built on
//! idemsim's engine (the `sim` crate) with a tiny oracle.
//!
//! What is the same: two actors; the sender sends ids 0..n and, on a timer
//! that fires 1 to 2 s later, resends every unacked id and re-arms; the
//! receiver applies each id's effect (once with dedup, every time without),
//! remembers it and acks every delivery; the oracle fails a run at the
//! second effect of any id. The network loses, duplicates and reorders.
//!
//! What differs, by the nature of each tool:
//! - stateright's unordered duplicating network keeps every delivered
//!   envelope, so any message may arrive any number of times, and at each
//!   step its uniform chooser picks one enabled action (a delivery, a drop,
//!   a timeout). Here each send is lost, duplicated (one extra copy) or
//!   delayed (1 to 100 ms, so copies overtake each other) by recorded
//!   decisions; the rates are swarm ranges of 0 to 50% drawn per seed.
//! - A stateright walk ends when it revisits a state or at depth 500; an
//!   idemsim run ends when nothing is pending: faults stop after 60 s of
//!   virtual time, then the sender's resends get through and it goes quiet.
//!
//! A stateright *step* and an idemsim *event* are the same unit of work: one
//! delivery or one timer handled by an actor.
//!
//! Usage: idemsim MODE N THREADS DEDUP [RUNS]
//!   MODE speed (seeds 0..RUNS on THREADS) | find (seeds 0, 1, ... on one
//!   thread until the first violation)
//!   DEDUP dedup | nodedup
//! Prints one line: key=value pairs that compare/run.sh reads.

use sim::{
    explore, Actor, ActorId, Ctx, Fresh, Message, Model, Oracle, PerMilleRange, SeedRange, Sim, TimeUs,
    Timer, Violation, World, US_PER_MS, US_PER_S,
};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Msg {
    Data(u8),
    Ack(u8),
}

impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl Message for Msg {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Resend;

impl std::fmt::Display for Resend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("resend")
    }
}

// One timer: the default slot.
impl Timer for Resend {}

enum Node {
    Sender { n: u8 },
    Receiver { dedup: bool },
}

/// The sender's unacked ids, or the receiver's seen ids: one bitmask each.
#[derive(Debug, Default)]
struct Bits(u32);

const RECEIVER: ActorId = 1;

impl Node {
    fn arm(ctx: &mut impl Ctx<Self>) {
        let after = ctx.range(US_PER_S, 2 * US_PER_S);
        ctx.set_timer(Resend, after);
    }
}

impl Actor for Node {
    type Msg = Msg;
    /// An effect on an id.
    type Obs = u8;
    type Timer = Resend;
    type State = Bits;
    type Storage = ();

    fn reset(&self, state: Fresh<'_, Bits>, storage: Option<Fresh<'_, ()>>) {
        state.set(Bits(0));
        if let Some(s) = storage {
            s.set(());
        }
    }

    fn on_start(&self, st: &mut Bits, _: &mut (), ctx: &mut impl Ctx<Self>) {
        if let Node::Sender { n } = *self {
            for i in 0..n {
                ctx.send(RECEIVER, Msg::Data(i));
            }
            st.0 = (1u32 << n) - 1;
            Node::arm(ctx);
        }
    }

    fn on_msg(&self, st: &mut Bits, _: &mut (), from: ActorId, msg: Msg, ctx: &mut impl Ctx<Self>) {
        match (self, msg) {
            (Node::Receiver { dedup }, Msg::Data(i)) => {
                let bit = 1u32 << i;
                if !*dedup || st.0 & bit == 0 {
                    ctx.observe(i);
                    st.0 |= bit;
                }
                ctx.send(from, Msg::Ack(i));
            }
            (Node::Sender { .. }, Msg::Ack(i)) => st.0 &= !(1 << i),
            _ => {}
        }
    }

    fn on_timer(&self, st: &mut Bits, _: &mut (), _: Resend, ctx: &mut impl Ctx<Self>) {
        for i in 0..32u8 {
            if st.0 & (1 << i) != 0 {
                ctx.send(RECEIVER, Msg::Data(i));
            }
        }
        if st.0 != 0 {
            Node::arm(ctx);
        }
    }
}

/// Effects per id; the second one of any id is a violation.
#[derive(Default)]
struct Effects([u8; 32]);

impl Oracle for Effects {
    type Obs = u8;

    fn reset(&mut self) {
        self.0 = [0; 32];
    }

    fn observe(&mut self, _: TimeUs, _: ActorId, id: &u8) -> Option<Violation> {
        let c = &mut self.0[usize::from(*id)];
        *c = c.saturating_add(1);
        (*c > 1).then(|| Violation {
            invariant: "exactly-once effect",
            operation: u64::from(*id),
            message: format!("id {id} took effect twice"),
        })
    }

    fn finish(&mut self, _: TimeUs) -> Option<Violation> {
        None
    }
}

struct AtLeastOnce {
    world: World,
    nodes: [Node; 2],
}

impl Model for AtLeastOnce {
    type Node = Node;
    type Oracle = Effects;
    fn world(&self) -> &World {
        &self.world
    }
    fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    fn new_oracle(&self) -> Effects {
        Effects::default()
    }
}

fn model(n: u8, dedup: bool) -> AtLeastOnce {
    let mut world = World::new(vec!["sender".into(), "receiver".into()]);
    for (from, to) in [(0, 1), (1, 0)] {
        let l = world.link_mut(from, to);
        l.loss_per_mille = PerMilleRange { lo: 0, hi: 500 };
        l.duplicate_per_mille = PerMilleRange { lo: 0, hi: 500 };
        l.delay_us_min = US_PER_MS;
        l.delay_us_max = 100 * US_PER_MS;
    }
    world.fault_phase_us = 60 * US_PER_S;
    AtLeastOnce {
        world,
        nodes: [Node::Sender { n }, Node::Receiver { dedup }],
    }
}

/// Monotonic wall clock: this program measures, nothing more (no run reads it).
#[allow(clippy::disallowed_methods)]
fn now() -> Instant {
    Instant::now()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let mode = arg(1, "speed");
    let n: u8 = arg(2, "4").parse().expect("N");
    let threads: usize = arg(3, "1").parse().expect("THREADS");
    let dedup = arg(4, "dedup") != "nodedup";
    let runs: u64 = arg(5, "1000000").parse().expect("RUNS");
    assert!(n <= 32, "at most 32 ids");
    let m = model(n, dedup);
    let stop = AtomicBool::new(false);
    if mode == "find" {
        // One thread, seed after seed, as a user waits for the first violation.
        let t = now();
        let mut sim = Sim::new(&m);
        let mut events = 0;
        for seed in 0..runs {
            let r = sim.run_seed(&m, seed);
            events += r.events;
            if r.outcome.is_failure() {
                let secs = t.elapsed().as_secs_f64();
                println!(
                    "tool=idemsim mode=find n={n} threads=1 dedup={dedup} violation_found=true schedules_to_first={} events_to_first={events} seconds={secs:.6}",
                    seed + 1
                );
                return;
            }
        }
        println!("tool=idemsim mode=find n={n} threads=1 dedup={dedup} violation_found=false schedules_to_first=- events_to_first={events} seconds={:.6}", t.elapsed().as_secs_f64());
        return;
    }
    assert_eq!(mode, "speed", "unknown mode {mode}: speed or find");
    let seeds = SeedRange {
        start: 0,
        end: runs.into(),
    };
    let t = now();
    let sum = explore(&m, seeds, threads, &stop, &|_| {});
    let secs = t.elapsed().as_secs_f64();
    println!(
        "tool=idemsim mode=speed n={n} threads={threads} dedup={dedup} schedules={} events={} seconds={secs:.4} events_per_sec={:.0} schedules_per_sec={:.0} violation_found={}",
        sum.tally.schedules,
        sum.tally.events,
        sum.tally.events as f64 / secs,
        sum.tally.schedules as f64 / secs,
        sum.first_failure.is_some()
    );
}
