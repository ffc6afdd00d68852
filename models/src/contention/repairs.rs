//! The protections `idemsim advise` may add to a failing contention design,
//! each with its safe value (`core::repair`).

use crate::core::Repair;

/// Every repair of the contention model, in the order advise tries them.
pub(crate) static REPAIRS: &[Repair] = &[
    Repair {
        sets: &[("client.cas", "true")],
        protects: "a compare-and-set on the version read",
    },
    Repair {
        sets: &[("client.request_id", "true")],
        protects: "the write's request id kept with the row",
    },
];
