//! The bank-call slots, a part that owns its state: calls in flight (which
//! a crash loses, [`BankCalls`]) and the number of the last status question
//! asked (durable, [`Questions`]). It sends the bank its transfers and
//! status queries, arms and cancels their timeouts, retries, and settles a
//! call from the bank's answers; a call that ends (confirmed, or given up)
//! is handed back to the service, which records it and answers the client.

use super::config::{Mode, ServiceConfig};
use super::timers::{ServiceTimer, MAX_BANK_CALLS};
use crate::core::slots::Slots;
use crate::core::{Carries, Key, Op};
use crate::payment::msg::Msg;
use crate::payment::situations as sit;
use sim::{Actor, ActorId, Ctx};

/// The client's open request an execution answers: who, which attempt.
pub type Caller = Option<(ActorId, u32)>;

/// Where a bank call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CallPhase {
    /// Waiting for the bank's answer to "how much is paid?".
    Query,
    /// Waiting for the transfer's confirmation.
    Transfer,
}

/// One bank call in flight, with the client's open request it answers.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct BankCall {
    /// The claim it pays.
    pub op: Op,
    /// The key it pays under.
    pub key: Key,
    /// The amount it pays.
    pub amount_eur: u32,
    /// The client's open request it answers, if any.
    pub client: Caller,
    /// Attempts so far, the first included.
    pub attempts: u32,
    /// Where it stands.
    pub phase: CallPhase,
    /// The number of the status question it last asked: in its query
    /// phase, the only answer it takes. A call that never asked shows no
    /// question in the state panel (numbers start at 1).
    #[serde(skip_serializing_if = "crate::core::shown::is_zero")]
    pub question: u32,
}

/// A bank call to start: what it pays, the client's open request it
/// answers (none for a recovery's), and whether it first asks the bank what
/// is paid (a recovery's, or a lease takeover's, with `query_on_recovery`).
#[derive(Clone, Copy, Debug)]
pub struct NewCall {
    /// The claim it pays.
    pub op: Op,
    /// The key it pays under.
    pub key: Key,
    /// The amount it pays.
    pub amount_eur: u32,
    /// The client's open request it answers, if any.
    pub client: Caller,
    /// It asks the bank what is paid before it pays.
    pub query_first: bool,
}

/// Status questions asked so far: the last one's number. Kept with the
/// database, not in memory, because answers to questions asked before a
/// crash still travel the network after the restart, and a number used
/// again would let one of them answer a recovery's question.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Questions {
    asked: u32,
}

impl Questions {
    /// None asked.
    pub fn reset(&mut self) {
        self.asked = 0;
    }

    /// The last question's number (0: none asked).
    pub fn asked(&self) -> u32 {
        self.asked
    }

    /// A new question's number.
    fn next(&mut self) -> u32 {
        self.asked = self.asked.wrapping_add(1);
        self.asked
    }
}

/// The bank calls in flight, one slot each: the state panel shows them as
/// their slots.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(transparent)]
pub struct BankCalls {
    slots: Slots<BankCall>,
}

impl Default for BankCalls {
    fn default() -> Self {
        BankCalls {
            slots: Slots::new(MAX_BANK_CALLS),
        }
    }
}

impl BankCalls {
    /// None in flight, in its allocation.
    pub fn clear(&mut self) {
        self.slots.clear();
    }

    /// Calls in flight.
    pub fn busy(&self) -> usize {
        self.slots.busy()
    }

    /// Slots free.
    pub fn free(&self) -> usize {
        self.slots.bound() - self.slots.busy()
    }

    /// Whether every slot is taken.
    pub fn is_full(&self) -> bool {
        self.slots.is_full()
    }

    /// The calls in flight with their slots.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &BankCall)> {
        self.slots.iter()
    }

    /// Whether a call of `key` is in flight.
    pub fn runs(&self, key: Key) -> bool {
        self.slots.find(|c| c.key == key).is_some()
    }

    /// Calls in flight for `client`'s request under `key`.
    pub fn held_by(&self, client: (ActorId, u32), key: Key) -> usize {
        self.slots
            .iter()
            .filter(|(_, c)| c.client == Some(client) && c.key == key)
            .count()
    }

    /// The slot of the call waiting for its transfer of `op` under `key`.
    fn sending(&self, op: Op, key: Key) -> Option<usize> {
        self.slots
            .find(|c| c.op == op && c.phase == CallPhase::Transfer && c.key == key)
    }

    /// Starts a bank call; false when every slot is busy (the caller answers 503).
    /// In a "state" mode the call always starts by reading what is paid.
    pub fn call<W, A>(
        &mut self,
        cfg: &ServiceConfig,
        questions: &mut Questions,
        new: NewCall,
        ctx: &mut impl Ctx<A>,
    ) -> bool
    where
        W: Carries<Msg>,
        A: Actor<Msg = W, Timer = ServiceTimer>,
    {
        let NewCall {
            op,
            key,
            amount_eur,
            client,
            query_first,
        } = new;
        let query = query_first || cfg.state_mode();
        let call = BankCall {
            op,
            key,
            amount_eur,
            client,
            attempts: 1,
            phase: if query {
                CallPhase::Query
            } else {
                CallPhase::Transfer
            },
            question: 0,
        };
        let Some(slot) = self.slots.insert(call) else {
            return false;
        };
        if query {
            let question = send_query(cfg, questions, op, ctx);
            if let Some(c) = self.slots.get_mut(slot) {
                c.question = question;
            }
        } else {
            send_transfer(cfg, &call, amount_eur, None, ctx);
        }
        arm(cfg, slot, ctx);
        true
    }

    /// The bank confirmed a transfer of `op` under `key`: the call waiting
    /// for it, ended; none when the service stopped waiting for it.
    pub fn on_transfer_done<W, A>(
        &mut self,
        cfg: &ServiceConfig,
        (op, key): (Op, Key),
        ctx: &mut impl Ctx<A>,
    ) -> Option<BankCall>
    where
        W: Carries<Msg>,
        A: Actor<Msg = W, Timer = ServiceTimer>,
    {
        // A call still asking what is paid (a recovery, or a re-send
        // prepared by a query) waits for its key's money all the same: the
        // confirmation answers its question, and left waiting, its next
        // attempt would pay the key that the confirmation recorded paid.
        // Only a key says whose money it is: calls without one are told
        // apart by nothing but their phase.
        let slot = self.sending(op, key).or_else(|| {
            let keyed = cfg.keyed(key);
            self.slots.find(|c| keyed && c.op == op && c.key == key)
        })?;
        Some(self.complete(slot, ctx))
    }

    /// The bank refused a conditional transfer: what was read is stale. The
    /// refusal says what the ledger holds now, which is the reading to act
    /// on: reading again could meet the same stale replica
    /// (`bank.status_lag_ms`) and loop until it caught up. The call, if
    /// that reading ended it.
    pub fn on_refused<W, A>(
        &mut self,
        cfg: &ServiceConfig,
        (op, key): (Op, Key),
        paid_eur: u32,
        ctx: &mut impl Ctx<A>,
    ) -> Option<BankCall>
    where
        W: Carries<Msg>,
        A: Actor<Msg = W, Timer = ServiceTimer>,
    {
        let slot = self.sending(op, key)?;
        ctx.reached(sit::CONDITIONAL_TRANSFER_REFUSED);
        self.settle(cfg, slot, paid_eur, ctx)
    }

    /// The bank answered status question `question` about `op`: the call,
    /// if the answer ended it.
    pub fn on_status<W, A>(
        &mut self,
        cfg: &ServiceConfig,
        (op, question): (Op, u32),
        paid_eur: u32,
        ctx: &mut impl Ctx<A>,
    ) -> Option<BankCall>
    where
        W: Carries<Msg>,
        A: Actor<Msg = W, Timer = ServiceTimer>,
    {
        // Only the answer to the call's current question: an earlier one's,
        // duplicated or late, was read before the transfer sent since.
        let slot = self
            .slots
            .find(|c| c.op == op && c.phase == CallPhase::Query && c.question == question)?;
        self.settle(cfg, slot, paid_eur, ctx)
    }

    /// Call `slot` knows that `paid_eur` is paid for its claim (a status
    /// answer, or a refusal's reading of the ledger): done (the call,
    /// ended), or the transfer of what is missing.
    fn settle<W, A>(
        &mut self,
        cfg: &ServiceConfig,
        slot: usize,
        paid_eur: u32,
        ctx: &mut impl Ctx<A>,
    ) -> Option<BankCall>
    where
        W: Carries<Msg>,
        A: Actor<Msg = W, Timer = ServiceTimer>,
    {
        let call = *self.slots.get(slot).expect("slot is busy");
        if paid_eur >= call.amount_eur {
            ctx.reached(if cfg.state_mode() {
                sit::SETTLE_NOTHING_MISSING
            } else {
                sit::QUERY_FOUND_TRANSFER
            });
            return Some(self.complete(slot, ctx));
        }
        // Not paid (yet): now the transfer, once per reading.
        let (amount, condition) = match cfg.mode {
            Mode::Action => (call.amount_eur, None),
            Mode::State => (call.amount_eur - paid_eur, None),
            Mode::StateConditional => (call.amount_eur - paid_eur, Some(paid_eur)),
        };
        if call.attempts > 1 {
            ctx.reached(sit::BANK_RETRIED);
        }
        if let Some(c) = self.slots.get_mut(slot) {
            c.phase = CallPhase::Transfer;
        }
        send_transfer(cfg, &call, amount, condition, ctx);
        arm(cfg, slot, ctx);
        None
    }

    /// Call `slot` ends confirmed: its slot and its timeout are freed.
    fn complete<A>(&mut self, slot: usize, ctx: &mut impl Ctx<A>) -> BankCall
    where
        A: Actor<Timer = ServiceTimer>,
    {
        let call = self.slots.take(slot).expect("slot is busy");
        ctx.cancel_timer(ServiceTimer::BankTimeout { slot: slot as u32 });
        call
    }

    /// Call `slot`'s timeout ran out: its next attempt, or, after the
    /// last, the call given up (the outcome is unknown).
    pub fn on_timeout<W, A>(
        &mut self,
        cfg: &ServiceConfig,
        questions: &mut Questions,
        slot: usize,
        ctx: &mut impl Ctx<A>,
    ) -> Option<BankCall>
    where
        W: Carries<Msg>,
        A: Actor<Msg = W, Timer = ServiceTimer>,
    {
        let call = self.slots.get_mut(slot)?;
        if call.attempts < cfg.bank_max_attempts {
            call.attempts += 1;
            let c = *call;
            if cfg.query_before_retry || cfg.state_mode() {
                // The transfer's outcome is unknown: ask before paying again.
                call.phase = CallPhase::Query;
                call.question = send_query(cfg, questions, c.op, ctx);
            } else {
                ctx.reached(sit::BANK_RETRIED);
                // A recovery's question went unanswered: it pays now, and
                // waits for this transfer's confirmation, not for the
                // answer (which, late, would pay a second time).
                call.phase = CallPhase::Transfer;
                send_transfer(cfg, &c, c.amount_eur, None, ctx);
            }
            arm(cfg, slot, ctx);
            return None;
        }
        ctx.reached(sit::BANK_GAVE_UP);
        Some(self.slots.take(slot).expect("slot is busy"))
    }
}

fn arm<A: Actor<Timer = ServiceTimer>>(cfg: &ServiceConfig, slot: usize, ctx: &mut impl Ctx<A>) {
    ctx.set_timer(
        ServiceTimer::BankTimeout { slot: slot as u32 },
        cfg.bank_timeout_us,
    );
}

/// Asks what is paid for `op` under a new number, which it returns.
fn send_query<W, A>(
    cfg: &ServiceConfig,
    questions: &mut Questions,
    op: Op,
    ctx: &mut impl Ctx<A>,
) -> u32
where
    W: Carries<Msg>,
    A: Actor<Msg = W>,
{
    let question = questions.next();
    ctx.send(cfg.bank, W::wrap(Msg::StatusQuery { op, question }));
    question
}

fn send_transfer<W, A>(
    cfg: &ServiceConfig,
    c: &BankCall,
    amount_eur: u32,
    if_paid_eur: Option<u32>,
    ctx: &mut impl Ctx<A>,
) where
    W: Carries<Msg>,
    A: Actor<Msg = W>,
{
    // The key is the bank's to deduplicate on only when passed on, in
    // every mode: a state-mode transfer under a key the bank knows is
    // deduplicated like any other, and a scenario that wants the state
    // alone to protect says `pass_key_to_bank = false` (or has no key).
    let t = Msg::Transfer {
        op: c.op,
        key: c.key,
        key_passed: cfg.pass_key_to_bank,
        amount_eur,
        if_paid_eur,
        version: cfg.version,
    };
    ctx.send(cfg.bank, W::wrap(t));
}

#[cfg(test)]
mod tests {
    use super::super::tests::harness::{commands, config, timers, Cmd};
    use super::*;
    use crate::payment::CLAIM;
    use sim::Command;

    fn claim() -> Op {
        Op::new(&CLAIM, 4711)
    }

    fn key() -> Key {
        Key::Op { op: claim(), n: 1 }
    }

    fn new_call(query_first: bool) -> NewCall {
        NewCall {
            op: claim(),
            key: key(),
            amount_eur: 1200,
            client: Some((1, 1)),
            query_first,
        }
    }

    /// What went to the bank: transfers with their amount, questions with
    /// their number.
    fn to_bank(out: &[Cmd]) -> Vec<(&'static str, u32)> {
        Cmd::sent(out)
            .filter_map(|m| match m.peek() {
                Some(&Msg::Transfer { amount_eur, .. }) => Some(("transfer", amount_eur)),
                Some(&Msg::StatusQuery { question, .. }) => Some(("query", question)),
                _ => None,
            })
            .collect()
    }

    /// A call sends its transfer and arms its timeout; the slots are the
    /// bound, and a call past them is refused for the caller to answer 503.
    #[test]
    fn a_call_sends_and_arms_until_every_slot_is_taken() {
        let cfg = config();
        let (mut calls, mut questions) = (BankCalls::default(), Questions::default());
        let out = commands(0, |ctx| {
            assert!(calls.call(&cfg, &mut questions, new_call(false), ctx));
        });
        assert_eq!(to_bank(&out), [("transfer", 1200)]);
        let armed = (ServiceTimer::BankTimeout { slot: 0 }, cfg.bank_timeout_us);
        assert_eq!(timers(&out), [armed]);
        commands(0, |ctx| {
            for _ in 1..MAX_BANK_CALLS {
                assert!(calls.call(&cfg, &mut questions, new_call(false), ctx));
            }
            assert!(calls.is_full());
            assert!(!calls.call(&cfg, &mut questions, new_call(false), ctx));
        });
        assert_eq!(calls.busy(), MAX_BANK_CALLS);
    }

    /// A call that asks first takes only the answer to its own question,
    /// numbered on from the durable counter; "nothing paid" sends the
    /// transfer, "all paid" ends the call and frees its timeout.
    #[test]
    fn a_question_is_answered_by_its_own_number_only() {
        let cfg = config();
        let (mut calls, mut questions) = (BankCalls::default(), Questions::default());
        let out = commands(0, |ctx| {
            assert!(calls.call(&cfg, &mut questions, new_call(true), ctx));
        });
        assert_eq!(to_bank(&out), [("query", 1)]);
        assert_eq!(questions.asked(), 1);
        let stale = commands(1, |ctx| {
            assert!(calls.on_status(&cfg, (claim(), 7), 0, ctx).is_none());
        });
        assert!(stale.is_empty(), "another question's answer was taken");
        let mut done = None;
        let ended = commands(2, |ctx| {
            done = calls.on_status(&cfg, (claim(), 1), 1200, ctx)
        });
        assert_eq!(done.map(|c| c.key), Some(key()));
        assert!(Cmd::reaches(&ended, sit::QUERY_FOUND_TRANSFER));
        assert!(ended
            .iter()
            .any(|c| matches!(c, Command::CancelTimer { .. })));
        assert_eq!(calls.busy(), 0);
    }

    /// A silent bank: the call retries until its attempts are spent, then
    /// it is handed back, given up.
    #[test]
    fn a_call_retries_until_its_attempts_are_spent_then_is_given_up() {
        let cfg = ServiceConfig {
            bank_max_attempts: 2,
            ..config()
        };
        let (mut calls, mut questions) = (BankCalls::default(), Questions::default());
        commands(0, |ctx| {
            assert!(calls.call(&cfg, &mut questions, new_call(false), ctx));
        });
        let retry = commands(5_000_000, |ctx| {
            assert!(calls.on_timeout(&cfg, &mut questions, 0, ctx).is_none());
        });
        assert!(Cmd::reaches(&retry, sit::BANK_RETRIED));
        assert_eq!(to_bank(&retry), [("transfer", 1200)]);
        let mut given_up = None;
        let out = commands(10_000_000, |ctx| {
            given_up = calls.on_timeout(&cfg, &mut questions, 0, ctx);
        });
        assert!(Cmd::reaches(&out, sit::BANK_GAVE_UP));
        assert_eq!(given_up.map(|c| (c.key, c.attempts)), Some((key(), 2)));
        assert_eq!(calls.busy(), 0);
    }
}
