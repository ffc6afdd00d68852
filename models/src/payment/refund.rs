//! The bank's refunds: the compensation a claims system's job asks for. A
//! refund is an effect of its own, taken back where the transfer landed
//! ([`Obs::Reversal`]), so the ledger judges the net effect. With
//! `refuse_beyond_paid` the bank refuses a refund of more than is paid for
//! the payment net of the refunds before it, as Stripe refuses one beyond a
//! charge's remaining amount (`charge_already_refunded`); without, it
//! refunds whatever it is asked, as a plain credit transfer back does.

use super::bank::{Bank, BankState, BankStorage, RefundOrder};
use super::msg::{Msg, RefundResult};
use super::situations as sit;
use super::REFUND;
use crate::core::dedup::Lookup;
use crate::core::{Carries, Obs};
use sim::{ActorId, Ctx};

impl<W: Carries<Msg>> Bank<W> {
    /// A refund: recognised by its key, refused beyond what is paid (if the
    /// bank checks), or executed; answered in every case it takes.
    pub(super) fn on_refund(
        &self,
        st: &mut BankState,
        s: &mut BankStorage,
        from: ActorId,
        order: RefundOrder,
        ctx: &mut impl Ctx<Self>,
    ) {
        let RefundOrder {
            op,
            key,
            amount_eur,
            round,
        } = order;
        if !self.admit(st, op, ctx) {
            return;
        }
        let now = ctx.now_us();
        let known = key.is_some() && matches!(s.refund_keys.lookup(&key, now), Lookup::Live(_));
        let paid_eur = s.paid_eur(op, true);
        let result = if known {
            ctx.reached(sit::REFUND_DEDUP_HIT);
            RefundResult::Done
        } else if self.cfg.refuse_refund_beyond_paid && amount_eur > paid_eur {
            ctx.reached(sit::REFUND_REFUSED);
            RefundResult::Refused { paid_eur }
        } else {
            s.refunds.push((op, amount_eur, now));
            if key.is_some() {
                s.refund_keys.insert(key, (), now);
            }
            ctx.observe(Obs::Reversal {
                site: &REFUND,
                op,
                payload: amount_eur,
            });
            RefundResult::Done
        };
        let done = Msg::RefundDone { op, round, result };
        ctx.send(from, W::wrap(done));
    }
}
