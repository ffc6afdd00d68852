//! The messages every actor of the catalog speaks. Small and `Copy`, so the
//! engine's queue never allocates per event.

use crate::ledger::OpId;
use crate::messaging::{Event, TxKind, TxResult};
use std::fmt;

/// An idempotency key as the client sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    None,
    /// Minted per business operation (`n` = 1) or, wrongly, per attempt.
    Op {
        op: OpId,
        n: u32,
    },
    /// Derived from a clock reading: two operations in one bucket collide.
    Time {
        bucket: u64,
    },
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Key::None => write!(f, "no key"),
            Key::Op { op, n } => write!(f, "zahl-{op}-{n:02}"),
            Key::Time { bucket } => write!(f, "ts-{bucket}"),
        }
    }
}

/// The payment service's answer to the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayStatus {
    Paid,
    /// Another request with this key is being executed (HTTP 409): retryable.
    InProgress,
    /// The key is known with another payload (HTTP 422): final.
    Mismatch,
    /// Transient failure (HTTP 5xx): retryable.
    ServerError,
}

impl PayStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PayStatus::Paid => "paid",
            PayStatus::InProgress => "409 in progress",
            PayStatus::Mismatch => "422 key reused with another payload",
            PayStatus::ServerError => "503 server error",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Client to service: pay `amount_eur` for claim `op`.
    Pay {
        op: OpId,
        attempt: u32,
        key: Key,
        amount_eur: u32,
    },
    /// `result_op` and `result_eur` name the payment a "paid" answer stands
    /// for: a replayed result may belong to another request than the one asked.
    PayReply {
        op: OpId,
        attempt: u32,
        status: PayStatus,
        result_op: OpId,
        result_eur: u32,
    },
    /// Service to bank: transfer money for claim `op`.
    Transfer {
        op: OpId,
        key: Key,
        amount_eur: u32,
    },
    TransferDone {
        op: OpId,
        key: Key,
    },
    /// Producer (or its outbox relay) to broker.
    Publish {
        ev: Event,
    },
    /// Broker to producer: the publish is stored (or was a duplicate in the dedup window).
    PublishAck {
        id: u32,
        duplicate: bool,
    },
    /// Broker to consumer; `receipt` names this delivery.
    Deliver {
        ev: Event,
        receipt: u32,
    },
    /// Consumer to broker: delete the message.
    Ack {
        id: u32,
        receipt: u32,
    },
    /// Consumer to its database: one transaction.
    Tx {
        ev: Event,
        kind: TxKind,
        slot: u8,
        receipt: u32,
    },
    TxDone {
        id: u32,
        slot: u8,
        receipt: u32,
        result: TxResult,
    },
    /// Service to bank, "state instead of action": claim `op` is paid
    /// `total_eur` in total; the bank pays only what is missing.
    Settle {
        op: OpId,
        total_eur: u32,
    },
    /// Service to bank: how much has been paid for claim `op`? (query before retry)
    StatusQuery {
        op: OpId,
    },
    StatusReply {
        op: OpId,
        paid_eur: u32,
    },
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Msg::Pay {
                op,
                attempt,
                key,
                amount_eur,
            } => write!(
                f,
                "pay {amount_eur} EUR for claim {op} [{key}, attempt {attempt}]"
            ),
            Msg::PayReply {
                op,
                attempt,
                status: PayStatus::Paid,
                result_op,
                result_eur,
            } if result_op != op => write!(
                f,
                "claim {op}: paid (replayed result of claim {result_op}, {result_eur} EUR) [attempt {attempt}]"
            ),
            Msg::PayReply {
                op,
                attempt,
                status: PayStatus::Paid,
                result_eur,
                ..
            } => write!(f, "claim {op}: paid {result_eur} EUR [attempt {attempt}]"),
            Msg::PayReply {
                op,
                attempt,
                status,
                ..
            } => write!(f, "claim {op}: {} [attempt {attempt}]", status.as_str()),
            Msg::Transfer {
                op,
                key,
                amount_eur,
            } => write!(f, "transfer {amount_eur} EUR for claim {op} [{key}]"),
            Msg::TransferDone { op, key } => write!(f, "transfer done for claim {op} [{key}]"),
            Msg::Publish { ev } => write!(
                f,
                "publish event #{} for {} (value {}, v{})",
                ev.id, ev.op, ev.value, ev.version
            ),
            Msg::PublishAck { id, duplicate } => {
                let d = if duplicate {
                    " (duplicate, dropped)"
                } else {
                    ""
                };
                write!(f, "stored event #{id}{d}")
            }
            Msg::Deliver { ev, receipt } => write!(
                f,
                "deliver event #{} for {} (value {}, v{}) [receipt {receipt}]",
                ev.id, ev.op, ev.value, ev.version
            ),
            Msg::Ack { id, receipt } => write!(f, "ack event #{id} [receipt {receipt}]"),
            Msg::Tx { ev, kind, .. } => write!(f, "tx: {} for event #{}", kind.as_str(), ev.id),
            Msg::TxDone { id, result, .. } => {
                write!(f, "tx for event #{id}: {}", result.as_str())
            }
            Msg::Settle { op, total_eur } => {
                write!(f, "claim {op} is paid {total_eur} EUR in total: pay what is missing")
            }
            Msg::StatusQuery { op } => write!(f, "how much is paid for claim {op}?"),
            Msg::StatusReply { op, paid_eur } => write!(f, "claim {op}: {paid_eur} EUR paid so far"),
        }
    }
}
