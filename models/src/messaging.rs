//! The messaging half of the catalog: a producer that changes its state and
//! must publish an event (dual write or transactional outbox with a relay), a
//! durable broker with acks, a visibility timeout, a dead-letter queue and an
//! optional publish dedup window, and consumers that share one database (the
//! `consumer-db` actor) with an inbox, a unique key or a set-value handler.
//!
//! Every database transaction is one step of the actor that owns the database;
//! a consumer's transaction is a request to `consumer-db` and its reply, so a
//! crash or a lost reply can fall between the commit and the ack. Effects are
//! observed where they land: in `consumer-db`, never in the consumer that
//! believes it handled a message.

use crate::ledger::{Obs, OpId, Site};
use crate::msg::Msg;
use crate::situation as sit;
use sim::{ActorId, Ctx, TimeUs, US_PER_MS};

type Cx<'a, 'b> = &'a mut Ctx<'b, Msg, Obs>;

/// One event as it travels: small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The business entity it concerns (a claim, a customer's address).
    pub op: OpId,
    /// The message id: the outbox row id, stable across republishes.
    pub id: u32,
    /// The payload: an amount for an effect, the new value for set-value.
    pub value: u32,
    /// The entity's row version after the change (1, 2, ...).
    pub version: u32,
}

/// What a consumer asks its database to do in one transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    /// Apply the effect, no questions asked.
    Effect,
    /// Inbox row and effect in one transaction: a known id is skipped.
    InboxAndEffect,
    /// Read the inbox (a transaction of its own).
    CheckInbox,
    /// Write the inbox row (a transaction of its own).
    RecordInbox,
    /// Insert keyed by the business id under a unique constraint.
    InsertUnique,
    /// Set the entity's value; `versioned` only if the stored version is older.
    SetValue { versioned: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxResult {
    Applied,
    /// Already there (inbox hit or "already exists"): counts as success.
    Duplicate,
    /// The inbox does not know the id.
    NotSeen,
    /// A versioned write older than the stored one, rejected.
    Stale,
}

impl TxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TxKind::Effect => "apply effect",
            TxKind::InboxAndEffect => "inbox row + effect",
            TxKind::CheckInbox => "check inbox",
            TxKind::RecordInbox => "write inbox row",
            TxKind::InsertUnique => "insert under unique key",
            TxKind::SetValue { versioned: false } => "set value",
            TxKind::SetValue { versioned: true } => "set value if newer",
        }
    }
}

impl TxResult {
    pub fn as_str(self) -> &'static str {
        match self {
            TxResult::Applied => "applied",
            TxResult::Duplicate => "already there",
            TxResult::NotSeen => "not seen",
            TxResult::Stale => "stale, rejected",
        }
    }
}

// ---------------------------------------------------------------- producer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Commit the state, then publish: a crash in between loses the event.
    StateFirst,
    /// Publish, then commit: a failed or crashed commit leaves a phantom event.
    EventFirst,
    /// State and outbox row in one transaction; a relay publishes the row.
    Outbox,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventSpec {
    pub op: OpId,
    pub value: u32,
    pub start_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerConfig {
    pub broker: ActorId,
    pub mode: WriteMode,
    /// Wait this long for the broker's publish confirmation before resending.
    pub publish_timeout_ms: u64,
    /// Dual write: attempts per publish before giving up; the relay never gives up.
    pub publish_max_attempts: u32,
    /// Chance that a commit aborts (deadlock, constraint, failover).
    pub commit_fail_per_mille: u32,
    pub events: Vec<EventSpec>,
}

pub const MAX_EVENTS: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestStatus {
    Waiting,
    /// Taken up by the application; a crash before it finishes loses it
    /// (the caller saw a broken connection).
    Taken,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutboxRow {
    pub ev: Event,
    pub sent: bool,
    /// Publish attempts, a column many relays keep for monitoring.
    pub attempts: u32,
}

/// The producer's database (business rows and the outbox) and its request source.
#[derive(Clone, Debug, Default)]
pub struct ProducerStorage {
    pub requests: Vec<RequestStatus>,
    /// (entity, value, version): the business table.
    pub rows: Vec<(OpId, u32, u32)>,
    pub outbox: Vec<OutboxRow>,
}

/// Dual write: a publish waiting for its confirmation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    pub ev: Event,
    pub attempts: u32,
}

#[derive(Clone, Debug, Default)]
pub struct ProducerState {
    pub pending: Vec<Option<Pending>>,
    /// The outbox row the relay is publishing, with its publish confirmed or not.
    pub relay: Option<(usize, bool)>,
}

pub struct Producer {
    pub cfg: ProducerConfig,
}

// Timer tags: request i starts at i; its publish timeout at 16+i; its second
// step at 32+i; the relay uses 48 (next row), 49 (timeout), 50 (mark sent).
const T_TIMEOUT: u32 = 16;
const T_STEP2: u32 = 32;
const T_RELAY: u32 = 48;
const T_RELAY_TIMEOUT: u32 = 49;
const T_RELAY_MARK: u32 = 50;

impl Producer {
    pub fn reset_storage(&self, s: &mut ProducerStorage) {
        assert!(self.cfg.events.len() <= MAX_EVENTS);
        s.requests.clear();
        s.requests
            .resize(self.cfg.events.len(), RequestStatus::Waiting);
        s.rows.clear();
        s.outbox.clear();
    }

    /// The event request `i` produces: its id is stable per business change.
    fn event(&self, i: usize) -> Event {
        let spec = self.cfg.events[i];
        let version = self.cfg.events[..=i]
            .iter()
            .filter(|e| e.op == spec.op)
            .count() as u32;
        Event {
            op: spec.op,
            id: i as u32 + 1,
            value: spec.value,
            version,
        }
    }

    pub fn on_start(&self, s: &mut ProducerStorage, ctx: Cx) -> ProducerState {
        for (i, r) in s.requests.iter().enumerate() {
            if *r == RequestStatus::Waiting {
                let at_us = self.cfg.events[i].start_ms * US_PER_MS;
                ctx.set_timer(i as u32, at_us.saturating_sub(ctx.now_us()));
            }
        }
        if s.outbox.iter().any(|r| !r.sent) {
            if s.outbox.iter().any(|r| !r.sent && r.attempts > 0) {
                // Published (perhaps) but never marked sent: the relay will publish again.
                ctx.reached(sit::CRASH_BETWEEN_STEPS);
            }
            ctx.continue_with(T_RELAY);
        }
        ProducerState {
            pending: vec![None; self.cfg.events.len()],
            relay: None,
        }
    }

    fn commit(&self, s: &mut ProducerStorage, ev: Event, outbox: bool, ctx: Cx) -> bool {
        if ctx.chance(self.cfg.commit_fail_per_mille) {
            ctx.reached(sit::COMMIT_FAILED);
            return false;
        }
        match s.rows.iter_mut().find(|r| r.0 == ev.op) {
            Some(r) => *r = (ev.op, ev.value, ev.version),
            None => s.rows.push((ev.op, ev.value, ev.version)),
        }
        if outbox {
            s.outbox.push(OutboxRow {
                ev,
                sent: false,
                attempts: 0,
            });
        }
        ctx.observe(Obs::EventCommitted {
            op: ev.op,
            value: ev.value,
            version: ev.version,
        });
        true
    }

    fn publish(&self, st: &mut ProducerState, i: usize, ev: Event, ctx: Cx) {
        let p = st.pending[i].get_or_insert(Pending { ev, attempts: 0 });
        p.attempts += 1;
        if p.attempts > 1 {
            ctx.reached(sit::PUBLISH_RETRIED);
        }
        ctx.send(self.cfg.broker, Msg::Publish { ev });
        ctx.set_timer(
            T_TIMEOUT + i as u32,
            self.cfg.publish_timeout_ms * US_PER_MS,
        );
    }

    fn relay_next(&self, st: &mut ProducerState, s: &mut ProducerStorage, ctx: Cx) {
        if st.relay.is_some() {
            return;
        }
        let Some(r) = s.outbox.iter().position(|r| !r.sent) else {
            return;
        };
        st.relay = Some((r, false));
        self.relay_publish(s, r, ctx);
    }

    fn relay_publish(&self, s: &mut ProducerStorage, r: usize, ctx: Cx) {
        let row = &mut s.outbox[r];
        if row.attempts > 0 {
            ctx.reached(sit::REPUBLISH_AFTER_CRASH);
        }
        row.attempts += 1;
        ctx.send(self.cfg.broker, Msg::Publish { ev: row.ev });
        ctx.set_timer(T_RELAY_TIMEOUT, self.cfg.publish_timeout_ms * US_PER_MS);
    }

    pub fn on_msg(&self, st: &mut ProducerState, s: &mut ProducerStorage, msg: Msg, ctx: Cx) {
        let Msg::PublishAck { id, .. } = msg else {
            return;
        };
        if self.cfg.mode == WriteMode::Outbox {
            if let Some((r, confirmed)) = st.relay.as_mut() {
                if s.outbox[*r].ev.id == id && !*confirmed {
                    *confirmed = true;
                    ctx.cancel_timer(T_RELAY_TIMEOUT);
                    // Marking the row sent is its own transaction: a crash may come first.
                    ctx.continue_with(T_RELAY_MARK);
                }
            }
            return;
        }
        let Some(i) = st
            .pending
            .iter()
            .position(|p| matches!(p, Some(p) if p.ev.id == id))
        else {
            return; // a late confirmation for a publish already settled
        };
        let p = st.pending[i].take().expect("slot is occupied");
        ctx.cancel_timer(T_TIMEOUT + i as u32);
        if self.cfg.mode == WriteMode::EventFirst {
            // The event is out; now the state change, as a separate transaction.
            self.commit(s, p.ev, false, ctx);
        }
    }

    pub fn on_timer(&self, st: &mut ProducerState, s: &mut ProducerStorage, tag: u32, ctx: Cx) {
        let n = self.cfg.events.len() as u32;
        match tag {
            t if t < n => {
                let i = t as usize;
                if s.requests[i] != RequestStatus::Waiting {
                    return;
                }
                s.requests[i] = RequestStatus::Taken;
                let ev = self.event(i);
                match self.cfg.mode {
                    WriteMode::StateFirst => {
                        if self.commit(s, ev, false, ctx) {
                            ctx.continue_with(T_STEP2 + t);
                        }
                    }
                    WriteMode::EventFirst => self.publish(st, i, ev, ctx),
                    WriteMode::Outbox => {
                        if self.commit(s, ev, true, ctx) {
                            ctx.continue_with(T_RELAY);
                        }
                    }
                }
            }
            t if (T_STEP2..T_STEP2 + n).contains(&t) => {
                let i = (t - T_STEP2) as usize;
                self.publish(st, i, self.event(i), ctx);
            }
            t if (T_TIMEOUT..T_TIMEOUT + n).contains(&t) => {
                let i = (t - T_TIMEOUT) as usize;
                let Some(p) = st.pending[i] else { return };
                if p.attempts < self.cfg.publish_max_attempts {
                    self.publish(st, i, p.ev, ctx);
                } else {
                    // Dual write has nowhere durable to park the event: it is given up.
                    st.pending[i] = None;
                }
            }
            T_RELAY => self.relay_next(st, s, ctx),
            T_RELAY_TIMEOUT => {
                if let Some((r, false)) = st.relay {
                    self.relay_publish(s, r, ctx);
                }
            }
            T_RELAY_MARK => {
                if let Some((r, true)) = st.relay.take() {
                    s.outbox[r].sent = true;
                    self.relay_next(st, s, ctx);
                }
            }
            _ => unreachable!("unknown producer timer {tag}"),
        }
    }
}

// ---------------------------------------------------------------- broker

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerConfig {
    pub consumers: Vec<ActorId>,
    /// An unacked delivery becomes visible again after this (SQS 30 s, NATS AckWait 30 s).
    pub visibility_timeout_ms: u64,
    /// Deliveries before the message moves to the dead-letter queue; 0 = unlimited.
    pub max_deliveries: u32,
    /// A publish with a message id accepted within this window is dropped; 0 = off.
    pub dedup_window_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QStatus {
    Ready,
    InFlight { receipt: u32, deadline_us: TimeUs },
    Acked,
    Dead,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QMsg {
    pub ev: Event,
    pub status: QStatus,
    pub deliveries: u32,
}

/// The broker's durable queue, dead-letter queue and dedup table.
#[derive(Clone, Debug, Default)]
pub struct BrokerStorage {
    pub queue: Vec<QMsg>,
    /// (message id, accepted at): ids stay tracked after delivery, as in SQS FIFO.
    pub dedup: Vec<(u32, TimeUs)>,
    pub next_receipt: u32,
}

pub struct Broker {
    pub cfg: BrokerConfig,
}

const T_VISIBILITY: u32 = 0;

impl Broker {
    pub fn reset_storage(&self, s: &mut BrokerStorage) {
        s.queue.clear();
        s.dedup.clear();
        s.next_receipt = 1;
    }

    pub fn on_start(&self, s: &mut BrokerStorage, ctx: Cx) {
        // After a restart the leases restart too: in-flight messages get a fresh deadline.
        let deadline_us = ctx.now_us() + self.cfg.visibility_timeout_ms * US_PER_MS;
        for m in &mut s.queue {
            if let QStatus::InFlight { receipt, .. } = m.status {
                m.status = QStatus::InFlight {
                    receipt,
                    deadline_us,
                };
            }
        }
        self.dispatch(s, ctx);
    }

    /// Delivers every ready message and re-arms the one visibility timer.
    fn dispatch(&self, s: &mut BrokerStorage, ctx: Cx) {
        let now = ctx.now_us();
        let n = self.cfg.consumers.len() as u64;
        for m in &mut s.queue {
            if m.status != QStatus::Ready {
                continue;
            }
            if self.cfg.max_deliveries != 0 && m.deliveries >= self.cfg.max_deliveries {
                m.status = QStatus::Dead;
                ctx.reached(sit::DEAD_LETTERED);
                ctx.observe(Obs::DeadLettered {
                    op: m.ev.op,
                    id: m.ev.id,
                    version: m.ev.version,
                });
                continue;
            }
            if m.deliveries > 0 {
                ctx.reached(sit::LEASE_EXPIRED_REDELIVERY);
            }
            let consumer = self.cfg.consumers[ctx.choose(n) as usize];
            let receipt = s.next_receipt;
            s.next_receipt += 1;
            m.deliveries += 1;
            m.status = QStatus::InFlight {
                receipt,
                deadline_us: now + self.cfg.visibility_timeout_ms * US_PER_MS,
            };
            ctx.send(consumer, Msg::Deliver { ev: m.ev, receipt });
        }
        let next = s
            .queue
            .iter()
            .filter_map(|m| match m.status {
                QStatus::InFlight { deadline_us, .. } => Some(deadline_us),
                _ => None,
            })
            .min();
        match next {
            Some(t) => ctx.set_timer(T_VISIBILITY, t.saturating_sub(now)),
            None => ctx.cancel_timer(T_VISIBILITY),
        }
    }

    pub fn on_msg(&self, s: &mut BrokerStorage, from: ActorId, msg: Msg, ctx: Cx) {
        match msg {
            Msg::Publish { ev } => self.on_publish(s, from, ev, ctx),
            Msg::Ack { id, receipt } => {
                // A late ack (after the lease expired, or from another consumer's
                // delivery) is still accepted, as NATS does (nats-server#4786).
                if let Some(m) = s
                    .queue
                    .iter_mut()
                    .find(|m| m.ev.id == id && matches!(m.status, QStatus::InFlight { .. }))
                {
                    if let QStatus::InFlight {
                        receipt: current, ..
                    } = m.status
                    {
                        if current != receipt {
                            // An older delivery finished while a newer one was out.
                            ctx.reached(sit::CONCURRENT_DUPLICATE);
                        }
                    }
                    m.status = QStatus::Acked;
                }
                self.dispatch(s, ctx);
            }
            _ => {}
        }
    }

    fn on_publish(&self, s: &mut BrokerStorage, from: ActorId, ev: Event, ctx: Cx) {
        let now = ctx.now_us();
        let window_us = self.cfg.dedup_window_ms * US_PER_MS;
        if self.cfg.dedup_window_ms != 0 {
            s.dedup.retain(|&(_, at)| now - at < window_us);
            if s.dedup.iter().any(|&(id, _)| id == ev.id) {
                ctx.reached(sit::BROKER_DEDUP_HIT);
                ctx.send(
                    from,
                    Msg::PublishAck {
                        id: ev.id,
                        duplicate: true,
                    },
                );
                return;
            }
        }
        if s.queue.iter().any(|m| m.ev.id == ev.id) {
            if self.cfg.dedup_window_ms != 0 {
                ctx.reached(sit::REPUBLISH_AFTER_DEDUP_WINDOW);
            }
            ctx.reached(sit::DUPLICATE_PUBLISH);
        }
        // The queue grows by one per accepted publish; run.max_steps bounds publishes.
        s.queue.push(QMsg {
            ev,
            status: QStatus::Ready,
            deliveries: 0,
        });
        if self.cfg.dedup_window_ms != 0 {
            s.dedup.push((ev.id, now));
        }
        ctx.observe(Obs::Accepted {
            op: ev.op,
            id: ev.id,
            version: ev.version,
        });
        ctx.send(
            from,
            Msg::PublishAck {
                id: ev.id,
                duplicate: false,
            },
        );
        self.dispatch(s, ctx);
    }

    pub fn on_timer(&self, s: &mut BrokerStorage, ctx: Cx) {
        let now = ctx.now_us();
        for m in &mut s.queue {
            if let QStatus::InFlight { deadline_us, .. } = m.status {
                if deadline_us <= now {
                    m.status = QStatus::Ready;
                }
            }
        }
        self.dispatch(s, ctx);
    }
}

// ---------------------------------------------------------------- consumer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handler {
    /// Apply the effect for every delivery.
    Effect,
    /// Inbox row in the effect's transaction.
    InboxSameTx,
    /// Check the inbox, apply the effect, write the inbox row: three transactions.
    InboxSeparateTx,
    /// Check the inbox, write the inbox row, apply the effect: the other order.
    InboxRecordFirst,
    /// Insert keyed by the business id; "already exists" counts as success.
    UniqueKey,
    /// Set the entity's value (naturally idempotent, order-sensitive).
    SetValue { versioned: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckMode {
    AfterCommit,
    /// Ack on receipt, then process: a crash while processing loses the message.
    BeforeCommit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsumerConfig {
    pub broker: ActorId,
    pub db: ActorId,
    pub handler: Handler,
    pub ack: AckMode,
    pub processing_ms: u64,
    /// Extra processing time drawn per delivery, 0..=this.
    pub processing_jitter_ms: u64,
    /// Give up a delivery whose database reply does not come (the lease then expires).
    pub tx_timeout_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Checking,
    Processing,
    Committing,
    Recording,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    pub ev: Event,
    pub receipt: u32,
    pub phase: Phase,
}

/// Volatile: deliveries in progress, lost on a crash (the broker redelivers).
#[derive(Clone, Debug, Default)]
pub struct ConsumerState {
    pub jobs: Vec<Option<Job>>,
}

pub const MAX_JOBS: usize = 16;
const T_TX_TIMEOUT: u32 = MAX_JOBS as u32;

pub struct Consumer {
    pub cfg: ConsumerConfig,
}

impl Consumer {
    pub fn on_start(&self) -> ConsumerState {
        ConsumerState {
            jobs: vec![None; MAX_JOBS],
        }
    }

    fn tx(&self, slot: usize, job: &mut Job, kind: TxKind, phase: Phase, ctx: Cx) {
        job.phase = phase;
        ctx.send(
            self.cfg.db,
            Msg::Tx {
                ev: job.ev,
                kind,
                slot: slot as u8,
                receipt: job.receipt,
            },
        );
        ctx.set_timer(
            T_TX_TIMEOUT + slot as u32,
            self.cfg.tx_timeout_ms * US_PER_MS,
        );
    }

    fn process(&self, slot: usize, job: &mut Job, ctx: Cx) {
        job.phase = Phase::Processing;
        let ms = self.cfg.processing_ms + ctx.range(0, self.cfg.processing_jitter_ms);
        ctx.set_timer(slot as u32, ms * US_PER_MS);
    }

    fn finish(&self, st: &mut ConsumerState, slot: usize, ctx: Cx) {
        let job = st.jobs[slot].take().expect("slot is occupied");
        ctx.cancel_timer(T_TX_TIMEOUT + slot as u32);
        if self.cfg.ack == AckMode::AfterCommit {
            ctx.send(
                self.cfg.broker,
                Msg::Ack {
                    id: job.ev.id,
                    receipt: job.receipt,
                },
            );
        }
    }

    pub fn on_msg(&self, st: &mut ConsumerState, msg: Msg, ctx: Cx) {
        match msg {
            Msg::Deliver { ev, receipt } => {
                let Some(slot) = st.jobs.iter().position(Option::is_none) else {
                    return; // busy: the lease expires and another delivery follows
                };
                if self.cfg.ack == AckMode::BeforeCommit {
                    ctx.send(self.cfg.broker, Msg::Ack { id: ev.id, receipt });
                }
                let mut job = Job {
                    ev,
                    receipt,
                    phase: Phase::Processing,
                };
                if matches!(
                    self.cfg.handler,
                    Handler::InboxSeparateTx | Handler::InboxRecordFirst
                ) {
                    self.tx(slot, &mut job, TxKind::CheckInbox, Phase::Checking, ctx);
                } else {
                    self.process(slot, &mut job, ctx);
                }
                st.jobs[slot] = Some(job);
            }
            Msg::TxDone {
                id,
                slot,
                receipt,
                result,
            } => {
                let slot = slot as usize;
                let Some(job) = st.jobs.get_mut(slot).and_then(Option::as_mut) else {
                    return;
                };
                if job.ev.id != id || job.receipt != receipt {
                    return; // a late reply for a delivery given up
                }
                ctx.cancel_timer(T_TX_TIMEOUT + slot as u32);
                match (job.phase, result, self.cfg.handler) {
                    (Phase::Checking, TxResult::NotSeen, _) => self.process(slot, job, ctx),
                    (Phase::Committing, TxResult::Applied, Handler::InboxSeparateTx) => {
                        self.tx(slot, job, TxKind::RecordInbox, Phase::Recording, ctx)
                    }
                    (Phase::Recording, TxResult::Applied, Handler::InboxRecordFirst) => {
                        self.tx(slot, job, TxKind::Effect, Phase::Committing, ctx)
                    }
                    _ => self.finish(st, slot, ctx),
                }
            }
            _ => {}
        }
    }

    pub fn on_timer(&self, st: &mut ConsumerState, tag: u32, ctx: Cx) {
        let slot = (tag % T_TX_TIMEOUT) as usize;
        let Some(job) = st.jobs.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        if tag >= T_TX_TIMEOUT {
            // No answer from the database: drop the delivery unacked; the lease redelivers it.
            st.jobs[slot] = None;
            return;
        }
        debug_assert_eq!(job.phase, Phase::Processing);
        let (kind, phase) = match self.cfg.handler {
            Handler::Effect | Handler::InboxSeparateTx => (TxKind::Effect, Phase::Committing),
            Handler::InboxRecordFirst => (TxKind::RecordInbox, Phase::Recording),
            Handler::InboxSameTx => (TxKind::InboxAndEffect, Phase::Committing),
            Handler::UniqueKey => (TxKind::InsertUnique, Phase::Committing),
            Handler::SetValue { versioned } => (TxKind::SetValue { versioned }, Phase::Committing),
        };
        self.tx(slot, job, kind, phase, ctx);
    }
}

// ---------------------------------------------------------------- consumer database

/// The consumers' shared database: business effects, inbox, unique rows, values.
#[derive(Clone, Debug, Default)]
pub struct ConsumerDbStorage {
    pub inbox: Vec<u32>,
    /// (entity, message id) of every applied effect.
    pub effects: Vec<(OpId, u32)>,
    /// Business ids under a unique constraint.
    pub unique: Vec<OpId>,
    /// (entity, value, version).
    pub values: Vec<(OpId, u32, u32)>,
}

pub struct ConsumerDb;

impl ConsumerDb {
    pub fn reset_storage(s: &mut ConsumerDbStorage) {
        s.inbox.clear();
        s.effects.clear();
        s.unique.clear();
        s.values.clear();
    }

    fn effect(s: &mut ConsumerDbStorage, ev: Event, ctx: Cx) {
        s.effects.push((ev.op, ev.id));
        ctx.observe(Obs::Effect {
            site: Site::ConsumerEffect,
            op: ev.op,
            amount: ev.value,
        });
    }

    /// One transaction, then the reply.
    pub fn on_msg(s: &mut ConsumerDbStorage, from: ActorId, msg: Msg, ctx: Cx) {
        let Msg::Tx {
            ev,
            kind,
            slot,
            receipt,
        } = msg
        else {
            return;
        };
        let result = match kind {
            TxKind::Effect => {
                if s.effects.iter().any(|&(_, id)| id == ev.id) {
                    ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                }
                Self::effect(s, ev, ctx);
                TxResult::Applied
            }
            TxKind::InboxAndEffect => {
                if s.inbox.contains(&ev.id) {
                    ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                    TxResult::Duplicate
                } else {
                    s.inbox.push(ev.id);
                    Self::effect(s, ev, ctx);
                    TxResult::Applied
                }
            }
            TxKind::CheckInbox => {
                let effect_done = s.effects.iter().any(|&(_, id)| id == ev.id);
                if s.inbox.contains(&ev.id) {
                    if effect_done {
                        ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                    } else {
                        // The inbox row committed, its effect did not (yet).
                        ctx.reached(sit::CRASH_BETWEEN_STEPS);
                    }
                    TxResult::Duplicate
                } else {
                    if effect_done {
                        // The effect committed, its inbox row did not (yet).
                        ctx.reached(sit::CRASH_BETWEEN_STEPS);
                    }
                    TxResult::NotSeen
                }
            }
            TxKind::RecordInbox => {
                if !s.inbox.contains(&ev.id) {
                    s.inbox.push(ev.id);
                }
                TxResult::Applied
            }
            TxKind::InsertUnique => {
                if s.unique.contains(&ev.op) {
                    ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                    TxResult::Duplicate
                } else {
                    s.unique.push(ev.op);
                    Self::effect(s, ev, ctx);
                    TxResult::Applied
                }
            }
            TxKind::SetValue { versioned } => {
                let current = s.values.iter().position(|v| v.0 == ev.op);
                let newer_stored = current.is_some_and(|i| s.values[i].2 > ev.version);
                if newer_stored {
                    ctx.reached(sit::OUT_OF_ORDER_WRITE);
                }
                if versioned && current.is_some_and(|i| s.values[i].2 >= ev.version) {
                    if newer_stored {
                        ctx.reached(sit::STALE_WRITE_REJECTED);
                    }
                    TxResult::Stale
                } else {
                    let row = (ev.op, ev.value, ev.version);
                    match current {
                        Some(i) => s.values[i] = row,
                        None => s.values.push(row),
                    }
                    ctx.observe(Obs::ValueWritten {
                        op: ev.op,
                        value: ev.value,
                        version: ev.version,
                    });
                    TxResult::Applied
                }
            }
        };
        ctx.send(
            from,
            Msg::TxDone {
                id: ev.id,
                slot,
                receipt,
                result,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::{Choices, Command};

    type Out = Vec<Command<Msg, Obs>>;

    fn with_ctx<R>(now_us: TimeUs, f: impl FnOnce(Cx) -> R) -> (R, Out) {
        let mut choices = Choices::new();
        choices.start_random(1, 1, false);
        let mut out = Vec::new();
        let r = f(&mut Ctx::detached(now_us, 0, &mut choices, &mut out));
        (r, out)
    }

    fn ev(id: u32) -> Event {
        Event {
            op: 4711,
            id,
            value: 1200,
            version: 1,
        }
    }

    fn broker(max_deliveries: u32, dedup_window_ms: u64) -> Broker {
        Broker {
            cfg: BrokerConfig {
                consumers: vec![3],
                visibility_timeout_ms: 30_000,
                max_deliveries,
                dedup_window_ms,
            },
        }
    }

    fn accepted(out: &Out) -> usize {
        out.iter()
            .filter(|c| matches!(c, Command::Observe(Obs::Accepted { .. })))
            .count()
    }

    #[test]
    fn the_dedup_window_drops_a_republish_inside_it_and_not_after() {
        let b = broker(0, 120_000);
        let mut s = BrokerStorage::default();
        b.reset_storage(&mut s);
        let publish = Msg::Publish { ev: ev(1) };
        let (_, out) = with_ctx(0, |c| b.on_msg(&mut s, 0, publish, c));
        assert_eq!(accepted(&out), 1);
        let (_, out) = with_ctx(119_999_000, |c| b.on_msg(&mut s, 0, publish, c));
        assert_eq!(accepted(&out), 0, "inside the window");
        assert!(out.contains(&Command::Send {
            to: 0,
            msg: Msg::PublishAck {
                id: 1,
                duplicate: true
            }
        }));
        let (_, out) = with_ctx(120_000_000, |c| b.on_msg(&mut s, 0, publish, c));
        assert_eq!(accepted(&out), 1, "the window is over");
        assert_eq!(s.queue.len(), 2);
    }

    #[test]
    fn an_unacked_message_is_redelivered_then_dead_lettered() {
        let b = broker(2, 0);
        let mut s = BrokerStorage::default();
        b.reset_storage(&mut s);
        with_ctx(0, |c| b.on_msg(&mut s, 0, Msg::Publish { ev: ev(1) }, c));
        assert_eq!(s.queue[0].deliveries, 1);
        let (_, out) = with_ctx(30_000_000, |c| b.on_timer(&mut s, c));
        assert_eq!(s.queue[0].deliveries, 2);
        assert!(out.contains(&Command::Reached(sit::LEASE_EXPIRED_REDELIVERY)));
        let (_, out) = with_ctx(60_000_000, |c| b.on_timer(&mut s, c));
        assert_eq!(s.queue[0].status, QStatus::Dead);
        assert!(out
            .iter()
            .any(|c| matches!(c, Command::Observe(Obs::DeadLettered { id: 1, .. }))));
        assert!(
            !out.iter().any(|c| matches!(c, Command::SetTimer { .. })),
            "nothing in flight: no timer keeps the run busy"
        );
    }

    fn tx(s: &mut ConsumerDbStorage, e: Event, kind: TxKind) -> (TxResult, Out) {
        let (_, out) = with_ctx(0, |c| {
            ConsumerDb::on_msg(
                s,
                3,
                Msg::Tx {
                    ev: e,
                    kind,
                    slot: 0,
                    receipt: 1,
                },
                c,
            )
        });
        let result = out
            .iter()
            .find_map(|c| match c {
                Command::Send {
                    msg: Msg::TxDone { result, .. },
                    ..
                } => Some(*result),
                _ => None,
            })
            .expect("every transaction is answered");
        (result, out)
    }

    fn effects(out: &Out) -> usize {
        out.iter()
            .filter(|c| matches!(c, Command::Observe(Obs::Effect { .. })))
            .count()
    }

    #[test]
    fn the_inbox_in_the_effects_transaction_applies_once() {
        let mut s = ConsumerDbStorage::default();
        let (r, out) = tx(&mut s, ev(1), TxKind::InboxAndEffect);
        assert_eq!((r, effects(&out)), (TxResult::Applied, 1));
        let (r, out) = tx(&mut s, ev(1), TxKind::InboxAndEffect);
        assert_eq!((r, effects(&out)), (TxResult::Duplicate, 0));
        // A plain effect has no memory.
        let (_, out) = tx(&mut s, ev(1), TxKind::Effect);
        assert_eq!(effects(&out), 1);
    }

    #[test]
    fn a_versioned_update_rejects_an_older_event_and_a_plain_one_does_not() {
        let v = |version, value| Event {
            op: 7,
            id: version,
            value,
            version,
        };
        for versioned in [true, false] {
            let mut s = ConsumerDbStorage::default();
            tx(&mut s, v(2, 20), TxKind::SetValue { versioned });
            let (r, _) = tx(&mut s, v(1, 10), TxKind::SetValue { versioned });
            let stored = s.values[0].1;
            if versioned {
                assert_eq!((r, stored), (TxResult::Stale, 20));
            } else {
                assert_eq!((r, stored), (TxResult::Applied, 10));
            }
        }
    }

    #[test]
    fn the_outbox_commits_state_and_row_together_and_publishes_in_a_later_step() {
        let p = Producer {
            cfg: ProducerConfig {
                broker: 1,
                mode: WriteMode::Outbox,
                publish_timeout_ms: 5000,
                publish_max_attempts: 3,
                commit_fail_per_mille: 0,
                events: vec![EventSpec {
                    op: 4711,
                    value: 1200,
                    start_ms: 0,
                }],
            },
        };
        let mut s = ProducerStorage::default();
        p.reset_storage(&mut s);
        let (mut st, _) = with_ctx(0, |c| p.on_start(&mut s, c));
        let (_, out) = with_ctx(0, |c| p.on_timer(&mut st, &mut s, 0, c));
        assert_eq!((s.rows.len(), s.outbox.len()), (1, 1));
        assert!(!out.iter().any(|c| matches!(c, Command::Send { .. })));
        let (_, out) = with_ctx(0, |c| p.on_timer(&mut st, &mut s, T_RELAY, c));
        assert!(out.iter().any(|c| matches!(
            c,
            Command::Send {
                msg: Msg::Publish { .. },
                ..
            }
        )));
        // A crash now (before the confirmation and the mark) republishes after the restart.
        let (mut st, out) = with_ctx(1, |c| p.on_start(&mut s, c));
        assert!(out.contains(&Command::Reached(sit::CRASH_BETWEEN_STEPS)));
        let (_, out) = with_ctx(1, |c| p.on_timer(&mut st, &mut s, T_RELAY, c));
        assert!(out.contains(&Command::Reached(sit::REPUBLISH_AFTER_CRASH)));
        assert_eq!(s.outbox[0].attempts, 2);
    }
}
