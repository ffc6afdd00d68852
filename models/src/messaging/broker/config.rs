//! What a broker is configured with: its visibility timeout, its deliveries
//! and dead-letter queue, its publish dedup window, its producer state.

use sim::ActorId;

/// What happens to a message after its last delivery attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtMaxDeliveries {
    /// It moves to the dead-letter queue, where a person sees it (SQS's
    /// redrive policy, Service Bus's dead-letter subqueue, a Pub/Sub
    /// dead-letter topic, a RabbitMQ dead-letter exchange).
    DeadLetter,
    /// It is dropped: the effect is silently lost (a RabbitMQ quorum queue
    /// past its delivery limit without a dead-letter exchange; a NATS
    /// consumer at MaxDeliver, which delivers it no more, though the stream
    /// keeps it).
    Discard,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// The broker's configuration.
pub struct BrokerConfig {
    /// The consumers it delivers to, one chosen per delivery.
    pub consumers: Vec<ActorId>,
    /// An unacked delivery becomes visible again this long after the broker
    /// sent it (by default: SQS's visibility timeout and NATS's AckWait
    /// 30 s, Pub/Sub's ack deadline 10 s, Service Bus's lock 60 s; RabbitMQ
    /// has none: a delivery comes back when its consumer returns it).
    pub visibility_timeout_ms: u64,
    /// Deliveries before the message leaves the queue; 0 = unlimited. SQS's
    /// maxReceiveCount, Service Bus's MaxDeliveryCount, Pub/Sub's
    /// maxDeliveryAttempts and NATS's MaxDeliver count deliveries: N is N
    /// here. A RabbitMQ quorum queue's delivery-limit counts returns and
    /// drops a message on the return above it: delivery-limit N is N + 1.
    pub max_deliveries: u32,
    /// What happens after the last delivery.
    pub at_max_deliveries: AtMaxDeliveries,
    /// A publish with a message id accepted within this window is dropped,
    /// timed from the publish stored (one it drops extends nothing), as SQS
    /// FIFO's 5-minute interval, NATS's 2-minute duplicate window and
    /// Service Bus's duplicate detection (10 minutes) are; 0 = off.
    pub dedup_window_ms: u64,
    /// An open transaction not committed within this is aborted (Kafka's
    /// `transaction.timeout.ms`, 60 s by default).
    pub transaction_timeout_ms: u64,
    /// Pub/Sub's exactly-once delivery: only the ack naming the latest
    /// delivery counts, and an ack asking for its result learns whether it
    /// did. Without it a late ack is accepted while the message is out, and
    /// every result says it counted, as Pub/Sub's client answers `SUCCESS`
    /// at once on a subscription without exactly-once delivery.
    pub exactly_once_delivery: bool,
    /// An idempotent producer's id is forgotten this long after the last
    /// publish the broker stored under it (Kafka's
    /// `producer.id.expiration.ms`, 1 day); 0 = never.
    pub producer_id_expiration_ms: u64,
}
