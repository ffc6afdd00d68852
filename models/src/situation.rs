//! Named situations actors report when a run reaches them, so that a "holds"
//! verdict can show that the interesting interleavings actually happened.

/// Stable ids (bit positions) and names; scenario files use the names.
pub const CLIENT_RETRIED: u32 = 1;
pub const DUPLICATE_AFTER_COMMIT: u32 = 2;
pub const CONCURRENT_DUPLICATE: u32 = 3;
pub const RETRY_AFTER_KEY_EXPIRED: u32 = 4;
pub const CRASH_BETWEEN_STEPS: u32 = 5;
pub const LEASE_EXPIRED_REDELIVERY: u32 = 6;
pub const BANK_DEDUP_HIT: u32 = 7;
pub const RECOVERED_AFTER_RESTART: u32 = 8;
pub const REPUBLISH_AFTER_CRASH: u32 = 9;
pub const BROKER_DEDUP_HIT: u32 = 10;
pub const REPUBLISH_AFTER_DEDUP_WINDOW: u32 = 11;
pub const DUPLICATE_PUBLISH: u32 = 12;
pub const DEAD_LETTERED: u32 = 13;
pub const OUT_OF_ORDER_WRITE: u32 = 14;
pub const STALE_WRITE_REJECTED: u32 = 15;
pub const COMMIT_FAILED: u32 = 16;
pub const PUBLISH_RETRIED: u32 = 17;
// The payment catalog's own situations start at 20, so the messaging catalog can
// number its own from 9 without a clash.
/// A request found its key "in progress" past the lease and took the execution over.
pub const LEASE_EXPIRED_TAKEOVER: u32 = 20;
/// A status query before a retry found the transfer already made.
pub const QUERY_FOUND_TRANSFER: u32 = 21;
/// A "pay up to this total" instruction found nothing missing: the retry added nothing.
pub const SETTLE_NOTHING_MISSING: u32 = 22;
/// A concurrent duplicate waited for the first execution and got its result.
pub const DUPLICATE_WAITED: u32 = 23;
/// The same key came with another payload and was rejected (422).
pub const PAYLOAD_MISMATCH_REJECTED: u32 = 24;
/// An expired key was removed from the dedup store.
pub const KEY_REAPED: u32 = 26;
/// A key already stored for another operation arrived (keys collide).
pub const KEY_COLLISION: u32 = 27;
/// The service re-sent a transfer after the bank stayed silent.
pub const BANK_RETRIED: u32 = 28;
/// The service shed a request with 503 because it was at its `max_in_flight`.
pub const OVERLOADED: u32 = 29;

pub const NAMES: &[(u32, &str)] = &[
    (CLIENT_RETRIED, "client-retried"),
    (DUPLICATE_AFTER_COMMIT, "duplicate-after-commit"),
    (CONCURRENT_DUPLICATE, "concurrent-duplicate"),
    (RETRY_AFTER_KEY_EXPIRED, "retry-after-key-expired"),
    (CRASH_BETWEEN_STEPS, "crash-between-steps"),
    (LEASE_EXPIRED_REDELIVERY, "lease-expired-redelivery"),
    (BANK_DEDUP_HIT, "bank-dedup-hit"),
    (RECOVERED_AFTER_RESTART, "recovered-after-restart"),
    (REPUBLISH_AFTER_CRASH, "republish-after-crash"),
    (BROKER_DEDUP_HIT, "broker-dedup-hit"),
    (REPUBLISH_AFTER_DEDUP_WINDOW, "republish-after-dedup-window"),
    (DUPLICATE_PUBLISH, "duplicate-publish"),
    (DEAD_LETTERED, "dead-lettered"),
    (OUT_OF_ORDER_WRITE, "out-of-order-write"),
    (STALE_WRITE_REJECTED, "stale-write-rejected"),
    (COMMIT_FAILED, "commit-failed"),
    (PUBLISH_RETRIED, "publish-retried"),
    (LEASE_EXPIRED_TAKEOVER, "lease-expired-takeover"),
    (QUERY_FOUND_TRANSFER, "query-found-transfer"),
    (SETTLE_NOTHING_MISSING, "settle-nothing-missing"),
    (DUPLICATE_WAITED, "duplicate-waited"),
    (PAYLOAD_MISMATCH_REJECTED, "payload-mismatch-rejected"),
    (KEY_REAPED, "key-reaped"),
    (KEY_COLLISION, "key-collision"),
    (BANK_RETRIED, "bank-retried"),
    (OVERLOADED, "overloaded"),
];

pub fn name(id: u32) -> &'static str {
    NAMES
        .iter()
        .find(|(i, _)| *i == id)
        .map_or("unknown-situation", |(_, n)| n)
}

pub fn id(name: &str) -> Option<u32> {
    NAMES.iter().find(|(_, n)| *n == name).map(|(i, _)| *i)
}

/// Names of the bits set in `set`, in id order.
pub fn names(set: u64) -> Vec<&'static str> {
    NAMES
        .iter()
        .filter(|(i, _)| set & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}
