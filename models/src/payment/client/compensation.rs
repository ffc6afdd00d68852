//! The claims system's compensation job, a saga's step back, the follow-up
//! job's second policy (`followup.rs` runs its rounds): for each claim it
//! gave up with an unknown outcome, the business cancels the payment.
//! Each round the job either asks the bank how much is paid and refunds
//! exactly that (`RefundWhen::Paid`), or refunds the amount asked on the
//! timeout alone (`RefundWhen::Timeout`, the mistake that refunds a
//! transfer that never landed); once nothing is left paid (or, refunding
//! blindly, once the bank answered), the claims system is told
//! "cancelled". A refund is an operation like any other: it carries a key
//! of its own, or every copy of it refunds.

use super::followup::Job;
use super::Client;
use crate::core::client_op::{ClientStorage, Followup};
use crate::core::{Carries, Ending, Key, Obs, Op};
use crate::payment::compensate::{CompensateConfig, RefundWhen};
use crate::payment::msg::Msg;
use crate::payment::situations as sit;
use sim::Ctx;

impl<W: Carries<Msg>> Client<W> {
    /// A round of operation `i`: the question, or the blind refund.
    pub(super) fn compensate_round(
        &self,
        cfg: &CompensateConfig,
        f: &mut Followup,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let spec = self.cfg.ops[i];
        let op = spec.op();
        match cfg.refund_when {
            RefundWhen::Paid => {
                let question = f.round;
                ctx.send(cfg.bank, W::wrap(Msg::StatusQuery { op, question }));
            }
            RefundWhen::Timeout => {
                f.redriven = f.round;
                self.refund(cfg, op, (spec.amount_eur, f.round), ctx);
            }
        }
    }

    /// The bank's answer to this round's question: nothing left paid, and
    /// the claim is cancelled; something, and exactly that is refunded,
    /// once per round. The next round's question sees whether it was.
    pub(super) fn on_compensate_status(
        &self,
        cfg: &CompensateConfig,
        f: &mut Followup,
        i: usize,
        paid_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let op = self.cfg.ops[i].op();
        if paid_eur == 0 {
            self.cancelled(cfg, f, i, ctx);
            return;
        }
        // A duplicated answer of this round refunds no second time.
        if f.redriven == f.round {
            return;
        }
        f.redriven = f.round;
        self.refund(cfg, op, (paid_eur, f.round), ctx);
    }

    /// The bank's answer to a refund. Refunding blindly, it ends the job
    /// (done or refused, the bank holds nothing more to take back as far
    /// as the job can tell); asking first, the next round's question does.
    pub(super) fn on_refund_done(
        &self,
        s: &mut ClientStorage,
        (i, round): (usize, u32),
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(cfg) = &self.cfg.compensate else {
            return;
        };
        if cfg.refund_when != RefundWhen::Timeout {
            return;
        }
        let Some(f) = Followup::open_of(&mut s.followups, i, |f| f.redriven == round) else {
            return;
        };
        self.cancelled(cfg, f, i, ctx);
    }

    /// The job is done with operation `i`: its client is told "cancelled".
    fn cancelled(
        &self,
        cfg: &CompensateConfig,
        f: &mut Followup,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let op = self.cfg.ops[i].op();
        self.close_job(Job::Compensate(cfg), f, i, ctx);
        ctx.reached(sit::COMPENSATED);
        ctx.observe(Obs::Ended {
            op,
            ending: Ending::Cancelled,
        });
    }

    /// Asks the bank to refund `amount_eur` of `op` in round `round`,
    /// under the refund's own key (the same in every round) or none.
    fn refund(
        &self,
        cfg: &CompensateConfig,
        op: Op,
        (amount_eur, round): (u32, u32),
        ctx: &mut impl Ctx<Self>,
    ) {
        let key = if cfg.keyed {
            Key::Op { op, n: 1 }
        } else {
            Key::None
        };
        ctx.reached(sit::REFUND_SENT);
        let msg = Msg::Refund {
            op,
            key,
            amount_eur,
            round,
        };
        ctx.send(cfg.bank, W::wrap(msg));
    }
}
