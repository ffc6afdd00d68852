//! The broker: a durable queue that delivers at least once. An unacked
//! delivery becomes visible again after the visibility timeout; after its
//! last delivery a message goes to the dead-letter queue or is dropped; a
//! publish dedup window drops a repeated message id for a while; an
//! idempotent producer's repeated (producer id, sequence number) is dropped
//! while it is among the last five stored for that id, for as long as the
//! broker keeps the producer's state.

use super::msg::{Event, Msg};
use super::situations as sit;
use crate::core::dedup::DedupStore;
use crate::core::{Carries, Obs};
use sim::{Actor, ActorId, Ctx, TimeUs, US_PER_MS};
use std::marker::PhantomData;

mod config;
mod publish;
mod queue;

pub use config::{AtMaxDeliveries, BrokerConfig};
pub use publish::SEQUENCE_WINDOW;
pub use queue::{BrokerStorage, BrokerTimer, QMsg, QStatus};

/// The broker: a durable queue that delivers at least once.
pub struct Broker<W> {
    /// Its configuration.
    pub cfg: BrokerConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Broker<W> {
    /// A broker configured by `cfg`.
    pub fn new(cfg: BrokerConfig) -> Self {
        Broker {
            cfg,
            wire: PhantomData,
        }
    }

    fn window_us(&self) -> TimeUs {
        self.cfg.dedup_window_ms * US_PER_MS
    }
}

impl<W: Carries<Msg>> Broker<W> {
    /// A message that has had its last delivery leaves the queue.
    fn retire(&self, m: &mut QMsg, ctx: &mut impl Ctx<Self>) {
        match self.cfg.at_max_deliveries {
            AtMaxDeliveries::DeadLetter => {
                m.set_status(QStatus::Dead);
                ctx.reached(sit::BROKER_DEAD_LETTERED);
                ctx.observe(Obs::DeadLettered { op: m.ev.op() });
            }
            AtMaxDeliveries::Discard => {
                m.set_status(QStatus::Discarded);
                ctx.reached(sit::BROKER_DISCARDED);
            }
        }
    }

    /// Delivers every ready message and re-arms the one visibility timer.
    fn dispatch(&self, s: &mut BrokerStorage, ctx: &mut impl Ctx<Self>) {
        self.dispatch_expiring(s, false, ctx);
    }

    /// [`dispatch`](Self::dispatch), where `expiring` (the visibility
    /// timer's firing) first makes every delivery whose lease has run out
    /// visible again. Both in one pass: a message's status changes only at
    /// its own turn of the loop, so the deliveries and their draws come in
    /// the order a pass of expiries and then one of deliveries gave them.
    fn dispatch_expiring(&self, s: &mut BrokerStorage, expiring: bool, ctx: &mut impl Ctx<Self>) {
        let now = ctx.now_us();
        let n = self.cfg.consumers.len() as u64;
        // Which messages this pass takes, by their `due_us` alone: a ready
        // one (due at 0) always, one in flight (due a microsecond past its
        // lease's end) only on a firing at or after that end.
        let limit = if expiring { now + 1 } else { 0 };
        // The earliest lease end plus one, gathered in the same pass: only a
        // message in flight has a `due_us` past the limit and below
        // `TimeUs::MAX`, so neither the take nor the minimum tests the
        // status, and the one branch, whether the message is taken, is
        // seldom taken.
        let mut next = TimeUs::MAX;
        for (i, m) in s.queue.iter_mut().enumerate() {
            if m.due_us > limit {
                next = next.min(m.due_us);
                continue;
            }
            m.set_status(QStatus::Ready);
            if self.cfg.max_deliveries != 0 && m.deliveries >= self.cfg.max_deliveries {
                self.retire(m, ctx);
                continue;
            }
            let redelivered = m.deliveries > 0;
            if redelivered {
                ctx.reached(sit::LEASE_EXPIRED_REDELIVERY);
            }
            let consumer = self.cfg.consumers[ctx.choose(n) as usize];
            let receipt = s.next_receipt;
            s.next_receipt += 1;
            // One entry per delivery; run.max_steps bounds deliveries.
            s.copies.push(i as u32);
            m.deliveries += 1;
            let deadline_us = now + self.cfg.visibility_timeout_ms * US_PER_MS;
            m.set_status(QStatus::InFlight {
                receipt,
                deadline_us,
            });
            next = next.min(m.due_us);
            let deliver = Msg::Deliver {
                ev: m.ev,
                receipt,
                redelivered,
                sent_us: now,
            };
            ctx.send(consumer, W::wrap(deliver));
        }
        // A lease's end is a time plus the timeout, far below `TimeUs::MAX`;
        // `next` is the earliest one plus one.
        if next != TimeUs::MAX {
            ctx.set_timer(BrokerTimer::Visibility, (next - 1).saturating_sub(now));
        } else {
            ctx.cancel_timer(BrokerTimer::Visibility);
        }
    }

    /// A consumer's lease renewal: the delivery named, if still out under
    /// its lease, is given a whole visibility timeout from now.
    fn on_extend(&self, s: &mut BrokerStorage, id: u32, receipt: u32, ctx: &mut impl Ctx<Self>) {
        let Some(i) = s.copy_of(id, receipt) else {
            return;
        };
        match s.queue[i].status() {
            QStatus::InFlight { receipt: r, .. } if r == receipt => {
                let deadline_us = ctx.now_us() + self.cfg.visibility_timeout_ms * US_PER_MS;
                s.queue[i].set_status(QStatus::InFlight {
                    receipt,
                    deadline_us,
                });
                ctx.reached(sit::LEASE_RENEWED);
                self.dispatch(s, ctx);
            }
            // Too late: the lease ran out, and the copy is visible or out again.
            QStatus::Ready | QStatus::InFlight { .. } => {
                ctx.reached(sit::RENEWAL_AFTER_REDELIVERY);
            }
            // Acked under a newer delivery, which went out when this one's
            // lease ran out. A renewal that only trailed its own delivery's
            // ack (the copy is done) is no such thing.
            QStatus::Acked
                if s.latest_acked
                    .iter()
                    .any(|&(j, r)| j as usize == i && r != receipt) =>
            {
                ctx.reached(sit::RENEWAL_AFTER_REDELIVERY);
            }
            _ => {}
        }
    }

    /// Takes an ack of delivery `receipt` of event `id`; whether it counted.
    fn on_ack(
        &self,
        s: &mut BrokerStorage,
        id: u32,
        receipt: u32,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        let eod = self.cfg.exactly_once_delivery;
        // A receipt names one delivery of one stored copy: the ack is that
        // copy's, or nobody's. Two copies of an event (a producer's retry, a
        // relay's republish) can be out at once under different receipts,
        // and one copy's ack, late or not, must not take the other's place.
        let at = s.copy_of(id, receipt);
        let ok = match at.map(|i| (i, s.queue[i].status())) {
            Some((
                i,
                QStatus::InFlight {
                    receipt: current, ..
                },
            )) if current == receipt || !eod => {
                // Without exactly-once delivery a late ack (after the lease
                // expired, while the copy is out again, to this consumer or
                // another) is still accepted, as NATS does (nats-server#4786).
                // SQS answers a delete naming an older receipt handle with
                // success but "might not" delete; Service Bus refuses a
                // completion after the lock expired, as exactly-once
                // delivery does here.
                if current != receipt {
                    ctx.reached(sit::LATE_ACK);
                }
                s.queue[i].set_status(QStatus::Acked);
                // The queue bounds it: one entry per copy acked.
                s.latest_acked.push((i as u32, current));
                if eod {
                    s.acks.push((id, receipt));
                }
                true
            }
            Some((_, QStatus::InFlight { .. })) => {
                ctx.reached(sit::STALE_ACK_REFUSED);
                false
            }
            // Not out: acked already, visible again after its lease ran
            // out, or gone. Under exactly-once delivery only a repeat of the
            // ack that counted succeeds; without it the ack changes nothing
            // and its result says only that it arrived.
            _ if eod => {
                let repeat = s.acks.contains(&(id, receipt));
                if !repeat {
                    ctx.reached(sit::STALE_ACK_REFUSED);
                }
                repeat
            }
            _ => true,
        };
        self.dispatch(s, ctx);
        ok
    }
}

/// Queues `ev` with `status` and confirms the publish to `from`.
/// Stored copies the queue (and the acks, one per copy at most) has room
/// for from the start. Cleared, not freed, between runs, each buffer grew to
/// the most a run had needed so far: a rare run with more (a burst of
/// republishes, of redeliveries) allocated in the middle of a warm sweep,
/// once in 20,000 runs of messaging-outbox-inbox. Past these, they still grow.
const QUEUE_CAPACITY: usize = 64;
/// Deliveries (receipts) the broker has room for from the start: a copy can
/// be delivered several times.
const DELIVERY_CAPACITY: usize = 4 * QUEUE_CAPACITY;

fn store<W: Carries<Msg>>(
    s: &mut BrokerStorage,
    from: ActorId,
    ev: Event,
    status: QStatus,
    ctx: &mut impl Ctx<Broker<W>>,
) {
    // The queue grows by one per accepted publish; run.max_steps bounds publishes.
    s.queue.push(QMsg::new(ev, status));
    confirm(from, ev.id, false, ctx);
}

/// Confirms a publish of event `id` to `from`; `duplicate`: dropped as a repeat.
fn confirm<W: Carries<Msg>>(
    from: ActorId,
    id: u32,
    duplicate: bool,
    ctx: &mut impl Ctx<Broker<W>>,
) {
    ctx.send(from, W::wrap(Msg::PublishAck { id, duplicate }));
}

impl<W> crate::core::Ends for Broker<W> {
    const ROLES: &'static [&'static str] = &["broker"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("publish-ack", "producer"),
        ("tx-ended", "producer"),
        ("deliver", "consumer"),
        ("ack-result", "consumer"),
    ];
    // The result of an ack goes only to a consumer whose acks ask for one.
    const ANSWERS: &'static [(&'static str, &'static str)] = &[
        ("publish-ack", "publish"),
        ("publish-ack", "tx-publish"),
        ("tx-ended", "end-tx"),
        ("ack-result", super::ACK_WITH_RESULT),
    ];
}

impl<W: Carries<Msg>> Actor for Broker<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = BrokerTimer;
    /// The broker's queue is all durable.
    type State = ();
    type Storage = BrokerStorage;

    fn reset(&self, state: sim::Fresh<'_, ()>, storage: Option<sim::Fresh<'_, BrokerStorage>>) {
        state.set(());
        let Some(s) = storage else { return };
        let s = s.or_insert_with(|| BrokerStorage {
            queue: Vec::with_capacity(QUEUE_CAPACITY),
            dedup: DedupStore::new(self.window_us()),
            next_receipt: 1,
            producers: Vec::new(),
            epochs: Vec::new(),
            acks: Vec::with_capacity(QUEUE_CAPACITY),
            producers_stored_us: Vec::new(),
            producers_first: Vec::new(),
            latest_acked: Vec::with_capacity(QUEUE_CAPACITY),
            copies: Vec::with_capacity(DELIVERY_CAPACITY),
        });
        s.queue.clear();
        s.producers.clear();
        s.epochs.clear();
        s.acks.clear();
        s.producers_stored_us.clear();
        s.producers_first.clear();
        s.latest_acked.clear();
        s.copies.clear();
        s.dedup.reset(self.window_us());
        s.next_receipt = 1;
    }

    fn on_start(&self, _: &mut (), s: &mut BrokerStorage, ctx: &mut impl Ctx<Self>) {
        // After a restart the leases restart too: in-flight messages get a fresh deadline.
        let deadline_us = ctx.now_us() + self.cfg.visibility_timeout_ms * US_PER_MS;
        for m in &mut s.queue {
            if let QStatus::InFlight { receipt, .. } = m.status() {
                m.set_status(QStatus::InFlight {
                    receipt,
                    deadline_us,
                });
            }
        }
        if s.queue
            .iter()
            .any(|m| matches!(m.status(), QStatus::Uncommitted { .. }))
        {
            self.arm_tx_timeout(s, ctx);
        }
        self.dispatch(s, ctx);
    }

    fn on_msg(
        &self,
        _: &mut (),
        s: &mut BrokerStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        match msg.peek() {
            Some(&Msg::Publish { ev }) => self.on_publish(s, from, ev, ctx),
            Some(&Msg::SeqPublish {
                ev,
                pid,
                epoch,
                seq,
            }) => self.on_seq_publish(s, from, (ev, pid, epoch, seq), ctx),
            Some(&Msg::Ack { id, receipt }) => {
                self.on_ack(s, id, receipt, ctx);
            }
            Some(&Msg::AckWithResult { id, receipt }) => {
                let ok = self.on_ack(s, id, receipt, ctx);
                ctx.send(from, W::wrap(Msg::AckResult { id, receipt, ok }));
            }
            Some(&Msg::Extend { id, receipt }) => self.on_extend(s, id, receipt, ctx),
            Some(&Msg::TxPublish { ev }) => self.on_tx_publish(s, from, ev, ctx),
            Some(&Msg::EndTx { id, commit }) => self.on_end_tx(s, from, id, commit, ctx),
            _ => {}
        }
    }

    fn on_timer(
        &self,
        _: &mut (),
        s: &mut BrokerStorage,
        timer: BrokerTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        let now = ctx.now_us();
        if timer == BrokerTimer::TxTimeout {
            for m in &mut s.queue {
                if matches!(m.status(), QStatus::Uncommitted { abort_at_us } if abort_at_us <= now)
                {
                    m.set_status(QStatus::Aborted);
                    ctx.reached(sit::BROKER_TX_TIMED_OUT);
                }
            }
            self.arm_tx_timeout(s, ctx);
            return;
        }
        self.dispatch_expiring(s, true, ctx);
    }
}

#[cfg(test)]
mod tests;
