//! What a consumer is configured with: what its handler does with a
//! delivery, when it acks, and its transactions' and lease's timing.

use sim::ActorId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// What the consumer's handler does with a delivery.
pub enum Handler {
    /// Apply the effect for every delivery.
    Effect,
    /// Inbox row in the effect's transaction.
    InboxSameTx,
    /// The inbox read only for a delivery the broker flags as redelivered
    /// (a RabbitMQ optimisation): a first delivery writes its row and
    /// effect without looking, as if it could not be a duplicate.
    InboxIfRedelivered,
    /// Check the inbox, apply the effect, write the inbox row: three transactions.
    InboxSeparateTx,
    /// Check the inbox, write the inbox row, apply the effect: the other order.
    InboxRecordFirst,
    /// Insert keyed by the event under a unique constraint; "already exists" counts as success.
    UniqueKey,
    /// Set the entity's value (naturally idempotent, order-sensitive).
    SetValue {
        /// Only if the stored version is older.
        versioned: bool,
    },
}

impl Handler {
    /// It reads its inbox for every delivery, so a second copy of an event
    /// is caught while the inbox still holds its id (not the handler that
    /// reads it only for flagged redeliveries).
    pub fn reads_inbox_always(self) -> bool {
        matches!(
            self,
            Handler::InboxSameTx | Handler::InboxSeparateTx | Handler::InboxRecordFirst
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// When the consumer acks a delivery.
pub enum AckMode {
    /// Ack once the handler's transactions committed.
    AfterCommit,
    /// Ack on receipt, then process: a crash while processing loses the message.
    BeforeCommit,
    /// Do the work, ack asking for the result, and commit only if the ack
    /// counted (Pub/Sub's `AckWithResult` under exactly-once delivery): a
    /// failed ack means another delivery is out, so the work is dropped; a
    /// crash or a lost result between the ack and the commit loses it.
    CheckedBeforeCommit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A consumer's configuration.
pub struct ConsumerConfig {
    /// The broker to ack to.
    pub broker: ActorId,
    /// The database actor its transactions go to.
    pub db: ActorId,
    /// What it does with a delivery.
    pub handler: Handler,
    /// When it acks.
    pub ack: AckMode,
    /// Processing time per delivery.
    pub processing_ms: u64,
    /// Extra processing time drawn per delivery, 0..=this.
    pub processing_jitter_ms: u64,
    /// Wait this long for the database's answer to a transaction. Then a
    /// delivery the broker still holds is given up (its lease redelivers
    /// it); one whose ack let the message go has its transaction sent again.
    pub tx_timeout_ms: u64,
    /// Sends of one transaction, the first included, once the ack let the
    /// message go; after the last the work is given up (1 to 100).
    pub tx_max_attempts: u8,
    /// While a delivery is in hand, ask the broker this often to extend its
    /// lease; 0 = never.
    pub lease_renewal_ms: u64,
    /// The version this configuration runs as, named in the trace and the
    /// ledger's attribution (`Obs::Handled`, `Obs::EffectBy`): 0 for an
    /// actor without rollouts, which reports none, else 1 for the first
    /// version, 2 for the first rollout's, and so on. Set by `with_rollouts`.
    pub version: u8,
}
