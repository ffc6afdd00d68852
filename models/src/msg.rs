//! The messages every actor of the catalog speaks. Small and `Copy`, so the
//! engine's queue never allocates per event.

use crate::ledger::OpId;
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
    PayReply {
        op: OpId,
        attempt: u32,
        status: PayStatus,
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
                status,
            } => write!(f, "claim {op}: {} [attempt {attempt}]", status.as_str()),
            Msg::Transfer {
                op,
                key,
                amount_eur,
            } => write!(f, "transfer {amount_eur} EUR for claim {op} [{key}]"),
            Msg::TransferDone { op, key } => write!(f, "transfer done for claim {op} [{key}]"),
        }
    }
}
