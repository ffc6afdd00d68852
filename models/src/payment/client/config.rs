//! What the claims system is configured with: its key policy, its
//! operations, its retries and their protections, and its reconciliation job.

use super::super::compensate::CompensateConfig;
use super::super::reconcile::ReconcileConfig;
use super::super::CLAIM;
use crate::core::breaker::BreakerConfig;
use crate::core::budget::BudgetConfig;
use crate::core::retry::RetryPolicy;
use crate::core::Op;
use sim::ActorId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Which idempotency key the client sends.
pub enum KeyPolicy {
    /// One key per business operation, reused on every retry.
    Stable,
    /// A fresh key per attempt: the key protects nothing.
    PerAttempt,
    /// One key per claim, derived from the claim's number alone (a mistake
    /// once a claim has a second payment: it carries the first one's key).
    Claim,
    /// Derived from the clock, bucketed: operations started together collide.
    Timestamp {
        /// The bucket's width: keys of operations started within it collide.
        bucket_ms: u64,
    },
    /// No key: the service cannot tell a retry from a new request.
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// One business operation the client is asked to run: pay a claim.
pub struct OpSpec {
    /// The claim's number.
    pub claim: u32,
    /// Which payment of the claim, 1 to 99 (`zahl-4711-02` is payment 2):
    /// each payment is a business operation of its own.
    pub payment: u8,
    /// The amount to pay.
    pub amount_eur: u32,
    /// When the claims system asks for it.
    pub start_ms: u64,
    /// A retry that sends another amount under the same key (a client bug).
    pub retry_amount_eur: Option<u32>,
}

impl OpSpec {
    /// The business operation.
    pub fn op(&self) -> Op {
        Op::part(&CLAIM, self.claim, self.payment.saturating_sub(1))
    }

    /// What attempt `attempt` asks to pay.
    pub fn amount_for(&self, attempt: u32) -> u32 {
        match self.retry_amount_eur {
            Some(a) if attempt > 1 => a,
            _ => self.amount_eur,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// The client's configuration.
pub struct ClientConfig {
    /// The payment service's actor id.
    pub service: ActorId,
    /// How long it waits for an answer to an attempt.
    pub timeout_ms: u64,
    /// Which key it sends.
    pub key: KeyPolicy,
    /// When it retries, and when it gives up.
    pub retry: RetryPolicy,
    /// Retry a final error too (a mistake: a rejected input never becomes valid).
    pub retry_final_errors: bool,
    /// Record what was given up, or drop it silently (a mistake).
    pub dead_letter: bool,
    /// Read a timeout as "failed, nothing happened" (a mistake: the request
    /// may have been executed and only the answer lost).
    pub timeout_means_failed: bool,
    /// Read a 503 as "outcome unknown": the shed copy was not executed, but
    /// a twin of it (a network duplicate) may be queued or still on its way.
    pub overloaded_means_unknown: bool,
    /// A retry budget shared by all of this client's operations.
    pub budget: Option<BudgetConfig>,
    /// A circuit breaker in front of all of this client's calls.
    pub breaker: Option<BreakerConfig>,
    /// The operations it runs.
    pub ops: Vec<OpSpec>,
    /// A job that takes up its unknown dead letters (none: a person does).
    pub reconcile: Option<ReconcileConfig>,
    /// A job that cancels its unknown dead letters instead, refunding what
    /// was paid (never together with `reconcile`).
    pub compensate: Option<CompensateConfig>,
}

#[cfg(test)]
impl ClientConfig {
    /// The unit tests' claims system: one claim of 1,200 EUR at time 0, a
    /// one-second timeout, dead letters kept, no budget, breaker or job.
    pub(crate) fn one_claim(
        service: ActorId,
        claim: u32,
        key: KeyPolicy,
        retry: RetryPolicy,
    ) -> ClientConfig {
        ClientConfig {
            service,
            timeout_ms: 1_000,
            key,
            retry,
            retry_final_errors: false,
            dead_letter: true,
            timeout_means_failed: false,
            overloaded_means_unknown: false,
            budget: None,
            breaker: None,
            ops: vec![OpSpec {
                claim,
                payment: 1,
                amount_eur: 1200,
                start_ms: 0,
                retry_amount_eur: None,
            }],
            reconcile: None,
            compensate: None,
        }
    }
}
