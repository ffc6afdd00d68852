//! The bank calls as the service makes them: late confirmations, status
//! questions and their stale answers, retries after a recovery's question.

use super::super::bank_calls::*;
use super::super::ServiceConfig;
use super::super::{KeyState, ServiceTimer};
use super::harness::{config, Bench, Cmd, BANK};
use crate::core::{Carries, Key, Op};
use crate::payment::msg::Msg;
use crate::payment::situations as sit;
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
