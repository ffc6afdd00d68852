//! The protections `idemsim advise` may add to a failing HTTP design, each
//! with its safe value (`core::repair`).

use crate::core::Repair;

/// Every repair of the HTTP model, in the order advise tries them.
pub(crate) static REPAIRS: &[Repair] = &[
    Repair {
        sets: &[
            ("client.idempotency_key", "true"),
            ("server.idempotency_keys", "true"),
        ],
        protects: "an Idempotency-Key the server stores",
    },
    Repair {
        sets: &[("client.if_match", "true")],
        protects: "a conditional write (If-Match on the ETag read)",
    },
    Repair {
        sets: &[("client.delete_404", "done")],
        protects: "a 404 to a retried DELETE means done",
    },
    Repair {
        sets: &[("server.put", "replace")],
        protects: "PUT replaces the resource",
    },
    Repair {
        sets: &[("server.fingerprint", "body")],
        protects: "a reused Idempotency-Key with another body gets 422",
    },
    Repair {
        sets: &[("client.conditional_writes", "true")],
        protects: "PUT, PATCH and DELETE carry If-Match from a read",
    },
    Repair {
        sets: &[("server.key_retention_ms", "86400000")],
        protects: "Idempotency-Keys kept 1 day",
    },
];
