//! The claims system's follow-up job: for each claim it gave up with an
//! unknown outcome, a job looks again a while later, round after round, up
//! to a number of rounds, after which the dead letter stays for a person.
//! What a round does is the job's policy: reconciliation asks the bank and
//! re-drives (`reconciliation.rs`, chapter 14), compensation refunds
//! (`compensation.rs`, a saga's step back). The rounds, their time-outs and
//! their limit live here, once for both.
//!
//! Each step is its own handler call (the dead letter and the job's record,
//! each round, each answer), and the job's progress lives in the client's
//! database, so a crash between any two steps leaves a job that resumes.

use super::{Client, ClientTimer};
use crate::core::client_op::{ClientStorage, Followup, OpTimer};
use crate::core::Carries;
use crate::payment::compensate::CompensateConfig;
use crate::payment::msg::Msg;
use crate::payment::reconcile::ReconcileConfig;
use crate::payment::situations as sit;
use sim::{Ctx, SituationId, US_PER_MS};

/// The follow-up job a client runs, with its policy's settings: the loader
/// lets a client have one or the other, never both.
#[derive(Clone, Copy)]
pub(super) enum Job<'a> {
    /// Ask whether the claim was paid; re-drive it if not.
    Reconcile(&'a ReconcileConfig),
    /// Refund what was paid; cancel the claim.
    Compensate(&'a CompensateConfig),
}

impl Job<'_> {
    /// How long after the dead letter the job first looks, and between
    /// rounds: the next round is also this round's time-out.
    fn after_ms(self) -> u64 {
        match self {
            Job::Reconcile(c) => c.after_ms,
            Job::Compensate(c) => c.after_ms,
        }
    }

    /// Rounds before the claim is handed over to a person.
    fn max_rounds(self) -> u32 {
        match self {
            Job::Reconcile(c) => c.max_rounds,
            Job::Compensate(c) => c.max_rounds,
        }
    }

    /// The situation of a job that spent its rounds.
    fn gave_up(self) -> SituationId {
        match self {
            Job::Reconcile(_) => sit::RECONCILE_GAVE_UP,
            Job::Compensate(_) => sit::COMPENSATE_GAVE_UP,
        }
    }

    /// The job's timer of the `i`-th operation, `id`: named after the job,
    /// in the slot the operation's attempts no longer use.
    fn timer(self, i: usize, id: u32) -> ClientTimer {
        match self {
            Job::Reconcile(_) => OpTimer::reconcile(i, id),
            Job::Compensate(_) => OpTimer::compensate(i, id),
        }
    }
}

impl<W: Carries<Msg>> Client<W> {
    /// The client's follow-up job, if it has one.
    pub(super) fn job(&self) -> Option<Job<'_>> {
        match (&self.cfg.reconcile, &self.cfg.compensate) {
            (Some(r), _) => Some(Job::Reconcile(r)),
            (None, Some(c)) => Some(Job::Compensate(c)),
            (None, None) => None,
        }
    }

    /// After operation `i` was given up: an unknown dead letter becomes the
    /// job's work, recorded in the same step as the dead letter itself.
    pub(super) fn take_up(&self, s: &mut ClientStorage, i: usize, ctx: &mut impl Ctx<Self>) {
        let Some(job) = self.job() else {
            return;
        };
        let op = &s.ops[i];
        // Failed is known and abandoned is invisible: only an unknown dead
        // letter is the job's.
        if !(self.cfg.dead_letter && op.uncertain) {
            return;
        }
        if s.followups.iter().any(|f| f.i as usize == i) {
            return;
        }
        s.followups.push(Followup {
            i: i as u32,
            round: 0,
            redriven: 0,
            open: true,
        });
        self.wait_job(job, i, ctx);
    }

    /// After a restart: the timers died with the process, the records did not.
    pub(super) fn resume_jobs(&self, followups: &[Followup], ctx: &mut impl Ctx<Self>) {
        let Some(job) = self.job() else {
            return;
        };
        for f in followups.iter().filter(|f| f.open) {
            self.wait_job(job, f.i as usize, ctx);
        }
    }

    /// The job's next round of operation `i`, a round's wait from now.
    fn wait_job(&self, job: Job<'_>, i: usize, ctx: &mut impl Ctx<Self>) {
        let op = self.cfg.ops[i].op();
        ctx.set_timer(
            job.timer(i, op.id).of_part(op.part),
            job.after_ms().saturating_mul(US_PER_MS),
        );
    }

    /// The job's timer: a new round does what the policy does in a round;
    /// once the rounds are spent, the claim stays unknown, for a person.
    pub(super) fn job_round(&self, followups: &mut [Followup], i: usize, ctx: &mut impl Ctx<Self>) {
        let Some(job) = self.job() else {
            return;
        };
        let Some(f) = Followup::open_of(followups, i, |_| true) else {
            return;
        };
        if f.round >= job.max_rounds() {
            f.open = false;
            ctx.reached(job.gave_up());
            return;
        }
        f.round += 1;
        match job {
            Job::Reconcile(cfg) => self.reconcile_round(cfg, f, i, ctx),
            Job::Compensate(cfg) => self.compensate_round(cfg, f, i, ctx),
        }
        // The next round is also this round's timeout: a lost question,
        // refund or answer costs a round, never the job.
        self.wait_job(job, i, ctx);
    }

    /// The bank's (or the service's) answer to the job's question of round
    /// `question` about operation `i`. Only this round's question is
    /// answered: an earlier round's answer, duplicated or late, was read
    /// before that round's re-drive or refund was sent, so it would act on
    /// the claim once more whatever that did.
    pub(super) fn on_status(
        &self,
        s: &mut ClientStorage,
        (i, question): (usize, u32),
        paid_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(job) = self.job() else {
            return;
        };
        let ClientStorage { ops, followups } = s;
        let Some(f) = Followup::open_of(followups, i, |f| f.round == question) else {
            return;
        };
        match job {
            Job::Reconcile(cfg) => {
                self.on_reconcile_status(cfg, (f, &mut ops[i]), i, paid_eur, ctx)
            }
            Job::Compensate(cfg) => self.on_compensate_status(cfg, f, i, paid_eur, ctx),
        }
    }

    /// The job is done with operation `i`: its record closes and its next
    /// round will not come.
    pub(super) fn close_job(
        &self,
        job: Job<'_>,
        f: &mut Followup,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let op = self.cfg.ops[i].op();
        f.open = false;
        ctx.cancel_timer(job.timer(i, op.id).of_part(op.part));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Obs;
    use crate::payment::client::fixture::{given_up, BANK, CLAIM_ID};
    use crate::payment::client::ClientConfig;
    use crate::payment::compensate::RefundWhen;
    use crate::payment::reconcile::{Ask, RedriveKey};
    use crate::registry::Msg as World;
    use sim::{Actor, Command, Context, TimeUs};

    type Cmd = Command<World, Obs, ClientTimer>;

    const AFTER_MS: u64 = 10_000;

    /// `plain` running `job` with two rounds.
    fn with_job(job: Job<'_>, plain: ClientConfig) -> ClientConfig {
        let (reconcile, compensate) = match job {
            Job::Reconcile(c) => (Some(*c), None),
            Job::Compensate(c) => (None, Some(*c)),
        };
        ClientConfig {
            reconcile,
            compensate,
            ..plain
        }
    }

    const RECONCILE: ReconcileConfig = ReconcileConfig {
        after_ms: AFTER_MS,
        max_rounds: 2,
        ask: Ask::Bank,
        asked: BANK,
        redrive_key: RedriveKey::Same,
    };

    const COMPENSATE: CompensateConfig = CompensateConfig {
        after_ms: AFTER_MS,
        max_rounds: 2,
        refund_when: RefundWhen::Timeout,
        keyed: true,
        bank: BANK,
    };

    /// The job's timer of operation 0 among `out`, with its delay.
    fn timer_set(out: &[Cmd]) -> Option<(ClientTimer, TimeUs)> {
        out.iter().find_map(|c| match c {
            Command::SetTimer {
                timer, after_us, ..
            } => Some((*timer, *after_us)),
            _ => None,
        })
    }

    /// The dead letter taken up, then the job's timer fired three times:
    /// what each step's handler did.
    fn three_rounds(job: Job<'_>) -> (Vec<Vec<Cmd>>, ClientStorage) {
        let (client, mut st, mut s, mut choices) = given_up(|plain| with_job(job, plain));
        let mut steps = Vec::new();
        let mut out = Vec::new();
        client.take_up(
            &mut s,
            0,
            &mut Context::detached(0, 0, &mut choices, &mut out),
        );
        steps.push(out);
        for round in 1..=3u64 {
            let mut out = Vec::new();
            let now_us = round * AFTER_MS * US_PER_MS;
            let mut ctx = Context::detached(now_us, 0, &mut choices, &mut out);
            client.on_timer(&mut st, &mut s, job.timer(0, CLAIM_ID), &mut ctx);
            steps.push(out);
        }
        (steps, s)
    }

    /// Both policies run the one loop: each round waits `after_ms` for the
    /// next (its time-out), under the job's own timer, and the round past
    /// the limit closes the record for a person, with the policy's
    /// situation, and waits no more.
    #[test]
    fn both_jobs_run_their_rounds_to_the_limit_under_their_own_timer() {
        for (job, name, gave_up) in [
            (
                Job::Reconcile(&RECONCILE),
                "reconcile (claim 4711)",
                sit::RECONCILE_GAVE_UP,
            ),
            (
                Job::Compensate(&COMPENSATE),
                "compensate (claim 4711)",
                sit::COMPENSATE_GAVE_UP,
            ),
        ] {
            let (steps, s) = three_rounds(job);
            for step in &steps[..3] {
                let (timer, after_us) = timer_set(step).expect("the next round's timer");
                assert_eq!(timer.to_string(), name);
                assert_eq!(after_us, AFTER_MS * US_PER_MS);
                assert_eq!(
                    Cmd::sent(step).count(),
                    usize::from(step != &steps[0]),
                    "{name}"
                );
            }
            assert!(!steps[2]
                .iter()
                .any(|c| matches!(c, Command::Reached(s) if *s == gave_up)));
            assert!(Cmd::reaches(&steps[3], gave_up), "{name}");
            assert_eq!(timer_set(&steps[3]), None, "{name}: a round past the limit");
            assert_eq!(Cmd::sent(&steps[3]).count(), 0, "{name}");
            assert_eq!((s.followups[0].round, s.followups[0].open), (2, false));
        }
    }
}
