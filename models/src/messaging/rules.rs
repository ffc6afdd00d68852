//! The messaging model's design-warning rules (docs/design-warnings.md):
//! their ids, which `[expect] warnings` names. The loader checks them
//! (`warnings.rs`, `republish.rs`, `republish_consumer.rs`); the registry
//! lists them.

/// An inbox that forgets before an outbox relay stops republishing.
pub const INBOX_RETENTION_BELOW_REPUBLISH: &str = "inbox-retention-below-republish";
/// A broker that forgets producer ids while the relay still retries.
pub const PRODUCER_ID_EXPIRY_BELOW_RETRIES: &str = "producer-id-expiry-below-retries";
/// An idempotent producer with more publishes in flight than the broker
/// keeps sequence numbers for: its idempotence is silently off.
pub const IDEMPOTENCE_OFF_ABOVE_FIVE_IN_FLIGHT: &str = "idempotence-off-above-five-in-flight";
/// A consumer that acks before it commits, in a scenario that crashes it.
pub const ACK_BEFORE_COMMIT_UNDER_CRASHES: &str = "ack-before-commit-under-crashes";
/// A consumer that acks first re-sends a commit that is not keyed by the
/// message id, in a scenario that can keep its database's answers away.
pub const COMMIT_RESENT_WITHOUT_DEDUP: &str = "commit-resent-without-dedup";
/// A consumer that acks with result before its commit drops its work when
/// no ask for the result is answered, in a scenario that can keep every
/// answer away.
pub const ACK_RESULT_LOST_DROPS_WORK: &str = "ack-result-lost-drops-work";
/// A consumer that applies every delivery.
pub const CONSUMER_WITHOUT_DEDUP: &str = "consumer-without-dedup";
/// A consumer that reads its inbox only for deliveries flagged as redelivered.
pub const DEDUP_ONLY_ON_REDELIVERY: &str = "dedup-only-on-redelivery";
/// A broker that redelivers while the first handler still runs.
pub const VISIBILITY_BELOW_PROCESSING: &str = "visibility-below-processing";

/// Every rule above, in the order `registry::RULES` lists them.
pub const ALL: &[&str] = &[
    INBOX_RETENTION_BELOW_REPUBLISH,
    PRODUCER_ID_EXPIRY_BELOW_RETRIES,
    IDEMPOTENCE_OFF_ABOVE_FIVE_IN_FLIGHT,
    ACK_BEFORE_COMMIT_UNDER_CRASHES,
    COMMIT_RESENT_WITHOUT_DEDUP,
    ACK_RESULT_LOST_DROPS_WORK,
    CONSUMER_WITHOUT_DEDUP,
    DEDUP_ONLY_ON_REDELIVERY,
    VISIBILITY_BELOW_PROCESSING,
];
