//! The claims system's reconciliation job (chapter 14), the follow-up job's
//! first policy (`followup.rs` runs its rounds): each round asks how much
//! has been paid; paid, and the claim is finally done; not paid, and it
//! drives the payment again and asks once more next round.

use super::followup::Job;
use super::Client;
use crate::core::client_op::{ClientOp, Followup};
use crate::core::{Carries, Ending, Key, Obs};
use crate::payment::msg::Msg;
use crate::payment::reconcile::{ReconcileConfig, RedriveKey};
use crate::payment::situations as sit;
use sim::Ctx;

impl<W: Carries<Msg>> Client<W> {
    /// A round of operation `i`: the question, numbered by the round.
    pub(super) fn reconcile_round(
        &self,
        cfg: &ReconcileConfig,
        f: &Followup,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let op = self.cfg.ops[i].op();
        // The round numbers the question: the records keep it, so a
        // restarted job never asks under a number asked before.
        let question = f.round;
        ctx.send(cfg.asked, W::wrap(Msg::StatusQuery { op, question }));
    }

    /// An answer to this round's question: paid, and the client is finally
    /// told so; not paid, and the claim is driven again, once per round.
    pub(super) fn on_reconcile_status(
        &self,
        cfg: &ReconcileConfig,
        (f, o): (&mut Followup, &mut ClientOp),
        i: usize,
        paid_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let spec = self.cfg.ops[i];
        let op = spec.op();
        if paid_eur >= spec.amount_eur {
            self.close_job(Job::Reconcile(cfg), f, i, ctx);
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
    use crate::core::client_op::{ClientStorage, OpTimer};
    use crate::payment::client::fixture::{given_up, BANK, CLAIM_ID};
    use crate::payment::client::{ClientConfig, ClientState, ClientTimer};
    use crate::payment::reconcile::{Ask, ReconcileConfig};
    use crate::registry::Msg as World;
    use sim::{Actor, Choices, Command, Context, TimeUs};

    type Cmd = Command<World, Obs, ClientTimer>;

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
            let (client, state, mut storage, choices) = given_up(|plain| ClientConfig {
                reconcile: Some(ReconcileConfig {
                    after_ms: 10_000,
                    max_rounds: 5,
                    ask: Ask::Bank,
                    asked: BANK,
                    redrive_key: RedriveKey::Same,
                }),
                ..plain
            });
            storage.followups.push(Followup {
                i: 0,
                round: 0,
                redriven: 0,
                open: true,
            });
            Job {
                client,
                state,
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
