//! A consumer: takes a delivery, runs the handler's transactions against the
//! shared database, and acks before or after the commit.

mod config;
mod rollout;
mod state;

pub use config::{AckMode, ConsumerConfig, Handler};
pub use rollout::MAX_CONSUMER_VERSIONS;
#[cfg(test)]
use state::MAX_JOBS;
pub use state::{ConsumerState, ConsumerTimer, Job, Phase, RECENT_RECEIPTS};

use super::msg::{Event, Msg, TxKind, TxResult};
use super::situations as sit;
use super::CONSUMER_LAYER;
use crate::core::{Carries, Key, Obs};
use sim::{Actor, ActorId, Ctx, TimeUs, US_PER_MS};
use std::marker::PhantomData;

/// A consumer: takes a delivery, runs the handler's transactions against the shared database, acks.
pub struct Consumer<W> {
    /// Its configuration.
    pub cfg: ConsumerConfig,
    /// Its later versions from rollouts, in time order (empty: none).
    versions: Vec<rollout::Version<W>>,
    wire: PhantomData<fn() -> W>,
}

impl<W> Consumer<W> {
    /// A consumer configured by `cfg`.
    pub fn new(cfg: ConsumerConfig) -> Self {
        Consumer {
            cfg,
            versions: Vec::new(),
            wire: PhantomData,
        }
    }
}

impl<W: Carries<Msg>> Consumer<W> {
    fn tx(&self, slot: usize, job: &mut Job, kind: TxKind, phase: Phase, ctx: &mut impl Ctx<Self>) {
        job.phase = phase;
        job.tx = kind;
        job.attempt = 1;
        self.send_tx(slot, job, ctx);
    }

    /// Sends job `slot`'s transaction (again, after a timeout: the same
    /// ids, so the database cannot tell it from the first).
    fn send_tx(&self, slot: usize, job: &Job, ctx: &mut impl Ctx<Self>) {
        let tx = Msg::Tx {
            ev: job.ev,
            kind: job.tx,
            slot: slot as u8,
            receipt: job.receipt,
            attempt: job.attempt,
            // A job keeps the version that took it, whichever runs now.
            version: if self.cfg.version == 0 {
                0
            } else {
                job.version + 1
            },
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
        job.attempt = 1;
        self.send_ack_with_result(slot, job, ctx);
    }

    /// Sends job `slot`'s ack with result (again, after a timeout: the same
    /// receipt, so the broker answers a repeat of an ack that counted with
    /// "counted", and refuses it once a newer delivery is out).
    fn send_ack_with_result(&self, slot: usize, job: &Job, ctx: &mut impl Ctx<Self>) {
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

    /// Whether the broker has let job's message go by the consumer's own
    /// reckoning (acked on receipt, or an ack with result that counted):
    /// then nothing will deliver it again, and the job is the event's last
    /// hope. A plain ack on receipt may have been lost; the consumer cannot
    /// know and acts on what it sent.
    fn let_go(&self, job: &Job) -> bool {
        match self.cfg.ack {
            AckMode::AfterCommit => false,
            AckMode::BeforeCommit => true,
            // The commit's transactions follow only a counted ack.
            AckMode::CheckedBeforeCommit => {
                matches!(job.phase, Phase::Committing | Phase::Recording)
            }
        }
    }

    /// No answer to job `slot`'s transaction (or ack) in time. While the
    /// broker holds the message the job is given up and the lease
    /// redelivers it; once the ack let it go, giving up loses the event, so
    /// the transaction is sent again, up to `tx_max_attempts` sends.
    fn on_tx_timeout(&self, st: &mut ConsumerState, slot: usize, ctx: &mut impl Ctx<Self>) {
        let Some(job) = st.jobs.get_mut(slot) else {
            return;
        };
        match job.phase {
            // The ack may have counted, and then nothing delivers the
            // message again: ask again, as Pub/Sub's client library repeats
            // an ack until it has an answer.
            Phase::Acking if job.attempt < self.cfg.tx_max_attempts => {
                job.attempt += 1;
                let job = *job;
                ctx.reached(sit::ACK_RESENT_FOR_RESULT);
                self.send_ack_with_result(slot, &job, ctx);
                return;
            }
            // The last ask unanswered: this consumer cannot tell.
            Phase::Acking => ctx.reached(sit::ACK_RESULT_MISSING),
            _ if self.let_go(job) && job.attempt < self.cfg.tx_max_attempts => {
                job.attempt += 1;
                let job = *job;
                ctx.reached(sit::TX_RESENT_AFTER_ACK);
                self.send_tx(slot, &job, ctx);
                return;
            }
            _ if self.let_go(job) => ctx.reached(sit::TX_GIVEN_UP_AFTER_ACK),
            _ => {}
        }
        st.jobs.take(slot);
        ctx.cancel_timer(ConsumerTimer::Renew { slot: slot as u32 });
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
        // A checked consumer whose inbox check found the event handled has
        // nothing to commit and has not acked yet: unacked, the message
        // would come back at every lease until the broker gives it up.
        let unacked = match self.cfg.ack {
            AckMode::AfterCommit => true,
            AckMode::BeforeCommit => false,
            AckMode::CheckedBeforeCommit => job.phase == Phase::Checking,
        };
        if unacked {
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
        (ev, receipt, redelivered, sent_us, version): (Event, u32, bool, TimeUs, u8),
        ctx: &mut impl Ctx<Self>,
    ) {
        if sent_us < st.started_us {
            // Sent over the connection of the process that crashed (or to
            // no process at all): TCP hands none of its frames to the new
            // connection. Its lease runs out and the broker delivers the
            // message again, with a receipt of its own. Taking it would be
            // working on a receipt the crashed process may have acked, and
            // exactly-once delivery answers a repeat of that ack "counted".
            ctx.reached(sit::DELIVERY_ON_OLD_CONNECTION);
            return;
        }
        // The two halves scanned in place: `VecDeque::contains` stayed out
        // of line, a call per delivery for the handful of receipts a run
        // takes (the ring wraps only after RECENT_RECEIPTS of them).
        let (front, back) = st.taken.as_slices();
        if front.iter().chain(back).any(|&r| r == receipt) {
            // A network copy of a delivery taken already: over the broker's
            // TCP connection it would never reach the handler, so it is no
            // delivery the consumer received (not counted as load, as the
            // copy on an old connection above is not).
            return;
        }
        ctx.observe(Obs::Received {
            layer: &CONSUMER_LAYER,
            op: ev.op(),
            key: Key::None,
        });
        // Only a consumer with rollouts names the version that takes it.
        if self.cfg.version != 0 {
            // A delivery has no attempt number the consumer knows: 0.
            ctx.observe(Obs::Handled {
                op: ev.op(),
                attempt: 0,
                version: version + 1,
            });
        }
        if st.taken.len() == RECENT_RECEIPTS {
            st.taken.pop_front();
        }
        st.taken.push_back(receipt);
        let mut job = Job {
            ev,
            receipt,
            phase: Phase::Processing,
            redelivered,
            tx: TxKind::CheckInbox,
            attempt: 0,
            version,
        };
        let Some(slot) = st.jobs.insert(job) else {
            // Left undone and unacked: the lease runs out and the broker
            // delivers the message again. Named, so that a run slowed by a
            // full consumer says why its messages came back.
            ctx.reached(sit::DELIVERY_FOUND_CONSUMER_BUSY);
            return;
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
        (id, slot, receipt): (u32, usize, u32),
        (kind, result): (TxKind, TxResult),
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(job) = st.jobs.get_mut(slot) else {
            return;
        };
        if job.ev.id != id || job.receipt != receipt {
            return; // a late reply for a delivery given up
        }
        if job.tx != kind || matches!(job.phase, Phase::Processing | Phase::Acking) {
            // The answer to an attempt of a transaction this job is past: the
            // first of two sends came after all, or a network copy.
            return;
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
        (super::ACK_WITH_RESULT, "broker"),
        ("extend", "broker"),
        ("tx", "consumer-db"),
    ];

    /// Lease extensions only from a consumer that renews a lease it holds
    /// (an ack on receipt leaves none); acks asking for their result only
    /// from one that checks its ack before the commit.
    fn sends(&self, kind: &str, _role: &str) -> bool {
        let any = |f: fn(&ConsumerConfig) -> bool| {
            f(&self.cfg) || self.versions.iter().any(|v| f(&v.consumer.cfg))
        };
        match kind {
            "extend" => any(|c| c.lease_renewal_ms > 0 && c.ack != AckMode::BeforeCommit),
            super::ACK_WITH_RESULT => any(|c| c.ack == AckMode::CheckedBeforeCommit),
            _ => true,
        }
    }
}

impl<W: Carries<Msg>> Actor for Consumer<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ConsumerTimer;
    type State = ConsumerState;
    /// A consumer keeps its durable data in `consumer-db`.
    type Storage = ();

    fn reset(&self, state: sim::Fresh<'_, ConsumerState>, storage: Option<sim::Fresh<'_, ()>>) {
        if let Some(s) = storage {
            s.set(());
        }
        let st = state.or_default();
        st.jobs.clear();
        st.taken.clear();
        st.started_us = 0;
        st.version = 0;
    }

    fn on_start(&self, st: &mut ConsumerState, _: &mut (), ctx: &mut impl Ctx<Self>) {
        st.started_us = ctx.now_us();
        self.start_version(st, ctx);
    }

    /// A crash drops every job: one the broker has let go (acked on
    /// receipt, or acked with result and waiting for it) whose effect's
    /// transaction was not sent yet is where an ack before the commit loses
    /// the event, and nothing after the restart remembers it.
    fn on_crash(&self, st: &ConsumerState, _: &(), reached: &mut dyn FnMut(sim::SituationId)) {
        let uncommitted = |j: &Job| {
            let cfg = &self.of(j.version).cfg;
            match j.phase {
                Phase::Checking | Phase::Processing => cfg.ack == AckMode::BeforeCommit,
                Phase::Acking => true,
                // The row is on its way and the effect's transaction is not:
                // after an ack on receipt or a counted ack alike.
                Phase::Recording => {
                    cfg.ack != AckMode::AfterCommit && cfg.handler == Handler::InboxRecordFirst
                }
                Phase::Committing => false,
            }
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
                sent_us,
            }) => {
                let v = st.version;
                let taken = (ev, receipt, redelivered, sent_us, v);
                self.of(v).on_deliver(st, taken, ctx);
            }
            Some(&Msg::TxDone {
                id,
                slot,
                receipt,
                kind,
                result,
            }) => {
                let slot = usize::from(slot);
                let this = self.job_version(st, slot);
                this.on_tx_done(st, (id, slot, receipt), (kind, result), ctx);
            }
            Some(&Msg::AckResult { id, receipt, ok }) => {
                let v = match self.versions.is_empty() {
                    true => 0,
                    false => st
                        .jobs
                        .iter()
                        .find(|(_, j)| j.ev.id == id && j.receipt == receipt)
                        .map_or(0, |(_, j)| j.version),
                };
                self.of(v).on_ack_result(st, (id, receipt, ok), ctx);
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
        let this = match timer {
            ConsumerTimer::Deploy => return self.on_deploy(st, ctx),
            ConsumerTimer::Processed { slot }
            | ConsumerTimer::TxTimeout { slot }
            | ConsumerTimer::Renew { slot } => self.job_version(st, slot as usize),
        };
        this.on_own_timer(st, timer, ctx);
    }
}

impl<W: Carries<Msg>> Consumer<W> {
    /// The version that took job `slot` (the first for a slot with no job:
    /// its handler finds none and does nothing). Without rollouts, no
    /// lookup: a consumer has one version.
    fn job_version(&self, st: &ConsumerState, slot: usize) -> &Self {
        if self.versions.is_empty() {
            return self;
        }
        self.of(st.jobs.get(slot).map_or(0, |j| j.version))
    }

    /// A job's timer, handled by the version that took the job.
    fn on_own_timer(&self, st: &mut ConsumerState, timer: ConsumerTimer, ctx: &mut impl Ctx<Self>) {
        match timer {
            ConsumerTimer::Deploy => {}
            ConsumerTimer::TxTimeout { slot } => self.on_tx_timeout(st, slot as usize, ctx),
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
mod tests;
