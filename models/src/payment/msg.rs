//! The payment chain's messages: small and `Copy`.

use crate::core::wire::ModelMessage;
use crate::core::{Key, Op};
use std::fmt;

/// The payment service's answer to the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum PayStatus {
    /// Paid (HTTP 200), now or earlier under this key.
    Paid,
    /// Another request with this key is being executed (HTTP 409): the
    /// outcome is not known yet; retryable.
    InProgress,
    /// The key is known with another request (HTTP 422): final.
    Mismatch,
    /// Shed before anything was executed (HTTP 503): retryable, and the
    /// client knows nothing happened.
    Overloaded,
    /// The bank did not confirm (HTTP 504): the transfer may or may not have
    /// happened; retryable.
    GatewayTimeout,
}

impl PayStatus {
    /// The words traces use.
    pub fn as_str(self) -> &'static str {
        match self {
            PayStatus::Paid => "paid",
            PayStatus::InProgress => "409 in progress",
            PayStatus::Mismatch => "422 key reused with another request",
            PayStatus::Overloaded => "503 overloaded, not executed",
            PayStatus::GatewayTimeout => "504 the bank did not confirm",
        }
    }
}

/// The bank's answer to a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferResult {
    /// Executed now, or recognised by its key as already executed.
    Done,
    /// A conditional transfer whose condition ("paid so far is X") no longer holds.
    Refused {
        /// What is paid so far, read from the ledger itself: a current
        /// reading, whatever the status answers' lag.
        paid_eur: u32,
    },
}

/// The bank's answer to a refund.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefundResult {
    /// Refunded now, or recognised by the refund's key as refunded already.
    Done,
    /// Refused: the refund asks more than is paid for the payment after
    /// the refunds before it (Stripe: `charge_already_refunded`).
    Refused {
        /// What is paid for it now, net of refunds.
        paid_eur: u32,
    },
}

/// The payment model's messages: small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Client to service: pay `amount_eur` for claim `op`. `timeout_ms` is
    /// how long the client waits for the answer (0: not said), which the
    /// service may use as the request's deadline.
    Pay {
        /// The claim.
        op: Op,
        /// The client's attempt, from 1.
        attempt: u32,
        /// The idempotency key it carries.
        key: Key,
        /// The amount asked for.
        amount_eur: u32,
        /// The client's timeout: the service may drop the request once it has passed.
        timeout_ms: u32,
    },
    /// The service's answer; `amount_eur` is what it says was paid.
    PayReply {
        /// The claim.
        op: Op,
        /// The attempt it answers.
        attempt: u32,
        /// The answer.
        status: PayStatus,
        /// What the service says was paid.
        amount_eur: u32,
    },
    /// Service to bank: transfer money for claim `op`; with `if_paid_eur`,
    /// only if exactly that much is paid so far (a conditional update).
    Transfer {
        /// The claim.
        op: Op,
        /// The service's key the transfer is for: its reference, which the
        /// bank's answer names, so an answer that comes late still says
        /// which of a claim's keys it pays.
        key: Key,
        /// `key` is also handed on as the idempotency key the bank may
        /// deduplicate on (`service.pass_key_to_bank`); else the bank only
        /// echoes it.
        key_passed: bool,
        /// The amount to transfer.
        amount_eur: u32,
        /// The condition of a conditional transfer: paid so far.
        if_paid_eur: Option<u32>,
        /// The service version that sent it (`ServiceConfig::version`; 0:
        /// a service without rollouts), which the bank names with the
        /// effect: a transfer sent before a deploy may land after it.
        version: u8,
    },
    /// Bank to service: the transfer's result.
    TransferDone {
        /// The claim.
        op: Op,
        /// The key the transfer named.
        key: Key,
        /// Whether the transfer handed `key` on as its idempotency key.
        key_passed: bool,
        /// What the bank did.
        result: TransferResult,
    },
    /// Service to bank: how much has been paid for claim `op`?
    StatusQuery {
        /// The claim.
        op: Op,
        /// The asker's number for this question, which its answer echoes.
        /// A real client reads an answer on its own request's connection;
        /// here the network may duplicate or delay an answer past the next
        /// question, so only this number keeps an old "0 paid" from being
        /// read as the answer to a question asked after a transfer left.
        question: u32,
    },
    /// Bank to service: what it has paid for the claim.
    StatusReply {
        /// The claim.
        op: Op,
        /// The question it answers.
        question: u32,
        /// Paid so far.
        paid_eur: u32,
    },
    /// Client to bank: a compensation, refund `amount_eur` of what was
    /// paid for claim `op`.
    Refund {
        /// The claim.
        op: Op,
        /// The refund's own idempotency key (none: every copy refunds).
        key: Key,
        /// The amount to refund.
        amount_eur: u32,
        /// The compensation job's round that sent it, which the answer echoes.
        round: u32,
    },
    /// Bank to client: the refund's result.
    RefundDone {
        /// The claim.
        op: Op,
        /// The round whose refund it answers.
        round: u32,
        /// What the bank did.
        result: RefundResult,
    },
}

impl ModelMessage for Msg {
    const KINDS: &'static [&'static str] = &[
        "pay",
        "pay-reply",
        "transfer",
        "transfer-done",
        "status-query",
        "status-reply",
        "refund",
        "refund-done",
    ];

    fn kind(&self) -> u16 {
        match self {
            Msg::Pay { .. } => 0,
            Msg::PayReply { .. } => 1,
            Msg::Transfer { .. } => 2,
            Msg::TransferDone { .. } => 3,
            Msg::StatusQuery { .. } => 4,
            Msg::StatusReply { .. } => 5,
            Msg::Refund { .. } => 6,
            Msg::RefundDone { .. } => 7,
        }
    }

    fn is_reply(&self) -> bool {
        matches!(
            self,
            Msg::PayReply { .. }
                | Msg::TransferDone { .. }
                | Msg::StatusReply { .. }
                | Msg::RefundDone { .. }
        )
    }

    fn delivery_note(&self, effect: bool, sent: &[Msg]) -> Option<&'static str> {
        match self {
            // A transfer handled without its effect: the bank recognised the key
            // (or refused a stale conditional transfer).
            Msg::Transfer { .. } if !effect => Some(match sent.first() {
                Some(Msg::TransferDone {
                    result: TransferResult::Refused { .. },
                    ..
                }) => "condition no longer holds: refused",
                // The bank answers every transfer it takes: this one it did
                // not take (`bank.capacity_per_s`).
                None => "over capacity: dropped unanswered",
                _ => "dedup hit: no second transfer",
            }),
            Msg::Refund { .. } if !effect => Some(match sent.first() {
                Some(Msg::RefundDone {
                    result: RefundResult::Refused { .. },
                    ..
                }) => "more than is paid: refused",
                None => "over capacity: dropped unanswered",
                _ => "refund key known: no second refund",
            }),
            // A keyed request answered without calling the bank.
            Msg::Pay { key, .. } if key.is_some() => {
                let forwards = sent
                    .iter()
                    .any(|m| matches!(m, Msg::Transfer { .. } | Msg::StatusQuery { .. }));
                if forwards {
                    return None;
                }
                sent.iter().find_map(|m| match m {
                    Msg::PayReply { status, .. } => match status {
                        PayStatus::InProgress => {
                            Some("key in progress: answered 409, not executed")
                        }
                        PayStatus::Mismatch => Some("key known with another request: refused"),
                        PayStatus::Paid => Some("dedup hit: answered from the key table"),
                        PayStatus::Overloaded | PayStatus::GatewayTimeout => None,
                    },
                    _ => None,
                })
            }
            _ => None,
        }
    }

    fn same_for_diff(&self, other: &Self) -> bool {
        match (self, other) {
            // An answer's status is what the client acts on; the echoed amount may differ.
            (Msg::PayReply { status: a, .. }, Msg::PayReply { status: b, .. }) => a == b,
            (Msg::TransferDone { result: a, .. }, Msg::TransferDone { result: b, .. }) => a == b,
            (Msg::RefundDone { result: a, .. }, Msg::RefundDone { result: b, .. }) => a == b,
            // The question's number is plumbing that differs between runs
            // which asked a different number of questions before.
            (
                Msg::StatusReply {
                    op: a,
                    paid_eur: pa,
                    ..
                },
                Msg::StatusReply {
                    op: b,
                    paid_eur: pb,
                    ..
                },
            ) => (a, pa) == (b, pb),
            _ => self.kind() == other.kind() && (!self.is_reply() || self == other),
        }
    }
}

/// The key as the bank sees it: the idempotency key it was handed, or none
/// (a reference it only echoes is no key to it).
pub fn wire(key: Key, key_passed: bool) -> Key {
    if key_passed {
        key
    } else {
        Key::None
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Msg::Pay {
                op,
                attempt,
                key,
                amount_eur,
                ..
            } => write!(
                f,
                "pay {amount_eur} EUR for {op} [{key}, attempt {attempt}]"
            ),
            Msg::PayReply {
                op,
                attempt,
                status: PayStatus::Paid,
                amount_eur,
            } => write!(f, "{op}: paid {amount_eur} EUR [attempt {attempt}]"),
            Msg::PayReply {
                op,
                attempt,
                status,
                ..
            } => write!(f, "{op}: {} [attempt {attempt}]", status.as_str()),
            Msg::Transfer {
                op,
                key,
                key_passed,
                amount_eur,
                if_paid_eur: None,
                ..
            } => write!(
                f,
                "transfer {amount_eur} EUR for {op} [{}]",
                wire(key, key_passed)
            ),
            Msg::Transfer {
                op,
                amount_eur,
                if_paid_eur: Some(paid),
                ..
            } => write!(
                f,
                "transfer {amount_eur} EUR for {op} if {paid} EUR are paid so far"
            ),
            Msg::TransferDone {
                op,
                key,
                key_passed,
                result: TransferResult::Done,
            } => write!(f, "transfer done for {op} [{}]", wire(key, key_passed)),
            Msg::TransferDone {
                op,
                result: TransferResult::Refused { paid_eur },
                ..
            } => write!(
                f,
                "transfer for {op} refused: {paid_eur} EUR are paid already"
            ),
            // The question's number is plumbing, like a connection: traces
            // tell questions apart by when they were sent.
            Msg::StatusQuery { op, .. } => write!(f, "how much is paid for {op}?"),
            Msg::StatusReply { op, paid_eur, .. } => {
                write!(f, "{op}: {paid_eur} EUR paid so far")
            }
            Msg::Refund { .. } | Msg::RefundDone { .. } => fmt_refund(self, f),
        }
    }
}

/// How traces write the compensation's messages.
fn fmt_refund(msg: &Msg, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match *msg {
        // The refund's key is its own: the payment's key with a word
        // that tells them apart in a trace.
        Msg::Refund {
            op,
            key,
            amount_eur,
            ..
        } => write!(f, "refund {amount_eur} EUR for {op} [{}]", RefundKey(key)),
        Msg::RefundDone {
            op,
            result: RefundResult::Done,
            ..
        } => write!(f, "refund done for {op}"),
        Msg::RefundDone {
            op,
            result: RefundResult::Refused { paid_eur },
            ..
        } => write!(f, "refund for {op} refused: only {paid_eur} EUR are paid"),
        _ => unreachable!("only a refund or its answer"),
    }
}

/// A refund's key as traces write it: `refund zahl-4711-01`, or `no key`.
struct RefundKey(Key);

impl fmt::Display for RefundKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Key::None => write!(f, "no key"),
            key => write!(f, "refund {key}"),
        }
    }
}
