//! The at-least-once sender/receiver in stateright 0.31, as measured in
//! /work/shared/reference/performance-anchors.md: the sender sends ids
//! 0..n and resends every unacked id on its timer; the receiver applies each
//! id's effect (once, with dedup; every time, without), remembers it, and
//! acks every delivery. The network is unordered and duplicating (a delivered
//! envelope stays, so it can be delivered again) and lossy (any envelope may
//! be dropped). The safety property: every id's effect happens at most once.
//!
//! Usage: stateright MODE N THREADS DEDUP [TARGET]
//!   MODE sim (random walks, UniformChooser) | bfs | dfs
//!   DEDUP dedup | nodedup
//! Prints one line: key=value pairs that compare/run.sh reads.

use stateright::actor::{Actor, ActorModel, Id, LossyNetwork, Network, Out};
use stateright::{Checker, Expectation, Model, UniformChooser};
use std::borrow::Cow;
use std::time::{Duration, Instant};

#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
enum Msg {
    Data(u8),
    Ack(u8),
}

#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
enum Timer {
    Resend,
}

#[derive(Clone)]
enum Node {
    Sender { n: u8 },
    Receiver { dedup: bool },
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum NodeState {
    /// Bitmask of unacked ids.
    Sender { pending: u32 },
    /// Ids seen, and effect counters (saturating at 2).
    Receiver { seen: u32, effects: [u8; 8] },
}

const RECEIVER: usize = 1;
const SAFETY: &str = "exactly-once effect";

impl Actor for Node {
    type Msg = Msg;
    type State = NodeState;
    type Timer = Timer;
    type Random = ();
    type Storage = ();

    fn on_start(&self, _id: Id, _s: &Option<()>, o: &mut Out<Self>) -> NodeState {
        match *self {
            Node::Sender { n } => {
                for i in 0..n {
                    o.send(Id::from(RECEIVER), Msg::Data(i));
                }
                o.set_timer(
                    Timer::Resend,
                    Duration::from_secs(1)..Duration::from_secs(2),
                );
                NodeState::Sender {
                    pending: (1u32 << n) - 1,
                }
            }
            Node::Receiver { .. } => NodeState::Receiver {
                seen: 0,
                effects: [0; 8],
            },
        }
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<NodeState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        match (self, msg) {
            (Node::Receiver { dedup }, Msg::Data(i)) => {
                if let NodeState::Receiver { seen, effects } = state.to_mut() {
                    let bit = 1u32 << i;
                    if !*dedup || *seen & bit == 0 {
                        effects[i as usize] = (effects[i as usize] + 1).min(2);
                        *seen |= bit;
                    }
                }
                o.send(src, Msg::Ack(i));
            }
            (Node::Sender { .. }, Msg::Ack(i)) => {
                if let NodeState::Sender { pending } = **state {
                    if pending & (1 << i) != 0 {
                        *state.to_mut() = NodeState::Sender {
                            pending: pending & !(1 << i),
                        };
                    }
                }
            }
            _ => {}
        }
    }

    fn on_timeout(&self, _id: Id, state: &mut Cow<NodeState>, _t: &Timer, o: &mut Out<Self>) {
        if let NodeState::Sender { pending } = **state {
            for i in 0..32u8 {
                if pending & (1 << i) != 0 {
                    o.send(Id::from(RECEIVER), Msg::Data(i));
                }
            }
            if pending != 0 {
                o.set_timer(
                    Timer::Resend,
                    Duration::from_secs(1)..Duration::from_secs(2),
                );
            }
        }
    }
}

fn model(n: u8, dedup: bool) -> ActorModel<Node, (), ()> {
    ActorModel::new((), ())
        .actor(Node::Sender { n })
        .actor(Node::Receiver { dedup })
        .init_network(Network::new_unordered_duplicating([]))
        .lossy_network(LossyNetwork::Yes)
        .property(Expectation::Always, SAFETY, |_, s| {
            s.actor_states.iter().all(|a| match **a {
                NodeState::Receiver { effects, .. } => effects.iter().all(|&c| c <= 1),
                _ => true,
            })
        })
        .property(Expectation::Sometimes, "all acked", |_, s| {
            matches!(*s.actor_states[0], NodeState::Sender { pending: 0 })
        })
}

/// Monotonic wall clock: this program measures, nothing more (no run reads it).
#[allow(clippy::disallowed_methods)]
fn now() -> Instant {
    Instant::now()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let mode = arg(1, "sim");
    let n: u8 = arg(2, "4").parse().expect("N");
    let threads: usize = arg(3, "1").parse().expect("THREADS");
    let dedup = arg(4, "dedup") != "nodedup";
    let target: usize = arg(5, "5000000").parse().expect("TARGET");
    let m = model(n, dedup);
    let t = now();
    let (states, unique, depth, found) = match mode.as_str() {
        "sim" => {
            let c = m
                .checker()
                .threads(threads)
                .target_state_count(target)
                .target_max_depth(500)
                .spawn_simulation(0, UniformChooser)
                .join();
            let found = c.discoveries().contains_key(SAFETY);
            (
                c.state_count(),
                c.unique_state_count(),
                c.max_depth(),
                found,
            )
        }
        "bfs" => {
            let c = m.checker().threads(threads).spawn_bfs().join();
            let found = c.discoveries().contains_key(SAFETY);
            (
                c.state_count(),
                c.unique_state_count(),
                c.max_depth(),
                found,
            )
        }
        "dfs" => {
            let c = m.checker().threads(threads).spawn_dfs().join();
            let found = c.discoveries().contains_key(SAFETY);
            (
                c.state_count(),
                c.unique_state_count(),
                c.max_depth(),
                found,
            )
        }
        other => panic!("unknown mode {other}: sim, bfs or dfs"),
    };
    let secs = t.elapsed().as_secs_f64();
    println!(
        "tool=stateright mode={mode} n={n} threads={threads} dedup={dedup} steps={states} unique={unique} max_depth={depth} seconds={secs:.4} steps_per_sec={:.0} violation_found={found}",
        states as f64 / secs
    );
}
