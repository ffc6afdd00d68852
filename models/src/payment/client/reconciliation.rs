//! The claims system's reconciliation job (chapter 14): for each claim it
//! gave up with an unknown outcome it asks, a while later, how much has been
//! paid; paid, and the claim is finally done; not paid, and it drives the
//! payment again and asks once more next round, up to a number of rounds,
//! after which the dead letter stays for a person.
//!
//! Each step is its own handler call (the dead letter and the job's record,
//! each round's question, each answer and its re-drive), and the job's
//! progress lives in the client's database, so a crash between any two
//! steps leaves a job that resumes.

use super::Client;
use crate::core::client_op::{ClientStorage, Followup, OpTimer};
use crate::core::{Carries, Ending, Key, Obs};
use crate::payment::msg::Msg;
use crate::payment::reconcile::RedriveKey;
use crate::payment::situations as sit;
use sim::Ctx;

impl<W: Carries<Msg>> Client<W> {
    /// After operation `i` was given up: an unknown dead letter becomes the
    /// job's work, recorded in the same step as the dead letter itself.
    pub(super) fn take_up(&self, s: &mut ClientStorage, i: usize, ctx: &mut impl Ctx<Self>) {
        let Some(after_ms) = self.job_after_ms() else {
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
        self.wait_job(after_ms, i, ctx);
    }

    /// How long after a dead letter the client's job (reconciliation or
    /// compensation) first looks, and between rounds; none: no job.
    pub(super) fn job_after_ms(&self) -> Option<u64> {
        match (&self.cfg.reconcile, &self.cfg.compensate) {
            (Some(r), _) => Some(r.after_ms),
            (None, Some(c)) => Some(c.after_ms),
            (None, None) => None,
        }
    }

    /// After a restart: the timers died with the process, the records did not.
    pub(super) fn resume_jobs(&self, followups: &[Followup], ctx: &mut impl Ctx<Self>) {
        let Some(after_ms) = self.job_after_ms() else {
            return;
        };
        for f in followups.iter().filter(|f| f.open) {
            self.wait_job(after_ms, f.i as usize, ctx);
        }
    }

    /// The job's timer: a new round asks again, or, once the rounds are
    /// spent, the claim stays unknown, for a person.
    pub(super) fn reconcile_round(
        &self,
        followups: &mut [Followup],
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(cfg) = &self.cfg.reconcile else {
            return;
        };
        let Some(f) = Followup::open_of(followups, i, |_| true) else {
            return;
        };
        if f.round >= cfg.max_rounds {
            f.open = false;
            ctx.reached(sit::RECONCILE_GAVE_UP);
            return;
        }
        f.round += 1;
        let op = self.cfg.ops[i].op();
        // The round numbers the question: the records keep it, so a
        // restarted job never asks under a number asked before.
        let question = f.round;
        ctx.send(cfg.asked, W::wrap(Msg::StatusQuery { op, question }));
        // The next round is also this round's timeout: a lost question or
        // answer costs a round, never the job.
        self.wait_job(cfg.after_ms, i, ctx);
    }

    /// An answer to the job's question: paid, and the client is finally
    /// told so; not paid, and the claim is driven again, once per round.
    /// Only this round's question is answered: an earlier round's answer,
    /// duplicated or late, was read before that round's re-drive was sent,
    /// so its "not paid" would drive the claim once more whatever the
    /// re-drive did.
    pub(super) fn on_status(
        &self,
        s: &mut ClientStorage,
        (i, question): (usize, u32),
        paid_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(cfg) = &self.cfg.reconcile else {
            return;
        };
        let Some(f) = Followup::open_of(&mut s.followups, i, |f| f.round == question) else {
            return;
        };
        let spec = self.cfg.ops[i];
        let op = spec.op();
        if paid_eur >= spec.amount_eur {
            f.open = false;
            ctx.cancel_timer(OpTimer::reconcile(i, op.id).of_part(op.part));
            ctx.reached(sit::RECONCILED_PAID);
            ctx.observe(Obs::ToldDone {
                op,
                payload: spec.amount_eur,
            });
            ctx.observe(Obs::Ended {
                op,
                ending: Ending::Done,
            });
            return;
        }
        // The last round's "not paid" is left for a person: a re-drive
        // nobody looks at again would be a payment nobody checks.
        if f.redriven == f.round || f.round >= cfg.max_rounds {
            return;
        }
        f.redriven = f.round;
        let o = &mut s.ops[i];
        o.attempts += 1;
        let attempt = o.attempts;
        let key = match cfg.redrive_key {
            RedriveKey::Same => self.key_for(i, attempt, o.started_us),
            // Never sent before: the client's own attempts carry at most
            // their number, and this one's is higher than any.
            RedriveKey::New => Key::Op { op, n: attempt },
        };
        ctx.reached(sit::RECONCILE_REDRIVEN);
        ctx.observe(Obs::AttemptSent { op, attempt });
        let pay = Msg::Pay {
            op,
            attempt,
            key,
            amount_eur: spec.amount_eur,
            timeout_ms: u32::try_from(self.cfg.timeout_ms).unwrap_or(u32::MAX),
        };
        ctx.send(self.cfg.service, W::wrap(pay));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::client_op::{ClientOp, OpStatus, OpTimer};
    use crate::core::retry::RetryPolicy;
    use crate::payment::client::{ClientConfig, ClientState, ClientTimer, KeyPolicy};
    use crate::payment::reconcile::{Ask, ReconcileConfig};
    use crate::registry::Msg as World;
    use sim::ActorId;
    use sim::{Actor, Choices, Command, Context, TimeUs};

    type Cmd = Command<World, Obs, ClientTimer>;

    const SERVICE: ActorId = 2;
    const BANK: ActorId = 9;
    const CLAIM_ID: u32 = 4711;

    /// A claims system whose one claim was given up with an unknown
    /// outcome, its job taken up and waiting for its first round.
    struct Job {
        client: Client<World>,
        state: ClientState,
        storage: ClientStorage,
        choices: Choices,
    }

    impl Job {
        fn new() -> Job {
            let client = Client::new(ClientConfig {
                reconcile: Some(ReconcileConfig {
                    after_ms: 10_000,
                    max_rounds: 5,
                    ask: Ask::Bank,
                    asked: BANK,
                    redrive_key: RedriveKey::Same,
                }),
                ..ClientConfig::one_claim(
                    SERVICE,
                    CLAIM_ID,
                    KeyPolicy::None,
                    RetryPolicy::immediate(1),
                )
            });
            let (mut state, mut storage) = (None, None);
            client.reset_state(&mut state);
            client.reset_storage(&mut storage);
            let mut storage = storage.expect("a storage");
            storage.ops[0] = ClientOp {
                status: OpStatus::Done,
                attempts: 1,
                uncertain: true,
                ..ClientOp::NEW
            };
            storage.followups.push(Followup {
                i: 0,
                round: 0,
                redriven: 0,
                open: true,
            });
            let mut choices = Choices::new();
            choices.start_random(0, 1, false);
            Job {
                client,
                state: state.expect("a state"),
                storage,
                choices,
            }
        }

        /// The job's timer fires at `now_us`: the next round asks.
        fn round(&mut self, now_us: TimeUs) -> Vec<Cmd> {
            let mut out = Vec::new();
            let mut ctx = Context::detached(now_us, 0, &mut self.choices, &mut out);
            let timer = OpTimer::reconcile(0, CLAIM_ID);
            let (st, s) = (&mut self.state, &mut self.storage);
            self.client.on_timer(st, s, timer, &mut ctx);
            out
        }

        fn msg(&mut self, now_us: TimeUs, msg: Msg) -> Vec<Cmd> {
            let mut out = Vec::new();
            let mut ctx = Context::detached(now_us, 0, &mut self.choices, &mut out);
            let (st, s) = (&mut self.state, &mut self.storage);
            self.client.on_msg(st, s, BANK, World::wrap(msg), &mut ctx);
            out
        }
    }

    /// The bank's answer to the question among a handler's commands `out`.
    fn answer_to(out: &[Cmd], paid_eur: u32) -> Msg {
        Cmd::sent(out)
            .find_map(|msg| match msg.peek() {
                Some(&Msg::StatusQuery { op, question }) => Some(Msg::StatusReply {
                    op,
                    question,
                    paid_eur,
                }),
                _ => None,
            })
            .expect("a status question")
    }

    fn redrives(out: &[Cmd]) -> usize {
        Cmd::sent(out)
            .filter(|msg| matches!(msg.peek(), Some(&Msg::Pay { .. })))
            .count()
    }

    /// The first round hears "not paid" and drives the claim again; the
    /// second round asks whether that re-drive paid. A network duplicate
    /// of the first round's "not paid", read before the re-drive was
    /// sent, arrives first: it answers nothing asked now, and drives the
    /// claim no second time. The second round's own answer ends the job.
    #[test]
    fn an_earlier_rounds_answer_drives_the_claim_no_second_time() {
        let mut job = Job::new();
        let first = job.round(10_000_000);
        let not_paid = answer_to(&first, 0);
        let redriven = job.msg(11_000_000, not_paid);
        assert_eq!(redrives(&redriven), 1);
        assert!(Cmd::reaches(&redriven, sit::RECONCILE_REDRIVEN));
        let second = job.round(20_000_000);
        let duplicate = job.msg(21_000_000, not_paid);
        assert_eq!(redrives(&duplicate), 0, "a stale answer drove the claim");
        let paid = job.msg(22_000_000, answer_to(&second, 1200));
        assert!(Cmd::reaches(&paid, sit::RECONCILED_PAID));
        assert!(!job.storage.followups[0].open);
    }
}
