//! A consumer: takes a delivery, runs the handler's transactions against the
//! shared database, and acks before or after the commit.

use super::msg::{Event, Msg, TxKind, TxResult};
use super::situations as sit;
use super::CONSUMER_LAYER;
use crate::core::shown::FieldIf;
use crate::core::slots::Slots;
use crate::core::{Carries, Key, Obs};
use sim::{Actor, ActorId, Ctx, Timer, US_PER_MS};
use std::fmt;
use std::marker::PhantomData;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// What the consumer's handler does with a delivery.
pub enum Handler {
    /// Apply the effect for every delivery.
    Effect,
    /// Inbox row in the effect's transaction.
    InboxSameTx,
    /// The inbox read only for a delivery the broker flags as redelivered
    /// (a RabbitMQ optimisation): a first delivery writes its row and
    /// effect without looking, as if it could not be a duplicate.
    InboxIfRedelivered,
    /// Check the inbox, apply the effect, write the inbox row: three transactions.
    InboxSeparateTx,
    /// Check the inbox, write the inbox row, apply the effect: the other order.
    InboxRecordFirst,
    /// Insert keyed by the event under a unique constraint; "already exists" counts as success.
    UniqueKey,
    /// Set the entity's value (naturally idempotent, order-sensitive).
    SetValue {
        /// Only if the stored version is older.
        versioned: bool,
    },
}

impl Handler {
    /// It reads its inbox for every delivery, so a second copy of an event
    /// is caught while the inbox still holds its id (not the handler that
    /// reads it only for flagged redeliveries).
    pub fn reads_inbox_always(self) -> bool {
        matches!(
            self,
            Handler::InboxSameTx | Handler::InboxSeparateTx | Handler::InboxRecordFirst
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// When the consumer acks a delivery.
pub enum AckMode {
    /// Ack once the handler's transactions committed.
    AfterCommit,
    /// Ack on receipt, then process: a crash while processing loses the message.
    BeforeCommit,
    /// Do the work, ack asking for the result, and commit only if the ack
    /// counted (Pub/Sub's `AckWithResult` under exactly-once delivery): a
    /// failed ack means another delivery is out, so the work is dropped; a
    /// crash or a lost result between the ack and the commit loses it.
    CheckedBeforeCommit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A consumer's configuration.
pub struct ConsumerConfig {
    /// The broker to ack to.
    pub broker: ActorId,
    /// The database actor its transactions go to.
    pub db: ActorId,
    /// What it does with a delivery.
    pub handler: Handler,
    /// When it acks.
    pub ack: AckMode,
    /// Processing time per delivery.
    pub processing_ms: u64,
    /// Extra processing time drawn per delivery, 0..=this.
    pub processing_jitter_ms: u64,
    /// Give up a delivery whose database reply does not come (the lease then expires).
    pub tx_timeout_ms: u64,
    /// While a delivery is in hand, ask the broker this often to extend its
    /// lease; 0 = never.
    pub lease_renewal_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Checking,
    Processing,
    /// Waiting for the result of its ack before the commit.
    Acking,
    Committing,
    Recording,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Job {
    pub ev: Event,
    pub receipt: u32,
    pub phase: Phase,
    /// The broker flagged the delivery as redelivered.
    pub redelivered: bool,
}

// By hand: the flag only where it is set, so the state panels of runs
// without redeliveries read as they did before it was kept.
impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job")
            .field("ev", &self.ev)
            .field("receipt", &self.receipt)
            .field("phase", &self.phase)
            .field_if(self.redelivered, "redelivered", &self.redelivered)
            .finish()
    }
}

/// Volatile: deliveries in progress, lost on a crash (the broker redelivers).
#[derive(Clone, Debug)]
pub struct ConsumerState {
    /// The deliveries in progress, one slot each.
    pub jobs: Slots<Job>,
}

pub const MAX_JOBS: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A consumer's timers, one pair per job slot.
pub enum ConsumerTimer {
    /// The handler's work on job `slot` is done.
    Processed {
        /// The job's slot.
        slot: u32,
    },
    /// The database did not answer job `slot`'s transaction in time, or the
    /// broker the result of its ack.
    TxTimeout {
        /// The job's slot.
        slot: u32,
    },
    /// Time to renew job `slot`'s lease.
    Renew {
        /// The job's slot.
        slot: u32,
    },
}

impl fmt::Display for ConsumerTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConsumerTimer::Processed { .. } => f.write_str("processing done"),
            ConsumerTimer::TxTimeout { .. } => f.write_str("transaction timeout"),
            ConsumerTimer::Renew { .. } => f.write_str("renew the lease"),
        }
    }
}

impl Timer for ConsumerTimer {
    fn slot(&self) -> u32 {
        match *self {
            ConsumerTimer::Processed { slot } => slot,
            ConsumerTimer::TxTimeout { slot } => MAX_JOBS as u32 + slot,
            ConsumerTimer::Renew { slot } => 2 * MAX_JOBS as u32 + slot,
        }
    }
}

/// A consumer: takes a delivery, runs the handler's transactions against the shared database, acks.
pub struct Consumer<W> {
    /// Its configuration.
    pub cfg: ConsumerConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Consumer<W> {
    /// A consumer configured by `cfg`.
    pub fn new(cfg: ConsumerConfig) -> Self {
        Consumer {
            cfg,
            wire: PhantomData,
        }
    }
}

impl<W: Carries<Msg>> Consumer<W> {
    fn tx(&self, slot: usize, job: &mut Job, kind: TxKind, phase: Phase, ctx: &mut impl Ctx<Self>) {
        job.phase = phase;
        let tx = Msg::Tx {
            ev: job.ev,
            kind,
            slot: slot as u8,
            receipt: job.receipt,
        };
        ctx.send(self.cfg.db, W::wrap(tx));
        ctx.set_timer(
            ConsumerTimer::TxTimeout { slot: slot as u32 },
            self.cfg.tx_timeout_ms * US_PER_MS,
        );
    }

    /// The handler's work is done: its (first) writing transaction.
    fn commit(&self, slot: usize, job: &mut Job, ctx: &mut impl Ctx<Self>) {
        let (kind, phase) = match self.cfg.handler {
            Handler::Effect | Handler::InboxSeparateTx => (TxKind::Effect, Phase::Committing),
            Handler::InboxRecordFirst => (TxKind::RecordInbox, Phase::Recording),
            Handler::InboxSameTx => (TxKind::InboxAndEffect, Phase::Committing),
            Handler::InboxIfRedelivered if job.redelivered => {
                (TxKind::InboxAndEffect, Phase::Committing)
            }
            Handler::InboxIfRedelivered => (TxKind::InboxAndEffectUnchecked, Phase::Committing),
            Handler::UniqueKey => (TxKind::InsertUnique, Phase::Committing),
            Handler::SetValue { versioned } => (TxKind::SetValue { versioned }, Phase::Committing),
        };
        self.tx(slot, job, kind, phase, ctx);
    }

    /// Asks the broker whether the ack of job `slot`'s delivery counts,
    /// before committing; no answer in time and the work is dropped.
    fn ack_with_result(&self, slot: usize, job: &mut Job, ctx: &mut impl Ctx<Self>) {
        job.phase = Phase::Acking;
        let ack = Msg::AckWithResult {
            id: job.ev.id,
            receipt: job.receipt,
        };
        ctx.send(self.cfg.broker, W::wrap(ack));
        ctx.set_timer(
            ConsumerTimer::TxTimeout { slot: slot as u32 },
            self.cfg.tx_timeout_ms * US_PER_MS,
        );
    }

    /// The result of job `slot`'s ack: commit if it counted, else drop the
    /// work, since the broker has handed the message to another delivery.
    fn on_ack_result(
        &self,
        st: &mut ConsumerState,
        (id, receipt, ok): (u32, u32, bool),
        ctx: &mut impl Ctx<Self>,
    ) {
        let slot = st
            .jobs
            .iter()
            .find(|(_, j)| j.ev.id == id && j.receipt == receipt && j.phase == Phase::Acking)
            .map(|(slot, _)| slot);
        let Some(slot) = slot else {
            return; // a repeat, or the answer to a job given up
        };
        ctx.cancel_timer(ConsumerTimer::TxTimeout { slot: slot as u32 });
        ctx.cancel_timer(ConsumerTimer::Renew { slot: slot as u32 });
        if ok {
            let mut job = *st.jobs.get(slot).expect("found");
            self.commit(slot, &mut job, ctx);
            *st.jobs.get_mut(slot).expect("busy") = job;
        } else {
            st.jobs.take(slot);
            ctx.reached(sit::WORK_DROPPED_AFTER_FAILED_ACK);
        }
    }

    fn process(&self, slot: usize, job: &mut Job, ctx: &mut impl Ctx<Self>) {
        job.phase = Phase::Processing;
        let ms = self.cfg.processing_ms + ctx.range(0, self.cfg.processing_jitter_ms);
        ctx.set_timer(
            ConsumerTimer::Processed { slot: slot as u32 },
            ms * US_PER_MS,
        );
    }

    /// Arms the next lease renewal of job `slot`, if the consumer renews.
    fn renew_later(&self, slot: usize, ctx: &mut impl Ctx<Self>) {
        if self.cfg.lease_renewal_ms > 0 {
            ctx.set_timer(
                ConsumerTimer::Renew { slot: slot as u32 },
                self.cfg.lease_renewal_ms * US_PER_MS,
            );
        }
    }

    fn finish(&self, st: &mut ConsumerState, slot: usize, ctx: &mut impl Ctx<Self>) {
        let job = st.jobs.take(slot).expect("slot is busy");
        ctx.cancel_timer(ConsumerTimer::TxTimeout { slot: slot as u32 });
        ctx.cancel_timer(ConsumerTimer::Renew { slot: slot as u32 });
        if self.cfg.ack == AckMode::AfterCommit {
            let ack = Msg::Ack {
                id: job.ev.id,
                receipt: job.receipt,
            };
            ctx.send(self.cfg.broker, W::wrap(ack));
        }
    }

    fn on_deliver(
        &self,
        st: &mut ConsumerState,
        (ev, receipt, redelivered): (Event, u32, bool),
        ctx: &mut impl Ctx<Self>,
    ) {
        ctx.observe(Obs::Received {
            layer: &CONSUMER_LAYER,
            op: ev.op(),
            key: Key::None,
        });
        let mut job = Job {
            ev,
            receipt,
            phase: Phase::Processing,
            redelivered,
        };
        let Some(slot) = st.jobs.insert(job) else {
            return; // busy: the lease expires and another delivery follows
        };
        if self.cfg.ack == AckMode::BeforeCommit {
            ctx.send(self.cfg.broker, W::wrap(Msg::Ack { id: ev.id, receipt }));
        } else {
            // An acked delivery has no lease left to renew.
            self.renew_later(slot, ctx);
        }
        if matches!(
            self.cfg.handler,
            Handler::InboxSeparateTx | Handler::InboxRecordFirst
        ) {
            self.tx(slot, &mut job, TxKind::CheckInbox, Phase::Checking, ctx);
        } else {
            self.process(slot, &mut job, ctx);
        }
        *st.jobs.get_mut(slot).expect("just inserted") = job;
    }

    fn on_tx_done(
        &self,
        st: &mut ConsumerState,
        id: u32,
        slot: usize,
        receipt: u32,
        result: TxResult,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(job) = st.jobs.get_mut(slot) else {
            return;
        };
        if job.ev.id != id || job.receipt != receipt {
            return; // a late reply for a delivery given up
        }
        ctx.cancel_timer(ConsumerTimer::TxTimeout { slot: slot as u32 });
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
}

impl<W> crate::core::Ends for Consumer<W> {
    const ROLES: &'static [&'static str] = &["consumer"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("ack", "broker"),
        ("extend", "broker"),
        ("tx", "consumer-db"),
    ];

    /// Lease extensions only from a consumer that renews.
    fn sends(&self, kind: &str, _role: &str) -> bool {
        kind != "extend" || self.cfg.lease_renewal_ms > 0
    }
}

impl<W: Carries<Msg>> Actor for Consumer<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ConsumerTimer;
    type State = ConsumerState;
    /// A consumer keeps its durable data in `consumer-db`.
    type Storage = ();

    fn timer_slots(&self) -> u32 {
        3 * MAX_JOBS as u32
    }

    fn reset_storage(&self, storage: &mut Option<()>) {
        *storage = Some(());
    }

    fn reset_state(&self, state: &mut Option<ConsumerState>) {
        match state {
            Some(st) => st.jobs.clear(),
            None => {
                *state = Some(ConsumerState {
                    jobs: Slots::new(MAX_JOBS),
                })
            }
        }
    }

    fn on_start(&self, _: &mut ConsumerState, _: &mut (), _: &mut impl Ctx<Self>) {}

    /// A crash drops every job: one the broker has let go (acked on
    /// receipt, or acked with result and waiting for it) whose effect's
    /// transaction was not sent yet is where an ack before the commit loses
    /// the event, and nothing after the restart remembers it.
    fn on_crash(&self, st: &ConsumerState, _: &(), reached: &mut dyn FnMut(sim::SituationId)) {
        let uncommitted = |j: &Job| match j.phase {
            Phase::Checking | Phase::Processing => self.cfg.ack == AckMode::BeforeCommit,
            Phase::Acking => true,
            Phase::Recording => {
                self.cfg.ack == AckMode::BeforeCommit
                    && self.cfg.handler == Handler::InboxRecordFirst
            }
            Phase::Committing => false,
        };
        if st.jobs.iter().any(|(_, j)| uncommitted(j)) {
            reached(sit::CRASH_BETWEEN_ACK_AND_COMMIT);
        }
    }

    fn on_msg(
        &self,
        st: &mut ConsumerState,
        _: &mut (),
        _from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        match msg.peek() {
            Some(&Msg::Deliver {
                ev,
                receipt,
                redelivered,
            }) => self.on_deliver(st, (ev, receipt, redelivered), ctx),
            Some(&Msg::TxDone {
                id,
                slot,
                receipt,
                result,
            }) => self.on_tx_done(st, id, usize::from(slot), receipt, result, ctx),
            Some(&Msg::AckResult { id, receipt, ok }) => {
                self.on_ack_result(st, (id, receipt, ok), ctx)
            }
            _ => {}
        }
    }

    fn on_timer(
        &self,
        st: &mut ConsumerState,
        _: &mut (),
        timer: ConsumerTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        match timer {
            ConsumerTimer::TxTimeout { slot } => {
                // No answer from the database: drop the delivery unacked; the
                // lease redelivers it. No result of a checked ack: drop the
                // work too, though the ack may have counted.
                let job = st.jobs.take(slot as usize);
                if job.is_some_and(|j| j.phase == Phase::Acking) {
                    ctx.reached(sit::ACK_RESULT_MISSING);
                }
                ctx.cancel_timer(ConsumerTimer::Renew { slot });
            }
            ConsumerTimer::Renew { slot } => {
                let Some(job) = st.jobs.get(slot as usize) else {
                    return;
                };
                let extend = Msg::Extend {
                    id: job.ev.id,
                    receipt: job.receipt,
                };
                ctx.send(self.cfg.broker, W::wrap(extend));
                self.renew_later(slot as usize, ctx);
            }
            ConsumerTimer::Processed { slot } => {
                let slot = slot as usize;
                let Some(job) = st.jobs.get_mut(slot) else {
                    return;
                };
                debug_assert_eq!(job.phase, Phase::Processing);
                let mut job = *job;
                if self.cfg.ack == AckMode::CheckedBeforeCommit {
                    self.ack_with_result(slot, &mut job, ctx);
                } else {
                    self.commit(slot, &mut job, ctx);
                }
                *st.jobs.get_mut(slot).expect("busy") = job;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Msg as World;

    fn consumer(ack: AckMode, handler: Handler) -> Consumer<World> {
        Consumer::new(ConsumerConfig {
            broker: 0,
            db: 1,
            handler,
            ack,
            processing_ms: 10,
            processing_jitter_ms: 0,
            tx_timeout_ms: 100,
            lease_renewal_ms: 0,
        })
    }

    /// Whether a crash of a consumer holding one job in `phase` reports the gap.
    fn gap(ack: AckMode, handler: Handler, phase: Phase) -> bool {
        let c = consumer(ack, handler);
        let mut st = ConsumerState {
            jobs: Slots::new(MAX_JOBS),
        };
        let ev = Event {
            id: 1,
            entity: 1,
            value: 5,
            version: 1,
            entity_space: &crate::messaging::ENTITY,
        };
        st.jobs.insert(Job {
            ev,
            receipt: 1,
            phase,
            redelivered: false,
        });
        let mut seen = Vec::new();
        c.on_crash(&st, &(), &mut |s| seen.push(s));
        assert!(seen.iter().all(|&s| s == sit::CRASH_BETWEEN_ACK_AND_COMMIT));
        !seen.is_empty()
    }

    #[test]
    fn a_crash_falls_into_the_ack_gap_only_where_the_broker_let_go_and_no_commit_was_sent() {
        use AckMode::*;
        use Phase::*;
        let plain = Handler::InboxSameTx;
        // Acked on receipt: everything before the effect's transaction is lost.
        assert!(gap(BeforeCommit, plain, Processing));
        assert!(gap(BeforeCommit, Handler::InboxSeparateTx, Checking));
        assert!(gap(BeforeCommit, Handler::InboxRecordFirst, Recording));
        // The effect's transaction is on its way: the database applies it.
        assert!(!gap(BeforeCommit, plain, Committing));
        assert!(!gap(BeforeCommit, Handler::InboxSeparateTx, Recording));
        // Acked with result: only while the result is awaited.
        assert!(gap(CheckedBeforeCommit, plain, Acking));
        assert!(!gap(CheckedBeforeCommit, plain, Processing));
        assert!(!gap(CheckedBeforeCommit, plain, Committing));
        // Acked after the commit: the broker redelivers whatever a crash drops.
        for phase in [Checking, Processing, Committing, Recording] {
            assert!(
                !gap(AfterCommit, Handler::InboxRecordFirst, phase),
                "{phase:?}"
            );
        }
        // No job, no gap.
        let idle = ConsumerState {
            jobs: Slots::new(MAX_JOBS),
        };
        let mut seen = Vec::new();
        consumer(BeforeCommit, plain).on_crash(&idle, &(), &mut |s| seen.push(s));
        assert!(seen.is_empty());
    }
}
