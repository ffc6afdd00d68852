//! The protections `idemsim advise` may add to a failing messaging design,
//! each with its safe value (`core::repair`): the inverse of the
//! `[expect] protections` its holding scenarios declare.

use crate::core::Repair;

/// Every repair of the messaging model, in the order advise tries them.
pub(crate) static REPAIRS: &[Repair] = &[
    Repair {
        sets: &[("consumer.handler", "inbox-same-tx")],
        protects: "an inbox row in the effect's transaction",
    },
    Repair {
        sets: &[("consumer.handler", "unique-key")],
        protects: "a unique key on the effect",
    },
    Repair {
        sets: &[("consumer.handler", "set-value-versioned")],
        protects: "a conditional update on the version",
    },
    Repair {
        sets: &[("consumer.ack", "after-commit")],
        protects: "ack only after the commit",
    },
    Repair {
        sets: &[("producer.write", "outbox")],
        protects: "the event written with the state, published by a relay",
    },
    Repair {
        sets: &[("producer.idempotence", "true")],
        protects: "an idempotent producer: the broker drops its retries",
    },
    Repair {
        sets: &[("producer.max_in_flight", "5")],
        protects: "at most 5 publishes in flight, as Kafka requires",
    },
    Repair {
        sets: &[("producer.delivery_timeout_ms", "600000")],
        protects: "the library retries a batch for 10 min",
    },
    Repair {
        sets: &[("producer.publish_timeout_ms", "30000")],
        protects: "a resend within the broker's dedup window",
    },
    Repair {
        sets: &[("broker.at_max_deliveries", "dead-letter")],
        protects: "a message given up goes to the dead-letter queue",
    },
    Repair {
        sets: &[("consumer.inbox_retention_ms", "0")],
        protects: "inbox rows never cleaned up",
    },
    Repair {
        sets: &[("consumer.inbox_retention_ms", "604800000")],
        protects: "inbox rows kept 7 days",
    },
    Repair {
        sets: &[("broker.producer_id_expiration_ms", "0")],
        protects: "producer ids kept while the relay still retries under them",
    },
    Repair {
        sets: &[("broker.visibility_timeout_ms", "300000")],
        protects: "a 5 min lease on each delivery",
    },
];
