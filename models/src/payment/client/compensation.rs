//! The claims system's compensation job, a saga's step back: for each claim
//! it gave up with an unknown outcome, the business cancels the payment.
//! Each round the job either asks the bank how much is paid and refunds
//! exactly that (`RefundWhen::Paid`), or refunds the amount asked on the
//! timeout alone (`RefundWhen::Timeout`, the mistake that refunds a
//! transfer that never landed); once nothing is left paid (or, refunding
//! blindly, once the bank answered), the claims system is told
//! "cancelled". A refund is an operation like any other: it carries a key
//! of its own, or every copy of it refunds.
//!
//! The job keeps its progress in the reconciliation job's records (the two
//! never run together) and its timer, so a crash between any two steps
//! leaves a job that resumes.

use super::Client;
use crate::core::client_op::{ClientStorage, Followup, OpTimer};
use crate::core::{Carries, Ending, Key, Obs, Op};
use crate::payment::compensate::{CompensateConfig, RefundWhen};
use crate::payment::msg::Msg;
use crate::payment::situations as sit;
use sim::{Ctx, US_PER_MS};

impl<W: Carries<Msg>> Client<W> {
    /// The job's next round of operation `i`, `after_ms` from now: a job
    /// looks only at an operation that has ended, so it takes the timer of
    /// the reconciliation job it stands in for.
    pub(super) fn wait_job(&self, after_ms: u64, i: usize, ctx: &mut impl Ctx<Self>) {
        let op = self.cfg.ops[i].op();
        ctx.set_timer(
            OpTimer::reconcile(i, op.id).of_part(op.part),
            after_ms.saturating_mul(US_PER_MS),
        );
    }

    /// The job's timer: a new round asks, or refunds blindly; once the
    /// rounds are spent, the claim stays unknown, for a person.
    pub(super) fn compensate_round(
        &self,
        followups: &mut [Followup],
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(cfg) = &self.cfg.compensate else {
            return;
        };
        let Some(f) = Followup::open_of(followups, i, |_| true) else {
            return;
        };
        if f.round >= cfg.max_rounds {
            f.open = false;
            ctx.reached(sit::COMPENSATE_GAVE_UP);
            return;
        }
        f.round += 1;
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
        // The next round is also this round's timeout: a lost question,
        // refund or answer costs a round, never the job.
        self.wait_job(cfg.after_ms, i, ctx);
    }

    /// The bank's answer to this round's question: nothing left paid, and
    /// the claim is cancelled; something, and exactly that is refunded,
    /// once per round. The next round's question sees whether it was.
    pub(super) fn on_compensate_status(
        &self,
        s: &mut ClientStorage,
        (i, question): (usize, u32),
        paid_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(cfg) = &self.cfg.compensate else {
            return;
        };
        let Some(f) = Followup::open_of(&mut s.followups, i, |f| f.round == question) else {
            return;
        };
        let op = self.cfg.ops[i].op();
        if paid_eur == 0 {
            self.cancelled(f, i, ctx);
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
        self.cancelled(f, i, ctx);
    }

    /// The job is done with operation `i`: its client is told "cancelled".
    fn cancelled(&self, f: &mut Followup, i: usize, ctx: &mut impl Ctx<Self>) {
        let op = self.cfg.ops[i].op();
        f.open = false;
        ctx.cancel_timer(OpTimer::reconcile(i, op.id).of_part(op.part));
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
