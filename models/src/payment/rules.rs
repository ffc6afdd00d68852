//! The payment model's design-warning rules (docs/design-warnings.md): their
//! ids, which `[expect] warnings` names. The loader checks them
//! (`scenario_warnings.rs`, `scenario_reads.rs`); the registry lists them.

/// A lease on "in progress" keys that ends before the call it guards.
pub const LEASE_BELOW_CALL: &str = "lease-shorter-than-bank-call";
/// A key deleted when the bank's outcome is unknown.
pub const KEY_DELETED_ON_TIMEOUT: &str = "key-deleted-on-timeout";
/// A status read that can come sooner after a transfer than the replica
/// it reads shows that transfer.
pub const STATUS_LAG_ABOVE_READ_DELAY: &str = "status-lag-above-read-delay";
/// A status query that can reach the bank before the transfer it follows,
/// whose "not paid" the design then acts on.
pub const STATUS_QUERY_OVERTAKES_TRANSFER: &str = "status-query-overtakes-transfer";
/// A key minted from the clock: it names a time bucket, not an operation.
pub const TIMESTAMP_KEY_COLLIDES: &str = "timestamp-key-collides";

/// Every rule above, in the order `registry::RULES` lists them.
pub const ALL: &[&str] = &[
    LEASE_BELOW_CALL,
    KEY_DELETED_ON_TIMEOUT,
    STATUS_LAG_ABOVE_READ_DELAY,
    STATUS_QUERY_OVERTAKES_TRANSFER,
    TIMESTAMP_KEY_COLLIDES,
];
