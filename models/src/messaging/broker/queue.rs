//! What a broker keeps durably: its queue of messages (each with where it
//! stands), its dead-letter queue and dedup tables; and its timers.

use super::super::msg::Event;
use crate::core::dedup::DedupStore;
use sim::TimeUs;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Where a queued message stands.
#[derive(serde::Serialize)]
pub enum QStatus {
    /// In an open transaction: no consumer sees it until the commit.
    Uncommitted {
        /// When the broker aborts the transaction if no commit came.
        abort_at_us: TimeUs,
    },
    /// Its transaction was aborted: never delivered.
    Aborted,
    /// Waiting for a delivery.
    Ready,
    /// Delivered, waiting for its ack until the lease runs out.
    InFlight {
        /// The delivery's receipt; an ack must name it.
        receipt: u32,
        /// When the delivery's lease runs out and it becomes visible again.
        deadline_us: TimeUs,
    },
    /// Acked: done.
    Acked,
    /// In the dead-letter queue, for a person.
    Dead,
    /// Dropped after its last delivery: lost.
    Discarded,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A message in the queue.
#[derive(serde::Serialize)]
pub struct QMsg {
    /// The event it carries.
    pub ev: Event,
    /// Where it stands: read by [`QMsg::status`], set only by
    /// [`QMsg::set_status`], which keeps `due_us` with it.
    status: QStatus,
    /// Deliveries so far.
    pub deliveries: u32,
    /// When dispatch takes it, as one compare against a limit: 0 while it
    /// is ready (every dispatch takes it), one microsecond past its lease's
    /// end while it is in flight (a visibility firing at `now` takes it once
    /// its lease ended at or before `now`), else `TimeUs::MAX` (never). Kept
    /// by [`QMsg::set_status`]; bookkeeping, not in the panels.
    #[serde(skip)]
    pub(crate) due_us: TimeUs,
}

impl QMsg {
    /// A message carrying `ev`, stored with `status` and no delivery yet.
    pub(crate) fn new(ev: Event, status: QStatus) -> QMsg {
        let mut m = QMsg {
            ev,
            status,
            deliveries: 0,
            due_us: TimeUs::MAX,
        };
        m.set_status(status);
        m
    }

    /// Where it stands.
    pub fn status(&self) -> QStatus {
        self.status
    }

    /// Sets its status and, with it, when dispatch takes it.
    pub(crate) fn set_status(&mut self, status: QStatus) {
        self.status = status;
        self.due_us = match status {
            QStatus::Ready => 0,
            // A lease ends at a time plus the timeout, far below the top.
            QStatus::InFlight { deadline_us, .. } => deadline_us + 1,
            _ => TimeUs::MAX,
        };
    }
}

/// The broker's durable queue, dead-letter queue and dedup table. The state
/// panel shows the producer tables only where a producer wrote to them, so
/// the panels of other designs stay as they were, and the bookkeeping never.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BrokerStorage {
    /// Every message published, in order.
    pub queue: Vec<QMsg>,
    /// Message ids accepted within the dedup window; they stay tracked after
    /// delivery, as in SQS FIFO.
    pub dedup: DedupStore<u32, ()>,
    /// The receipt the next delivery gets.
    pub next_receipt: u32,
    /// Per idempotent producer id, the highest sequence number stored (they
    /// are stored in order, so it tells the last five too): as Kafka keeps
    /// its producer state with the log, durable.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub producers: Vec<(u32, u32)>,
    /// Per transactional producer id, its current epoch: a publish of an
    /// older epoch comes from a session that has been replaced (a zombie).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub epochs: Vec<(u32, u32)>,
    /// Under exactly-once delivery, per acked message id the receipt that
    /// acked it: a repeat of that ack (a network duplicate) counted too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub acks: Vec<(u32, u32)>,
    /// Where producer ids expire, per producer id when the broker last
    /// stored a publish under it; a retry it drops does not count.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub producers_stored_us: Vec<(u32, TimeUs)>,
    /// Per producer id whose sequence started above 0 (the first publish
    /// after the broker forgot the id), that first number: nothing below it
    /// was stored under this start, so a resend below it is no duplicate.
    /// Bookkeeping, not in the panels.
    #[serde(skip)]
    pub producers_first: Vec<(u32, u32)>,
    /// Per acked copy, its index in `queue` and the receipt of its latest
    /// delivery when the ack came: a renewal naming another receipt of it
    /// comes from a delivery the lease had let go. Kept for that situation
    /// alone, so the state panels do not show it.
    #[serde(skip)]
    pub latest_acked: Vec<(u32, u32)>,
    /// Per receipt (the first is 1), the index in `queue` of the copy it
    /// delivered: an ack or a renewal names one delivery of one stored copy,
    /// and two copies of an event (a producer's retry, a relay's republish)
    /// are out under receipts of their own. Bookkeeping, not in the panels.
    #[serde(skip)]
    pub copies: Vec<u32>,
}

impl BrokerStorage {
    /// The stored copy of event `id` that delivery `receipt` handed out;
    /// `None` for a receipt the broker never gave that event (a program may
    /// send any numbers).
    pub(super) fn copy_of(&self, id: u32, receipt: u32) -> Option<usize> {
        let i = *self.copies.get(receipt.checked_sub(1)? as usize)? as usize;
        (self.queue[i].ev.id == id).then_some(i)
    }
}

/// The broker's timers: the earliest visibility deadline, and the earliest
/// timeout of an open transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerTimer {
    /// An in-flight delivery's lease runs out.
    Visibility,
    /// An open transaction's timeout runs out.
    TxTimeout,
}

impl fmt::Display for BrokerTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BrokerTimer::Visibility => "visibility timeout",
            BrokerTimer::TxTimeout => "transaction timeout",
        })
    }
}

sim::timer_slots!(BrokerTimer {
    Visibility,
    TxTimeout,
});
