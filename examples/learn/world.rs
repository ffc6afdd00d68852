//! The world of exercise 17, which the learner does not edit: idemsim's
//! producer (a transactional outbox, so its relay publishes again after a
//! crash) and broker (at-least-once, 30 s visibility timeout), a network that
//! loses and duplicates messages, and crashes of the consumer and the
//! producer. The consumer is one of the consumers of this folder; the effect
//! ledger judges every event.

use models::core::{Carries, Obs, Site};
use models::messaging::{
    self, AtMaxDeliveries, Broker, BrokerConfig, EventSpec, Producer, ProducerConfig, WriteMode,
};
use models::Msg;
use sim::{ActorId, CrashConfig, Ctx, LinkConfig, PerMilleRange, World, US_PER_MS};

/// Where a consumer's effect lands: a row in its own bookings table.
pub static BOOKING: Site = Site { name: "booking" };

/// One delivery from the broker: the event and the receipt to ack it with.
#[derive(Clone, Copy, Debug)]
pub struct Delivery {
    /// The event's id: the same for every copy of one event.
    pub event_id: u32,
    /// What the event is worth (the effect's payload).
    pub value: u32,
    receipt: u32,
    ev: messaging::Event,
}

impl Delivery {
    /// The delivery `msg` carries, if it is one.
    pub fn of(msg: &Msg) -> Option<Delivery> {
        let &messaging::Msg::Deliver { ev, receipt, .. } = Carries::peek(msg)? else {
            return None;
        };
        Some(Delivery {
            event_id: ev.id,
            value: ev.value,
            receipt,
            ev,
        })
    }

    /// Reports the business effect of this event: the booking, where it
    /// lands. Twice for one event is the bug the exercise is about.
    pub fn book<A: sim::Actor<Msg = Msg, Obs = Obs>>(&self, ctx: &mut impl Ctx<A>) {
        ctx.observe(Obs::Effect {
            site: &BOOKING,
            op: self.ev.op(),
            payload: self.value,
        });
    }

    /// Acks the delivery, so the broker does not deliver it again.
    pub fn ack<A: sim::Actor<Msg = Msg, Obs = Obs>>(&self, broker: ActorId, ctx: &mut impl Ctx<A>) {
        let ack = messaging::Msg::Ack {
            id: self.event_id,
            receipt: self.receipt,
        };
        ctx.send(broker, Msg::wrap(ack));
    }
}

sim::compose! {
    /// The actors: two of idemsim's, and one of the consumers of this folder.
    pub enum Node, NodeState, NodeStorage, NodeTimer {
        msg: Msg,
        obs: Obs,
        /// idemsim's producer with a transactional outbox.
        Producer(Producer<Msg>),
        /// idemsim's broker.
        Broker(Broker<Msg>),
        /// The learner's consumer (`actor.rs`).
        Exercise(crate::actor::Consumer),
        /// The reference solution (`actor_solution.rs`).
        Solution(crate::actor_solution::Consumer),
        /// Wrong attempts the tests grade (`actor_wrong.rs`).
        NoDedup(crate::actor_wrong::NoDedup),
        /// Wrong attempts the tests grade (`actor_wrong.rs`).
        InMemory(crate::actor_wrong::InMemory),
    }
}

/// The world with one consumer, judged by the effect ledger.
pub struct Bookings {
    world: World,
    nodes: Vec<Node>,
}

impl sim::Model for Bookings {
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

/// The broker's actor id, for consumers to ack to.
pub const BROKER: ActorId = 1;

/// The world around `consumer`: four events through an outbox and a broker,
/// up to 10% of messages lost and 10% duplicated, producer and consumer
/// crashing before up to 15% of their steps.
pub fn bookings(consumer: Node) -> Bookings {
    let mut world = World::new(vec!["producer".into(), "broker".into(), "consumer".into()]);
    world.links.iter_mut().for_each(|l| {
        // Uniform delays: no normal spread around the middle.
        *l = LinkConfig::uniform(US_PER_MS, 200 * US_PER_MS)
            .loss(PerMilleRange { lo: 0, hi: 100 })
            .duplicate(PerMilleRange { lo: 0, hi: 100 })
    });
    for actor in [0, 2] {
        world.crashes[actor] = CrashConfig {
            crash_per_mille: PerMilleRange { lo: 0, hi: 150 },
            restart_us_min: 1_000 * US_PER_MS,
            restart_us_max: 20_000 * US_PER_MS,
        };
    }
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
            broker: BROKER,
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
            consumers: vec![2],
            visibility_timeout_ms: 30_000,
            max_deliveries: 0,
            at_max_deliveries: AtMaxDeliveries::DeadLetter,
            dedup_window_ms: 0,
            transaction_timeout_ms: 60_000,
            exactly_once_delivery: false,
            producer_id_expiration_ms: 0,
        })),
        consumer,
    ];
    Bookings { world, nodes }
}
