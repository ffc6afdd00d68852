//! What a worker does with a request it took: its key is looked up and,
//! by the idempotency design, claimed, booked and paid in one step or two;
//! the second step (and an answer due after the request's processing) waits
//! in a step slot.

use super::bank_calls::NewCall;
use super::keys::{KeyRow, KeyState};
use super::workers::Queued;
use super::{Idempotency, Mode, Service, ServiceState, ServiceStorage, ServiceTimer};
use crate::core::dedup::Lookup;
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::situations as sit;
use sim::{ActorId, Ctx};

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

impl Step {
    /// The bank call this step makes, for the client it answers.
    fn bank_call(&self) -> NewCall {
        NewCall {
            op: self.op,
            key: self.key,
            amount_eur: self.amount_eur,
            client: Some(self.client),
            query_first: false,
        }
    }
}

impl<W: Carries<Msg>> Service<W> {
    /// Runs `step` after `processing_ms`, as its own step; false when no
    /// slot is free. A second transaction (split-booking-first's key insert)
    /// waits as long as any other second step: with the key insert at the
    /// same instant, only a crash could fall between the two transactions,
    /// never a concurrent duplicate, which in a real service finds the
    /// booking committed and no key yet.
    pub(super) fn schedule(
        &self,
        st: &mut ServiceState,
        step: Step,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
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
            return self.call_bank(st, &mut s.questions_asked, step.bank_call(), ctx);
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

    /// A worker took the request: look its key up and act on it.
    pub(super) fn on_pay(
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
            Lookup::Live(_) => return self.on_known_key(st, s, q, ctx),
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
                let called = self.call_bank(st, asked, step(StepKind::CallBank).bank_call(), ctx);
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
                let called = self.call_bank(st, &mut s.questions_asked, step.bank_call(), ctx);
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

#[cfg(test)]
mod tests {
    use super::super::harness::{
        config, confirm, pay_msg, pay_replies, transfers_sent, Bench, Cmd, BANK,
    };
    use super::super::{ServiceConfig, MAX_BANK_CALLS, MAX_STEPS};
    use super::*;
    use crate::payment::{TransferResult, CLAIM};

    const CLIENT: ActorId = 1;

    /// Split-booking-first records each key in a second transaction, a
    /// step 1 s after the booking and the transfer. A bank that confirms
    /// at once frees each request's call long before that, and a burst of
    /// claims meets a service whose every slot is taken. A request the
    /// service cannot carry through is refused before anything is done for
    /// it: a 503 says "not executed", and a client told so may give the
    /// claim up as failed.
    #[test]
    fn split_booking_first_answers_503_only_for_a_request_it_did_not_execute() {
        let mut b = Bench::new(ServiceConfig {
            idempotency: Idempotency::SplitBookingFirst,
            pass_key_to_bank: false,
            processing_us: 1_000_000,
            ..config()
        });
        let mut shed = 0;
        for id in 0..=MAX_STEPS as u32 {
            let op = Op::new(&CLAIM, 5000 + id);
            let booked = b.storage.bookings.len();
            let out = b.msg(
                u64::from(id),
                CLIENT,
                pay_msg(Op::new(&CLAIM, 5000 + id), 1),
            );
            let sent_transfer =
                Cmd::sent(&out).any(|m| matches!(m.peek(), Some(Msg::Transfer { .. })));
            let told_503 = Cmd::sent(&out).any(|m| {
                matches!(
                    m.peek(),
                    Some(Msg::PayReply {
                        status: PayStatus::Overloaded,
                        ..
                    })
                )
            });
            if told_503 {
                shed += 1;
                assert!(!sent_transfer, "{op} was paid and answered 503");
                assert_eq!(
                    b.storage.bookings.len(),
                    booked,
                    "{op} was booked and answered 503"
                );
                continue;
            }
            let done = Msg::TransferDone {
                op,
                key: Key::Op { op, n: 1 },
                key_passed: false,
                result: TransferResult::Done,
            };
            b.msg(u64::from(id), BANK, done);
        }
        // Not a vacuous pass: the burst did meet a full service.
        assert!(shed > 0, "no request found the service full");
    }

    /// 64 claims hold every bank call of a service whose bank is silent:
    /// the 65th is refused with 503, "not executed". That must be true of
    /// its key too: once a call ends, its retry is a new request and is
    /// paid, not answered 409 for a claim nobody is working on, with a
    /// lease or without one (where nothing would ever free the key).
    #[test]
    fn a_request_shed_while_every_bank_call_is_busy_does_not_block_its_retry() {
        for lease_us in [0, 30_000_000] {
            let mut b = Bench::new(ServiceConfig {
                lease_us,
                ..config()
            });
            for id in 0..MAX_BANK_CALLS as u32 {
                let out = b.msg(0, CLIENT, pay_msg(Op::new(&CLAIM, 6000 + id), 1));
                assert_eq!(transfers_sent(&out).len(), 1);
            }
            let late = Op::new(&CLAIM, 7000);
            let shed = b.msg(1_000, CLIENT, pay_msg(late, 1));
            assert_eq!(pay_replies(&shed), [PayStatus::Overloaded]);
            confirm(&mut b, 2_000, Op::new(&CLAIM, 6000));
            let retry = b.msg(3_000, CLIENT, pay_msg(late, 2));
            assert_eq!(transfers_sent(&retry), [late], "lease {lease_us} µs");
            assert!(pay_replies(&retry).is_empty());
        }
    }
}
