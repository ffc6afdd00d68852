//! What the payment service is configured with: how it deduplicates, what
//! it does with a concurrent duplicate, what it asks the bank for, and the
//! settings of its parts.

use crate::core::Key;
use sim::{ActorId, TimeUs};

/// How the service deduplicates requests by their key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idempotency {
    /// Every request is booked and paid.
    None,
    /// Look the key up, execute in a later step, record the key only when the
    /// payment is done. No "in progress" state: two duplicates in flight both
    /// pass the check.
    CheckThenAct,
    /// Key claimed with an "in progress" state, in the same transaction as the
    /// booking, under a unique constraint: the articles' design.
    ClaimSameTx,
    /// Two transactions: first the dedup record (which says "handled" at once),
    /// then the booking. A crash in between leaves a key without a booking.
    SplitKeyFirst,
    /// Two transactions: first the booking (and the bank call), then the dedup
    /// record. A crash in between leaves a booking without a key.
    SplitBookingFirst,
}

/// What a request gets while another one with its key is being executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Concurrent {
    /// HTTP 409: retryable.
    Reject,
    /// Held open until the first execution ends, then answered with its result.
    Wait,
}

/// What the service asks the bank for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// "Transfer 1,200 EUR": every delivered instruction is a payment.
    Action,
    /// "Claim 4711 is paid 1,200 EUR in total": read what is paid, then pay
    /// the difference, in two steps. Two requests can both read "0".
    State,
    /// The same, with the payment conditional on what was read still being
    /// true (a versioned update): the second of two racing payments is refused.
    StateConditional,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The payment service's configuration.
pub struct ServiceConfig {
    /// The bank's actor id.
    pub bank: ActorId,
    /// How it deduplicates requests.
    pub idempotency: Idempotency,
    /// Keys older than this are forgotten; 0 keeps them forever.
    pub retention_us: TimeUs,
    /// A known key with another request (claim or amount) is refused (422).
    pub fingerprint_check: bool,
    /// Hand the key on to the bank, which may deduplicate on it.
    pub pass_key_to_bank: bool,
    /// How long it waits for the bank's answer.
    pub bank_timeout_us: TimeUs,
    /// Attempts per transfer (the first included).
    pub bank_max_attempts: u32,
    /// An "in progress" key older than this may be taken over; 0: never.
    pub lease_us: TimeUs,
    /// What it does with a duplicate of a request in flight.
    pub concurrent: Concurrent,
    /// The work a request costs a worker before the service answers it or
    /// calls the bank: a stored result, a 409 and a 422 come this long after
    /// the request is taken, and so does the bank call.
    pub processing_us: TimeUs,
    /// Capacity of the dedup store, judged by `dedup-store-bounded`; 0: none.
    pub max_keys: u32,
    /// Requests the service works on at once (from being taken until they
    /// are answered, bank call included); 0: as many as it has slots
    /// ([`MAX_WORKERS`](super::timers::MAX_WORKERS)), with no load reported.
    pub workers: u32,
    /// Requests waiting for a worker, first in first out; a request that
    /// finds the queue full is shed with 503. A crash loses the queue.
    pub queue_max: u32,
    /// A worker skips a queued request whose deadline has passed (the
    /// client's timeout, which the request carries, counted from its arrival).
    pub drop_expired: bool,
    /// How long after the faults stop the service promises to be back to
    /// normal, judged by `load-recovers`; 0: no promise.
    pub recover_ms: u32,
    /// What it pays: the amount asked, or what is missing to a total.
    pub mode: Mode,
    /// Ask the bank what it has paid before re-sending after a timeout
    /// (needs `bank.status_query`).
    pub query_before_retry: bool,
    /// Ask the bank what it has paid before driving a key left "in progress"
    /// (after a restart or a lease takeover) to an end.
    pub query_on_recovery: bool,
    /// Delete the key when the bank stays silent to the last attempt, as
    /// an idempotency library deletes its record when the handler raises
    /// (Powertools for AWS Lambda), instead of leaving it "in progress".
    pub delete_key_on_bank_timeout: bool,
    /// The version this configuration runs as, named in the trace and the
    /// ledger's attribution (`Obs::Handled`, `Obs::EffectBy`): 0 for an
    /// actor without rollouts, which reports none, else 1 for the first
    /// version, 2 for the first rollout's, and so on. Set by `with_rollouts`.
    pub version: u8,
}

impl ServiceConfig {
    /// Whether `key` is one the service deduplicates on.
    pub fn keyed(&self, key: Key) -> bool {
        self.idempotency != Idempotency::None && key.is_some()
    }

    /// Whether it pays what is missing to a total (and so reads first).
    pub fn state_mode(&self) -> bool {
        matches!(self.mode, Mode::State | Mode::StateConditional)
    }
}
