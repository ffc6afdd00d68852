//! The bank's answers, across the service's parts: the bank-call slots
//! settle a call from them, and a call that ends is recorded in the key
//! table (paid, or left "in progress" or deleted when the bank stays
//! silent) and answered to its client and the duplicates waiting for it.
//! Also the status answers a client's reconciliation reads from the key
//! table.

use super::bank_calls::BankCall;
use super::{Idempotency, Service, ServiceState, ServiceStorage};
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::situations as sit;
use sim::{ActorId, Ctx};

impl<W: Carries<Msg>> Service<W> {
    /// The bank confirmed a transfer of `op` under `key`.
    pub(super) fn on_transfer_done(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        (op, key): (Op, Key),
        ctx: &mut impl Ctx<Self>,
    ) {
        match st.calls.on_transfer_done(&self.cfg, (op, key), ctx) {
            Some(call) => self.paid(st, s, call, ctx),
            None => self.record_late(s, op, key, ctx),
        }
    }

    /// A call the bank's answer `done` may have ended: it is paid.
    pub(super) fn call_ended(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        done: Option<BankCall>,
        ctx: &mut impl Ctx<Self>,
    ) {
        if let Some(call) = done {
            self.paid(st, s, call, ctx);
        }
    }

    /// A confirmation for a call the service stopped waiting for (it answered
    /// 504, or crashed since): the money went out, so the key the transfer
    /// named is paid. That key only: another key of the claim left "in
    /// progress" (a re-drive's, a per-attempt key's) still owes its own
    /// transfer as far as anything here knows, and its recovery asks.
    fn record_late(&self, s: &mut ServiceStorage, op: Op, key: Key, ctx: &mut impl Ctx<Self>) {
        if self.cfg.keyed(key) && s.keys.record_late(key, op, ctx.now_us()) {
            ctx.reached(sit::LATE_CONFIRMATION_RECORDED);
        }
    }

    /// The bank confirmed `call`: record the result, answer everyone waiting.
    fn paid(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        call: BankCall,
        ctx: &mut impl Ctx<Self>,
    ) {
        if self.cfg.keyed(call.key) {
            let now = ctx.now_us();
            if let Some(inserted) = s.keys.record_paid(call.key, call.op, call.amount_eur, now) {
                self.report_insert(inserted, ctx);
            }
            ctx.observe(Obs::ExecEnd { key: call.key });
        }
        if let Some(caller) = call.client {
            Self::reply(caller, call.op, PayStatus::Paid, call.amount_eur, ctx);
        }
        Self::answer_waiters(st, call.key, PayStatus::Paid, call.amount_eur, ctx);
    }

    /// Call `slot`'s timeout ran out: its next attempt, or the call given up.
    pub(super) fn on_bank_timeout(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        slot: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(c) = st.calls.on_timeout(&self.cfg, &mut s.questions, slot, ctx) else {
            return;
        };
        // The bank stays silent: answer 504 (the outcome is unknown) and leave
        // the key "in progress"; a late confirmation, a restart or a lease
        // takeover resolves it. Or delete it, as a library does with its
        // record when the handler raises: the next retry is a new request,
        // whatever the bank did with this one.
        if self.cfg.keyed(c.key) {
            ctx.observe(Obs::ExecEnd { key: c.key });
            if self.cfg.delete_key_on_bank_timeout && s.keys.remove(&c.key) {
                ctx.reached(sit::KEY_DELETED_ON_BANK_TIMEOUT);
            }
            // Check-then-act records its key only on a confirmation: none
            // will come. Split-booking-first's insert is a step of its own.
            if self.cfg.idempotency == Idempotency::CheckThenAct {
                s.keys.key_given_up(c.key);
            }
        }
        if let Some(caller) = c.client {
            Self::reply(caller, c.op, PayStatus::GatewayTimeout, 0, ctx);
        }
        Self::answer_waiters(st, c.key, PayStatus::GatewayTimeout, 0, ctx);
    }

    /// A client's reconciliation job asks what was paid for `op`: the
    /// service answers from its own key table, what it believes, so a key
    /// left "in progress" reads as nothing paid whatever the bank did.
    pub(super) fn answer_status(
        &self,
        s: &ServiceStorage,
        from: ActorId,
        (op, question): (Op, u32),
        ctx: &mut impl Ctx<Self>,
    ) {
        let reply = Msg::StatusReply {
            op,
            question,
            paid_eur: s.keys.paid_eur(op, ctx.now_us()),
        };
        ctx.send(from, W::wrap(reply));
    }
}
