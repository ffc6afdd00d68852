//! The payment service's designs that are easy to get subtly wrong: the
//! two split-transaction orders, leases, the state mode, and two payments
//! of one claim. Each claim that a variant holds is checked with the search
//! plain `check` runs, not the seeds alone.

use super::broke;
use crate::support::{self, check, failing_trace, load, reached, sweep, TEST_BUDGET};
use models::payment;
use models::payment::situations as sit;
use models::scenario::Verdict;
use models::{Msg, Obs};
use sim::{Outcome, SeedRange};
use std::sync::atomic::AtomicBool;

/// What plain `check` finds in a variant at the test budget: its default
/// portfolio (every seed, then exhaustive search to fault bound 3 and the
/// coverage-guided search), not the seeds alone, so a claim that a variant
/// holds is the claim a user's `check` would confirm.
fn portfolio_finds(name: &str, sets: &[&str]) -> Option<Outcome> {
    use idemsim::testing::portfolio::searches;
    let s = load(name, sets);
    let seeds = SeedRange {
        start: 0,
        end: TEST_BUDGET.into(),
    };
    if let Some(f) = sweep(&s, TEST_BUDGET).first_failure {
        return Some(f.outcome);
    }
    let stop = AtomicBool::new(false);
    searches(&s.system, seeds, support::JOBS, &stop)
        .first()
        .map(|f| f.outcome.clone())
}

#[test]
fn split_booking_first_pays_twice_when_a_crash_or_a_duplicate_falls_between_its_steps() {
    const NAME: &str = "payment-split-booking-first";
    let (entries, outcome) = failing_trace(NAME);
    assert!(broke(&outcome, "no-duplicate-effect"), "{outcome:?}");
    assert!(reached(&entries, sit::CRASH_BETWEEN_STEPS));
    // Without crashes and without duplicates the same design never pays twice.
    let no_crash = "crashes.service.crash_per_mille=0";
    assert_eq!(portfolio_finds(NAME, &[no_crash]), None);
    // The key insert is a second transaction: a duplicate request taken
    // between the booking and the key finds no key and starts a second
    // execution, with no crash at all.
    let twins = "network.links=[{to=\"service\", duplicate_per_mille=[0,300]}]";
    let slow = "service.processing_ms=200";
    let instant = "service.processing_ms=0";
    for gap in [slow, instant] {
        // With no time between the two steps the window is still there:
        // the two copies of a duplicated request arrive together and, with
        // a worker each (`workers = 0`: no limit), both look the key up
        // before either step 2 stores it. Two transactions are two commits
        // however close; the exhaustive search finds it with one duplicate.
        let found = portfolio_finds(NAME, &[no_crash, twins, gap]);
        assert!(
            found
                .as_ref()
                .is_some_and(|o| broke(o, "at-most-one-executor")),
            "{gap}: {found:?}"
        );
    }
    for gap in [slow, instant] {
        // One worker takes the copies one after the other: it is busy until
        // its key is stored, so the second copy finds the key. With both in
        // one transaction there is no window at all.
        for fix in ["service.workers=1", "service.idempotency=claim-same-tx"] {
            let found = portfolio_finds(NAME, &[no_crash, twins, gap, fix]);
            assert_eq!(found, None, "{gap} {fix}");
        }
    }
}

#[test]
fn split_key_first_answers_paid_from_a_key_without_booking() {
    let (entries, outcome) = failing_trace("payment-split-key-first");
    assert!(broke(&outcome, "no-false-success"), "{outcome:?}");
    assert!(reached(&entries, sit::CRASH_BETWEEN_STEPS));
    assert!(reached(&entries, sit::DUPLICATE_AFTER_COMMIT));
}

#[test]
fn a_short_lease_lets_a_second_executor_take_over_a_running_one() {
    let (entries, outcome) = failing_trace("payment-lease-too-short");
    assert!(broke(&outcome, "at-most-one-executor"), "{outcome:?}");
    assert!(reached(&entries, sit::LEASE_EXPIRED_TAKEOVER));
    assert!(reached(&entries, sit::LEASE_TAKEN_FROM_RUNNING));
    // A lease that covers the call is taken over only from executions that
    // did end (a bank that stayed silent through every attempt): never from
    // a running one.
    let s = load("payment-lease-covers-bank-call", &[]);
    let sum = sweep(&s, TEST_BUDGET);
    assert!(sum.tally.situations.contains(sit::LEASE_EXPIRED_TAKEOVER));
    assert!(!sum.tally.situations.contains(sit::LEASE_TAKEN_FROM_RUNNING));
    // Without a lease the key is never taken over: no second executor.
    check(
        "payment-lease-too-short",
        &["service.lease_ms=0"],
        TEST_BUDGET,
        Verdict::Holds,
        None,
    );
}

#[test]
fn the_state_mode_races_when_its_read_and_write_are_not_conditional() {
    let (entries, outcome) = failing_trace("payment-state-read-then-pay");
    assert!(broke(&outcome, "no-duplicate-effect"), "{outcome:?}");
    // Both transfers were made on a reading of "0 EUR paid".
    let reads_of_zero = entries
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                sim::TraceKind::Deliver {
                    msg: Msg::Payment(payment::Msg::StatusReply { paid_eur: 0, .. }),
                    ..
                }
            )
        })
        .count();
    assert!(reads_of_zero >= 2, "{reads_of_zero} readings of 0 EUR");
}

#[test]
fn two_payments_of_one_claim_are_two_operations_each_landing_once_with_its_own_amount() {
    let landed = |entries: &[support::Entry]| -> Vec<(String, u32)> {
        entries
            .iter()
            .filter_map(|e| match &e.kind {
                sim::TraceKind::Observe {
                    obs: Obs::Effect { op, payload, .. },
                    ..
                } => Some((op.to_string(), *payload)),
                _ => None,
            })
            .collect()
    };
    let both = [
        ("claim 4711".to_string(), 1200),
        ("claim 4711/02".to_string(), 300),
    ];
    // Without faults each payment lands once, whichever way the bank counts.
    for by in ["claim", "payment"] {
        let by = format!("bank.status_by={by}");
        let s = load("payment-status-query-by-claim", &["network.links=[]", &by]);
        let (entries, outcome) = support::trace_of(&s, 0);
        assert!(matches!(outcome, Outcome::Holds), "{by}: {outcome:?}");
        assert_eq!(landed(&entries), both, "{by}");
    }
    // Asked by claim, payment 01's transfer answers for payment 02's.
    let (entries, _) = failing_trace("payment-status-query-by-claim");
    assert_eq!(landed(&entries), both[..1]);
}
