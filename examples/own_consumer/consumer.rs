//! A user's own consumer with its own dedup logic, in a world with idemsim's
//! built-in producer (transactional outbox), broker (at-least-once, 30 s
//! visibility timeout) and lossy, duplicating network; idemsim's effect
//! ledger judges every event. Shared by the `own_consumer` and
//! `proptest_window` examples (both in this folder).
//!
//! The consumer owns its database: the write it makes for an event is the
//! business effect, observed where it lands (here, in the consumer's own
//! durable storage). Two ways to remember which events it handled:
//!
//! - [`Dedup::Memory`]: the last `window` event ids in memory. A redelivery
//!   after a crash finds the memory empty and writes again.
//! - [`Dedup::Durable`]: the last `keep` ids in the database, written in the
//!   same step (the same transaction) as the effect, so a crash either loses
//!   both or keeps both.

// Two examples include this file and each uses part of it.
#![allow(dead_code)]

use models::core::{Carries, Obs, Site};
use models::messaging::{
    self, AtMaxDeliveries, Broker, BrokerConfig, EventSpec, Producer, ProducerConfig, WriteMode,
};
use models::Msg;
use sim::{
    Actor, ActorId, CrashConfig, Ctx, Fresh, LinkConfig, NoTimer, PerMilleRange, World, US_PER_MS,
};
use std::collections::VecDeque;

/// Where the consumer's effect lands: a row in its own orders table.
pub static ORDER_WRITE: Site = Site {
    name: "order write",
};

/// How the consumer remembers the events it already handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dedup {
    /// The last `window` event ids, in memory only.
    Memory {
        /// How many ids it keeps.
        window: usize,
    },
    /// The last `keep` event ids, in the database, in the effect's transaction.
    Durable {
        /// How many ids it keeps.
        keep: usize,
    },
}

/// The consumer's database: what survives a crash.
#[derive(Debug, Default)]
pub struct OrdersDb {
    /// Event ids whose write was made, in order (one entry per write).
    pub writes: Vec<u32>,
    /// The dedup table of [`Dedup::Durable`]: the last ids handled.
    pub handled: VecDeque<u32>,
}

/// The user's consumer: takes a delivery from the broker, writes the order
/// unless it remembers the event, and acks.
pub struct OrderConsumer {
    /// The broker's actor id, to ack to.
    pub broker: ActorId,
    /// How it deduplicates.
    pub dedup: Dedup,
}

fn remember(ids: &mut VecDeque<u32>, id: u32, bound: usize) {
    ids.push_back(id);
    while ids.len() > bound {
        ids.pop_front();
    }
}

impl Actor for OrderConsumer {
    // The built-in world message: it carries the messaging model's messages.
    type Msg = Msg;
    type Obs = Obs;
    type Timer = NoTimer;
    /// Volatile: the ids [`Dedup::Memory`] remembers; lost on a crash.
    type State = VecDeque<u32>;
    type Storage = OrdersDb;

    fn reset(&self, state: Fresh<'_, VecDeque<u32>>, storage: Option<Fresh<'_, OrdersDb>>) {
        // What a new process has: nothing remembered (the allocation is reused).
        state.or_default().clear();
        if let Some(db) = storage {
            db.set(OrdersDb::default());
        }
    }

    fn on_start(&self, _: &mut VecDeque<u32>, _: &mut OrdersDb, _: &mut impl Ctx<Self>) {}

    fn on_msg(
        &self,
        memory: &mut VecDeque<u32>,
        db: &mut OrdersDb,
        _from: ActorId,
        msg: Msg,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(&messaging::Msg::Deliver { ev, receipt, .. }) = Carries::peek(&msg) else {
            return;
        };
        // One step is one transaction: the check, the write, the dedup row
        // and the ack all happen here, or (after a crash before it) none does.
        let seen = match self.dedup {
            Dedup::Memory { .. } => memory.contains(&ev.id),
            Dedup::Durable { .. } => db.handled.contains(&ev.id),
        };
        if seen {
            ctx.reached(messaging::situations::INBOX_HIT);
        } else {
            db.writes.push(ev.id);
            ctx.observe(Obs::Effect {
                site: &ORDER_WRITE,
                op: ev.op(),
                payload: ev.value,
            });
            match self.dedup {
                Dedup::Memory { window } => remember(memory, ev.id, window),
                Dedup::Durable { keep } => remember(&mut db.handled, ev.id, keep),
            }
        }
        let ack = messaging::Msg::Ack { id: ev.id, receipt };
        ctx.send(self.broker, Msg::wrap(ack));
    }
}

sim::compose! {
    /// The actors of this world: two built-in, one the user's.
    pub enum Node, NodeState, NodeStorage, NodeTimer {
        msg: Msg,
        obs: Obs,
        /// idemsim's producer with a transactional outbox.
        Producer(Producer<Msg>),
        /// idemsim's broker.
        Broker(Broker<Msg>),
        /// The user's consumer.
        Consumer(OrderConsumer),
    }
}

/// The world: the actors, the network and the crashes, judged by the ledger.
pub struct OrdersSystem {
    /// The engine's configuration: links, crashes, phases, limits.
    pub world: World,
    /// One actor per name in `world`, in the same order.
    pub nodes: Vec<Node>,
}

impl sim::Model for OrdersSystem {
    type Node = Node;
    type Oracle = models::Ledger;

    fn world(&self) -> &World {
        &self.world
    }

    fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    fn new_oracle(&self) -> models::Ledger {
        models::Ledger::default()
    }
}

/// A producer publishing four order events through the broker to the
/// consumer, over a network that loses and duplicates up to 10% of messages
/// (drawn per seed), with the consumer crashing before up to 15% of its steps.
pub fn system(dedup: Dedup) -> OrdersSystem {
    let (broker, consumer) = (1, 2);
    let mut world = World::new(vec!["producer".into(), "broker".into(), "consumer".into()]);
    let link = LinkConfig::uniform(US_PER_MS, 200 * US_PER_MS)
        .loss(PerMilleRange { lo: 0, hi: 100 })
        .duplicate(PerMilleRange { lo: 0, hi: 100 });
    world.links.iter_mut().for_each(|l| *l = link);
    world.crashes[consumer as usize] = CrashConfig {
        crash_per_mille: PerMilleRange { lo: 0, hi: 150 },
        restart_us_min: 1_000 * US_PER_MS,
        restart_us_max: 20_000 * US_PER_MS,
    };
    world.fault_phase_us = 120_000 * US_PER_MS;
    let events = [
        (4711, 1200, 0),
        (4712, 800, 500),
        (4713, 300, 1000),
        (4711, 1300, 3000),
    ]
    .map(|(entity, value, start_ms)| EventSpec {
        entity,
        value,
        start_ms,
    })
    .to_vec();
    let nodes = vec![
        Node::Producer(Producer::new(ProducerConfig {
            broker,
            mode: WriteMode::Outbox,
            publish_timeout_ms: 5_000,
            publish_retry: models::core::retry::RetryPolicy::immediate(3),
            commit_fail_per_mille: 0,
            idempotence: false,
            transactional_id: false,
            max_in_flight: 1,
            delivery_timeout_ms: None,
            events,
        })),
        Node::Broker(Broker::new(BrokerConfig {
            consumers: vec![consumer],
            visibility_timeout_ms: 30_000,
            max_deliveries: 0,
            at_max_deliveries: AtMaxDeliveries::DeadLetter,
            dedup_window_ms: 0,
            transaction_timeout_ms: 60_000,
            exactly_once_delivery: false,
            producer_id_expiration_ms: 0,
        })),
        Node::Consumer(OrderConsumer { broker, dedup }),
    ];
    OrdersSystem { world, nodes }
}
