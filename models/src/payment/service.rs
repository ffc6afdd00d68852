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
#[path = "service_types.rs"]
mod types;

use super::msg::{Msg, PayStatus, TransferResult};
use super::situations as sit;
use crate::core::dedup::{DedupStore, Lookup};
use crate::core::slots::Slots;
use crate::core::{Carries, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx};
use std::collections::VecDeque;
use std::marker::PhantomData;

pub use load::Queued;
pub use types::*;

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
        s.key_recorded(key);
        ctx.observe(Obs::DedupStore {
            keys: s.keys.len() as u32,
            bound: self.cfg.max_keys,
        });
    }

    fn book(&self, s: &mut ServiceStorage, op: Op, key: Key, amount_eur: u32) {
        let later_key = matches!(
            self.cfg.idempotency,
            Idempotency::SplitBookingFirst | Idempotency::CheckThenAct
        );
        s.bookings.push(Booking {
            op,
            key,
            amount_eur,
            key_due: later_key && self.keyed(key),
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
                self.book(s, op, key, amount_eur);
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
                self.book(s, op, key, amount_eur);
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
                self.book(s, op, key, amount_eur);
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
                    self.book(s, step.op, step.key, step.amount_eur);
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
                s.key_given_up(step.key);
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

    fn reset(
        &self,
        state: sim::Fresh<'_, ServiceState>,
        storage: Option<sim::Fresh<'_, ServiceStorage>>,
    ) {
        if let Some(s) = storage {
            let s = s.or_insert_with(|| ServiceStorage {
                keys: DedupStore::new(self.cfg.retention_us),
                bookings: Vec::new(),
                questions_asked: 0,
            });
            s.keys.reset(self.cfg.retention_us);
            s.bookings.clear();
            s.questions_asked = 0;
        }
        let st = state.or_insert_with(|| ServiceState {
            calls: Slots::new(MAX_BANK_CALLS),
            steps: Slots::new(MAX_STEPS),
            waiters: Vec::new(),
            queue: VecDeque::new(),
            recovering: VecDeque::new(),
            queued_before_recovery: 0,
        });
        st.calls.clear();
        st.steps.clear();
        st.waiters.clear();
        st.queue.clear();
        st.recovering.clear();
        st.queued_before_recovery = 0;
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
