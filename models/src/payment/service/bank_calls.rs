//! The service's side of the bank: calls in flight, their timeouts and
//! retries, status queries, confirmations (late ones included) and the
//! answers owed to clients when a call ends.

use super::keys::{KeyRow, KeyState};
use super::{Idempotency, Mode, Service, ServiceState, ServiceStorage, ServiceTimer};
use crate::core::dedup::Lookup;
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::situations as sit;
use sim::{ActorId, Ctx};
use std::fmt;

/// The client's open request an execution answers: who, which attempt.
pub type Caller = Option<(ActorId, u32)>;

/// Where a bank call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallPhase {
    /// Waiting for the bank's answer to "how much is paid?".
    Query,
    /// Waiting for the transfer's confirmation.
    Transfer,
}

/// One bank call in flight, with the client's open request it answers.
#[derive(Clone, Copy)]
pub struct BankCall {
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
    pub client: Caller,
    pub attempts: u32,
    pub phase: CallPhase,
    /// The number of the status question it last asked: in its query
    /// phase, the only answer it takes.
    pub question: u32,
}

/// A call that never asked shows no question (numbers start at 1).
impl fmt::Debug for BankCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("BankCall");
        d.field("op", &self.op)
            .field("key", &self.key)
            .field("amount_eur", &self.amount_eur)
            .field("client", &self.client)
            .field("attempts", &self.attempts)
            .field("phase", &self.phase);
        if self.question > 0 {
            d.field("question", &self.question);
        }
        d.finish()
    }
}

/// A bank call to start: what it pays, the client's open request it
/// answers (none for a recovery's), and whether it first asks the bank what
/// is paid (a recovery's, or a lease takeover's, with `query_on_recovery`).
#[derive(Clone, Copy, Debug)]
pub(super) struct NewCall {
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
    pub client: Caller,
    pub query_first: bool,
}

impl<W: Carries<Msg>> Service<W> {
    fn state_mode(&self) -> bool {
        matches!(self.cfg.mode, Mode::State | Mode::StateConditional)
    }

    fn arm(&self, slot: usize, ctx: &mut impl Ctx<Self>) {
        ctx.set_timer(
            ServiceTimer::BankTimeout { slot: slot as u32 },
            self.cfg.bank_timeout_us,
        );
    }

    /// Asks what is paid for `op` under a new number, which it returns.
    fn send_query(&self, asked: &mut u32, op: Op, ctx: &mut impl Ctx<Self>) -> u32 {
        *asked = asked.wrapping_add(1);
        let question = *asked;
        ctx.send(self.cfg.bank, W::wrap(Msg::StatusQuery { op, question }));
        question
    }

    fn send_transfer(
        &self,
        c: &BankCall,
        amount_eur: u32,
        if_paid_eur: Option<u32>,
        ctx: &mut impl Ctx<Self>,
    ) {
        // The key is the bank's to deduplicate on only when passed on, in
        // every mode: a state-mode transfer under a key the bank knows is
        // deduplicated like any other, and a scenario that wants the state
        // alone to protect says `pass_key_to_bank = false` (or has no key).
        let t = Msg::Transfer {
            op: c.op,
            key: c.key,
            key_passed: self.cfg.pass_key_to_bank,
            amount_eur,
            if_paid_eur,
        };
        ctx.send(self.cfg.bank, W::wrap(t));
    }

    /// Starts a bank call; false when every slot is busy (the caller answers 503).
    /// In a "state" mode the call always starts by reading what is paid.
    pub(super) fn call_bank(
        &self,
        st: &mut ServiceState,
        asked: &mut u32,
        new: NewCall,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        let NewCall {
            op,
            key,
            amount_eur,
            client,
            query_first,
        } = new;
        let query = query_first || self.state_mode();
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
        let Some(slot) = st.calls.insert(call) else {
            return false;
        };
        if query {
            let question = self.send_query(asked, op, ctx);
            if let Some(c) = st.calls.get_mut(slot) {
                c.question = question;
            }
        } else {
            self.send_transfer(&call, amount_eur, None, ctx);
        }
        self.arm(slot, ctx);
        true
    }

    pub(super) fn on_transfer_done(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        op: Op,
        key: Key,
        ctx: &mut impl Ctx<Self>,
    ) {
        // A call still asking what is paid (a recovery, or a re-send
        // prepared by a query) waits for its key's money all the same: the
        // confirmation answers its question, and left waiting, its next
        // attempt would pay the key that the confirmation recorded paid.
        // Only a key says whose money it is: calls without one are told
        // apart by nothing but their phase.
        let waiting = st
            .calls
            .find(|c| c.op == op && c.phase == CallPhase::Transfer && c.key == key)
            .or_else(|| {
                let keyed = self.keyed(key);
                st.calls.find(|c| keyed && c.op == op && c.key == key)
            });
        match waiting {
            Some(slot) => self.complete(st, s, slot, ctx),
            None => self.record_late(s, op, key, ctx),
        }
    }

    /// A confirmation for a call the service stopped waiting for (it answered
    /// 504, or crashed since): the money went out, so the key the transfer
    /// named is paid. That key only: another key of the claim left "in
    /// progress" (a re-drive's, a per-attempt key's) still owes its own
    /// transfer as far as anything here knows, and its recovery asks.
    fn record_late(&self, s: &mut ServiceStorage, op: Op, key: Key, ctx: &mut impl Ctx<Self>) {
        if !self.keyed(key) {
            return;
        }
        if let Lookup::Live(row) = s.keys.lookup(&key, ctx.now_us()) {
            if row.op == op && row.state == KeyState::InProgress {
                row.state = KeyState::Paid;
                ctx.reached(sit::LATE_CONFIRMATION_RECORDED);
            }
        }
    }

    /// The bank refused a conditional transfer: what was read is stale. The
    /// refusal says what the ledger holds now, which is the reading to act
    /// on: reading again could meet the same stale replica
    /// (`bank.status_lag_ms`) and loop until it caught up.
    pub(super) fn on_refused(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        op: Op,
        key: Key,
        paid_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(slot) = st
            .calls
            .find(|c| c.op == op && c.phase == CallPhase::Transfer && c.key == key)
        else {
            return;
        };
        ctx.reached(sit::CONDITIONAL_TRANSFER_REFUSED);
        self.settle(st, s, slot, paid_eur, ctx);
    }

    pub(super) fn on_status(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        (op, question): (Op, u32),
        paid_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        // Only the answer to the call's current question: an earlier one's,
        // duplicated or late, was read before the transfer sent since.
        let Some(slot) = st
            .calls
            .find(|c| c.op == op && c.phase == CallPhase::Query && c.question == question)
        else {
            return;
        };
        self.settle(st, s, slot, paid_eur, ctx);
    }

    /// Call `slot` knows that `paid_eur` is paid for its claim (a status
    /// answer, or a refusal's reading of the ledger): done, or the transfer
    /// of what is missing.
    fn settle(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        slot: usize,
        paid_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let call = *st.calls.get(slot).expect("slot is busy");
        if paid_eur >= call.amount_eur {
            ctx.reached(if self.state_mode() {
                sit::SETTLE_NOTHING_MISSING
            } else {
                sit::QUERY_FOUND_TRANSFER
            });
            self.complete(st, s, slot, ctx);
            return;
        }
        // Not paid (yet): now the transfer, once per reading.
        let (amount, condition) = match self.cfg.mode {
            Mode::Action => (call.amount_eur, None),
            Mode::State => (call.amount_eur - paid_eur, None),
            Mode::StateConditional => (call.amount_eur - paid_eur, Some(paid_eur)),
        };
        if call.attempts > 1 {
            ctx.reached(sit::BANK_RETRIED);
        }
        if let Some(c) = st.calls.get_mut(slot) {
            c.phase = CallPhase::Transfer;
        }
        self.send_transfer(&call, amount, condition, ctx);
        self.arm(slot, ctx);
    }

    /// The bank confirmed call `slot`: record the result, answer everyone waiting.
    fn complete(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        slot: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let call = st.calls.take(slot).expect("slot is busy");
        ctx.cancel_timer(ServiceTimer::BankTimeout { slot: slot as u32 });
        if self.keyed(call.key) {
            let now = ctx.now_us();
            match s.keys.lookup(&call.key, now) {
                Lookup::Live(row) => row.state = KeyState::Paid,
                // Check-then-act records the key only now; so does a
                // booking-first execution whose second step has not run.
                Lookup::Expired | Lookup::Absent => {
                    let row = KeyRow {
                        op: call.op,
                        amount_eur: call.amount_eur,
                        state: KeyState::Paid,
                        locked_us: now,
                    };
                    self.insert_key(s, call.key, row, ctx);
                }
            }
            ctx.observe(Obs::ExecEnd { key: call.key });
        }
        if let Some(caller) = call.client {
            Self::reply(caller, call.op, PayStatus::Paid, call.amount_eur, ctx);
        }
        self.answer_waiters(st, call.key, PayStatus::Paid, call.amount_eur, ctx);
    }

    pub(super) fn on_bank_timeout(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        slot: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(call) = st.calls.get_mut(slot) else {
            return;
        };
        if call.attempts < self.cfg.bank_max_attempts {
            call.attempts += 1;
            let c = *call;
            if self.cfg.query_before_retry || self.state_mode() {
                // The transfer's outcome is unknown: ask before paying again.
                call.phase = CallPhase::Query;
                call.question = self.send_query(&mut s.questions_asked, c.op, ctx);
            } else {
                ctx.reached(sit::BANK_RETRIED);
                // A recovery's question went unanswered: it pays now, and
                // waits for this transfer's confirmation, not for the
                // answer (which, late, would pay a second time).
                call.phase = CallPhase::Transfer;
                self.send_transfer(&c, c.amount_eur, None, ctx);
            }
            self.arm(slot, ctx);
            return;
        }
        // The bank stays silent: answer 504 (the outcome is unknown) and leave
        // the key "in progress"; a late confirmation, a restart or a lease
        // takeover resolves it. Or delete it, as a library does with its
        // record when the handler raises: the next retry is a new request,
        // whatever the bank did with this one.
        ctx.reached(sit::BANK_GAVE_UP);
        let c = st.calls.take(slot).expect("slot is busy");
        if self.keyed(c.key) {
            ctx.observe(Obs::ExecEnd { key: c.key });
            if self.cfg.delete_key_on_bank_timeout && s.keys.remove(&c.key).is_some() {
                ctx.reached(sit::KEY_DELETED_ON_BANK_TIMEOUT);
            }
            // Check-then-act records its key only on a confirmation: none
            // will come. Split-booking-first's insert is a step of its own.
            if self.cfg.idempotency == Idempotency::CheckThenAct {
                s.key_given_up(c.key);
            }
        }
        if let Some(caller) = c.client {
            Self::reply(caller, c.op, PayStatus::GatewayTimeout, 0, ctx);
        }
        self.answer_waiters(st, c.key, PayStatus::GatewayTimeout, 0, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{config, Bench, Cmd, BANK};
    use super::super::ServiceConfig;
    use super::*;
    use crate::payment::{TransferResult, CLAIM};
    use sim::{Command, TimeUs};

    const CLIENT: sim::ActorId = 1;

    impl Bench {
        fn pay(&mut self, now_us: TimeUs, key: Key) -> Vec<Cmd> {
            let pay = Msg::Pay {
                op: claim(),
                attempt: 1,
                key,
                amount_eur: 1200,
                timeout_ms: 0,
            };
            self.msg(now_us, CLIENT, pay)
        }

        /// The bank's only call stays unanswered to its last attempt.
        fn give_up(&mut self, now_us: TimeUs) -> Vec<Cmd> {
            self.fire(now_us, ServiceTimer::BankTimeout { slot: 0 })
        }

        fn state_of(&self, key: Key) -> KeyState {
            self.storage.keys.get(&key, 0).expect("a live row").state
        }
    }

    fn claim() -> Op {
        Op::new(&CLAIM, 4711)
    }

    fn key(n: u32) -> Key {
        Key::Op { op: claim(), n }
    }

    fn sent_transfer_keys(out: &[Cmd]) -> Vec<Key> {
        Cmd::sent(out)
            .filter_map(|msg| match msg.peek() {
                Some(&Msg::Transfer { key, .. }) => Some(key),
                _ => None,
            })
            .collect()
    }

    /// Claim 4711 has two keys "in progress", its first (whose transfer
    /// never reached the bank) and a re-drive's. The re-drive's transfer
    /// lands, and its confirmation comes after the service stopped waiting.
    /// It answers the second key's transfer: that key is paid; the first
    /// still owes its transfer, so a restart asks the bank about it alone.
    /// The answer names its key whether or not the bank deduplicates on it.
    #[test]
    fn a_late_confirmation_pays_the_key_its_transfer_carried() {
        for key_passed in [true, false] {
            late_confirmation_of_the_second_key(key_passed);
        }
    }

    fn late_confirmation_of_the_second_key(key_passed: bool) {
        let mut b = Bench::new(ServiceConfig {
            pass_key_to_bank: key_passed,
            ..config()
        });
        assert_eq!(sent_transfer_keys(&b.pay(0, key(1))), [key(1)]);
        b.give_up(5_000_000);
        assert_eq!(sent_transfer_keys(&b.pay(30_000_000, key(2))), [key(2)]);
        b.give_up(35_000_000);
        let done = Msg::TransferDone {
            op: claim(),
            key: key(2),
            key_passed,
            result: TransferResult::Done,
        };
        let late = b.msg(36_000_000, BANK, done);
        assert!(late.contains(&Command::Reached(sit::LATE_CONFIRMATION_RECORDED)));
        assert_eq!(b.state_of(key(1)), KeyState::InProgress);
        assert_eq!(b.state_of(key(2)), KeyState::Paid);
        // Only the first key is recovered, and it asks the bank before paying.
        let recovered = b.restart(60_000_000);
        let calls: Vec<(Key, CallPhase)> = b
            .state
            .calls
            .iter()
            .map(|(_, c)| (c.key, c.phase))
            .collect();
        assert_eq!(calls, [(key(1), CallPhase::Query)]);
        assert_eq!(status_queries(&recovered), 1);
    }

    fn status_queries(out: &[Cmd]) -> usize {
        Cmd::sent(out)
            .filter(|msg| matches!(msg.peek(), Some(&Msg::StatusQuery { .. })))
            .count()
    }

    /// A restarted service recovers a key left "in progress" by asking the
    /// bank, a bank that takes no key. The answer is slow: the call's
    /// timeout runs out first and its next attempt sends the transfer
    /// (`query_before_retry` is off). From then on the call waits for that
    /// transfer: the answer "0 paid", arriving late, starts no second
    /// transfer, and the confirmation completes the call and pays the key.
    #[test]
    fn a_recovery_that_paid_after_its_question_timed_out_ignores_the_late_answer() {
        let mut b = Bench::new(ServiceConfig {
            pass_key_to_bank: false,
            bank_max_attempts: 2,
            ..config()
        });
        assert_eq!(sent_transfer_keys(&b.pay(0, key(1))), [key(1)]);
        let recovered = b.restart(1_000_000);
        assert_eq!(status_queries(&recovered), 1);
        let paid = b.give_up(6_000_000);
        assert_eq!(sent_transfer_keys(&paid), [key(1)]);
        let answer = answer_to(&recovered, 0);
        assert_eq!(sent_transfer_keys(&b.msg(7_000_000, BANK, answer)), []);
        let done = Msg::TransferDone {
            op: claim(),
            key: key(1),
            key_passed: false,
            result: TransferResult::Done,
        };
        let confirmed = b.msg(8_000_000, BANK, done);
        assert!(!Cmd::reaches(&confirmed, sit::LATE_CONFIRMATION_RECORDED));
        assert_eq!(b.state.calls.iter().count(), 0, "the call is complete");
        assert_eq!(b.state_of(key(1)), KeyState::Paid);
    }

    /// The bank's answer to the status query among a handler's commands
    /// `out`: what a real client reads on the question's own connection.
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
            .expect("a status query")
    }

    /// A bank without keys is slow to confirm. The call's second attempt
    /// asks what is paid (`query_before_retry`), hears "0" and sends the
    /// transfer again; its third attempt asks again. Now a network
    /// duplicate of the earlier "0" arrives: it answers the second
    /// attempt's question, asked before the re-sent transfer left, so it
    /// says nothing about whether that transfer landed, and must start no
    /// third transfer. The answer to the third attempt's own question does.
    #[test]
    fn an_answer_to_an_earlier_question_starts_no_transfer() {
        let mut b = Bench::new(ServiceConfig {
            pass_key_to_bank: false,
            bank_max_attempts: 3,
            query_before_retry: true,
            ..config()
        });
        assert_eq!(sent_transfer_keys(&b.pay(0, key(1))), [key(1)]);
        let second = b.give_up(5_000_000);
        let earlier = answer_to(&second, 0);
        let resent = b.msg(6_000_000, BANK, earlier);
        assert_eq!(sent_transfer_keys(&resent), [key(1)]);
        let third = b.give_up(11_000_000);
        assert_eq!(status_queries(&third), 1);
        let duplicate = b.msg(12_000_000, BANK, earlier);
        assert_eq!(sent_transfer_keys(&duplicate), [], "a stale answer paid");
        assert!(!Cmd::reaches(&duplicate, sit::BANK_RETRIED));
        let current = b.msg(13_000_000, BANK, answer_to(&third, 1200));
        assert!(Cmd::reaches(&current, sit::QUERY_FOUND_TRANSFER));
        assert_eq!(b.state.calls.iter().count(), 0, "the call is complete");
        assert_eq!(b.state_of(key(1)), KeyState::Paid);
    }

    /// A restarted service recovers a key left "in progress" by asking a
    /// bank without keys. Before the answer comes, the confirmation of the
    /// transfer sent before the crash arrives: the key's money went out,
    /// which is what the recovery asks. The call ends there, paid; its
    /// question, left unanswered, must not make its next attempt send the
    /// transfer a second time.
    #[test]
    fn a_recovery_asking_ends_with_its_keys_confirmation() {
        let mut b = Bench::new(ServiceConfig {
            pass_key_to_bank: false,
            bank_max_attempts: 2,
            ..config()
        });
        assert_eq!(sent_transfer_keys(&b.pay(0, key(1))), [key(1)]);
        assert_eq!(status_queries(&b.restart(1_000_000)), 1);
        let done = Msg::TransferDone {
            op: claim(),
            key: key(1),
            key_passed: false,
            result: TransferResult::Done,
        };
        b.msg(2_000_000, BANK, done);
        assert_eq!(b.state_of(key(1)), KeyState::Paid);
        assert_eq!(b.state.calls.iter().count(), 0, "the call is complete");
        assert_eq!(sent_transfer_keys(&b.give_up(6_000_000)), []);
    }
}
