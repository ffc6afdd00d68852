//! A request's way through the service, across its parts: the front door
//! (counted, taken by a free worker, queued or shed), the key table's
//! verdict on its key, its booking and bank call by the idempotency design,
//! in one step or two (the second waits in a step slot), and a free
//! worker's turn to the queue or the recovery.

use super::bank_calls::NewCall;
use super::keys::{Found, KeyRow, KeyState, Known, KnownRules, Waiter};
use super::requests::{Step, StepKind};
use super::workers::{Admit, Next, Queued};
use super::{Concurrent, Idempotency, Mode, Service, ServiceState, ServiceStorage, ServiceTimer};
use crate::core::{Carries, Obs};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::situations as sit;
use crate::payment::SERVICE_LAYER;
use sim::{ActorId, Ctx};

/// The bank call `step` makes, for the client it answers.
fn bank_call(step: &Step) -> NewCall {
    NewCall {
        op: step.op,
        key: step.key,
        amount_eur: step.amount_eur,
        client: Some(step.client),
        query_first: false,
    }
}

impl<W: Carries<Msg>> Service<W> {
    /// Payment request `pay` arrives from `from`: checked for a key another
    /// claim holds, counted as received, then admitted.
    pub(super) fn arrive(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        from: ActorId,
        pay: &Msg,
        ctx: &mut impl Ctx<Self>,
    ) {
        // Bound by reference: the key is compared and observed where the
        // message holds it. Read from the request's copy in its `Queued`,
        // the key was read back whole from the stack just after being
        // written there piece by piece, a stalled load on almost every
        // arrival (perf: a sixth of the booking service's step).
        let Msg::Pay {
            op,
            attempt,
            key,
            amount_eur,
            timeout_ms,
        } = pay
        else {
            return;
        };
        // A key another claim holds is reported here, as the request
        // arrives: the ledger makes the request's arrival itself a
        // violation (one-key-one-operation), and nothing a handler reports
        // after the violation is kept, so a check at the key table's
        // lookup (which may also wait in the queue) would never be seen.
        if self.cfg.keyed(*key)
            && s.keys.may_collide(key, *op)
            && s.keys
                .get(key, ctx.now_us())
                .is_some_and(|row| row.op != *op)
        {
            ctx.reached(sit::KEY_COLLISION);
        }
        ctx.observe(Obs::Received {
            layer: &SERVICE_LAYER,
            op: *op,
            key: *key,
        });
        let now = ctx.now_us();
        let q = Queued::arrived((from, *attempt), (*op, *key), *amount_eur, *timeout_ms, now);
        self.admit(st, s, q, ctx);
    }

    /// The front door, for a request counted as received: a free worker
    /// takes it at once, or it waits in the queue, or it is shed with 503.
    fn admit(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        q: Queued,
        ctx: &mut impl Ctx<Self>,
    ) {
        let load = (st.busy(), self.pool());
        match st.workers.admit(q, load, self.cfg.queue_max) {
            Admit::Take => self.take(st, s, q, ctx),
            Admit::Queued => ctx.reached(sit::QUEUED),
            // Shed before the key is looked at: nothing was executed and
            // the client knows it.
            Admit::Shed => self.shed(q.caller, q.op, ctx),
        }
    }

    /// A worker takes request `q`.
    fn take(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        q: Queued,
        ctx: &mut impl Ctx<Self>,
    ) {
        // Only a service with a configured capacity reports its work, so the
        // load columns stay empty for the others.
        if self.cfg.workers > 0 {
            ctx.observe(Obs::Work {
                layer: &SERVICE_LAYER,
                op: q.op,
                attempt: q.caller.1,
                recover_ms: self.cfg.recover_ms,
            });
        }
        // Only a service with rollouts names the version that takes it.
        if self.cfg.version != 0 {
            ctx.observe(Obs::Handled {
                op: q.op,
                attempt: q.caller.1,
                version: self.cfg.version,
            });
        }
        self.on_pay(st, s, q, ctx);
    }

    /// After every step: a free worker and a waiting request make the next
    /// step take it. Its own step, so a crash can fall in between.
    ///
    /// Most steps leave nothing waiting, neither a key for the recovery nor
    /// a request in the queue: that is checked where the step ends, and
    /// only a step that leaves something waiting makes the call that counts
    /// the busy workers ([`pump_waiting`](Self::pump_waiting)). It was a
    /// call at the end of every step of the service.
    #[inline(always)]
    pub(super) fn pump(&self, st: &ServiceState, ctx: &mut impl Ctx<Self>) {
        if st.recovery.waiting() > 0 || !st.workers.is_empty() {
            self.pump_waiting(st, ctx);
        }
    }

    /// [`pump`](Self::pump) with a key or a request waiting.
    #[inline(never)]
    fn pump_waiting(&self, st: &ServiceState, ctx: &mut impl Ctx<Self>) {
        // Keys a restart left waiting for a worker are driven as workers
        // free up, as the recovery job would; a step of their own as well.
        // Its turn comes first: a request ahead of it in the line holds it
        // back (`Recovery::slots`).
        if st.can_recover_next(self.pool()) {
            ctx.continue_with(ServiceTimer::Recover);
        }
        if !st.workers.is_empty() && st.busy() < self.pool() {
            ctx.continue_with(ServiceTimer::Dequeue);
        }
    }

    /// A free worker takes the oldest queued request, skipping the expired
    /// ones when the service drops expired work.
    pub(super) fn dequeue(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        ctx: &mut impl Ctx<Self>,
    ) {
        if st.busy() >= self.pool() {
            return;
        }
        let now = ctx.now_us();
        while let Some(next) = st.workers.next(now, self.cfg.drop_expired) {
            st.recovery.dequeued();
            match next {
                Next::Take(q) => return self.take(st, s, q, ctx),
                Next::Dropped => ctx.reached(sit::EXPIRED_DROPPED),
                Next::Late(q) => {
                    ctx.reached(sit::WORKED_AFTER_DEADLINE);
                    return self.take(st, s, q, ctx);
                }
            }
        }
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
            return st
                .calls
                .call(&self.cfg, &mut s.questions, bank_call(&step), ctx);
        }
        let step = Step {
            kind: StepKind::CallBank,
            ..step
        };
        st.steps.schedule(step, self.cfg.processing_us, ctx)
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

    /// How the key table judges a request under a known key here.
    fn known_rules(&self) -> KnownRules {
        KnownRules {
            fingerprint_check: self.cfg.fingerprint_check,
            lease_us: self.cfg.lease_us,
        }
    }

    /// A worker took the request: look its key up and act on it.
    fn on_pay(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        q: Queued,
        ctx: &mut impl Ctx<Self>,
    ) {
        let (caller, op, key, amount_eur) = (q.caller, q.op, q.key, q.amount_eur);
        let step = |kind| Step {
            kind,
            op,
            key,
            amount_eur,
            client: caller,
        };
        if !self.cfg.keyed(key) {
            if self.cfg.mode == Mode::Action {
                self.book(s, op, key, amount_eur);
            }
            if !self.call_after_processing(st, s, step(StepKind::CallBank), ctx) {
                self.shed(caller, op, ctx);
            }
            return;
        }
        let rules = self.known_rules();
        match s.keys.find(&key, (op, amount_eur), rules, ctx.now_us()) {
            Found::Live(known) => return self.on_known_key(st, s, q, known, ctx),
            // The key is forgotten: this retry is a new request.
            Found::Expired => ctx.reached(sit::RETRY_AFTER_KEY_EXPIRED),
            Found::Absent => {}
        }
        let now = ctx.now_us();
        let row = KeyRow {
            op,
            amount_eur,
            state: KeyState::InProgress,
            locked_us: now,
        };
        ctx.observe(Obs::ExecStart { key });
        let processing_us = self.cfg.processing_us;
        let started = match self.cfg.idempotency {
            Idempotency::None => unreachable!("keyed requests only"),
            // The gap: nothing is recorded until the payment is done.
            Idempotency::CheckThenAct => {
                st.steps
                    .schedule(step(StepKind::BookAndCall), processing_us, ctx)
            }
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
                st.steps
                    .schedule(step(StepKind::BookAndCall), processing_us, ctx)
            }
            // Both transactions need their slot before the first runs: a
            // 503 says "not executed", which after the transfer is false.
            // The key insert holds its worker past the bank call (`busy`),
            // so admission keeps the slots free; this guards the rest.
            Idempotency::SplitBookingFirst if st.calls.is_full() || st.steps.is_full() => false,
            Idempotency::SplitBookingFirst => {
                self.book(s, op, key, amount_eur);
                let call = bank_call(&step(StepKind::CallBank));
                let called = st.calls.call(&self.cfg, &mut s.questions, call, ctx);
                let insert = step(StepKind::InsertKey);
                let scheduled = st.steps.schedule(insert, processing_us, ctx);
                debug_assert!(called && scheduled, "both slots were free");
                true
            }
        };
        if !started {
            ctx.observe(Obs::ExecEnd { key });
            self.shed(caller, op, ctx);
        }
    }

    /// A request whose key has a live row, on which the table's verdict
    /// is `known`.
    fn on_known_key(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        q: Queued,
        known: Known,
        ctx: &mut impl Ctx<Self>,
    ) {
        let (key, caller, op) = (q.key, q.caller, q.op);
        // A row of another claim was reported as `key-collision` when the
        // request arrived (`admit`), before the ledger ended the run.
        match known {
            Known::Mismatch => {
                ctx.reached(sit::PAYLOAD_MISMATCH_REJECTED);
                self.answer(st, q, PayStatus::Mismatch, 0, ctx);
            }
            Known::Paid { amount_eur } => {
                ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                // The stored result is replayed; it answers the request, whatever it asked.
                self.answer(st, q, PayStatus::Paid, amount_eur, ctx);
            }
            Known::TakenOver(row) => {
                // The lease ran out: the executor is presumed dead, this request takes over.
                ctx.reached(sit::LEASE_EXPIRED_TAKEOVER);
                if st.running(key) {
                    // Presumed wrongly: the gap of a lease shorter than its call.
                    ctx.reached(sit::LEASE_TAKEN_FROM_RUNNING);
                }
                ctx.observe(Obs::ExecStart { key });
                let call = self.redrive(key, row, Some(caller));
                if !st.calls.call(&self.cfg, &mut s.questions, call, ctx) {
                    ctx.observe(Obs::ExecEnd { key });
                    self.shed(caller, op, ctx);
                }
            }
            Known::InProgress => {
                ctx.reached(sit::CONCURRENT_DUPLICATE);
                let wait = self.cfg.concurrent == Concurrent::Wait
                    && st.waiters.has_room()
                    && st.running(key);
                if wait {
                    st.waiters.hold(Waiter {
                        key,
                        client: caller.0,
                        op,
                        attempt: caller.1,
                    });
                } else {
                    self.answer(st, q, PayStatus::InProgress, 0, ctx);
                }
            }
        }
    }

    /// Pending step `slot` runs.
    pub(super) fn on_step(
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
                let called = st
                    .calls
                    .call(&self.cfg, &mut s.questions, bank_call(&step), ctx);
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
            if self.cfg.keyed(step.key) {
                ctx.observe(Obs::ExecEnd { key: step.key });
                s.keys.key_given_up(step.key);
            }
            self.shed(step.client, step.op, ctx);
        }
    }
}
