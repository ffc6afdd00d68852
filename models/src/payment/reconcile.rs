//! What the claims system's reconciliation job (chapter 14) is configured
//! with: when it looks, how many rounds, whom it asks, which key a re-drive
//! carries. The job itself is a part of the client
//! (`client/reconciliation.rs`); this module depends on nothing of it.

use sim::ActorId;

/// Most rounds a job may take before it hands a claim over to a person.
pub const MAX_ROUNDS: u64 = 100;

/// Whom the job asks whether a claim was paid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// The bank, where the money leaves: the only place that knows.
    Bank,
    /// The payment service's own key table (a mistake): a key left "in
    /// progress" reads as "nothing paid" while the bank may have paid.
    Service,
}

/// Which key a re-drive carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedriveKey {
    /// The operation's key under the client's policy, so that every layer
    /// that deduplicates still recognises it.
    Same,
    /// A key never sent before (a mistake): `payment-new-key-per-retry` by hand.
    New,
}

/// The job's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReconcileConfig {
    /// How long after the dead letter the job first looks, and between rounds.
    pub after_ms: u64,
    /// Rounds before the claim is handed over to a person (0: at once, the
    /// job only looks at its dead letters to count them).
    pub max_rounds: u32,
    /// Whom it asks.
    pub ask: Ask,
    /// The actor it asks (the bank or the service).
    pub asked: ActorId,
    /// Which key a re-drive carries.
    pub redrive_key: RedriveKey,
}
