//! The protections `idemsim advise` may add to a failing payment design,
//! each with its safe value (`core::repair`): the inverse of the
//! `[expect] protections` its holding scenarios declare.

use crate::core::Repair;

/// Every repair of the payment model, in the order advise tries them.
pub(crate) static REPAIRS: &[Repair] = &[
    Repair {
        sets: &[("client.key", "stable")],
        protects: "one idempotency key per operation, sent with every retry",
    },
    Repair {
        sets: &[("service.idempotency", "claim-same-tx")],
        protects: "the key claimed in the booking's transaction",
    },
    Repair {
        sets: &[
            ("service.pass_key_to_bank", "true"),
            ("bank.accepts_key", "true"),
        ],
        protects: "the key passed on to a bank that deduplicates on it",
    },
    Repair {
        sets: &[("service.fingerprint_check", "true")],
        protects: "a known key with another request gets 422",
    },
    Repair {
        sets: &[("service.mode", "state-conditional")],
        protects: "a transfer conditional on what the bank has paid",
    },
    Repair {
        sets: &[("bank.status_query", "true")],
        protects: "the bank answers status queries",
    },
    Repair {
        sets: &[
            ("service.query_before_retry", "true"),
            ("bank.status_query", "true"),
        ],
        protects: "ask the bank before every re-send",
    },
    Repair {
        sets: &[("service.on_bank_timeout", "keep-in-progress")],
        protects: "a key the bank left unanswered stays in progress",
    },
    Repair {
        sets: &[("service.retention_ms", "86400000")],
        protects: "keys kept 1 day",
    },
    Repair {
        sets: &[("service.retention_ms", "604800000")],
        protects: "keys kept 7 days",
    },
    Repair {
        sets: &[("bank.key_retention_ms", "0")],
        protects: "the bank keeps keys forever",
    },
    Repair {
        sets: &[("client.retry.window_ms", "600000")],
        protects: "retries end 10 min after the first attempt",
    },
    Repair {
        sets: &[("client.retry.window_ms", "3600000")],
        protects: "retries end 1 h after the first attempt",
    },
    Repair {
        sets: &[
            ("client.budget.capacity", "20"),
            ("client.budget.retry_cost", "5"),
            ("client.budget.timeout_cost", "10"),
            ("client.budget.success_refund", "1"),
        ],
        protects: "a retry budget per client (a token bucket, as the AWS SDKs keep)",
    },
    Repair {
        sets: &[("client.retry.dead_letter", "true")],
        protects: "giving up leaves a dead letter for a person",
    },
    Repair {
        sets: &[("client.retry.retry_final_errors", "false")],
        protects: "a 422 is final, never retried",
    },
    Repair {
        sets: &[("client.timeout_means", "unknown")],
        protects: "a timeout is read as an unknown outcome",
    },
    Repair {
        sets: &[("client.overloaded_means", "unknown")],
        protects: "a 503 is read as an unknown outcome",
    },
    Repair {
        sets: &[
            ("client.reconcile.ask", "bank"),
            ("bank.status_query", "true"),
        ],
        protects: "reconciliation asks the bank, where the money is",
    },
    Repair {
        sets: &[("client.reconcile.redrive_key", "same")],
        protects: "a re-drive carries the operation's key",
    },
    Repair {
        sets: &[
            ("client.compensate.refund_when", "paid"),
            ("bank.status_query", "true"),
        ],
        protects: "a compensation refunds only what the bank reports paid",
    },
    Repair {
        sets: &[("client.compensate.refund_key", "own")],
        protects: "a refund carries a key of its own",
    },
    Repair {
        sets: &[("client.budget.capacity", "500")],
        protects: "a retry budget (the AWS SDKs' token bucket)",
    },
    Repair {
        sets: &[("client.breaker.failures", "5")],
        protects: "a circuit breaker in front of the client's calls",
    },
    Repair {
        sets: &[("service.drop_expired", "true")],
        protects: "queued work past its deadline is skipped",
    },
];
