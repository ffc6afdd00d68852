//! What the claims system's compensation job is configured with: a saga's
//! step back. For each claim it gave up with an unknown outcome, the
//! business cancels the payment instead of re-driving it: the job refunds
//! whatever the bank paid, and then tells the claims system "cancelled".
//! The job itself is a part of the client (`client/compensation.rs`);
//! this module depends on nothing of it.

use sim::ActorId;

/// How the job decides what to refund.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefundWhen {
    /// It asks the bank how much is paid first and refunds exactly that,
    /// and only that: nothing for a transfer that never landed.
    Paid,
    /// It refunds the amount asked on the dead letter's timeout alone (a
    /// mistake): a transfer that never landed is refunded all the same.
    Timeout,
}

/// The job's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompensateConfig {
    /// How long after the dead letter the job first acts, and between rounds.
    pub after_ms: u64,
    /// Rounds before the claim is handed over to a person.
    pub max_rounds: u32,
    /// When it refunds: after asking, or on the timeout alone.
    pub refund_when: RefundWhen,
    /// Each refund carries a key of its own, the same in every round, so
    /// the bank refunds it once however often it arrives (false: no key, a
    /// mistake).
    pub keyed: bool,
    /// The bank's actor id: the job asks it and has it refund.
    pub bank: ActorId,
}
