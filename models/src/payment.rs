//! The payment chain of the source articles: the claims system (client) asks
//! the payment service to pay claim 4711; the service books it and asks the
//! bank (provider) to transfer. Each actor's design variants live in its config.

use crate::ledger::{AttemptOutcome, Ending, Obs, OpId, Site};
use crate::msg::{Key, Msg, PayStatus};
use crate::situation as sit;
use sim::{ActorId, Ctx, TimeUs, US_PER_MS};

type Cx<'a, 'b> = &'a mut Ctx<'b, Msg, Obs>;

// ---------------------------------------------------------------- client

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPolicy {
    /// One key per business operation, reused on every retry.
    Stable,
    /// A fresh key per attempt: the key protects nothing.
    PerAttempt,
    /// Derived from the clock, bucketed: operations started together collide.
    Timestamp {
        bucket_ms: u64,
    },
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts including the first; 0 means no cap (a mistake).
    pub max_attempts: u32,
    pub base_ms: u64,
    pub cap_ms: u64,
    /// 1 = fixed interval, 2 = exponential.
    pub multiplier: u64,
    pub jitter: Jitter,
    /// The operation must end within this time from its start; 0 = unbounded.
    pub window_ms: u64,
    /// Retry a final error too (a mistake: a rejected input never becomes valid).
    pub retry_final_errors: bool,
    /// Record what was given up, or drop it silently (a mistake).
    pub dead_letter: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSpec {
    pub op: OpId,
    pub amount_eur: u32,
    pub start_ms: u64,
    /// A retry that sends another amount under the same key (a client bug).
    pub retry_amount_eur: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    pub service: ActorId,
    pub timeout_ms: u64,
    pub key: KeyPolicy,
    pub retry: RetryPolicy,
    pub ops: Vec<OpSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpStatus {
    NotStarted,
    Pending,
    Done,
}

/// The claims system's own database: survives its crashes.
#[derive(Clone, Debug, Default)]
pub struct ClientStorage {
    pub ops: Vec<ClientOp>,
}

#[derive(Clone, Copy, Debug)]
pub struct ClientOp {
    pub status: OpStatus,
    pub attempts: u32,
    pub started_us: TimeUs,
    pub last_backoff_ms: u64,
}

/// Most operations one client runs; scenario validation enforces it.
pub const MAX_CLIENT_OPS: usize = 16;

/// Volatile: which attempt each operation waits on (its open connection).
/// A fixed array, so a (re)start allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct ClientState {
    pub awaiting: [Option<u32>; MAX_CLIENT_OPS],
}

pub struct Client {
    pub cfg: ClientConfig,
}

// Timer tags: 2*i is operation i's reply timeout, 2*i+1 its next attempt.
fn timeout_tag(i: usize) -> u32 {
    (2 * i) as u32
}
fn attempt_tag(i: usize) -> u32 {
    (2 * i + 1) as u32
}

impl Client {
    pub fn reset_storage(&self, s: &mut ClientStorage) {
        s.ops.clear();
        s.ops.extend(self.cfg.ops.iter().map(|_| ClientOp {
            status: OpStatus::NotStarted,
            attempts: 0,
            started_us: 0,
            last_backoff_ms: 0,
        }));
    }

    pub fn on_start(&self, s: &mut ClientStorage, ctx: Cx) -> ClientState {
        assert_eq!(s.ops.len(), self.cfg.ops.len());
        for (i, (spec, op)) in self.cfg.ops.iter().zip(&s.ops).enumerate() {
            match op.status {
                OpStatus::NotStarted => {
                    let at_us = spec.start_ms * US_PER_MS;
                    ctx.set_timer(attempt_tag(i), at_us.saturating_sub(ctx.now_us()));
                }
                OpStatus::Pending | OpStatus::Done => {}
            }
        }
        // After a restart the open connection is gone: the last attempt's outcome
        // is unknown, so it is retried, but only within the cap and the window.
        for i in 0..s.ops.len() {
            if s.ops[i].status == OpStatus::Pending {
                ctx.reached(sit::RECOVERED_AFTER_RESTART);
                self.retry_or_give_up(s, i, ctx);
            }
        }
        assert!(self.cfg.ops.len() <= MAX_CLIENT_OPS, "too many operations");
        ClientState::default()
    }

    pub fn key_for(&self, i: usize, attempt: u32, started_us: TimeUs) -> Key {
        let op = self.cfg.ops[i].op;
        match self.cfg.key {
            KeyPolicy::Stable => Key::Op { op, n: 1 },
            KeyPolicy::PerAttempt => Key::Op { op, n: attempt },
            KeyPolicy::Timestamp { bucket_ms } => Key::Time {
                bucket: started_us / (bucket_ms.max(1) * US_PER_MS),
            },
            KeyPolicy::None => Key::None,
        }
    }

    fn send_attempt(&self, st: &mut ClientState, s: &mut ClientStorage, i: usize, ctx: Cx) {
        let spec = self.cfg.ops[i];
        let op = &mut s.ops[i];
        if op.status == OpStatus::NotStarted {
            op.status = OpStatus::Pending;
            op.started_us = ctx.now_us();
            ctx.observe(Obs::Intent {
                op: spec.op,
                amount: spec.amount_eur,
                window_ms: self.cfg.retry.window_ms,
            });
        } else {
            ctx.reached(sit::CLIENT_RETRIED);
        }
        debug_assert_eq!(op.status, OpStatus::Pending);
        op.attempts += 1;
        let attempt = op.attempts;
        let amount_eur = match spec.retry_amount_eur {
            Some(a) if attempt > 1 => a,
            _ => spec.amount_eur,
        };
        let key = self.key_for(i, attempt, op.started_us);
        st.awaiting[i] = Some(attempt);
        ctx.send(
            self.cfg.service,
            Msg::Pay {
                op: spec.op,
                attempt,
                key,
                amount_eur,
            },
        );
        ctx.set_timer(timeout_tag(i), self.cfg.timeout_ms * US_PER_MS);
    }

    /// The wait before the next attempt, after `op.attempts` attempts: the
    /// formulas of AWS's backoff simulator (`expo(n) = min(cap, base * m^n)`).
    pub fn backoff_ms(&self, op: &ClientOp, ctx: Cx) -> u64 {
        let r = &self.cfg.retry;
        assert!(op.attempts >= 1, "a backoff follows an attempt");
        let cap_ms = r.cap_ms.max(r.base_ms);
        let exp = r
            .base_ms
            .saturating_mul(
                r.multiplier
                    .max(1)
                    .saturating_pow(op.attempts.saturating_sub(1)),
            )
            .min(cap_ms);
        let delay_ms = match r.jitter {
            Jitter::None => exp,
            Jitter::Full => ctx.range(0, exp),
            Jitter::Equal => exp / 2 + ctx.range(0, exp - exp / 2),
            // sleep = min(cap, U(base, 3 * previous sleep)), the first sleep being base.
            Jitter::Decorrelated => {
                let prev = op.last_backoff_ms.max(r.base_ms);
                ctx.range(r.base_ms, prev.saturating_mul(3)).min(cap_ms)
            }
        };
        debug_assert!(delay_ms <= cap_ms);
        delay_ms
    }

    fn end(&self, s: &mut ClientStorage, i: usize, ending: Ending, ctx: Cx) {
        debug_assert_eq!(s.ops[i].status, OpStatus::Pending);
        s.ops[i].status = OpStatus::Done;
        if ending == Ending::DeadLetter {
            ctx.reached(sit::DEAD_LETTERED);
        }
        ctx.observe(Obs::Ended {
            op: self.cfg.ops[i].op,
            ending,
        });
    }

    /// After an attempt that may be retried: retry within the policy or give up.
    fn retry_or_give_up(&self, s: &mut ClientStorage, i: usize, ctx: Cx) {
        let r = self.cfg.retry;
        let op = s.ops[i];
        let capped = r.max_attempts != 0 && op.attempts >= r.max_attempts;
        let delay_ms = if capped { 0 } else { self.backoff_ms(&op, ctx) };
        let next_us = ctx.now_us() + delay_ms * US_PER_MS;
        let out_of_window = r.window_ms != 0 && next_us - op.started_us > r.window_ms * US_PER_MS;
        if capped || out_of_window {
            let ending = if r.dead_letter {
                Ending::DeadLetter
            } else {
                Ending::Abandoned
            };
            self.end(s, i, ending, ctx);
            return;
        }
        s.ops[i].last_backoff_ms = delay_ms;
        ctx.set_timer(attempt_tag(i), delay_ms * US_PER_MS);
    }

    pub fn on_msg(&self, st: &mut ClientState, s: &mut ClientStorage, msg: Msg, ctx: Cx) {
        let Msg::PayReply {
            op,
            attempt,
            status,
            result_op,
            result_eur,
        } = msg
        else {
            return;
        };
        let Some(i) = self.cfg.ops.iter().position(|o| o.op == op) else {
            return;
        };
        // A reply to an attempt we stopped waiting for arrives on a closed connection.
        if st.awaiting[i] != Some(attempt) || s.ops[i].status != OpStatus::Pending {
            return;
        }
        st.awaiting[i] = None;
        ctx.cancel_timer(timeout_tag(i));
        match status {
            PayStatus::Paid => {
                ctx.observe(Obs::Attempt {
                    op,
                    attempt,
                    outcome: AttemptOutcome::Ok,
                });
                let spec = self.cfg.ops[i];
                let asked_eur = match spec.retry_amount_eur {
                    Some(a) if attempt > 1 => a,
                    _ => spec.amount_eur,
                };
                ctx.observe(Obs::ToldSuccess {
                    op,
                    amount: asked_eur,
                    result_op,
                    result_amount: result_eur,
                });
                self.end(s, i, Ending::Success, ctx);
            }
            PayStatus::InProgress | PayStatus::ServerError => {
                ctx.observe(Obs::Attempt {
                    op,
                    attempt,
                    outcome: AttemptOutcome::Fail,
                });
                self.retry_or_give_up(s, i, ctx);
            }
            PayStatus::Mismatch => {
                ctx.observe(Obs::Attempt {
                    op,
                    attempt,
                    outcome: AttemptOutcome::Rejected,
                });
                if self.cfg.retry.retry_final_errors {
                    self.retry_or_give_up(s, i, ctx);
                } else {
                    self.end(s, i, Ending::FinalFailure, ctx);
                }
            }
        }
    }

    pub fn on_timer(&self, st: &mut ClientState, s: &mut ClientStorage, tag: u32, ctx: Cx) {
        let i = (tag / 2) as usize;
        assert!(i < self.cfg.ops.len(), "timer for an unknown operation");
        if s.ops[i].status == OpStatus::Done {
            return;
        }
        if tag % 2 == 1 {
            self.send_attempt(st, s, i, ctx);
            return;
        }
        // No answer within the timeout: the outcome is unknown, not failed.
        let attempt = st.awaiting[i]
            .take()
            .expect("a timeout belongs to an attempt");
        ctx.observe(Obs::Attempt {
            op: self.cfg.ops[i].op,
            attempt,
            outcome: AttemptOutcome::Unknown,
        });
        self.retry_or_give_up(s, i, ctx);
    }
}

// ---------------------------------------------------------------- service

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
    /// "Claim 4711 is paid 1,200 EUR in total": the bank pays what is missing.
    State,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceConfig {
    pub bank: ActorId,
    pub idempotency: Idempotency,
    /// Keys older than this are forgotten; 0 keeps them forever.
    pub retention_ms: u64,
    /// Same key with another amount is rejected (422) instead of answered.
    pub fingerprint_check: bool,
    /// Hand the key on to the bank, which may deduplicate on it.
    pub pass_key_to_bank: bool,
    pub bank_timeout_ms: u64,
    pub bank_max_attempts: u32,
    /// An "in progress" key older than this may be taken over; 0: never.
    pub lease_ms: u64,
    pub concurrent: Concurrent,
    /// Work between accepting a request and calling the bank.
    pub processing_ms: u64,
    /// Capacity of the dedup store, judged by `dedup-store-bounded`; 0: none.
    pub max_keys: u32,
    /// Requests the service works on at once; more are shed with 503 (0: no limit).
    pub max_in_flight: u32,
    pub mode: Mode,
    /// Ask the bank what it has paid before re-sending (needs `bank.status_query`).
    pub query_before_retry: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyState {
    InProgress,
    Paid,
}

#[derive(Clone, Copy, Debug)]
pub struct KeyRow {
    pub key: Key,
    pub op: OpId,
    pub amount_eur: u32,
    pub state: KeyState,
    pub created_us: TimeUs,
    /// When the current executor claimed the key (the lease's start).
    pub locked_us: TimeUs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Booking {
    pub op: OpId,
    pub key: Key,
    pub amount_eur: u32,
}

/// The payment database: key rows and bookings, committed atomically per step.
#[derive(Clone, Debug, Default)]
pub struct ServiceStorage {
    pub keys: Vec<KeyRow>,
    pub bookings: Vec<Booking>,
}

/// The client's open request an execution answers: who, which attempt.
type Caller = Option<(ActorId, u32)>;

/// One bank call in flight, with the client's open request it answers.
#[derive(Clone, Copy, Debug)]
pub struct BankCall {
    pub op: OpId,
    pub key: Key,
    pub amount_eur: u32,
    pub client: Caller,
    pub attempts: u32,
    /// The last message to the bank was a status query, not a transfer.
    pub querying: bool,
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
    pub op: OpId,
    pub key: Key,
    pub amount_eur: u32,
    pub client: Caller,
}

/// A concurrent duplicate held open until its key's execution ends.
#[derive(Clone, Copy, Debug)]
pub struct Waiter {
    pub key: Key,
    pub client: ActorId,
    pub op: OpId,
    pub attempt: u32,
}

/// Volatile: open requests, bank calls and pending steps die with a crash.
#[derive(Clone, Debug, Default)]
pub struct ServiceState {
    /// Slot index is the bank-timeout timer tag.
    pub calls: Vec<Option<BankCall>>,
    /// Slot index plus [`STEP_TAG_BASE`] is the step's timer tag.
    pub steps: Vec<Option<Step>>,
    pub waiters: Vec<Waiter>,
}

/// Timer tags `0..MAX_BANK_CALLS` are bank timeouts, the rest pending steps.
pub const MAX_BANK_CALLS: usize = 32;
pub const STEP_TAG_BASE: u32 = MAX_BANK_CALLS as u32;
pub const MAX_STEPS: usize = (sim::actor::MAX_TIMER_TAGS - STEP_TAG_BASE) as usize;
pub const MAX_WAITERS: usize = 32;

pub struct Service {
    pub cfg: ServiceConfig,
}

fn free_slot<T>(slots: &mut Vec<Option<T>>, bound: usize) -> Option<usize> {
    match slots.iter().position(Option::is_none) {
        Some(i) => Some(i),
        None if slots.len() < bound => {
            slots.push(None);
            Some(slots.len() - 1)
        }
        None => None,
    }
}

impl Service {
    pub fn reset_storage(&self, s: &mut ServiceStorage) {
        s.keys.clear();
        s.bookings.clear();
    }

    fn keyed(&self, key: Key) -> bool {
        self.cfg.idempotency != Idempotency::None && key != Key::None
    }

    pub fn on_start(&self, s: &mut ServiceStorage, ctx: Cx) -> ServiceState {
        let mut st = ServiceState::default();
        if ctx.now_us() > 0 {
            ctx.observe(Obs::ExecutorsLost);
        }
        // A booking without its key, or a "handled" key without its booking: a
        // crash fell between the two transactions of a split operation.
        let booking_without_key = s.bookings.iter().any(|b| {
            self.keyed(b.key)
                && matches!(
                    self.cfg.idempotency,
                    Idempotency::SplitBookingFirst | Idempotency::CheckThenAct
                )
                && !s.keys.iter().any(|r| r.key == b.key)
        });
        let key_without_booking = self.cfg.idempotency == Idempotency::SplitKeyFirst
            && s.keys
                .iter()
                .any(|r| !s.bookings.iter().any(|b| b.key == r.key));
        if booking_without_key || key_without_booking {
            ctx.reached(sit::CRASH_BETWEEN_STEPS);
        }
        // Recovery: a key left "in progress" is driven to completion with the
        // same key, so a bank that deduplicates pays once.
        let now = ctx.now_us();
        for i in 0..s.keys.len() {
            let row = s.keys[i];
            if row.state != KeyState::InProgress {
                continue;
            }
            ctx.reached(sit::RECOVERED_AFTER_RESTART);
            ctx.reached(sit::CRASH_BETWEEN_STEPS);
            s.keys[i].locked_us = now;
            ctx.observe(Obs::ExecStart { key: row.key });
            let query_first = self.cfg.query_before_retry;
            if !self.call_bank(
                &mut st,
                row.op,
                row.key,
                row.amount_eur,
                None,
                query_first,
                ctx,
            ) {
                ctx.observe(Obs::ExecEnd { key: row.key });
            }
        }
        st
    }

    /// What the bank sees as the key: nothing unless it is passed on.
    fn wire_key(&self, key: Key) -> Key {
        if self.cfg.pass_key_to_bank && self.cfg.mode == Mode::Action {
            key
        } else {
            Key::None
        }
    }

    /// Starts a bank call; false when every slot is busy (the caller answers 503).
    #[allow(clippy::too_many_arguments)]
    fn call_bank(
        &self,
        st: &mut ServiceState,
        op: OpId,
        key: Key,
        amount_eur: u32,
        client: Caller,
        query_first: bool,
        ctx: Cx,
    ) -> bool {
        let Some(slot) = free_slot(&mut st.calls, MAX_BANK_CALLS) else {
            return false;
        };
        st.calls[slot] = Some(BankCall {
            op,
            key,
            amount_eur,
            client,
            attempts: 1,
            querying: query_first,
        });
        if query_first {
            ctx.send(self.cfg.bank, Msg::StatusQuery { op });
        } else {
            self.send_transfer(op, key, amount_eur, ctx);
        }
        ctx.set_timer(slot as u32, self.cfg.bank_timeout_ms * US_PER_MS);
        true
    }

    fn send_transfer(&self, op: OpId, key: Key, amount_eur: u32, ctx: Cx) {
        let msg = match self.cfg.mode {
            Mode::Action => Msg::Transfer {
                op,
                key: self.wire_key(key),
                amount_eur,
            },
            Mode::State => Msg::Settle {
                op,
                total_eur: amount_eur,
            },
        };
        ctx.send(self.cfg.bank, msg);
    }

    /// Runs `kind` after `processing_ms`, as its own step; false when no slot is free.
    fn schedule(&self, st: &mut ServiceState, step: Step, ctx: Cx) -> bool {
        let Some(slot) = free_slot(&mut st.steps, MAX_STEPS) else {
            return false;
        };
        st.steps[slot] = Some(step);
        let delay_us = match step.kind {
            StepKind::InsertKey => 0,
            StepKind::CallBank | StepKind::BookAndCall => self.cfg.processing_ms * US_PER_MS,
        };
        ctx.set_timer(STEP_TAG_BASE + slot as u32, delay_us);
        true
    }

    fn expired(&self, row: &KeyRow, now_us: TimeUs) -> bool {
        self.cfg.retention_ms != 0 && now_us - row.created_us >= self.cfg.retention_ms * US_PER_MS
    }

    /// Inserts a key row, reaping expired rows first, and reports the store's size.
    fn insert_key(&self, s: &mut ServiceStorage, row: KeyRow, ctx: Cx) {
        let now = ctx.now_us();
        let before = s.keys.len();
        s.keys.retain(|r| !self.expired(r, now));
        if s.keys.len() < before {
            ctx.reached(sit::KEY_REAPED);
        }
        debug_assert!(!s.keys.iter().any(|r| r.key == row.key), "keys are unique");
        s.keys.push(row);
        ctx.observe(Obs::DedupStore {
            keys: s.keys.len() as u32,
            bound: self.cfg.max_keys,
        });
    }

    pub fn on_msg(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        from: ActorId,
        msg: Msg,
        ctx: Cx,
    ) {
        match msg {
            Msg::Pay {
                op,
                attempt,
                key,
                amount_eur,
            } => self.on_pay(st, s, (from, attempt), op, key, amount_eur, ctx),
            Msg::TransferDone { op, key } => {
                let Some(slot) = st.calls.iter().position(
                    |c| matches!(c, Some(c) if c.op == op && !c.querying && self.wire_key(c.key) == key),
                ) else {
                    return; // a late or duplicated confirmation for a call already answered
                };
                self.complete(st, s, slot, ctx);
            }
            Msg::StatusReply { op, paid_eur } => self.on_status(st, s, op, paid_eur, ctx),
            _ => {}
        }
    }

    fn reply(to: (ActorId, u32), op: OpId, status: PayStatus, result: (OpId, u32), ctx: Cx) {
        ctx.send(
            to.0,
            Msg::PayReply {
                op,
                attempt: to.1,
                status,
                result_op: result.0,
                result_eur: result.1,
            },
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn on_pay(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        caller: (ActorId, u32),
        op: OpId,
        key: Key,
        amount_eur: u32,
        ctx: Cx,
    ) {
        let busy = |ctx: Cx| Self::reply(caller, op, PayStatus::ServerError, (op, 0), ctx);
        // Load shedding at the front door: a full service answers 503 before
        // it looks at the key, so a synchronised wave of retries meets a wall.
        let in_flight = st.calls.iter().filter(|c| c.is_some()).count()
            + st.steps.iter().filter(|c| c.is_some()).count();
        if self.cfg.max_in_flight != 0 && in_flight >= self.cfg.max_in_flight as usize {
            ctx.reached(sit::OVERLOADED);
            busy(ctx);
            return;
        }
        if !self.keyed(key) {
            s.bookings.push(Booking {
                op,
                key,
                amount_eur,
            });
            if !self.call_after_processing(st, op, key, amount_eur, caller, ctx) {
                busy(ctx);
            }
            return;
        }
        let now = ctx.now_us();
        if let Some(i) = s.keys.iter().position(|r| r.key == key) {
            let row = s.keys[i];
            if self.expired(&row, now) {
                // The key is forgotten: this retry is a new request.
                ctx.reached(sit::RETRY_AFTER_KEY_EXPIRED);
                s.keys.remove(i);
            } else {
                self.on_known_key(st, s, i, caller, op, amount_eur, ctx);
                return;
            }
        }
        let step = |kind| Step {
            kind,
            op,
            key,
            amount_eur,
            client: Some(caller),
        };
        let row = KeyRow {
            key,
            op,
            amount_eur,
            state: KeyState::InProgress,
            created_us: now,
            locked_us: now,
        };
        ctx.observe(Obs::ExecStart { key });
        let started = match self.cfg.idempotency {
            Idempotency::None => unreachable!("keyed requests only"),
            // The gap: nothing is recorded until the payment is done.
            Idempotency::CheckThenAct => self.schedule(st, step(StepKind::BookAndCall), ctx),
            Idempotency::ClaimSameTx => {
                self.insert_key(s, row, ctx);
                s.bookings.push(Booking {
                    op,
                    key,
                    amount_eur,
                });
                self.call_after_processing(st, op, key, amount_eur, caller, ctx)
            }
            Idempotency::SplitKeyFirst => {
                let handled = KeyRow {
                    state: KeyState::Paid,
                    ..row
                };
                self.insert_key(s, handled, ctx);
                self.schedule(st, step(StepKind::BookAndCall), ctx)
            }
            Idempotency::SplitBookingFirst => {
                s.bookings.push(Booking {
                    op,
                    key,
                    amount_eur,
                });
                self.call_bank(st, op, key, amount_eur, Some(caller), false, ctx)
                    && self.schedule(st, step(StepKind::InsertKey), ctx)
            }
        };
        if !started {
            ctx.observe(Obs::ExecEnd { key });
            busy(ctx);
        }
    }

    /// A request whose key has a live row.
    #[allow(clippy::too_many_arguments)]
    fn on_known_key(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        i: usize,
        caller: (ActorId, u32),
        op: OpId,
        amount_eur: u32,
        ctx: Cx,
    ) {
        let row = s.keys[i];
        let now = ctx.now_us();
        if row.op != op {
            ctx.reached(sit::KEY_COLLISION);
        }
        if self.cfg.fingerprint_check && row.amount_eur != amount_eur {
            ctx.reached(sit::PAYLOAD_MISMATCH_REJECTED);
            Self::reply(caller, op, PayStatus::Mismatch, (op, 0), ctx);
            return;
        }
        let stored = (row.op, row.amount_eur);
        match row.state {
            KeyState::Paid => {
                ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                // The stored result is replayed; it answers the request, whatever it said.
                Self::reply(caller, op, PayStatus::Paid, stored, ctx);
            }
            KeyState::InProgress
                if self.cfg.lease_ms > 0
                    && now - row.locked_us >= self.cfg.lease_ms * US_PER_MS =>
            {
                // The lease ran out: the executor is presumed dead, this request takes over.
                ctx.reached(sit::LEASE_EXPIRED_TAKEOVER);
                s.keys[i].locked_us = now;
                ctx.observe(Obs::ExecStart { key: row.key });
                let query_first = self.cfg.query_before_retry;
                if !self.call_bank(
                    st,
                    row.op,
                    row.key,
                    row.amount_eur,
                    Some(caller),
                    query_first,
                    ctx,
                ) {
                    ctx.observe(Obs::ExecEnd { key: row.key });
                    Self::reply(caller, op, PayStatus::ServerError, (op, 0), ctx);
                }
            }
            KeyState::InProgress => {
                ctx.reached(sit::CONCURRENT_DUPLICATE);
                let wait = self.cfg.concurrent == Concurrent::Wait
                    && st.waiters.len() < MAX_WAITERS
                    && (st.calls.iter().flatten().any(|c| c.key == row.key)
                        || st.steps.iter().flatten().any(|p| p.key == row.key));
                if wait {
                    st.waiters.push(Waiter {
                        key: row.key,
                        client: caller.0,
                        op,
                        attempt: caller.1,
                    });
                } else {
                    Self::reply(caller, op, PayStatus::InProgress, (op, 0), ctx);
                }
            }
        }
    }

    /// Calls the bank now, or after `processing_ms` as a later step.
    fn call_after_processing(
        &self,
        st: &mut ServiceState,
        op: OpId,
        key: Key,
        amount_eur: u32,
        caller: (ActorId, u32),
        ctx: Cx,
    ) -> bool {
        if self.cfg.processing_ms == 0 {
            return self.call_bank(st, op, key, amount_eur, Some(caller), false, ctx);
        }
        let step = Step {
            kind: StepKind::CallBank,
            op,
            key,
            amount_eur,
            client: Some(caller),
        };
        self.schedule(st, step, ctx)
    }

    fn on_status(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        op: OpId,
        paid_eur: u32,
        ctx: Cx,
    ) {
        let Some(slot) = st
            .calls
            .iter()
            .position(|c| matches!(c, Some(c) if c.op == op && c.querying))
        else {
            return;
        };
        let call = st.calls[slot].expect("slot is occupied");
        if paid_eur >= call.amount_eur {
            ctx.reached(sit::QUERY_FOUND_TRANSFER);
            self.complete(st, s, slot, ctx);
            return;
        }
        // Not paid (yet): now the transfer is sent, once per query.
        ctx.reached(sit::BANK_RETRIED);
        st.calls[slot] = Some(BankCall {
            querying: false,
            ..call
        });
        self.send_transfer(call.op, call.key, call.amount_eur, ctx);
        ctx.set_timer(slot as u32, self.cfg.bank_timeout_ms * US_PER_MS);
    }

    /// The bank confirmed call `slot`: record the result, answer everyone waiting.
    fn complete(&self, st: &mut ServiceState, s: &mut ServiceStorage, slot: usize, ctx: Cx) {
        let call = st.calls[slot].take().expect("slot is occupied");
        ctx.cancel_timer(slot as u32);
        if self.keyed(call.key) {
            match s.keys.iter_mut().find(|r| r.key == call.key) {
                Some(row) => row.state = KeyState::Paid,
                // Check-then-act records the key only now; so does a
                // booking-first execution whose second step has not run.
                None => {
                    let now = ctx.now_us();
                    let row = KeyRow {
                        key: call.key,
                        op: call.op,
                        amount_eur: call.amount_eur,
                        state: KeyState::Paid,
                        created_us: now,
                        locked_us: now,
                    };
                    self.insert_key(s, row, ctx);
                }
            }
            ctx.observe(Obs::ExecEnd { key: call.key });
        }
        let result = (call.op, call.amount_eur);
        if let Some(caller) = call.client {
            Self::reply(caller, call.op, PayStatus::Paid, result, ctx);
        }
        self.answer_waiters(st, call.key, PayStatus::Paid, result, ctx);
    }

    fn answer_waiters(
        &self,
        st: &mut ServiceState,
        key: Key,
        status: PayStatus,
        result: (OpId, u32),
        ctx: Cx,
    ) {
        if key == Key::None {
            return;
        }
        let mut i = 0;
        while i < st.waiters.len() {
            let w = st.waiters[i];
            if w.key == key {
                ctx.reached(sit::DUPLICATE_WAITED);
                let result = if status == PayStatus::Paid {
                    result
                } else {
                    (w.op, 0)
                };
                Self::reply((w.client, w.attempt), w.op, status, result, ctx);
                st.waiters.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    pub fn on_timer(&self, st: &mut ServiceState, s: &mut ServiceStorage, tag: u32, ctx: Cx) {
        if tag >= STEP_TAG_BASE {
            self.on_step(st, s, (tag - STEP_TAG_BASE) as usize, ctx);
            return;
        }
        let slot = tag as usize;
        let Some(call) = st.calls.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        if call.attempts < self.cfg.bank_max_attempts {
            call.attempts += 1;
            let c = *call;
            if self.cfg.query_before_retry {
                // The transfer's outcome is unknown: ask before paying again.
                call.querying = true;
                ctx.send(self.cfg.bank, Msg::StatusQuery { op: c.op });
            } else {
                ctx.reached(sit::BANK_RETRIED);
                self.send_transfer(c.op, c.key, c.amount_eur, ctx);
            }
            ctx.set_timer(tag, self.cfg.bank_timeout_ms * US_PER_MS);
            return;
        }
        // The bank stays silent: answer 503 and leave the key "in progress";
        // recovery after a restart, or a retry after the lease, will find it.
        let c = st.calls[slot].take().expect("slot is occupied");
        if self.keyed(c.key) {
            ctx.observe(Obs::ExecEnd { key: c.key });
        }
        if let Some(caller) = c.client {
            Self::reply(caller, c.op, PayStatus::ServerError, (c.op, 0), ctx);
        }
        self.answer_waiters(st, c.key, PayStatus::ServerError, (c.op, 0), ctx);
    }

    fn on_step(&self, st: &mut ServiceState, s: &mut ServiceStorage, slot: usize, ctx: Cx) {
        let Some(step) = st.steps.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let caller = step.client.expect("steps answer a request");
        let ok = match step.kind {
            StepKind::CallBank | StepKind::BookAndCall => {
                if step.kind == StepKind::BookAndCall {
                    s.bookings.push(Booking {
                        op: step.op,
                        key: step.key,
                        amount_eur: step.amount_eur,
                    });
                }
                self.call_bank(
                    st,
                    step.op,
                    step.key,
                    step.amount_eur,
                    step.client,
                    false,
                    ctx,
                )
            }
            StepKind::InsertKey => {
                // The bank may have answered already; then the key is recorded.
                if !s.keys.iter().any(|r| r.key == step.key) {
                    let now = ctx.now_us();
                    let row = KeyRow {
                        key: step.key,
                        op: step.op,
                        amount_eur: step.amount_eur,
                        state: KeyState::InProgress,
                        created_us: now,
                        locked_us: now,
                    };
                    self.insert_key(s, row, ctx);
                }
                true
            }
        };
        if !ok {
            if self.keyed(step.key) {
                ctx.observe(Obs::ExecEnd { key: step.key });
            }
            Self::reply(caller, step.op, PayStatus::ServerError, (step.op, 0), ctx);
        }
    }
}

// ---------------------------------------------------------------- bank

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankConfig {
    /// The bank deduplicates transfers on the key it is given.
    pub accepts_key: bool,
    /// How long the bank remembers a key; 0: forever.
    pub key_retention_ms: u64,
    /// The bank answers "how much is paid for claim X?".
    pub status_query: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub op: OpId,
    pub key: Key,
    pub amount_eur: u32,
    pub at_us: TimeUs,
}

/// The bank's ledger: every executed transfer. The oracle counts these, never the service's bookings.
#[derive(Clone, Debug, Default)]
pub struct BankStorage {
    pub transfers: Vec<Transfer>,
}

impl BankStorage {
    pub fn paid_eur(&self, op: OpId) -> u32 {
        self.transfers
            .iter()
            .filter(|t| t.op == op)
            .map(|t| t.amount_eur)
            .sum()
    }
}

pub struct Bank {
    pub cfg: BankConfig,
}

impl Bank {
    pub fn reset_storage(&self, s: &mut BankStorage) {
        s.transfers.clear();
    }

    fn pay(&self, s: &mut BankStorage, op: OpId, key: Key, amount_eur: u32, ctx: Cx) {
        s.transfers.push(Transfer {
            op,
            key,
            amount_eur,
            at_us: ctx.now_us(),
        });
        ctx.observe(Obs::Effect {
            site: Site::BankTransfer,
            op,
            amount: amount_eur,
        });
    }

    pub fn on_msg(&self, s: &mut BankStorage, from: ActorId, msg: Msg, ctx: Cx) {
        let now = ctx.now_us();
        match msg {
            Msg::Transfer {
                op,
                key,
                amount_eur,
            } => {
                let retention_us = self.cfg.key_retention_ms * US_PER_MS;
                let known = self.cfg.accepts_key
                    && key != Key::None
                    && s.transfers.iter().any(|t| {
                        t.key == key && (retention_us == 0 || now - t.at_us < retention_us)
                    });
                if known {
                    ctx.reached(sit::BANK_DEDUP_HIT);
                } else {
                    self.pay(s, op, key, amount_eur, ctx);
                }
                ctx.send(from, Msg::TransferDone { op, key });
            }
            Msg::Settle { op, total_eur } => {
                let missing = total_eur.saturating_sub(s.paid_eur(op));
                if missing == 0 {
                    ctx.reached(sit::SETTLE_NOTHING_MISSING);
                } else {
                    self.pay(s, op, Key::None, missing, ctx);
                }
                ctx.send(from, Msg::TransferDone { op, key: Key::None });
            }
            Msg::StatusQuery { op } if self.cfg.status_query => {
                let paid_eur = s.paid_eur(op);
                ctx.send(from, Msg::StatusReply { op, paid_eur });
            }
            _ => {}
        }
    }
}
