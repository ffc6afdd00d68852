//! The payment service: it deduplicates requests by their key (or not, or
//! badly), books the payment and has the bank transfer the money. Every
//! handler call is one transaction; where the real design has two, the model
//! has two steps, so a crash can fall between them.

#[path = "service_bank.rs"]
mod bank_calls;
#[cfg(test)]
#[path = "service_bench.rs"]
mod bench;
#[path = "service_keys.rs"]
mod keys;
#[path = "service_load.rs"]
mod load;

use super::msg::{Msg, PayStatus, TransferResult};
use super::situations as sit;
use crate::core::dedup::{DedupStore, Lookup};
use crate::core::slots::Slots;
use crate::core::{Carries, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx, TimeUs, Timer};
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;

pub use load::Queued;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Booking {
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
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
    /// Keys a restart found left "in progress" while every bank-call slot
    /// was taken or kept for an admitted request, in the key table's order: the recovery job drives them
    /// as calls end. A crash loses the list; the next restart finds the
    /// keys in storage again.
    pub recovering: VecDeque<Key>,
}

/// A service that recovers no more keys than it has calls shows what it
/// always showed: the recovery's backlog appears once it holds a key.
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
    /// A bank-call slot is free: the recovery drives the next keys it
    /// could not start at the restart.
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

impl Timer for ServiceTimer {
    fn slot(&self) -> u32 {
        match *self {
            ServiceTimer::BankTimeout { slot } => slot,
            ServiceTimer::Step { slot } => MAX_BANK_CALLS as u32 + slot,
            ServiceTimer::Recover => SERVICE_TIMER_SLOTS - 2,
            ServiceTimer::Dequeue => SERVICE_TIMER_SLOTS - 1,
        }
    }
}

/// The payment service: books payments and has the bank transfer them.
pub struct Service<W> {
    /// Its configuration.
    pub cfg: ServiceConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Service<W> {
    /// A service configured by `cfg`.
    pub fn new(cfg: ServiceConfig) -> Self {
        Service {
            cfg,
            wire: PhantomData,
        }
    }

    fn keyed(&self, key: Key) -> bool {
        self.cfg.idempotency != Idempotency::None && key.is_some()
    }
}

impl<W: Carries<Msg>> Service<W> {
    fn reply(
        caller: (ActorId, u32),
        op: Op,
        status: PayStatus,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let reply = Msg::PayReply {
            op,
            attempt: caller.1,
            status,
            amount_eur,
        };
        ctx.send(caller.0, W::wrap(reply));
    }

    /// Runs `step` after `processing_ms`, as its own step; false when no
    /// slot is free. A second transaction (split-booking-first's key insert)
    /// waits as long as any other second step: with the key insert at the
    /// same instant, only a crash could fall between the two transactions,
    /// never a concurrent duplicate, which in a real service finds the
    /// booking committed and no key yet.
    fn schedule(&self, st: &mut ServiceState, step: Step, ctx: &mut impl Ctx<Self>) -> bool {
        let Some(slot) = st.steps.insert(step) else {
            return false;
        };
        ctx.set_timer(
            ServiceTimer::Step { slot: slot as u32 },
            self.cfg.processing_us,
        );
        true
    }

    /// Calls the bank now, or after `processing_ms` as a later step.
    fn call_after_processing(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        step: Step,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        if self.cfg.processing_us == 0 {
            return self.call_bank(
                st,
                &mut s.questions_asked,
                step.op,
                step.key,
                step.amount_eur,
                Some(step.client),
                false,
                ctx,
            );
        }
        self.schedule(
            st,
            Step {
                kind: StepKind::CallBank,
                ..step
            },
            ctx,
        )
    }

    /// Whether a keyed request's first step can begin: its bank call now,
    /// or the step it is due in after its processing.
    fn can_start(&self, st: &ServiceState) -> bool {
        let step_now =
            self.cfg.processing_us == 0 && self.cfg.idempotency != Idempotency::SplitKeyFirst;
        if step_now {
            !st.calls.is_full()
        } else {
            !st.steps.is_full()
        }
    }

    /// Inserts a key row, reaping expired rows first, and reports the store's size.
    fn insert_key(&self, s: &mut ServiceStorage, key: Key, row: KeyRow, ctx: &mut impl Ctx<Self>) {
        let now = ctx.now_us();
        if s.keys.reap(now) > 0 {
            ctx.reached(sit::KEY_REAPED);
        }
        s.keys.insert(key, row, now);
        ctx.observe(Obs::DedupStore {
            keys: s.keys.len() as u32,
            bound: self.cfg.max_keys,
        });
    }

    fn book(s: &mut ServiceStorage, op: Op, key: Key, amount_eur: u32) {
        s.bookings.push(Booking {
            op,
            key,
            amount_eur,
        });
    }

    /// A worker took the request: look its key up and act on it.
    #[allow(clippy::too_many_arguments)]
    fn on_pay(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        caller: (ActorId, u32),
        op: Op,
        key: Key,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let step = |kind| Step {
            kind,
            op,
            key,
            amount_eur,
            client: caller,
        };
        if !self.keyed(key) {
            if self.cfg.mode == Mode::Action {
                Self::book(s, op, key, amount_eur);
            }
            if !self.call_after_processing(st, s, step(StepKind::CallBank), ctx) {
                self.shed(caller, op, ctx);
            }
            return;
        }
        match s.keys.lookup(&key, ctx.now_us()) {
            Lookup::Live(_) => return self.on_known_key(st, s, key, caller, op, amount_eur, ctx),
            Lookup::Expired => {
                // The key is forgotten: this retry is a new request.
                ctx.reached(sit::RETRY_AFTER_KEY_EXPIRED);
                s.keys.remove(&key);
            }
            Lookup::Absent => {}
        }
        let now = ctx.now_us();
        let row = KeyRow {
            op,
            amount_eur,
            state: KeyState::InProgress,
            locked_us: now,
        };
        ctx.observe(Obs::ExecStart { key });
        let started = match self.cfg.idempotency {
            Idempotency::None => unreachable!("keyed requests only"),
            // The gap: nothing is recorded until the payment is done.
            Idempotency::CheckThenAct => self.schedule(st, step(StepKind::BookAndCall), ctx),
            // The request is admitted before its key is claimed, in this
            // same step: a 503 after the claim would leave a key "in
            // progress" that nothing drives and every retry is refused on.
            Idempotency::ClaimSameTx | Idempotency::SplitKeyFirst if !self.can_start(st) => false,
            Idempotency::ClaimSameTx => {
                self.insert_key(s, key, row, ctx);
                Self::book(s, op, key, amount_eur);
                self.call_after_processing(st, s, step(StepKind::CallBank), ctx)
            }
            Idempotency::SplitKeyFirst => {
                let handled = KeyRow {
                    state: KeyState::Paid,
                    ..row
                };
                self.insert_key(s, key, handled, ctx);
                self.schedule(st, step(StepKind::BookAndCall), ctx)
            }
            // Both transactions need their slot before the first runs: a
            // 503 says "not executed", which after the transfer is false.
            // The key insert holds its worker past the bank call (`busy`),
            // so admission keeps the slots free; this guards the rest.
            Idempotency::SplitBookingFirst if st.calls.is_full() || st.steps.is_full() => false,
            Idempotency::SplitBookingFirst => {
                Self::book(s, op, key, amount_eur);
                let asked = &mut s.questions_asked;
                let called =
                    self.call_bank(st, asked, op, key, amount_eur, Some(caller), false, ctx);
                let scheduled = self.schedule(st, step(StepKind::InsertKey), ctx);
                debug_assert!(called && scheduled, "both slots were free");
                true
            }
        };
        if !started {
            ctx.observe(Obs::ExecEnd { key });
            self.shed(caller, op, ctx);
        }
    }

    fn on_step(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        slot: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(step) = st.steps.take(slot) else {
            return;
        };
        let ok = match step.kind {
            StepKind::Answer(status) => {
                Self::reply(step.client, step.op, status, step.amount_eur, ctx);
                true
            }
            StepKind::CallBank | StepKind::BookAndCall => {
                if step.kind == StepKind::BookAndCall {
                    Self::book(s, step.op, step.key, step.amount_eur);
                }
                // The request was admitted with its key claimed (or its
                // booking made): a 503 now would not be true. Admission and
                // the recovery keep a call free for every such step.
                let called = self.call_bank(
                    st,
                    &mut s.questions_asked,
                    step.op,
                    step.key,
                    step.amount_eur,
                    Some(step.client),
                    false,
                    ctx,
                );
                debug_assert!(called, "a bank call was taken from an admitted request");
                called
            }
            StepKind::InsertKey => {
                // The bank may have answered already; then the key is recorded.
                if s.keys.get(&step.key, ctx.now_us()).is_none() {
                    let row = KeyRow {
                        op: step.op,
                        amount_eur: step.amount_eur,
                        state: KeyState::InProgress,
                        locked_us: ctx.now_us(),
                    };
                    self.insert_key(s, step.key, row, ctx);
                }
                true
            }
        };
        if !ok {
            if self.keyed(step.key) {
                ctx.observe(Obs::ExecEnd { key: step.key });
            }
            self.shed(step.client, step.op, ctx);
        }
    }
}

impl<W> crate::core::Ends for Service<W> {
    const ROLES: &'static [&'static str] = &["service"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("pay-reply", "client"),
        ("status-reply", "client"),
        ("transfer", "bank"),
        ("status-query", "bank"),
    ];
    const ANSWERS: &'static [(&'static str, &'static str)] =
        &[("pay-reply", "pay"), ("status-reply", "status-query")];

    /// It asks the bank what is paid only before a retry, on recovery, or
    /// as every call's first step in a "state" mode.
    fn sends(&self, kind: &str, role: &str) -> bool {
        let c = &self.cfg;
        let queries = c.query_before_retry
            || c.query_on_recovery
            || matches!(c.mode, Mode::State | Mode::StateConditional);
        (kind, role) != ("status-query", "bank") || queries
    }
}

impl<W: Carries<Msg>> Actor for Service<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ServiceTimer;
    type State = ServiceState;
    type Storage = ServiceStorage;

    fn timer_slots(&self) -> u32 {
        SERVICE_TIMER_SLOTS
    }

    fn reset_storage(&self, storage: &mut Option<ServiceStorage>) {
        let s = storage.get_or_insert_with(|| ServiceStorage {
            keys: DedupStore::new(self.cfg.retention_us),
            bookings: Vec::new(),
            questions_asked: 0,
        });
        self.reset_storage_in_place(s);
    }

    fn reset_storage_in_place(&self, s: &mut ServiceStorage) -> bool {
        s.keys.reset(self.cfg.retention_us);
        s.bookings.clear();
        s.questions_asked = 0;
        true
    }

    fn reset_state_in_place(&self, st: &mut ServiceState) -> bool {
        st.calls.clear();
        st.steps.clear();
        st.waiters.clear();
        st.queue.clear();
        st.recovering.clear();
        true
    }

    fn reset_state(&self, state: &mut Option<ServiceState>) {
        match state {
            Some(st) => {
                self.reset_state_in_place(st);
            }
            None => {
                *state = Some(ServiceState {
                    calls: Slots::new(MAX_BANK_CALLS),
                    steps: Slots::new(MAX_STEPS),
                    waiters: Vec::new(),
                    queue: VecDeque::new(),
                    recovering: VecDeque::new(),
                })
            }
        }
    }

    fn on_start(&self, st: &mut ServiceState, s: &mut ServiceStorage, ctx: &mut impl Ctx<Self>) {
        if ctx.restarted() {
            self.recover(st, s, ctx);
        }
    }

    fn on_msg(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        match msg.peek() {
            Some(&Msg::Pay {
                op,
                attempt,
                key,
                amount_eur,
                timeout_ms,
            }) => {
                let q = self.queued((from, attempt), op, key, amount_eur, timeout_ms, ctx);
                self.admit(st, s, q, ctx);
            }
            Some(&Msg::TransferDone {
                op, key, result, ..
            }) => match result {
                TransferResult::Done => self.on_transfer_done(st, s, op, key, ctx),
                TransferResult::Refused { paid_eur } => {
                    self.on_refused(st, s, op, key, paid_eur, ctx)
                }
            },
            Some(&Msg::StatusReply {
                op,
                question,
                paid_eur,
            }) => self.on_status(st, s, (op, question), paid_eur, ctx),
            Some(&Msg::StatusQuery { op, question }) => {
                self.answer_status(s, from, (op, question), ctx)
            }
            _ => {}
        }
        self.pump(st, ctx);
    }

    fn on_timer(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        timer: ServiceTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        match timer {
            ServiceTimer::Step { slot } => self.on_step(st, s, slot as usize, ctx),
            ServiceTimer::BankTimeout { slot } => self.on_bank_timeout(st, s, slot as usize, ctx),
            ServiceTimer::Recover => self.recover_next(st, s, ctx),
            ServiceTimer::Dequeue => self.dequeue(st, s, ctx),
        }
        self.pump(st, ctx);
    }
}
