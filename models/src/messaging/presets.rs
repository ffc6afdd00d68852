//! The messaging model's presets: brokers (and, for Kafka, the producer
//! client of the same version) as their documentation describes them. Each
//! value cites where it is documented; docs/fidelity.md has the rows and the
//! conformance scenarios that pin each limit.

use crate::core::{Allowed, Preset, PresetRule, PresetSetting};

const fn set(key: &'static str, value: &'static str, source: &'static str) -> PresetSetting {
    PresetSetting { key, value, source }
}

const fn rule(key: &'static str, min: i64, max: i64, says: &'static str) -> PresetRule {
    PresetRule {
        key,
        allowed: Allowed::Range(min, max),
        says,
    }
}

/// A mechanism the system does not have: only `values`, which turn it off.
const fn only(
    key: &'static str,
    values: &'static [&'static str],
    says: &'static str,
) -> PresetRule {
    PresetRule {
        key,
        allowed: Allowed::Only(values),
        says,
    }
}

/// Kafka's producer client and broker defaults shared by 3.9 and 4.0.
const KAFKA_COMMON: [PresetSetting; 8] = [
            set("producer.max_in_flight", "5", "max.in.flight.requests.per.connection, default 5 (Kafka producer configs)"),
            set("producer.publish_timeout_ms", "30000", "request.timeout.ms, default 30000: the client resends a request unanswered this long (Kafka producer configs). delivery.timeout.ms is left to the model's default, Kafka's 120000 (KIP-91), which Kafka raises to linger.ms + request.timeout.ms when that is larger, and refuses below it only when written"),
            set("broker.producer_id_expiration_ms", "86400000", "producer.id.expiration.ms, default 86400000 since 3.4 (KIP-854)"),
            set("broker.transaction_timeout_ms", "60000", "transaction.timeout.ms, producer default 60000: the coordinator aborts a transaction open longer"),
            set("broker.visibility_timeout_ms", "300000", "max.poll.interval.ms, default 300000: a consumer that does not poll again within it leaves the group and its partitions' uncommitted records are delivered again"),
            set("broker.max_deliveries", "0", "a Kafka consumer group has no delivery limit: records are read again from the committed offset for ever"),
            set("broker.dedup_window_ms", "0", "Kafka has no broker-side deduplication by message id; only the idempotent producer's sequence numbers"),
            set("broker.exactly_once_delivery", "true", "not exactly-once delivery: a commit after the consumer lost its partitions (max.poll.interval.ms passed, a rebalance) fails with CommitFailedException and the consumer learns it, which is what this key models (only the latest delivery's ack counts, and a checked ack learns its result); records are still delivered at least once"),
];

const KAFKA_39: &[PresetSetting] = &{
    let c = KAFKA_COMMON;
    [
        set("producer.idempotence", "\"kafka-default\"", "enable.idempotence, default true since 3.0 (KIP-679); 3.0.1 to 3.9 turn it off with a logged warning when max.in.flight.requests.per.connection > 5 and idempotence was left at its default (KAFKA-13673)"),
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
    ]
};

const KAFKA_40: &[PresetSetting] = &{
    let c = KAFKA_COMMON;
    [
        set("producer.idempotence", "true", "enable.idempotence, default true; 4.0 refuses max.in.flight.requests.per.connection > 5 with idempotence on, at its default or not: \"To use the idempotent producer, max.in.flight.requests.per.connection must be set to at most 5. Current value is 6.\" (KAFKA-17927). linger.ms, 5 by default from 4.0 (KIP-1030; 0 in 3.9), is not modelled: a publish leaves at once"),
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
    ]
};

const NO_DEDUP_WINDOW: &[&str] = &["0"];

const KAFKA_39_RULES: &[PresetRule] = &[
    rule("producer.max_in_flight", 1, 100, "max.in.flight.requests.per.connection is at least 1"),
    rule("broker.transaction_timeout_ms", 1, 900_000, "the broker refuses a transaction.timeout.ms above transaction.max.timeout.ms (default 900000, 15 min) with InvalidTxnTimeoutException"),
    only("broker.dedup_window_ms", NO_DEDUP_WINDOW, "Kafka has no broker-side deduplication by message id, only the idempotent producer's sequence numbers"),
];

const KAFKA_40_RULES: &[PresetRule] = &[
    KAFKA_39_RULES[0],
    KAFKA_39_RULES[1],
    KAFKA_39_RULES[2],
    only("producer.idempotence", &["true", "false"], "4.0 has no silent turn-off: idempotence left at its default is refused above five in flight like one written out (KAFKA-17927), so \"kafka-default\" (3.x's turn-off) does not apply"),
    PresetRule {
        key: "producer.delivery_timeout_ms",
        allowed: Allowed::AtLeast("producer.publish_timeout_ms", 5),
        says: "a delivery.timeout.ms written below linger.ms + request.timeout.ms is refused (ConfigException), and 4.0's linger.ms is 5 by default (KIP-1030)",
    },
];

const KAFKA_NOT_MODELLED: &str = "One partition per producer: batches in flight, the broker's last 5 batches per producer id and partition, and ordering are those of a single partition. Consumer groups, rebalances and session.timeout.ms (45 s) are not modelled; a stuck consumer's records come back after max.poll.interval.ms. Retention (log.retention.hours, 7 days) is not modelled.";

const SQS_NOT_MODELLED: &str = "The occasional second copy a standard queue delivers on its own (at-least-once delivery: a copy can come back even after a successful delete) is not produced by the broker: add duplication on the broker's links to the consumers ([[network.links]] duplicate_per_mille) to model it. Retention by age (MessageRetentionPeriod, 4 days by default, 60 s to 14 days) is not modelled: no message is deleted for its age. Long polling, message timers and delay queues are not modelled.";

const SQS_RULES: &[PresetRule] = &[
    rule("broker.visibility_timeout_ms", 0, 43_200_000, "VisibilityTimeout is 0 to 43,200 seconds (12 hours) (SQS API Reference, SetQueueAttributes)"),
    rule("broker.max_deliveries", 0, 1000, "a redrive policy's maxReceiveCount: \"set Maximum receives to a value between 1 and 1,000\" (SQS Developer Guide, configuring a dead-letter queue; 0 here: no redrive policy)"),
    only("broker.dedup_window_ms", NO_DEDUP_WINDOW, "standard queues do not deduplicate sends (FIFO queues do: sqs-fifo)"),
    only("broker.at_max_deliveries", DEAD_LETTER, "past maxReceiveCount a redrive policy moves the message to its dead-letter queue; SQS drops messages by age only"),
    only("broker.exactly_once_delivery", &["false"], "a DeleteMessage with an older receipt handle succeeds but \"might not\" delete the message, and the consumer is not told"),
];

const DEAD_LETTER: &[&str] = &["\"dead-letter\""];

/// Service Bus's `MaxDeliveryCount` is a .NET `int` checked only for at
/// least 1 (`MinAllowedMaxDeliveryCount`); `int.MaxValue` is accepted, and
/// NServiceBus creates its queues with it.
const SERVICEBUS_MAX_DELIVERY_COUNT: i64 = 2_147_483_647;

const SERVICEBUS_RULES: [PresetRule; 4] = [
    rule("broker.visibility_timeout_ms", 1, 300_000, "LockDuration: \"Max value is 5 minutes\" (CreateQueueOptions.LockDuration); no service page states a minimum: the portal, the .NET client's declared constant and Microsoft's emulator take 5 seconds, the .NET client checks only that it is positive, and the service took 1 second in 2016 (docs/fidelity.md, facts not confirmed)"),
    rule("broker.max_deliveries", 1, SERVICEBUS_MAX_DELIVERY_COUNT, "MaxDeliveryCount: \"Default value is 10. Minimum value is 1.\" (QueueProperties.MaxDeliveryCount); no maximum but the 32-bit int it is: \"this behavior can't be disabled, but you can set the max delivery count to a large number\" (dead-letter queues)"),
    only("broker.at_max_deliveries", DEAD_LETTER, "past MaxDeliveryCount the message moves to the dead-letter subqueue"),
    only("broker.exactly_once_delivery", &["true"], "a completion after the lock is lost fails (MessageLockLostException)"),
];

const SERVICEBUS_NO_DD_RULES: &[PresetRule] = &[
    SERVICEBUS_RULES[0],
    SERVICEBUS_RULES[1],
    SERVICEBUS_RULES[2],
    SERVICEBUS_RULES[3],
    only("broker.dedup_window_ms", NO_DEDUP_WINDOW, "duplicate detection is chosen when the queue is created and cannot be turned on later: use servicebus-duplicate-detection"),
];

/// SQS's defaults shared by standard and FIFO queues.
const SQS_COMMON: [PresetSetting; 3] = [
            set("broker.visibility_timeout_ms", "30000", "VisibilityTimeout, default 30 s"),
            set("broker.max_deliveries", "0", "no redrive policy by default: a message is received again for ever (maxReceiveCount exists only with a redrive policy)"),
            set("broker.at_max_deliveries", "\"dead-letter\"", "with a redrive policy, a message received more than maxReceiveCount times moves to the dead-letter queue"),
];

/// Service Bus's defaults shared with and without duplicate detection.
const SERVICEBUS_COMMON: [PresetSetting; 4] = [
            set("broker.visibility_timeout_ms", "60000", "LockDuration, default 1 minute (at most 5)"),
            set("broker.max_deliveries", "10", "MaxDeliveryCount, default 10"),
            set("broker.at_max_deliveries", "\"dead-letter\"", "past MaxDeliveryCount a message moves to the dead-letter subqueue"),
            set("broker.exactly_once_delivery", "true", "a completion after the lock expired fails (MessageLockLostException) and the consumer learns it: only the latest delivery's settlement counts, as exactly_once_delivery makes it; delivery itself is at least once"),
];

/// Every preset the messaging model offers.
pub static PRESETS: &[Preset] = &[
    Preset {
        table: "broker",
        name: "kafka-3.9",
        system: "Apache Kafka 3.9 (Java producer client and broker)",
        settings: KAFKA_39,
        rules: KAFKA_39_RULES,
        not_modelled: KAFKA_NOT_MODELLED,
    },
    Preset {
        table: "broker",
        name: "kafka-4.0",
        system: "Apache Kafka 4.0 (Java producer client and broker)",
        settings: KAFKA_40,
        rules: KAFKA_40_RULES,
        not_modelled: KAFKA_NOT_MODELLED,
    },
    Preset {
        table: "broker",
        name: "sqs-standard",
        system: "Amazon SQS standard queue",
        settings: &[
            SQS_COMMON[0],
            SQS_COMMON[1],
            SQS_COMMON[2],
            set("broker.dedup_window_ms", "0", "standard queues do not deduplicate sends"),
            set("broker.exactly_once_delivery", "false", "at-least-once delivery: a message may be delivered more than once"),
        ],
        rules: SQS_RULES,
        not_modelled: SQS_NOT_MODELLED,
    },
    Preset {
        table: "broker",
        name: "sqs-fifo",
        system: "Amazon SQS FIFO queue",
        settings: &[
            SQS_COMMON[0],
            SQS_COMMON[1],
            SQS_COMMON[2],
            set("broker.dedup_window_ms", "300000", "the deduplication interval is 5 minutes: a send with a deduplication id already sent within it is accepted but not delivered again"),
            set("broker.exactly_once_delivery", "false", "exactly-once processing holds only within the deduplication interval and until a message's visibility timeout lapses"),
        ],
        rules: &[
            rule("broker.visibility_timeout_ms", 0, 43_200_000, "VisibilityTimeout is 0 to 43,200 seconds (12 hours)"),
            rule("broker.max_deliveries", 0, 1000, "a redrive policy's maxReceiveCount: \"set Maximum receives to a value between 1 and 1,000\" (SQS Developer Guide, configuring a dead-letter queue; 0 here: no redrive policy)"),
            rule("broker.dedup_window_ms", 300_000, 300_000, "the FIFO deduplication interval is fixed at 5 minutes; SQS has no setting for it"),
            only("broker.at_max_deliveries", DEAD_LETTER, "past maxReceiveCount a redrive policy moves the message to its dead-letter queue; SQS drops messages by age only"),
            only("broker.exactly_once_delivery", &["false"], "a DeleteMessage with an older receipt handle succeeds but \"might not\" delete the message, and the consumer is not told"),
        ],
        not_modelled: "Message groups and their ordering, high-throughput mode. Retention by age (4 days by default, up to 14) is not modelled.",
    },
    Preset {
        table: "broker",
        name: "rabbitmq-quorum",
        system: "RabbitMQ 4.x quorum queue",
        settings: &[
            set("broker.visibility_timeout_ms", "1800000", "consumer_timeout, default 30 minutes: the channel of a consumer that has not acknowledged a delivery within it is closed and its unacknowledged deliveries are requeued"),
            set("broker.max_deliveries", "21", "delivery-limit, default 20 since RabbitMQ 4.0: a message returned more than 20 times is dropped or dead-lettered, so 21 deliveries (rabbit_fifo return_one: AcquiredCount > DeliveryLimit)"),
            set("broker.at_max_deliveries", "\"discard\"", "over its delivery limit a message is dead-lettered if the queue has a dead-letter exchange, and dropped otherwise; none is configured by default"),
            set("broker.dedup_window_ms", "0", "RabbitMQ does not deduplicate publishes"),
            set("broker.exactly_once_delivery", "false", "at-least-once delivery with manual acknowledgements"),
        ],
        rules: &[only("broker.dedup_window_ms", NO_DEDUP_WINDOW, "RabbitMQ does not deduplicate publishes: a publisher's retransmission may duplicate, and consumers must deduplicate (Reliability Guide)")],
        not_modelled: "A late ack on a channel RabbitMQ closed at the consumer timeout fails; the model accepts it (exactly_once_delivery = false; write true beside the preset to model the failure). RabbitMQ has no visibility timeout: a delivery returns when the consumer rejects it, its channel closes, or the 30-minute consumer timeout fires; the preset stands for the last. From 4.3 only failed deliveries count toward the limit (not a nack or the consumer timeout); here every return counts, as in 4.0 to 4.2. Classic queues (no delivery limit), streams, message TTL and queue length limits are not modelled.",
    },
    Preset {
        table: "broker",
        name: "nats-jetstream",
        system: "NATS JetStream (nats-server 2.10+)",
        settings: &[
            set("broker.visibility_timeout_ms", "30000", "AckWait, default 30 s"),
            set("broker.max_deliveries", "0", "MaxDeliver, default -1: unlimited"),
            set("broker.at_max_deliveries", "\"discard\"", "after MaxDeliver the server stops delivering the message to that consumer (an advisory is published); it stays in the stream"),
            set("broker.dedup_window_ms", "120000", "the stream's duplicate window (Duplicates), default 2 minutes, by the Nats-Msg-Id header"),
            set("broker.exactly_once_delivery", "false", "a double-acknowledged AckSync gives exactly-once processing only to a consumer that waits for it; plain acks are at least once"),
        ],
        rules: &[only("broker.exactly_once_delivery", &["false"], "a late ack counts: \"the acknowledgment from the first consumer will be considered\" (JetStream consumers)")],
        not_modelled: "Double acknowledgement (AckSync) is not modelled as such; exactly_once_delivery models a confirmed ack. Stream limits and retention are not modelled.",
    },
    Preset {
        table: "broker",
        name: "pubsub-exactly-once",
        system: "Google Cloud Pub/Sub subscription with exactly-once delivery",
        settings: &[
            set("broker.visibility_timeout_ms", "10000", "ackDeadlineSeconds, default 10 s (10 to 600)"),
            set("broker.max_deliveries", "0", "no dead-letter policy by default"),
            set("broker.at_max_deliveries", "\"dead-letter\"", "with a dead-letter policy, a message delivered maxDeliveryAttempts times is forwarded to the dead-letter topic"),
            set("broker.dedup_window_ms", "0", "Pub/Sub does not deduplicate publishes; exactly-once delivery is a subscription property"),
            set("broker.exactly_once_delivery", "true", "no redelivery once a message is acknowledged successfully; an ack after the deadline fails, and the client library reports it (AckWithResult)"),
        ],
        rules: &[
            rule("broker.visibility_timeout_ms", 10_000, 600_000, "ackDeadlineSeconds is 10 to 600"),
            PresetRule {
                key: "broker.max_deliveries",
                allowed: Allowed::OffOr(5, 100),
                says: "a dead-letter policy's maxDeliveryAttempts \"must be between 5 and 100\", and a subscription with another value is refused (DeadLetterPolicy, API v1); 0 here is no dead-letter policy",
            },
            only("broker.at_max_deliveries", DEAD_LETTER, "with a dead-letter policy the message is forwarded to the dead-letter topic"),
            only("broker.exactly_once_delivery", &["true"], "this preset is a subscription with exactly-once delivery enabled"),
        ],
        not_modelled: "Exactly-once delivery is regional; publish-side duplicates and ordering keys are not modelled.",
    },
    Preset {
        table: "broker",
        name: "servicebus",
        system: "Azure Service Bus queue (peek-lock)",
        settings: &[
            SERVICEBUS_COMMON[0],
            SERVICEBUS_COMMON[1],
            SERVICEBUS_COMMON[2],
            set("broker.dedup_window_ms", "0", "duplicate detection is off unless the queue is created with it"),
            SERVICEBUS_COMMON[3],
        ],
        rules: SERVICEBUS_NO_DD_RULES,
        not_modelled: "Sessions, partitioning (MessageId + PartitionKey), time-to-live, deferred and scheduled messages, Abandon (an immediate return) are not modelled. Lock renewal is the consumer's lease_renewal_ms.",
    },
    Preset {
        table: "broker",
        name: "servicebus-duplicate-detection",
        system: "Azure Service Bus queue (peek-lock) created with duplicate detection",
        settings: &[
            SERVICEBUS_COMMON[0],
            SERVICEBUS_COMMON[1],
            SERVICEBUS_COMMON[2],
            set("broker.dedup_window_ms", "600000", "duplicateDetectionHistoryTimeWindow, default 10 minutes, by MessageId"),
            SERVICEBUS_COMMON[3],
        ],
        rules: &[
            SERVICEBUS_RULES[0],
            SERVICEBUS_RULES[1],
            SERVICEBUS_RULES[2],
            SERVICEBUS_RULES[3],
            rule("broker.dedup_window_ms", 20_000, 604_800_000, "the duplicate detection window is 20 seconds to 7 days"),
        ],
        not_modelled: "Sessions, partitioning (MessageId + PartitionKey), time-to-live, deferred and scheduled messages, Abandon (an immediate return) are not modelled. Lock renewal is the consumer's lease_renewal_ms.",
    },
];
