//! What the payment service is configured with and what it holds: its
//! settings, its database (key rows, bookings), its volatile state (bank
//! calls, steps, waiters, the queue, the recovery backlog), its bounds and
//! its timers. The behaviour is in `service.rs` and its other parts.

use super::super::msg::PayStatus;
use super::load::Queued;
use crate::core::dedup::DedupStore;
use crate::core::slots::Slots;
use crate::core::{Key, Op};
use sim::{ActorId, TimeUs};
use std::collections::VecDeque;
use std::fmt;

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
    /// ([`MAX_WORKERS`]), with no load reported.
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Where a key's request stands.
pub enum KeyState {
    /// Claimed: an execution is running (or died with a crash).
    InProgress,
    /// Paid: the answer is known.
    Paid,
}

/// A row of the key table: the request the key stands for, and its state.
#[derive(Clone, Copy, Debug)]
pub struct KeyRow {
    /// The claim it stands for.
    pub op: Op,
    /// The amount of the request it stands for.
    pub amount_eur: u32,
    /// Where it stands.
    pub state: KeyState,
    /// When the current executor claimed the key (the lease's start).
    pub locked_us: TimeUs,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Booking {
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
    /// Its key is still to be recorded by a later step of its execution
    /// (split-booking-first's insert, check-then-act's record on the bank's
    /// confirmation). Kept with the booking because only a crash while it
    /// is set leaves the booking without its key for that reason: a key
    /// recorded and later expired, reaped or deleted, or never recorded
    /// because the bank gave up, leaves one too, with no crash in between.
    pub key_due: bool,
}

/// A booking whose key is not due shows what it always showed.
impl fmt::Debug for Booking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Booking");
        d.field("op", &self.op)
            .field("key", &self.key)
            .field("amount_eur", &self.amount_eur);
        if self.key_due {
            d.field("key_due", &self.key_due);
        }
        d.finish()
    }
}

/// The payment database: key rows and bookings, committed atomically per step.
#[derive(Clone)]
pub struct ServiceStorage {
    /// The idempotency keys it remembers.
    pub keys: DedupStore<Key, KeyRow>,
    /// Payments booked.
    pub bookings: Vec<Booking>,
    /// Status questions asked so far: the last one's number. Kept with
    /// the database, not in memory, because answers to questions asked
    /// before a crash still travel the network after the restart, and a
    /// number used again would let one of them answer a recovery's question.
    pub questions_asked: u32,
}

impl ServiceStorage {
    /// `key` was recorded: no booking of it waits for its key any longer.
    pub(super) fn key_recorded(&mut self, key: Key) {
        for b in self
            .bookings
            .iter_mut()
            .filter(|b| b.key_due && b.key == key)
        {
            b.key_due = false;
        }
    }

    /// One execution of `key` ended without recording it (check-then-act's
    /// bank gave up): its booking waits for nothing. One only: a duplicate
    /// that passed the same check may still be waiting for its bank.
    pub(super) fn key_given_up(&mut self, key: Key) {
        if let Some(b) = self.bookings.iter_mut().find(|b| b.key_due && b.key == key) {
            b.key_due = false;
        }
    }
}

/// A service that never asks the bank shows what it always showed: the
/// question counter appears once there is a question.
impl fmt::Debug for ServiceStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ServiceStorage");
        d.field("keys", &self.keys);
        d.field("bookings", &self.bookings);
        if self.questions_asked > 0 {
            d.field("questions_asked", &self.questions_asked);
        }
        d.finish()
    }
}

/// The client's open request an execution answers: who, which attempt.
pub type Caller = Option<(ActorId, u32)>;

/// Where a bank call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallPhase {
    /// Waiting for the bank's answer to "how much is paid?".
    Query,
    /// Waiting for the transfer's confirmation.
    Transfer,
}

/// One bank call in flight, with the client's open request it answers.
#[derive(Clone, Copy)]
pub struct BankCall {
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
    pub client: Caller,
    pub attempts: u32,
    pub phase: CallPhase,
    /// The number of the status question it last asked: in its query
    /// phase, the only answer it takes.
    pub question: u32,
}

/// A call that never asked shows no question (numbers start at 1).
impl fmt::Debug for BankCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("BankCall");
        d.field("op", &self.op)
            .field("key", &self.key)
            .field("amount_eur", &self.amount_eur)
            .field("client", &self.client)
            .field("attempts", &self.attempts)
            .field("phase", &self.phase);
        if self.question > 0 {
            d.field("question", &self.question);
        }
        d.finish()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// Call the bank (after `processing_ms`).
    CallBank,
    /// Book and call the bank, without looking at the key again.
    BookAndCall,
    /// Record the key "in progress" after the booking (split-booking-first).
    InsertKey,
    /// Answer without calling the bank, once the request's processing is done.
    Answer(PayStatus),
}

/// The second step of an operation that is two steps (two transactions, or a
/// check and a later act).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub kind: StepKind,
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
    pub client: (ActorId, u32),
}

/// A concurrent duplicate held open until its key's execution ends.
#[derive(Clone, Copy, Debug)]
pub struct Waiter {
    pub key: Key,
    pub client: ActorId,
    pub op: Op,
    pub attempt: u32,
}

/// Volatile: open requests, bank calls, pending steps and the queue die
/// with a crash.
#[derive(Clone)]
pub struct ServiceState {
    /// Bank calls in flight.
    pub calls: Slots<BankCall>,
    /// Steps waiting to run (a second transaction, a retry).
    pub steps: Slots<Step>,
    /// Duplicates waiting for a running execution's result.
    pub waiters: Vec<Waiter>,
    /// Requests waiting for a worker, first in first out.
    pub queue: VecDeque<Queued>,
    /// Keys a restart found left "in progress" while every worker was busy
    /// or every bank-call slot was taken or kept for an admitted request,
    /// in the key table's order: the recovery job drives them as workers
    /// free up. A crash loses the list; the next restart finds the keys in
    /// storage again.
    pub recovering: VecDeque<Key>,
    /// Queued requests ahead of the recovery's next key in the line for a
    /// worker: the recovery runs on the same workers as the requests.
    pub queued_before_recovery: usize,
}

/// A service that recovers no more keys than it has workers shows what it
/// always showed: the recovery's backlog appears once it holds a key, its
/// place in the line once requests are ahead of it.
impl fmt::Debug for ServiceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ServiceState");
        d.field("calls", &self.calls)
            .field("steps", &self.steps)
            .field("waiters", &self.waiters)
            .field("queue", &self.queue);
        if !self.recovering.is_empty() {
            d.field("recovering", &self.recovering);
        }
        if self.queued_before_recovery > 0 {
            d.field("queued_before_recovery", &self.queued_before_recovery);
        }
        d.finish()
    }
}

/// Bank calls, pending steps and waiters a service keeps at most.
pub const MAX_BANK_CALLS: usize = 64;
/// Pending steps a service keeps at most.
pub const MAX_STEPS: usize = 64;
pub const MAX_WAITERS: usize = 64;
/// Most workers: each may hold a bank call.
pub const MAX_WORKERS: u32 = MAX_BANK_CALLS as u32;
/// Most requests a service's queue holds.
pub const MAX_QUEUE: u32 = 100_000;
/// The service's timer slots: one per bank call and step, the recovery's
/// and the queue's.
pub const SERVICE_TIMER_SLOTS: u32 = (MAX_BANK_CALLS + MAX_STEPS) as u32 + 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The service's timers.
pub enum ServiceTimer {
    /// The bank did not answer call `slot` in time.
    BankTimeout {
        /// The call's slot.
        slot: u32,
    },
    /// Pending step `slot` runs.
    Step {
        /// The step's slot.
        slot: u32,
    },
    /// A worker and a bank-call slot are free: the recovery drives the
    /// next keys it could not start at the restart.
    Recover,
    /// A worker is free: it takes the next queued request.
    Dequeue,
}

impl fmt::Display for ServiceTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceTimer::BankTimeout { .. } => f.write_str("bank timeout"),
            ServiceTimer::Step { .. } => f.write_str("next step"),
            ServiceTimer::Recover => f.write_str("next key to recover"),
            ServiceTimer::Dequeue => f.write_str("next queued request"),
        }
    }
}

sim::timer_slots!(ServiceTimer {
    BankTimeout { slot },
    Step { slot },
    Recover,
    Dequeue,
});
