//! The producer: a state change that owes an event, written with a dual
//! write (either order) or with a transactional outbox and its relay.

use super::msg::{Event, Msg};
use super::relay::{OutboxRow, Relay, RelayState, RelayTimer};
use super::situations as sit;
use crate::core::retry::RetryPolicy;
use crate::core::{Carries, Obs};
use sim::{Actor, ActorId, Ctx, Narrow, US_PER_MS};
use std::fmt;
use std::marker::PhantomData;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// How the producer gets its state change and its event out.
pub enum WriteMode {
    /// Commit the state, then publish: a crash in between loses the event.
    StateFirst,
    /// Publish, then commit: a failed or crashed commit leaves a phantom event.
    EventFirst,
    /// State and outbox row in one transaction; a relay publishes the row.
    Outbox,
    /// Publish inside a broker transaction, commit the state, then commit
    /// the broker transaction (abort it if the state's commit failed). Two
    /// commits still: a crash between them leaves the broker transaction
    /// open until the broker aborts it at its timeout, and the event is lost.
    BrokerTransaction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// One state change the producer is asked to make (each owes an event).
pub struct EventSpec {
    /// The entity it changes.
    pub entity: u32,
    /// The new value.
    pub value: u32,
    /// When the request arrives.
    pub start_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// A producer's configuration.
pub struct ProducerConfig {
    /// The broker it publishes to.
    pub broker: ActorId,
    /// How it writes.
    pub mode: WriteMode,
    /// Wait this long for the broker's publish confirmation before resending.
    pub publish_timeout_ms: u64,
    /// Dual write: attempts per publish before giving up; the relay never gives up.
    pub publish_retry: RetryPolicy,
    /// Chance that a commit aborts (deadlock, constraint, failover).
    pub commit_fail_per_mille: u32,
    /// The outbox relay publishes as an idempotent producer.
    pub idempotence: bool,
    /// As a transactional one (`transactional.id`); the relay is then
    /// idempotent too, whatever `idempotence` says (`Relay::transactional`).
    pub transactional_id: bool,
    /// The outbox relay's publishes out at once (Kafka's
    /// `max.in.flight.requests.per.connection`); above five an idempotent
    /// relay is not one (`Relay::max_in_flight`).
    pub max_in_flight: u32,
    /// How long the outbox relay's producer library retries a batch under
    /// its numbers before it gives the batch up (Kafka's
    /// `delivery.timeout.ms`); only an idempotent, non-transactional relay
    /// has one (`Relay::delivery_timeout`). `None`: never.
    pub delivery_timeout_ms: Option<u64>,
    /// The state changes it is asked to make, in order.
    pub events: Vec<EventSpec>,
}

impl ProducerConfig {
    /// Whether the outbox relay stamps its publishes with a producer id:
    /// idempotence asked for and in effect (Kafka 3.0.1 to 3.9 turn it off
    /// above five in flight when it was left at its default, `Relay::max_in_flight`).
    pub fn stamps(&self) -> bool {
        let window = super::broker::SEQUENCE_WINDOW;
        self.idempotence && (self.transactional_id || self.max_in_flight <= window)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum RequestStatus {
    Waiting,
    /// Taken up by the application; a crash before it finishes loses it
    /// (the caller saw a broken connection).
    Taken,
}

/// The producer's database (business rows and the outbox) and its request source.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ProducerStorage {
    /// Each request's status (the request source survives crashes: it is the caller).
    pub requests: Vec<RequestStatus>,
    /// (entity, value, version): the business table.
    pub rows: Vec<(u32, u32, u32)>,
    /// The outbox table.
    pub outbox: Vec<OutboxRow>,
}

/// Dual write: a publish waiting for its confirmation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Pending {
    pub ev: Event,
    pub attempts: u32,
    /// Broker transaction: the state is committed and the broker's commit
    /// is asked for (`attempts` counts those requests from here on).
    pub ending: bool,
}

#[derive(Clone, Debug, Default)]
/// The producer's volatile state: what its process is doing.
#[derive(serde::Serialize)]
pub struct ProducerState {
    /// Dual write: publishes waiting for confirmation, per event.
    pub pending: Vec<Option<Pending>>,
    /// The outbox relay's volatile state.
    pub relay: RelayState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The producer's timers.
pub enum ProducerTimer {
    /// Request `i` arrives.
    Request(u32),
    /// Dual write: publish `i` got no confirmation in time.
    PublishTimeout(u32),
    /// State first: the publish after the commit, a step of its own.
    Publish(u32),
    /// Broker transaction: its commit after the state's, a step of its own.
    CommitTx(u32),
    /// The outbox relay's.
    Relay(RelayTimer),
}

impl fmt::Display for ProducerTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ProducerTimer::Request(i) => write!(f, "request {}", i + 1),
            ProducerTimer::PublishTimeout(i) => write!(f, "publish timeout (event #{})", i + 1),
            ProducerTimer::Publish(i) => write!(f, "publish step (event #{})", i + 1),
            ProducerTimer::CommitTx(i) => {
                write!(f, "commit the broker transaction (event #{})", i + 1)
            }
            ProducerTimer::Relay(t) => fmt::Display::fmt(&t, f),
        }
    }
}

// One mode uses Publish, another CommitTx: they share a slot. Events are
// few enough (validation) that the slots stay far below u32::MAX.
sim::timer_slots!(ProducerTimer {
    Relay(t: Timer),
    Request(i),
    PublishTimeout(i),
    Publish | CommitTx(i),
});

/// The producer: a state change that owes an event, by dual write or transactional outbox.
pub struct Producer<W> {
    /// Its configuration.
    pub cfg: ProducerConfig,
    relay: Relay<W>,
    wire: PhantomData<fn() -> W>,
}

impl<W> Producer<W> {
    /// A producer configured by `cfg`.
    pub fn new(cfg: ProducerConfig) -> Self {
        Producer {
            relay: Relay::new(cfg.broker, cfg.publish_timeout_ms, cfg.idempotence)
                .transactional(cfg.transactional_id)
                .max_in_flight(cfg.max_in_flight)
                .delivery_timeout(cfg.delivery_timeout_ms),
            cfg,
            wire: PhantomData,
        }
    }

    /// The event request `i` produces: its id is stable per business change.
    fn event(&self, i: usize) -> Event {
        let spec = self.cfg.events[i];
        let version = self.cfg.events[..=i]
            .iter()
            .filter(|e| e.entity == spec.entity)
            .count() as u32;
        Event {
            id: i as u32 + 1,
            entity: spec.entity,
            value: spec.value,
            version,
            entity_space: &super::ENTITY,
            entity_part: 0,
        }
    }
}

impl<W: Carries<Msg>> Producer<W> {
    fn commit(
        &self,
        s: &mut ProducerStorage,
        ev: Event,
        outbox: bool,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        if ctx.chance(self.cfg.commit_fail_per_mille) {
            ctx.reached(sit::COMMIT_FAILED);
            return false;
        }
        match s.rows.iter_mut().find(|r| r.0 == ev.entity) {
            Some(r) => *r = (ev.entity, ev.value, ev.version),
            None => s.rows.push((ev.entity, ev.value, ev.version)),
        }
        if outbox {
            s.outbox.push(OutboxRow {
                ev,
                sent: false,
                attempts: 0,
                pid: 0,
                epoch: 0,
            });
        }
        ctx.observe(Obs::Committed {
            op: ev.op(),
            entity: ev.entity_op(),
            value: ev.value,
            version: ev.version,
        });
        true
    }

    fn publish(&self, st: &mut ProducerState, i: usize, ev: Event, ctx: &mut impl Ctx<Self>) {
        let p = st.pending[i].get_or_insert(Pending {
            ev,
            attempts: 0,
            ending: false,
        });
        p.attempts += 1;
        if p.attempts > 1 {
            ctx.reached(sit::PUBLISH_RETRIED);
        }
        let msg = match (p.ending, self.cfg.mode) {
            (true, _) => Msg::EndTx {
                id: ev.id,
                commit: true,
            },
            (false, WriteMode::BrokerTransaction) => Msg::TxPublish { ev },
            (false, _) => Msg::Publish { ev },
        };
        ctx.send(self.cfg.broker, W::wrap(msg));
        ctx.set_timer(
            ProducerTimer::PublishTimeout(i as u32),
            self.cfg.publish_timeout_ms * US_PER_MS,
        );
    }

    fn on_request(
        &self,
        st: &mut ProducerState,
        s: &mut ProducerStorage,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        if s.requests[i] != RequestStatus::Waiting {
            return;
        }
        s.requests[i] = RequestStatus::Taken;
        let ev = self.event(i);
        match self.cfg.mode {
            WriteMode::StateFirst => {
                if self.commit(s, ev, false, ctx) {
                    ctx.continue_with(ProducerTimer::Publish(i as u32));
                }
            }
            WriteMode::EventFirst | WriteMode::BrokerTransaction => self.publish(st, i, ev, ctx),
            WriteMode::Outbox => {
                if self.commit(s, ev, true, ctx) {
                    ctx.continue_with(ProducerTimer::Relay(RelayTimer::Poll));
                }
            }
        }
    }

    /// Broker transaction: the event waits in the open transaction; now the
    /// state's commit, and in a step of its own the broker's. A failed
    /// commit aborts the broker transaction, so nothing is announced.
    fn on_staged(&self, s: &mut ProducerStorage, i: usize, ev: Event, ctx: &mut impl Ctx<Self>) {
        if self.commit(s, ev, false, ctx) {
            ctx.continue_with(ProducerTimer::CommitTx(i as u32));
        } else {
            ctx.reached(sit::BROKER_TX_ABORTED);
            let abort = Msg::EndTx {
                id: ev.id,
                commit: false,
            };
            ctx.send(self.cfg.broker, W::wrap(abort));
        }
    }

    /// Broker transaction: ask the broker to commit, until it answers.
    fn commit_tx(&self, st: &mut ProducerState, i: usize, ctx: &mut impl Ctx<Self>) {
        let ev = self.event(i);
        st.pending[i] = Some(Pending {
            ev,
            attempts: 0,
            ending: true,
        });
        self.publish(st, i, ev, ctx);
    }

    fn on_publish_timeout(&self, st: &mut ProducerState, i: usize, ctx: &mut impl Ctx<Self>) {
        let Some(p) = st.pending[i] else { return };
        if p.ending {
            // The commit is asked for until the broker answers, as Kafka's
            // producer retries it: committed, or aborted at its timeout.
            self.publish(st, i, p.ev, ctx);
            return;
        }
        let retry = self
            .cfg
            .publish_retry
            .next_ms(p.attempts, 0, 0, ctx.now_us(), 0, |lo, _| lo);
        if retry.is_some() {
            self.publish(st, i, p.ev, ctx);
        } else {
            // Dual write has nowhere durable to park the event: it is given up.
            ctx.reached(sit::PUBLISH_GIVEN_UP);
            st.pending[i] = None;
        }
    }
}

impl<W> crate::core::Ends for Producer<W> {
    const ROLES: &'static [&'static str] = &["producer"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("publish", "broker"),
        ("tx-publish", "broker"),
        ("end-tx", "broker"),
    ];

    /// A broker transaction's messages, or plain publishes (its own or its
    /// relay's), by how it writes.
    fn sends(&self, kind: &str, _role: &str) -> bool {
        let transaction = self.cfg.mode == WriteMode::BrokerTransaction;
        match kind {
            "publish" => !transaction,
            "tx-publish" | "end-tx" => transaction,
            _ => true,
        }
    }
}

impl<W: Carries<Msg>> Actor for Producer<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ProducerTimer;
    type State = ProducerState;
    type Storage = ProducerStorage;

    fn reset(
        &self,
        state: sim::Fresh<'_, ProducerState>,
        storage: Option<sim::Fresh<'_, ProducerStorage>>,
    ) {
        let n = self.cfg.events.len();
        if let Some(s) = storage {
            let s = s.or_default();
            s.requests.clear();
            s.requests.resize(n, RequestStatus::Waiting);
            s.rows.clear();
            s.outbox.clear();
        }
        let st = state.or_insert_with(|| ProducerState {
            pending: Vec::new(),
            relay: RelayState::default(),
        });
        st.pending.clear();
        st.pending.resize(n, None);
        self.relay.reset(sim::Fresh::Kept(&mut st.relay), None);
    }

    fn on_start(&self, st: &mut ProducerState, s: &mut ProducerStorage, ctx: &mut impl Ctx<Self>) {
        for (i, r) in s.requests.iter().enumerate() {
            if *r == RequestStatus::Waiting {
                let at_us = self.cfg.events[i].start_ms * US_PER_MS;
                ctx.set_timer(
                    ProducerTimer::Request(i as u32),
                    at_us.saturating_sub(ctx.now_us()),
                );
            }
        }
        let mut relay = Narrow::<Self, _, _>::new(ctx, ProducerTimer::Relay);
        self.relay
            .on_start(&mut st.relay, &mut s.outbox, &mut relay);
    }

    fn on_msg(
        &self,
        st: &mut ProducerState,
        s: &mut ProducerStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        if self.cfg.mode == WriteMode::Outbox {
            let mut relay = Narrow::<Self, _, _>::new(ctx, ProducerTimer::Relay);
            self.relay
                .on_msg(&mut st.relay, &mut s.outbox, from, msg, &mut relay);
            return;
        }
        let (id, ended) = match msg.peek() {
            Some(&Msg::PublishAck { id, .. }) => (id, false),
            Some(&Msg::TxEnded { id, .. }) => (id, true),
            _ => return,
        };
        let Some(i) = st
            .pending
            .iter()
            .position(|p| matches!(p, Some(p) if p.ev.id == id && p.ending == ended))
        else {
            return; // a late confirmation for a step already settled
        };
        let p = st.pending[i].take().expect("slot is occupied");
        ctx.cancel_timer(ProducerTimer::PublishTimeout(i as u32));
        match self.cfg.mode {
            // The event is out; now the state change, as a separate transaction.
            WriteMode::EventFirst => {
                self.commit(s, p.ev, false, ctx);
            }
            WriteMode::BrokerTransaction if !ended => self.on_staged(s, i, p.ev, ctx),
            _ => {}
        }
    }

    fn on_timer(
        &self,
        st: &mut ProducerState,
        s: &mut ProducerStorage,
        timer: ProducerTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        match timer {
            ProducerTimer::Request(i) => self.on_request(st, s, i as usize, ctx),
            ProducerTimer::Publish(i) => {
                let i = i as usize;
                self.publish(st, i, self.event(i), ctx);
            }
            ProducerTimer::PublishTimeout(i) => self.on_publish_timeout(st, i as usize, ctx),
            ProducerTimer::CommitTx(i) => self.commit_tx(st, i as usize, ctx),
            ProducerTimer::Relay(t) => {
                let mut relay = Narrow::<Self, _, _>::new(ctx, ProducerTimer::Relay);
                self.relay
                    .on_timer(&mut st.relay, &mut s.outbox, t, &mut relay);
            }
        }
    }
}
