//! The worker pool and its queue: first in first out, shedding, expired
//! work, the worker a key insert holds, the recovery's turns, a crash.

use super::super::{Idempotency, KeyState};
use super::super::{ServiceConfig, ServiceTimer};
use super::harness::{self, timers, Bench, Cmd};
use crate::core::obs::Layer;
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::situations as sit;
use crate::payment::CLAIM;
use sim::Command;
use sim::TimeUs;

/// One worker taking 100 ms per request, a queue of two.
fn config(drop_expired: bool) -> ServiceConfig {
    ServiceConfig {
        processing_us: 100_000,
        workers: 1,
        queue_max: 2,
        drop_expired,
        query_on_recovery: false,
        ..harness::config()
    }
}

impl Bench {
    fn pay_claim(&mut self, now_us: TimeUs, claim: u32, attempt: u32, timeout_ms: u32) -> Vec<Cmd> {
        let op = Op::new(&CLAIM, claim);
        let pay = Msg::Pay {
            op,
            attempt,
            key: Key::Op { op, n: 1 },
            amount_eur: 100,
            timeout_ms,
        };
        // Each claim's client is the actor with its number.
        self.msg(now_us, claim, pay)
    }

    fn bank_done(&mut self, now_us: TimeUs, claim: u32) -> Vec<Cmd> {
        harness::confirm(self, now_us, Op::new(&CLAIM, claim))
    }
}

fn worked(out: &[Cmd]) -> Vec<u32> {
    out.iter()
        .filter_map(|c| match c {
            Command::Observe(Obs::Work { op, .. }) => Some(op.id),
            _ => None,
        })
        .collect()
}

fn reached(out: &[Cmd], s: sim::SituationId) -> bool {
    Cmd::reaches(out, s)
}

fn replies(out: &[Cmd]) -> Vec<(u32, PayStatus)> {
    out.iter()
        .filter_map(|c| match c {
            Command::Send { to, msg } => match msg.peek() {
                Some(&Msg::PayReply { status, .. }) => Some((*to, status)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn one_worker_queues_two_sheds_the_fourth_and_serves_first_in_first_out() {
    let mut b = Bench::new(config(false));
    let first = b.pay_claim(0, 1, 1, 1000);
    assert_eq!(worked(&first), [1]);
    assert_eq!(timers(&first), [(ServiceTimer::Step { slot: 0 }, 100_000)]);
    for claim in [2, 3] {
        let out = b.pay_claim(10, claim, 1, 1000);
        assert!(worked(&out).is_empty() && reached(&out, sit::QUEUED));
    }
    let shed = b.pay_claim(20, 4, 1, 1000);
    assert_eq!(replies(&shed), [(4, PayStatus::Overloaded)]);
    assert!(shed.iter().any(|c| matches!(
        c,
        Command::Observe(Obs::Shed {
            layer: Layer {
                name: "service",
                ..
            },
            ..
        })
    )));
    // Processing done, the bank is called: the worker is still busy.
    let call = b.fire(100_000, ServiceTimer::Step { slot: 0 });
    assert!(!timers(&call).contains(&(ServiceTimer::Dequeue, 0)));
    // The bank answers: the client is told, and the worker is free for claim 2.
    let done = b.bank_done(110_000, 1);
    assert_eq!(replies(&done), [(1, PayStatus::Paid)]);
    assert!(timers(&done).contains(&(ServiceTimer::Dequeue, 0)));
    let next = b.fire(110_000, ServiceTimer::Dequeue);
    assert_eq!(worked(&next), [2]);
    assert_eq!(b.state.workers.queued(), 1);
}

#[test]
fn a_queued_request_past_its_deadline_is_worked_on_unless_expired_work_is_dropped() {
    for drop_expired in [false, true] {
        let mut b = Bench::new(config(drop_expired));
        b.pay_claim(0, 1, 1, 1000);
        b.pay_claim(0, 2, 1, 50); // its client waits 50 ms
        b.pay_claim(0, 3, 1, 10_000);
        b.fire(100_000, ServiceTimer::Step { slot: 0 });
        b.bank_done(110_000, 1);
        let next = b.fire(110_000, ServiceTimer::Dequeue);
        if drop_expired {
            assert!(reached(&next, sit::EXPIRED_DROPPED));
            assert_eq!(worked(&next), [3]);
        } else {
            assert!(reached(&next, sit::WORKED_AFTER_DEADLINE));
            assert_eq!(worked(&next), [2]);
        }
    }
}

#[test]
fn an_answer_from_the_key_table_costs_its_processing_too() {
    let mut b = Bench::new(config(false));
    b.pay_claim(0, 1, 1, 1000);
    b.fire(100_000, ServiceTimer::Step { slot: 0 });
    b.bank_done(110_000, 1);
    // The retry finds the key paid; it is answered after processing, not at once.
    let retry = b.pay_claim(200_000, 1, 2, 1000);
    assert!(replies(&retry).is_empty());
    let [(timer, 100_000)] = timers(&retry)[..] else {
        panic!("{retry:?}");
    };
    let answer = b.fire(300_000, timer);
    assert_eq!(replies(&answer), [(1, PayStatus::Paid)]);
}

/// Split-booking-first books and calls the bank, then records the key
/// in a second transaction after its processing. The handler runs both:
/// its worker is busy until the key is stored, however soon the bank
/// confirms. With one worker, a second request waits for the insert.
#[test]
fn split_booking_first_holds_the_worker_until_its_key_is_stored() {
    let mut b = Bench::new(ServiceConfig {
        idempotency: Idempotency::SplitBookingFirst,
        pass_key_to_bank: false,
        processing_us: 1_000_000,
        ..config(false)
    });
    let first = b.pay_claim(0, 1, 1, 10_000);
    assert_eq!(worked(&first), [1]);
    let insert = ServiceTimer::Step { slot: 0 };
    assert!(timers(&first).contains(&(insert, 1_000_000)), "{first:?}");
    // The bank confirms long before the key insert is due.
    let done = b.bank_done(10_000, 1);
    assert_eq!(replies(&done), [(1, PayStatus::Paid)]);
    let second = b.pay_claim(20_000, 2, 1, 10_000);
    assert!(
        worked(&second).is_empty() && reached(&second, sit::QUEUED),
        "claim 2 was taken while claim 1's key insert held the one worker"
    );
    // The key is stored: the worker is free for claim 2.
    let stored = b.fire(1_000_000, insert);
    assert!(timers(&stored).contains(&(ServiceTimer::Dequeue, 0)));
    let next = b.fire(1_000_000, ServiceTimer::Dequeue);
    assert_eq!(worked(&next), [2]);
}

/// A request the network delivered twice is, to split-booking-first,
/// two requests from one caller: two bookings, two bank calls, two key
/// inserts, two workers. One confirmation frees neither: both inserts
/// are still to run.
#[test]
fn a_duplicated_split_booking_first_request_holds_two_workers_until_both_keys_are_stored() {
    let mut b = Bench::new(ServiceConfig {
        idempotency: Idempotency::SplitBookingFirst,
        pass_key_to_bank: false,
        processing_us: 1_000_000,
        workers: 2,
        ..config(false)
    });
    for copy in [0, 1] {
        assert_eq!(worked(&b.pay_claim(copy, 1, 1, 10_000)), [1]);
    }
    b.bank_done(10_000, 1);
    let other = b.pay_claim(20_000, 2, 1, 10_000);
    assert!(
        worked(&other).is_empty() && reached(&other, sit::QUEUED),
        "claim 2 was taken while two key inserts held both workers"
    );
}

/// A restart finds ten keys "in progress" in a service of four workers
/// (one bank call each, 0 ms of processing). The recovery runs on those
/// workers: four calls at once, never more. A request that arrives now
/// queues, and waits in the same line as the recovery's next key, not
/// behind all of them: it is taken within the next two freed workers.
/// Every key is still driven to an end, and the request is paid.
#[test]
fn the_recovery_runs_on_the_workers_and_queued_requests_take_turns_with_it() {
    let mut b = Bench::new(ServiceConfig {
        workers: 4,
        queue_max: 10,
        processing_us: 0,
        ..config(false)
    });
    b.left_in_progress(10);
    let t = 1_000_000;
    b.restart(t);
    assert_eq!(b.state.calls.busy(), 4, "the recovery outran its workers");
    let queued = b.pay_claim(t, 7000, 1, 0);
    assert!(worked(&queued).is_empty() && reached(&queued, sit::QUEUED));
    let mut freed = 0;
    let mut taken_after = None;
    loop {
        let first = b.state.calls.iter().next().map(|(_, c)| c.op.id);
        let Some(claim) = first else { break };
        let out = b.bank_done(t, claim);
        let out = b.continued(t, out);
        freed += 1;
        if worked(&out).contains(&7000) {
            taken_after = Some(freed);
        }
        assert!(b.state.calls.busy() <= 4, "more calls than workers");
    }
    assert!(
        taken_after.is_some_and(|n| n <= 2),
        "taken after {taken_after:?}"
    );
    for (key, e) in b.storage.keys.iter() {
        assert_eq!(e.value.state, KeyState::Paid, "{key:?}");
    }
    assert_eq!(freed, 11);
}

#[test]
fn a_crash_loses_the_queue() {
    let mut b = Bench::new(config(false));
    b.pay_claim(0, 1, 1, 1000);
    b.pay_claim(0, 2, 1, 1000);
    assert_eq!(b.state.workers.queued(), 1);
    // A restart rebuilds the volatile state from storage: nothing is
    // queued. The engine hands back the old state only for its allocations.
    b.restart(1_000_000);
    let st = &b.state;
    assert!(st.workers.is_empty());
    // Claim 1 had claimed its key: the restart drives it to an end. Claim 2
    // had only queued: nothing of it is left, its client will retry.
    let calls: Vec<u32> = st.calls.iter().map(|(_, c)| c.op.id).collect();
    assert_eq!(calls, [1]);
    assert_eq!(b.storage.keys.len(), 1);
}
