//! The protections `idemsim advise` may add to a failing chain design, each
//! with its safe value (`core::repair`): the payment side's and the
//! accounting consumer's.

use crate::core::Repair;

/// Every repair of the chain model, in the order advise tries them.
pub(crate) static REPAIRS: &[Repair] = &[
    Repair {
        sets: &[
            ("client.reconcile.ask", "bank"),
            ("client.reconcile.after_ms", "60000"),
            ("client.reconcile.max_rounds", "5"),
            ("client.reconcile.redrive_key", "same"),
        ],
        protects: "a reconciliation job that asks the bank and re-drives with the same key",
    },
    Repair {
        sets: &[("accounting.handler", "inbox-same-tx")],
        protects: "an inbox row in the booking's transaction",
    },
    Repair {
        sets: &[("accounting.ack", "after-commit")],
        protects: "accounting acks only after its commit",
    },
    Repair {
        sets: &[("outbox.write", "outbox")],
        protects: "the event written with the booking, published by a relay",
    },
    Repair {
        sets: &[
            ("service.pass_key_to_bank", "true"),
            ("bank.accepts_key", "true"),
        ],
        protects: "the key passed on to a bank that deduplicates on it",
    },
    Repair {
        sets: &[("service.idempotency", "claim-same-tx")],
        protects: "the key claimed in the booking's transaction",
    },
    Repair {
        sets: &[("service.retention_ms", "86400000")],
        protects: "keys kept 1 day",
    },
];
