//! The recovery after a restart: live keys driven, expired ones not, every
//! key however many, crashes between steps told from keys gone since.

use super::super::{Idempotency, KeyState};
use super::super::{ServiceConfig, ServiceTimer, MAX_BANK_CALLS};
use super::harness::{
    config, confirm, pay_msg, pay_replies, step_timer, transfers_sent, Bench, Cmd, BANK,
};
use crate::core::Op;
use crate::core::{Carries, Key};
use crate::payment::msg::Msg;
use crate::payment::situations as sit;
use crate::payment::{TransferResult, CLAIM};
use sim::ActorId;

const CLIENT: ActorId = 1;
const RETENTION_US: sim::TimeUs = 10_000_000;

fn key() -> Key {
    Key::Op {
        op: Op::new(&CLAIM, 4711),
        n: 1,
    }
}

/// The first attempt to pay claim `claim` 1,200 EUR, under its own key.
fn pay(claim: u32) -> Msg {
    pay_msg(Op::new(&CLAIM, claim), 1)
}

/// Claim 4711's transfer goes out at 0 and the bank stays silent: the
/// service answers 504 at 5 s and its key stays "in progress".
fn stuck_in_progress() -> Bench {
    let mut b = Bench::new(ServiceConfig {
        retention_us: RETENTION_US,
        ..config()
    });
    b.msg(0, CLIENT, pay(4711));
    b.fire(5_000_000, ServiceTimer::BankTimeout { slot: 0 });
    let row = b.storage.keys.get(&key(), 5_000_000).expect("a live row");
    assert_eq!(row.state, KeyState::InProgress);
    b
}

fn bank_messages(out: &[Cmd]) -> usize {
    Cmd::sent(out)
        .filter(|m| {
            matches!(
                m.peek(),
                Some(Msg::Transfer { .. } | Msg::StatusQuery { .. })
            )
        })
        .count()
}

/// Within its retention, a key left "in progress" is the service's to
/// drive to an end after a restart: it asks the bank.
#[test]
fn a_restart_recovers_a_live_key_left_in_progress() {
    let mut b = stuck_in_progress();
    let out = b.restart(RETENTION_US - 1);
    assert!(Cmd::reaches(&out, sit::RECOVERED_AFTER_RESTART));
    assert_eq!(bank_messages(&out), 1);
    assert_eq!(b.state.calls.iter().count(), 1);
}

/// Past its retention the key is gone, whatever its state: a reaper
/// deletes keys by age (Brandur's, after 72 h "regardless of state"),
/// and a store that checks expiry in code treats an expired record as
/// absent (Powertools). A restart finds nothing to recover, sends the
/// bank nothing and records no key.
#[test]
fn a_restart_does_not_recover_a_key_whose_retention_ran_out() {
    let mut b = stuck_in_progress();
    let out = b.restart(RETENTION_US);
    assert!(!Cmd::reaches(&out, sit::RECOVERED_AFTER_RESTART));
    assert_eq!(bank_messages(&out), 0, "a forgotten key was driven");
    assert_eq!(b.state.calls.iter().count(), 0);
    assert!(b.storage.keys.get(&key(), RETENTION_US).is_none());
}

/// A crash can leave more keys "in progress" than the service has bank
/// calls at once. A real recovery job gets to every one of them, the
/// later ones as calls end, not only as many as fit at the restart:
/// the 65th key is driven to an end like the first.
#[test]
fn a_restart_drives_every_key_left_in_progress_however_many() {
    let mut b = Bench::new(ServiceConfig {
        query_on_recovery: false,
        ..config()
    });
    let claims = MAX_BANK_CALLS as u32 + 1;
    b.left_in_progress(claims);
    let restart_us = 1_000_000;
    let out = b.restart(restart_us);
    let mut sent = transfers_sent(&out);
    assert_eq!(sent.len(), MAX_BANK_CALLS);
    // The bank confirms every transfer as it arrives.
    let mut confirmed = 0;
    while confirmed < sent.len() {
        let op = sent[confirmed];
        let done = Msg::TransferDone {
            op,
            key: Key::Op { op, n: 1 },
            key_passed: true,
            result: TransferResult::Done,
        };
        let out = b.msg(restart_us, BANK, done);
        let out = b.continued(restart_us, out);
        sent.extend(transfers_sent(&out));
        confirmed += 1;
    }
    assert_eq!(sent.len(), claims as usize, "a key was never driven");
    for (key, e) in b.storage.keys.iter() {
        assert_eq!(e.value.state, KeyState::Paid, "{key:?} left in progress");
    }
}

/// Split-key-first records its key ("handled") in one transaction and
/// books in the next: claim 4711's request leaves its key without a
/// booking until that step runs.
fn key_recorded_not_booked() -> Bench {
    let mut b = Bench::new(ServiceConfig {
        idempotency: Idempotency::SplitKeyFirst,
        retention_us: RETENTION_US,
        ..config()
    });
    b.msg(0, CLIENT, pay(4711));
    assert!(b.storage.keys.get(&key(), 0).is_some());
    assert!(b.storage.bookings().is_empty());
    b
}

/// A crash between split-key-first's two transactions shows after the
/// restart as a live key without a booking. A key past its retention is
/// gone, booked or not: its missing booking says nothing about a crash,
/// and a report claiming `crash-between-steps` for it claims a gap the
/// run did not show.
#[test]
fn crash_between_steps_is_a_live_key_without_a_booking_not_an_expired_one() {
    let mut live = key_recorded_not_booked();
    let out = live.restart(RETENTION_US - 1);
    assert!(Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS));
    let mut expired = key_recorded_not_booked();
    let out = expired.restart(RETENTION_US);
    assert!(
        !Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS),
        "an expired key was counted as a crash between the steps"
    );
}

/// Claim 4711 booked and its transfer sent by `idempotency`'s first
/// step (check-then-act's act, split-booking-first's booking), its key
/// still to be recorded: the gap a crash can fall into.
fn booked_key_due(idempotency: Idempotency, delete_key_on_bank_timeout: bool) -> Bench {
    let mut b = Bench::new(ServiceConfig {
        idempotency,
        retention_us: RETENTION_US,
        delete_key_on_bank_timeout,
        ..config()
    });
    let out = b.msg(0, CLIENT, pay(4711));
    if idempotency == Idempotency::CheckThenAct {
        // The check passed; the booking and the call are its next step.
        b.fire(0, step_timer(&out));
    }
    assert_eq!(b.storage.bookings().len(), 1);
    assert!(b.storage.keys.get(&key(), 0).is_none());
    b
}

/// A crash after the booking and before the key is recorded shows after
/// the restart as a booking without a key: `crash-between-steps`.
#[test]
fn a_crash_between_the_booking_and_its_key_is_reported() {
    for design in [Idempotency::SplitBookingFirst, Idempotency::CheckThenAct] {
        let mut b = booked_key_due(design, false);
        let out = b.restart(1_000_000);
        assert!(Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS), "{design:?}");
    }
}

/// Split-booking-first: the bank confirms, the key is recorded, both
/// steps ran. Past the key's retention the booking has no key, and a
/// restart then says nothing about where a crash fell.
#[test]
fn a_booking_whose_key_expired_is_no_crash_between_steps() {
    let mut b = booked_key_due(Idempotency::SplitBookingFirst, false);
    b.fire(0, ServiceTimer::Step { slot: 0 });
    confirm(&mut b, 1_000, Op::new(&CLAIM, 4711));
    assert!(b.storage.keys.get(&key(), 1_000).is_some());
    let out = b.restart(RETENTION_US + 1_000);
    assert!(
        !Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS),
        "an expired key was counted as a crash between the steps"
    );
}

/// The bank stays silent to the last attempt. Split-booking-first
/// records its key in the second step and then deletes it
/// (`delete_key_on_bank_timeout`); check-then-act never records one.
/// Either way the booking has no key with no crash between the steps.
#[test]
fn a_booking_left_without_a_key_by_a_bank_timeout_is_no_crash_between_steps() {
    for design in [Idempotency::SplitBookingFirst, Idempotency::CheckThenAct] {
        let mut b = booked_key_due(design, true);
        if design == Idempotency::SplitBookingFirst {
            let insert = ServiceTimer::Step { slot: 0 };
            b.fire(0, insert);
            assert!(b.storage.keys.get(&key(), 0).is_some());
        }
        let out = b.fire(5_000_000, ServiceTimer::BankTimeout { slot: 0 });
        assert!(Cmd::reaches(&out, sit::BANK_GAVE_UP));
        assert!(b.storage.keys.get(&key(), 5_000_000).is_none());
        let out = b.restart(6_000_000);
        assert!(
            !Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS),
            "{design:?}: a key the bank's timeout removed was counted as a crash"
        );
    }
}

/// A restart leaves 65 keys "in progress": 64 are driven at once, the
/// last waits for a call to end. One ends; in the same instant, before
/// the recovery's next step, claim 7000 arrives, a worker takes it and
/// claims its key, and its bank call is due after its processing. The
/// recovery must not take the call the admitted request will need:
/// shed then, the request would be answered 503 ("not executed") with
/// its key claimed and booked, and with no lease every retry would get
/// 409 while a later restart paid it.
fn admitted_while_recovery_waits() -> (Bench, Op, Vec<Cmd>) {
    let processing_us = 100_000;
    let mut b = Bench::new(ServiceConfig {
        query_on_recovery: false,
        processing_us,
        ..config()
    });
    b.left_in_progress(MAX_BANK_CALLS as u32 + 1);
    let t = 1_000_000;
    assert_eq!(transfers_sent(&b.restart(t)).len(), MAX_BANK_CALLS);
    let ended = confirm(&mut b, t, Op::new(&CLAIM, 6000));
    let claim = Op::new(&CLAIM, 7000);
    let taken = b.msg(t, CLIENT, pay_msg(claim, 1));
    assert!(pay_replies(&taken).is_empty(), "claim 7000 was not taken");
    // The recovery's step, continued from the confirmation, runs now.
    let mut out = b.continued(t, ended);
    out.extend(b.fire(t + processing_us, step_timer(&taken)));
    (b, claim, out)
}

#[test]
fn the_recovery_leaves_an_admitted_request_its_bank_call() {
    let (_, claim, out) = admitted_while_recovery_waits();
    assert_eq!(pay_replies(&out), [], "claim 7000 was shed after its claim");
    assert_eq!(transfers_sent(&out), [claim]);
}

/// The key the recovery left waiting is driven once a call ends.
#[test]
fn the_recovery_drives_its_waiting_key_once_a_call_ends() {
    let (mut b, _, _) = admitted_while_recovery_waits();
    let t = 2_000_000;
    let out = confirm(&mut b, t, Op::new(&CLAIM, 6001));
    let out = b.continued(t, out);
    let last = Op::new(&CLAIM, 6000 + MAX_BANK_CALLS as u32);
    assert_eq!(transfers_sent(&out), [last]);
}
