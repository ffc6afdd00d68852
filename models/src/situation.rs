//! Named situations actors report when a run reaches them, so that a "holds"
//! verdict can show that the interesting interleavings actually happened.

/// Stable ids (bit positions) and names; scenario files use the names.
pub const REPLY_LOST: u32 = 0;
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

pub const NAMES: &[(u32, &str)] = &[
    (REPLY_LOST, "reply-lost"),
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
