//! The payment service: it deduplicates requests by their key (or not, or
//! badly), books the payment and has the bank transfer the money. Every
//! handler call is one transaction; where the real design has two, the model
//! has two steps, so a crash can fall between them.

#[path = "service_bank.rs"]
mod bank_calls;

use super::msg::{Msg, PayStatus, TransferResult};
use super::situations as sit;
use super::SERVICE_LAYER;
use crate::core::dedup::{DedupStore, Lookup};
use crate::core::slots::Slots;
use crate::core::{Carries, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx, TimeUs, Timer};
use std::fmt;
use std::marker::PhantomData;

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
pub struct ServiceConfig {
    pub bank: ActorId,
    pub idempotency: Idempotency,
    /// Keys older than this are forgotten; 0 keeps them forever.
    pub retention_us: TimeUs,
    /// A known key with another request (claim or amount) is refused (422).
    pub fingerprint_check: bool,
    /// Hand the key on to the bank, which may deduplicate on it.
    pub pass_key_to_bank: bool,
    pub bank_timeout_us: TimeUs,
    pub bank_max_attempts: u32,
    /// An "in progress" key older than this may be taken over; 0: never.
    pub lease_us: TimeUs,
    pub concurrent: Concurrent,
    /// Work between accepting a request and calling the bank.
    pub processing_us: TimeUs,
    /// Capacity of the dedup store, judged by `dedup-store-bounded`; 0: none.
    pub max_keys: u32,
    /// Requests the service works on at once; more are shed with 503.
    pub max_in_flight: u32,
    pub mode: Mode,
    /// Ask the bank what it has paid before re-sending after a timeout
    /// (needs `bank.status_query`).
    pub query_before_retry: bool,
    /// Ask the bank what it has paid before driving a key left "in progress"
    /// (after a restart or a lease takeover) to an end.
    pub query_on_recovery: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyState {
    InProgress,
    Paid,
}

/// A row of the key table: the request the key stands for, and its state.
#[derive(Clone, Copy, Debug)]
pub struct KeyRow {
    pub op: Op,
    pub amount_eur: u32,
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
#[derive(Clone, Debug)]
pub struct ServiceStorage {
    pub keys: DedupStore<Key, KeyRow>,
    pub bookings: Vec<Booking>,
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
#[derive(Clone, Copy, Debug)]
pub struct BankCall {
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
    pub client: Caller,
    pub attempts: u32,
    pub phase: CallPhase,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// Call the bank (after `processing_ms`).
    CallBank,
    /// Book and call the bank, without looking at the key again.
    BookAndCall,
    /// Record the key "in progress" after the booking (split-booking-first).
    InsertKey,
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

/// Volatile: open requests, bank calls and pending steps die with a crash.
#[derive(Clone, Debug)]
pub struct ServiceState {
    pub calls: Slots<BankCall>,
    pub steps: Slots<Step>,
    pub waiters: Vec<Waiter>,
}

/// Bank calls, pending steps and waiters a service keeps at most.
pub const MAX_BANK_CALLS: usize = 64;
pub const MAX_STEPS: usize = 64;
pub const MAX_WAITERS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceTimer {
    /// The bank did not answer call `slot` in time.
    BankTimeout { slot: u32 },
    /// Pending step `slot` runs.
    Step { slot: u32 },
}

impl fmt::Display for ServiceTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceTimer::BankTimeout { .. } => f.write_str("bank timeout"),
            ServiceTimer::Step { .. } => f.write_str("next step"),
        }
    }
}

impl Timer for ServiceTimer {
    fn slot(&self) -> u32 {
        match *self {
            ServiceTimer::BankTimeout { slot } => slot,
            ServiceTimer::Step { slot } => MAX_BANK_CALLS as u32 + slot,
        }
    }
}

pub struct Service<W> {
    pub cfg: ServiceConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Service<W> {
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

    /// Runs `step` after `processing_ms` (at once for a key insert), as its
    /// own step; false when no slot is free.
    fn schedule(&self, st: &mut ServiceState, step: Step, ctx: &mut impl Ctx<Self>) -> bool {
        let Some(slot) = st.steps.insert(step) else {
            return false;
        };
        let delay_us = match step.kind {
            StepKind::InsertKey => 0,
            StepKind::CallBank | StepKind::BookAndCall => self.cfg.processing_us,
        };
        ctx.set_timer(ServiceTimer::Step { slot: slot as u32 }, delay_us);
        true
    }

    /// Calls the bank now, or after `processing_ms` as a later step.
    fn call_after_processing(
        &self,
        st: &mut ServiceState,
        step: Step,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        if self.cfg.processing_us == 0 {
            return self.call_bank(
                st,
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
        ctx.observe(Obs::Received {
            layer: &SERVICE_LAYER,
            op,
            key,
        });
        // Load shedding at the front door: a full service answers 503 before
        // it looks at the key, so nothing was executed and the client knows it.
        let in_flight = st.calls.busy() + st.steps.busy();
        if self.cfg.max_in_flight != 0 && in_flight >= self.cfg.max_in_flight as usize {
            ctx.reached(sit::OVERLOADED);
            Self::reply(caller, op, PayStatus::Overloaded, 0, ctx);
            return;
        }
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
            if !self.call_after_processing(st, step(StepKind::CallBank), ctx) {
                Self::reply(caller, op, PayStatus::Overloaded, 0, ctx);
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
            Idempotency::ClaimSameTx => {
                self.insert_key(s, key, row, ctx);
                Self::book(s, op, key, amount_eur);
                self.call_after_processing(st, step(StepKind::CallBank), ctx)
            }
            Idempotency::SplitKeyFirst => {
                let handled = KeyRow {
                    state: KeyState::Paid,
                    ..row
                };
                self.insert_key(s, key, handled, ctx);
                self.schedule(st, step(StepKind::BookAndCall), ctx)
            }
            Idempotency::SplitBookingFirst => {
                Self::book(s, op, key, amount_eur);
                self.call_bank(st, op, key, amount_eur, Some(caller), false, ctx)
                    && self.schedule(st, step(StepKind::InsertKey), ctx)
            }
        };
        if !started {
            ctx.observe(Obs::ExecEnd { key });
            Self::reply(caller, op, PayStatus::Overloaded, 0, ctx);
        }
    }

    /// A request whose key has a live row.
    #[allow(clippy::too_many_arguments)]
    fn on_known_key(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        key: Key,
        caller: (ActorId, u32),
        op: Op,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let now = ctx.now_us();
        let row = *s.keys.get(&key, now).expect("the caller found a live row");
        if row.op != op {
            ctx.reached(sit::KEY_COLLISION);
        }
        // The fingerprint covers the whole request: the claim and the amount.
        if self.cfg.fingerprint_check && (row.op, row.amount_eur) != (op, amount_eur) {
            ctx.reached(sit::PAYLOAD_MISMATCH_REJECTED);
            Self::reply(caller, op, PayStatus::Mismatch, 0, ctx);
            return;
        }
        match row.state {
            KeyState::Paid => {
                ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                // The stored result is replayed; it answers the request, whatever it asked.
                Self::reply(caller, op, PayStatus::Paid, row.amount_eur, ctx);
            }
            KeyState::InProgress
                if self.cfg.lease_us > 0 && now - row.locked_us >= self.cfg.lease_us =>
            {
                // The lease ran out: the executor is presumed dead, this request takes over.
                ctx.reached(sit::LEASE_EXPIRED_TAKEOVER);
                if let Lookup::Live(r) = s.keys.lookup(&key, now) {
                    r.locked_us = now;
                }
                ctx.observe(Obs::ExecStart { key });
                let query_first = self.cfg.query_on_recovery;
                if !self.call_bank(
                    st,
                    row.op,
                    key,
                    row.amount_eur,
                    Some(caller),
                    query_first,
                    ctx,
                ) {
                    ctx.observe(Obs::ExecEnd { key });
                    Self::reply(caller, op, PayStatus::Overloaded, 0, ctx);
                }
            }
            KeyState::InProgress => {
                ctx.reached(sit::CONCURRENT_DUPLICATE);
                let running = st.calls.find(|c| c.key == key).is_some()
                    || st.steps.find(|p| p.key == key).is_some();
                let wait = self.cfg.concurrent == Concurrent::Wait
                    && st.waiters.len() < MAX_WAITERS
                    && running;
                if wait {
                    st.waiters.push(Waiter {
                        key,
                        client: caller.0,
                        op,
                        attempt: caller.1,
                    });
                } else {
                    Self::reply(caller, op, PayStatus::InProgress, 0, ctx);
                }
            }
        }
    }

    fn answer_waiters(
        &self,
        st: &mut ServiceState,
        key: Key,
        status: PayStatus,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        if !key.is_some() {
            return;
        }
        let mut i = 0;
        while i < st.waiters.len() {
            let w = st.waiters[i];
            if w.key == key {
                ctx.reached(sit::DUPLICATE_WAITED);
                Self::reply((w.client, w.attempt), w.op, status, amount_eur, ctx);
                st.waiters.swap_remove(i);
            } else {
                i += 1;
            }
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
            StepKind::CallBank | StepKind::BookAndCall => {
                if step.kind == StepKind::BookAndCall {
                    Self::book(s, step.op, step.key, step.amount_eur);
                }
                self.call_bank(
                    st,
                    step.op,
                    step.key,
                    step.amount_eur,
                    Some(step.client),
                    false,
                    ctx,
                )
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
            Self::reply(step.client, step.op, PayStatus::Overloaded, 0, ctx);
        }
    }

    /// After a restart: a crash between the two transactions of a split
    /// operation shows in storage; keys left "in progress" are driven to an end.
    fn recover(&self, st: &mut ServiceState, s: &mut ServiceStorage, ctx: &mut impl Ctx<Self>) {
        ctx.observe(Obs::ExecutorsLost);
        let now = ctx.now_us();
        let booking_without_key = matches!(
            self.cfg.idempotency,
            Idempotency::SplitBookingFirst | Idempotency::CheckThenAct
        ) && s
            .bookings
            .iter()
            .any(|b| self.keyed(b.key) && s.keys.get(&b.key, now).is_none());
        let key_without_booking = self.cfg.idempotency == Idempotency::SplitKeyFirst
            && s.keys
                .iter()
                .any(|(k, _)| !s.bookings.iter().any(|b| b.key == *k));
        if booking_without_key || key_without_booking {
            ctx.reached(sit::CRASH_BETWEEN_STEPS);
        }
        // In place, in the table's order: nothing collected, nothing allocated.
        for (key, e, live) in s.keys.iter_mut_at(now) {
            if e.value.state != KeyState::InProgress {
                continue;
            }
            let (key, row) = (*key, e.value);
            ctx.reached(sit::RECOVERED_AFTER_RESTART);
            if live {
                e.value.locked_us = now;
            }
            ctx.observe(Obs::ExecStart { key });
            let query_first = self.cfg.query_on_recovery;
            if !self.call_bank(st, row.op, key, row.amount_eur, None, query_first, ctx) {
                ctx.observe(Obs::ExecEnd { key });
            }
        }
    }
}

impl<W: Carries<Msg>> Actor for Service<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ServiceTimer;
    type State = ServiceState;
    type Storage = ServiceStorage;

    fn timer_slots(&self) -> u32 {
        (MAX_BANK_CALLS + MAX_STEPS) as u32
    }

    fn reset_storage(&self, storage: &mut Option<ServiceStorage>) {
        let s = storage.get_or_insert_with(|| ServiceStorage {
            keys: DedupStore::new(self.cfg.retention_us),
            bookings: Vec::new(),
        });
        s.keys.reset(self.cfg.retention_us);
        s.bookings.clear();
    }

    fn reset_state(&self, state: &mut Option<ServiceState>) {
        match state {
            Some(st) => {
                st.calls.clear();
                st.steps.clear();
                st.waiters.clear();
            }
            None => {
                *state = Some(ServiceState {
                    calls: Slots::new(MAX_BANK_CALLS),
                    steps: Slots::new(MAX_STEPS),
                    waiters: Vec::new(),
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
            }) => self.on_pay(st, s, (from, attempt), op, key, amount_eur, ctx),
            Some(&Msg::TransferDone { op, key, result }) => match result {
                TransferResult::Done => self.on_transfer_done(st, s, op, key, ctx),
                TransferResult::Refused { .. } => self.on_refused(st, op, ctx),
            },
            Some(&Msg::StatusReply { op, paid_eur }) => self.on_status(st, s, op, paid_eur, ctx),
            _ => {}
        }
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
            ServiceTimer::BankTimeout { slot } => self.on_bank_timeout(st, slot as usize, ctx),
        }
    }
}
