//! The key table's rules as the service keeps them: a paid key answered
//! from the table, a reused key refused, a concurrent duplicate refused or
//! held open, bookings waiting for their key.

use super::super::keys::*;
use super::super::Concurrent;
use super::super::ServiceConfig;
use super::harness::{config, Bench, Cmd, BANK};
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::situations as sit;
use crate::payment::{TransferResult, CLAIM};
use sim::ActorId;
use sim::Command;

fn claim() -> Op {
    Op::new(&CLAIM, 4711)
}

fn key() -> Key {
    Key::Op { op: claim(), n: 1 }
}

/// Claim 4711's attempt `attempt`, for `amount_eur`, under its one key.
fn pay(attempt: u32, amount_eur: u32) -> Msg {
    Msg::Pay {
        op: claim(),
        attempt,
        key: key(),
        amount_eur,
        timeout_ms: 0,
    }
}

fn confirmation() -> Msg {
    Msg::TransferDone {
        op: claim(),
        key: key(),
        key_passed: true,
        result: TransferResult::Done,
    }
}

/// The answers a handler gave: to whom, what, how much.
fn replies(out: &[Cmd]) -> Vec<(ActorId, PayStatus, u32)> {
    out.iter()
        .filter_map(|c| match c {
            Command::Send { to, msg } => match msg.peek() {
                Some(&Msg::PayReply {
                    status, amount_eur, ..
                }) => Some((*to, status, amount_eur)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn bank_messages(out: &[Cmd]) -> usize {
    Cmd::sent(out)
        .filter(|m| !matches!(m.peek(), Some(Msg::PayReply { .. })))
        .count()
}

/// Claim 4711 paid 1,200 EUR by client 1's first attempt.
fn paid() -> Bench {
    let mut b = Bench::new(config());
    b.msg(0, 1, pay(1, 1200));
    b.msg(1_000, BANK, confirmation());
    assert_eq!(
        b.storage.keys.get(&key(), 1_000).map(|r| r.state),
        Some(KeyState::Paid)
    );
    b
}

#[test]
fn a_retry_of_a_paid_key_is_answered_from_the_table_without_the_bank() {
    let mut b = paid();
    let out = b.msg(2_000, 1, pay(2, 1200));
    assert!(Cmd::reaches(&out, sit::DUPLICATE_AFTER_COMMIT));
    assert_eq!(replies(&out), [(1, PayStatus::Paid, 1200)]);
    assert_eq!(bank_messages(&out), 0, "the bank was asked again");
}

/// The fingerprint covers the amount: the key's stored request was
/// 1,200 EUR, so one for 999 EUR is another request under a reused key.
#[test]
fn a_known_key_with_another_amount_is_refused_with_422() {
    let mut b = paid();
    let out = b.msg(2_000, 1, pay(2, 999));
    assert!(Cmd::reaches(&out, sit::PAYLOAD_MISMATCH_REJECTED));
    assert_eq!(replies(&out), [(1, PayStatus::Mismatch, 0)]);
    assert_eq!(bank_messages(&out), 0);
}

/// A duplicate arrives while the first execution's transfer is out: it
/// is refused with 409, or held open and answered with the first's result.
#[test]
fn a_concurrent_duplicate_gets_409_or_waits_for_the_first_execution() {
    for concurrent in [Concurrent::Reject, Concurrent::Wait] {
        let mut b = Bench::new(ServiceConfig {
            concurrent,
            ..config()
        });
        b.msg(0, 1, pay(1, 1200));
        let duplicate = b.msg(10, 2, pay(1, 1200));
        assert!(Cmd::reaches(&duplicate, sit::CONCURRENT_DUPLICATE));
        assert_eq!(bank_messages(&duplicate), 0, "{concurrent:?}");
        let done = b.msg(1_000, BANK, confirmation());
        if concurrent == Concurrent::Reject {
            assert_eq!(replies(&duplicate), [(2, PayStatus::InProgress, 0)]);
            assert_eq!(replies(&done), [(1, PayStatus::Paid, 1200)]);
        } else {
            assert!(replies(&duplicate).is_empty());
            assert!(Cmd::reaches(&done, sit::DUPLICATE_WAITED));
            let both = [(1, PayStatus::Paid, 1200), (2, PayStatus::Paid, 1200)];
            assert_eq!(replies(&done), both);
        }
    }
}

/// A claim whose request carries another claim's live key is reported as
/// a key collision as it arrives; the key's own claim, a retry of it, and
/// another claim under its own key are not.
#[test]
fn a_request_under_another_claims_live_key_is_a_key_collision() {
    let mut b = Bench::new(config());
    let first = b.msg(0, 1, pay(1, 1200));
    assert!(!Cmd::reaches(&first, sit::KEY_COLLISION));
    let retry = b.msg(10, 1, pay(2, 1200));
    assert!(!Cmd::reaches(&retry, sit::KEY_COLLISION));
    let other = Op::new(&CLAIM, 4712);
    let own_key = Msg::Pay {
        op: other,
        attempt: 1,
        key: Key::Op { op: other, n: 1 },
        amount_eur: 300,
        timeout_ms: 0,
    };
    assert!(!Cmd::reaches(&b.msg(20, 2, own_key), sit::KEY_COLLISION));
    let borrower = Op::new(&CLAIM, 4713);
    let borrowed_key = Msg::Pay {
        op: borrower,
        attempt: 1,
        key: key(),
        amount_eur: 300,
        timeout_ms: 0,
    };
    let out = b.msg(30, 3, borrowed_key);
    // Reached before the arrival is observed: the ledger ends the run at
    // the arrival, and keeps nothing reported after it.
    let collision = out
        .iter()
        .position(|c| matches!(c, Command::Reached(s) if *s == sit::KEY_COLLISION));
    let received = out.iter().position(|c| {
        matches!(c, Command::Observe(Obs::Received { op, key: k, .. })
            if *op == borrower && *k == key())
    });
    assert!(
        collision.is_some() && received.is_some() && collision < received,
        "{out:?}"
    );
}
