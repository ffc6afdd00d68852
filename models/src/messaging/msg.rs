//! The messaging model's messages: small and `Copy`.

use super::EVENT;
use crate::core::wire::ModelMessage;
use crate::core::{Op, Space};
use sim::TimeUs;
use std::fmt;

/// One event as it travels.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The message id: the outbox row's id, stable across republishes. It
    /// names the business operation (`event #3`).
    pub id: u32,
    /// The business entity the event changes.
    pub entity: u32,
    /// The payload: an amount for an effect, the new value for set-value.
    pub value: u32,
    /// The entity's row version after the change (1, 2, ...).
    pub version: u32,
    /// What `entity` numbers: an entity of the messaging model, a claim
    /// where the chain's booking service announces its bookings. A trace of
    /// the chain then says "claim 4711" of the claim in every message.
    pub entity_space: &'static Space,
    /// Which of the entity's operations (`Op::part`): the chain's second
    /// payment of a claim is part 1; 0 everywhere else.
    pub entity_part: u8,
}

impl Event {
    /// The business operation: the event itself.
    pub fn op(&self) -> Op {
        Op::new(&EVENT, self.id)
    }

    /// The entity it changes, as an operation id (for `state-converges`).
    pub fn entity_op(&self) -> Op {
        Op::part(self.entity_space, self.entity, self.entity_part)
    }
}

// By hand: the state views of traces and reports show an event's space by
// its noun, not as the whole `Space` table.
impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Event");
        d.field("id", &self.id).field("entity", &self.entity);
        d.field("value", &self.value)
            .field("version", &self.version);
        if self.entity_space != &super::ENTITY {
            d.field("entity_space", &self.entity_space.noun);
        }
        if self.entity_part != 0 {
            d.field("entity_part", &self.entity_part);
        }
        d.finish()
    }
}

/// The panel's fields, as `Debug` shows them.
impl serde::Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut d = s.serialize_struct("Event", 6)?;
        d.serialize_field("id", &self.id)?;
        d.serialize_field("entity", &self.entity)?;
        d.serialize_field("value", &self.value)?;
        d.serialize_field("version", &self.version)?;
        if self.entity_space != &super::ENTITY {
            d.serialize_field("entity_space", self.entity_space.noun)?;
        }
        if self.entity_part != 0 {
            d.serialize_field("entity_part", &self.entity_part)?;
        }
        d.end()
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event #{} for {} (", self.id, self.entity_op())?;
        match self.entity_space.unit {
            Some(unit) => write!(f, "{} {unit}", self.value)?,
            None => write!(f, "value {}", self.value)?,
        }
        write!(f, ", v{})", self.version)
    }
}

/// What a consumer asks its database to do in one transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    /// Apply the effect, no questions asked.
    Effect,
    /// Inbox row and effect in one transaction: a known id is skipped.
    InboxAndEffect,
    /// Inbox row and effect in one transaction, the inbox not read: for a
    /// delivery the broker did not flag as redelivered.
    InboxAndEffectUnchecked,
    /// Read the inbox (a transaction of its own).
    CheckInbox,
    /// Write the inbox row (a transaction of its own).
    RecordInbox,
    /// Insert keyed by the event under a unique constraint.
    InsertUnique,
    /// Set the entity's value; `versioned` only if the stored version is older.
    SetValue {
        /// Only if the stored version is older.
        versioned: bool,
    },
}

impl TxKind {
    /// The words traces use.
    pub fn as_str(self) -> &'static str {
        match self {
            TxKind::Effect => "apply effect",
            TxKind::InboxAndEffect => "inbox row + effect",
            TxKind::InboxAndEffectUnchecked => {
                "inbox row + effect, inbox not read (first delivery)"
            }
            TxKind::CheckInbox => "check inbox",
            TxKind::RecordInbox => "write inbox row",
            TxKind::InsertUnique => "insert under unique key",
            TxKind::SetValue { versioned: false } => "set value",
            TxKind::SetValue { versioned: true } => "set value if newer",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// What a consumer's transaction did.
pub enum TxResult {
    /// Done: it wrote.
    Applied,
    /// Already there (inbox hit or "already exists"): counts as success.
    Duplicate,
    /// The inbox does not know the id.
    NotSeen,
    /// A versioned write older than the stored one, rejected.
    Stale,
}

impl TxResult {
    /// The words traces use.
    pub fn as_str(self) -> &'static str {
        match self {
            TxResult::Applied => "applied",
            TxResult::Duplicate => "already there",
            TxResult::NotSeen => "not seen",
            TxResult::Stale => "stale, rejected",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The messaging model's messages: small and `Copy`.
pub enum Msg {
    /// Producer (or its outbox relay) to broker.
    Publish {
        /// The event.
        ev: Event,
    },
    /// An idempotent producer's publish (Kafka's `enable.idempotence`):
    /// the broker stores a (producer id, sequence number) once. A retry
    /// within one producer session repeats both; a restarted producer has
    /// a new id and numbers from 0 again. A transactional producer
    /// (`transactional.id`) keeps its id across restarts and bumps its epoch
    /// instead, which fences the older sessions.
    SeqPublish {
        /// The event.
        ev: Event,
        /// The producer session's id, new at every start (the same one for
        /// every session of a transactional producer).
        pid: u32,
        /// A transactional producer's epoch, one higher at every start (0:
        /// not transactional).
        epoch: u32,
        /// The publish's number within the session; its retries repeat it.
        seq: u32,
    },
    /// Broker to producer: the publish is stored (or was a duplicate in the dedup window).
    PublishAck {
        /// The event's id.
        id: u32,
        /// The dedup window dropped it as a repeat.
        duplicate: bool,
    },
    /// Broker to consumer; `receipt` names this delivery.
    Deliver {
        /// The event.
        ev: Event,
        /// Names this delivery.
        receipt: u32,
        /// The broker delivered this message before (RabbitMQ's
        /// `redelivered` flag): a flag of the delivery, not of the event. A
        /// second copy a producer published is a new message, and its first
        /// delivery is not flagged.
        redelivered: bool,
        /// When the broker sent it. A delivery travels over the consumer's
        /// connection, which dies with the process: a consumer that started
        /// after this time is not the process it was sent to, and drops it.
        sent_us: TimeUs,
    },
    /// Consumer to broker: delete the message.
    Ack {
        /// The event's id.
        id: u32,
        /// The delivery acked.
        receipt: u32,
    },
    /// Consumer to broker: delete the message, and answer whether the ack
    /// counted (Pub/Sub's `AckWithResult`): a consumer that commits only
    /// after a successful ack.
    AckWithResult {
        /// The event's id.
        id: u32,
        /// The delivery acked.
        receipt: u32,
    },
    /// Broker to consumer: what became of an [`Msg::AckWithResult`].
    AckResult {
        /// The event's id.
        id: u32,
        /// The delivery acked.
        receipt: u32,
        /// The ack counted: the broker will not deliver the message again.
        ok: bool,
    },
    /// Consumer to broker: extend the lease of this delivery by a whole
    /// visibility timeout from now (SQS ChangeMessageVisibility, NATS
    /// AckProgress, Pub/Sub modifyAckDeadline).
    Extend {
        /// The event's id.
        id: u32,
        /// The delivery whose lease to extend.
        receipt: u32,
    },
    /// Consumer to its database: one transaction.
    Tx {
        /// The event it is for.
        ev: Event,
        /// What the transaction does.
        kind: TxKind,
        /// The consumer's job slot, echoed in the answer.
        slot: u8,
        /// The delivery's receipt, echoed in the answer.
        receipt: u32,
        /// 1 for the first send; a consumer whose ack let the message go
        /// sends the same transaction again when its answer does not come.
        attempt: u8,
        /// The consumer version whose job sends it (`ConsumerConfig::version`;
        /// 0: a consumer without rollouts), which the database names with
        /// the effect.
        version: u8,
    },
    /// Producer to broker: publish inside the producer's open broker
    /// transaction; consumers see it only once the transaction commits.
    TxPublish {
        /// The event.
        ev: Event,
    },
    /// Producer to broker: commit (or abort) the transaction holding event `id`.
    EndTx {
        /// The event's id.
        id: u32,
        /// Commit; false aborts.
        commit: bool,
    },
    /// Broker to producer: how the transaction ended. `committed` is false
    /// for an abort asked for, and for a commit that came after the broker
    /// had aborted the transaction at its timeout.
    TxEnded {
        /// The event's id.
        id: u32,
        /// The event is visible to consumers.
        committed: bool,
    },
    /// The database to the consumer: the transaction's result.
    TxDone {
        /// The event's id.
        id: u32,
        /// The consumer's job slot.
        slot: u8,
        /// The delivery's receipt.
        receipt: u32,
        /// The transaction answered: a late answer to a job's earlier
        /// transaction must not pass for the one it waits for now.
        kind: TxKind,
        /// What it did.
        result: TxResult,
    },
}

impl ModelMessage for Msg {
    const KINDS: &'static [&'static str] = &[
        "publish",
        "publish-ack",
        "deliver",
        "ack",
        "tx",
        "tx-done",
        "tx-publish",
        "end-tx",
        "tx-ended",
        "extend",
        "ack-result",
    ];

    fn kind(&self) -> u16 {
        match self {
            // A publish for the network's per-kind faults, whoever numbers it.
            Msg::Publish { .. } | Msg::SeqPublish { .. } => 0,
            Msg::PublishAck { .. } => 1,
            Msg::Deliver { .. } => 2,
            // An ack for the network's per-kind faults, whether it asks for a result or not.
            Msg::Ack { .. } | Msg::AckWithResult { .. } => 3,
            Msg::Tx { .. } => 4,
            Msg::TxDone { .. } => 5,
            Msg::TxPublish { .. } => 6,
            Msg::EndTx { .. } => 7,
            Msg::TxEnded { .. } => 8,
            Msg::Extend { .. } => 9,
            Msg::AckResult { .. } => 10,
        }
    }

    fn is_reply(&self) -> bool {
        matches!(
            self,
            Msg::PublishAck { .. }
                | Msg::Ack { .. }
                | Msg::AckWithResult { .. }
                | Msg::AckResult { .. }
                | Msg::TxDone { .. }
                | Msg::TxEnded { .. }
        )
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Msg::Publish { ev } => write!(f, "publish {ev}"),
            Msg::SeqPublish {
                ev,
                pid,
                epoch: 0,
                seq,
            } => write!(f, "publish {ev} [producer {pid}, seq {seq}]"),
            Msg::SeqPublish {
                ev,
                pid,
                epoch,
                seq,
            } => write!(f, "publish {ev} [producer {pid}, epoch {epoch}, seq {seq}]"),
            Msg::PublishAck { id, duplicate } => {
                let d = if duplicate {
                    " (duplicate, dropped)"
                } else {
                    ""
                };
                write!(f, "stored event #{id}{d}")
            }
            Msg::Deliver { ev, receipt, .. } => write!(f, "deliver {ev} [receipt {receipt}]"),
            Msg::Ack { id, receipt } => write!(f, "ack event #{id} [receipt {receipt}]"),
            Msg::AckWithResult { id, receipt } => {
                write!(f, "ack event #{id} [receipt {receipt}], with result")
            }
            Msg::AckResult { id, receipt, ok } => {
                let r = if ok { "counted" } else { "failed" };
                write!(f, "ack of event #{id} [receipt {receipt}] {r}")
            }
            Msg::Extend { id, receipt } => {
                write!(f, "extend the lease of event #{id} [receipt {receipt}]")
            }
            Msg::Tx {
                ev, kind, attempt, ..
            } => {
                write!(f, "tx: {} for event #{}", kind.as_str(), ev.id)?;
                match attempt {
                    0 | 1 => Ok(()),
                    n => write!(f, " [attempt {n}]"),
                }
            }
            Msg::TxPublish { ev } => write!(f, "publish {ev} in a transaction"),
            Msg::EndTx { id, commit: true } => write!(f, "commit the transaction of event #{id}"),
            Msg::EndTx { id, commit: false } => write!(f, "abort the transaction of event #{id}"),
            Msg::TxEnded {
                id,
                committed: true,
            } => write!(f, "transaction of event #{id} committed"),
            Msg::TxEnded {
                id,
                committed: false,
            } => write!(f, "transaction of event #{id} aborted"),
            Msg::TxDone { id, result, .. } => {
                write!(f, "tx for event #{id}: {}", result.as_str())
            }
        }
    }
}
