//! A taken request's steps: a 503 only for a request not executed, and a
//! shed request's retry not blocked by its key.

use super::super::Idempotency;
use super::super::{ServiceConfig, MAX_BANK_CALLS, MAX_STEPS};
use super::harness::{config, confirm, pay_msg, pay_replies, transfers_sent, Bench, Cmd, BANK};
use crate::core::{Carries, Key, Op};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::{TransferResult, CLAIM};
use sim::ActorId;

const CLIENT: ActorId = 1;

/// Split-booking-first records each key in a second transaction, a
/// step 1 s after the booking and the transfer. A bank that confirms
/// at once frees each request's call long before that, and a burst of
/// claims meets a service whose every slot is taken. A request the
/// service cannot carry through is refused before anything is done for
/// it: a 503 says "not executed", and a client told so may give the
/// claim up as failed.
#[test]
fn split_booking_first_answers_503_only_for_a_request_it_did_not_execute() {
    let mut b = Bench::new(ServiceConfig {
        idempotency: Idempotency::SplitBookingFirst,
        pass_key_to_bank: false,
        processing_us: 1_000_000,
        ..config()
    });
    let mut shed = 0;
    for id in 0..=MAX_STEPS as u32 {
        let op = Op::new(&CLAIM, 5000 + id);
        let booked = b.storage.bookings().len();
        let out = b.msg(
            u64::from(id),
            CLIENT,
            pay_msg(Op::new(&CLAIM, 5000 + id), 1),
        );
        let sent_transfer = Cmd::sent(&out).any(|m| matches!(m.peek(), Some(Msg::Transfer { .. })));
        let told_503 = Cmd::sent(&out).any(|m| {
            matches!(
                m.peek(),
                Some(Msg::PayReply {
                    status: PayStatus::Overloaded,
                    ..
                })
            )
        });
        if told_503 {
            shed += 1;
            assert!(!sent_transfer, "{op} was paid and answered 503");
            assert_eq!(
                b.storage.bookings().len(),
                booked,
                "{op} was booked and answered 503"
            );
            continue;
        }
        let done = Msg::TransferDone {
            op,
            key: Key::Op { op, n: 1 },
            key_passed: false,
            result: TransferResult::Done,
        };
        b.msg(u64::from(id), BANK, done);
    }
    // Not a vacuous pass: the burst did meet a full service.
    assert!(shed > 0, "no request found the service full");
}

/// 64 claims hold every bank call of a service whose bank is silent:
/// the 65th is refused with 503, "not executed". That must be true of
/// its key too: once a call ends, its retry is a new request and is
/// paid, not answered 409 for a claim nobody is working on, with a
/// lease or without one (where nothing would ever free the key).
#[test]
fn a_request_shed_while_every_bank_call_is_busy_does_not_block_its_retry() {
    for lease_us in [0, 30_000_000] {
        let mut b = Bench::new(ServiceConfig {
            lease_us,
            ..config()
        });
        for id in 0..MAX_BANK_CALLS as u32 {
            let out = b.msg(0, CLIENT, pay_msg(Op::new(&CLAIM, 6000 + id), 1));
            assert_eq!(transfers_sent(&out).len(), 1);
        }
        let late = Op::new(&CLAIM, 7000);
        let shed = b.msg(1_000, CLIENT, pay_msg(late, 1));
        assert_eq!(pay_replies(&shed), [PayStatus::Overloaded]);
        confirm(&mut b, 2_000, Op::new(&CLAIM, 6000));
        let retry = b.msg(3_000, CLIENT, pay_msg(late, 2));
        assert_eq!(transfers_sent(&retry), [late], "lease {lease_us} µs");
        assert!(pay_replies(&retry).is_empty());
    }
}
