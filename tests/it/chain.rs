//! The insurer chain end to end: both effects (the transfer per claim, the
//! booking in accounting per event) exactly once, the outbox row in the
//! booking's own step, and each broken hop caught by the right invariant.

use crate::support;

use models::chain::situations as chain_sit;
use models::core::ledger::counter;
use models::core::Obs;
use models::messaging::situations as msg_sit;
use models::payment;
use sim::{Outcome, TraceKind};
use support::{failing_trace, load, reached, refuses, sweep, trace_of, Entry};

const SEEDS: u64 = 300;

fn effects(entries: &[Entry], site: &str) -> usize {
    entries
        .iter()
        .filter(|e| matches!(&e.kind, TraceKind::Observe { obs: Obs::Effect { site: s, .. }, .. } if s.name == site))
        .count()
}

fn broke(outcome: &Outcome, invariant: &str) -> bool {
    matches!(outcome, Outcome::Violation(v) if v.invariant == invariant)
}

#[test]
fn every_claim_is_paid_once_and_every_booking_booked_once_in_accounting() {
    let s = load("chain-outbox-inbox", &[]);
    let sum = sweep(&s, SEEDS);
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    let n = |name| sum.tally.counter(name).unwrap()[0];
    let claims = 2 * SEEDS;
    assert_eq!(n(counter::OPERATIONS), claims);
    // One booking per claim, so one event owed per claim: no more, no fewer.
    assert_eq!(n(counter::EVENTS), claims);
    assert_eq!(n(counter::DUPLICATED_OPS) + n(counter::LOST_OPS), 0);
    // The faults reached every hop's protection.
    for situation in [
        payment::situations::BANK_DEDUP_HIT,
        msg_sit::REPUBLISH_AFTER_CRASH,
        msg_sit::INBOX_HIT,
        msg_sit::LEASE_EXPIRED_REDELIVERY,
    ] {
        assert!(sum.tally.situations.contains(situation), "{situation}");
    }
}

/// The outbox row is written in the step that books, which is one
/// transaction: the event is owed from the moment the booking exists.
#[test]
fn the_outbox_row_commits_in_the_step_that_books() {
    let s = load("chain-outbox-inbox", &[]);
    let mut checked = 0;
    for seed in 0..50 {
        let (entries, _) = trace_of(&s, seed);
        let service = 1;
        for e in &entries {
            let TraceKind::Observe {
                actor,
                obs: Obs::Committed { entity, .. },
            } = e.kind
            else {
                continue;
            };
            assert_eq!(actor, service);
            // The same step claimed the claim's key and started its execution.
            let claimed = entries.iter().any(|o| {
                o.step == e.step
                    && matches!(o.kind, TraceKind::Observe { obs: Obs::ExecStart { key }, .. }
                        if matches!(key, models::core::Key::Op { op, .. } if op.id == entity.id))
            });
            assert!(
                claimed,
                "seed {seed}: the outbox row of {entity} is not in its booking's step"
            );
            checked += 1;
        }
    }
    assert!(checked >= 100, "{checked} bookings checked");
}

#[test]
fn an_event_published_before_the_commit_announces_a_booking_that_does_not_exist() {
    let (entries, outcome) = failing_trace("chain-event-published-first");
    assert!(broke(&outcome, "no-phantom-event"), "{outcome:?}");
    assert!(reached(&entries, chain_sit::PUBLISHED_WITHOUT_BOOKING));
    // The money left once; accounting booked the phantom too.
    assert_eq!(effects(&entries, "transfer"), 1);
    assert!(effects(&entries, "booking in accounting") >= 1);
}

#[test]
fn a_blind_resend_to_the_bank_is_seen_end_to_end_while_accounting_books_once() {
    let (entries, outcome) = failing_trace("chain-bank-retried-blindly");
    assert!(broke(&outcome, "no-duplicate-effect"), "{outcome:?}");
    assert!(reached(&entries, payment::situations::BANK_RETRIED));
    assert_eq!(effects(&entries, "transfer"), 2);
    // The service booked once: its own records show one payment.
    let committed = entries
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                TraceKind::Observe {
                    obs: Obs::Committed { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(committed, 1);
}

#[test]
fn accounting_without_an_inbox_books_a_redelivery_twice() {
    let (entries, outcome) = failing_trace("chain-accounting-without-inbox");
    assert!(broke(&outcome, "no-duplicate-effect"), "{outcome:?}");
    assert!(reached(&entries, msg_sit::REDELIVERED_AFTER_EFFECT));
    assert_eq!(effects(&entries, "transfer"), 1);
    assert_eq!(effects(&entries, "booking in accounting"), 2);
}

#[test]
fn accounting_that_acks_before_booking_loses_a_paid_claims_booking() {
    let (entries, outcome) = failing_trace("chain-accounting-ack-before-commit");
    assert!(broke(&outcome, "no-lost-effect"), "{outcome:?}");
    assert!(effects(&entries, "transfer") >= 1);
    assert!(entries
        .iter()
        .any(|e| matches!(e.kind, TraceKind::Crash { .. })));
}

#[test]
fn the_hops_are_wired_as_the_articles_chain_and_refuse_what_cannot_be_chained() {
    let s = load("chain-outbox-inbox", &[]);
    assert_eq!(
        s.system.world.actor_names,
        [
            "client",
            "service",
            "bank",
            "broker",
            "accounting-db",
            "accounting-1",
            "accounting-2"
        ]
    );
    let base = "summary = \"x\"\nmodel = \"chain\"\n[expect]\nverdict = \"holds\"\n";
    let cases: &[(&str, &str, &str)] = &[
        (
            "[service]\nmode = \"state\"\n[bank]\nstatus_query = true\n",
            "only \"action\" mode books",
            "mode = \"action\"",
        ),
        (
            "[service]\nidempotency = \"check-then-act\"\n[outbox]\nwrite = \"event-first\"\n",
            "books in a later step",
            "claim-same-tx",
        ),
        (
            "[accounting]\nhandler = \"set-value\"\n",
            "would keep only the last one",
            "inbox-same-tx",
        ),
        (
            "[outbox]\nwrite = \"ouxbox\"\n",
            "unknown value \"ouxbox\"",
            "did you mean \"outbox\"",
        ),
        (
            "[consumer]\nhandler = \"effect\"\n",
            "unknown key `consumer` for the chain model",
            "`accounting`",
        ),
    ];
    refuses(base, cases);
}

/// A claim paid in two parts: each payment is its own operation at every
/// hop, booked, announced (its event names the payment) and paid once.
#[test]
fn two_payments_of_one_claim_are_booked_announced_and_paid_each_once() {
    let s = load("chain-key-per-payment", &[]);
    for seed in 0..20 {
        let (entries, outcome) = trace_of(&s, seed);
        assert!(
            matches!(outcome, Outcome::Holds),
            "seed {seed}: {outcome:?}"
        );
        let mut announced: Vec<models::core::Op> = entries
            .iter()
            .filter_map(|e| match e.kind {
                TraceKind::Observe {
                    obs: Obs::Committed { entity, .. },
                    ..
                } => Some(entity),
                _ => None,
            })
            .collect();
        announced.sort();
        let first = models::core::Op::new(&payment::CLAIM, 4711);
        let second = models::core::Op::part(&payment::CLAIM, 4711, 1);
        assert_eq!(announced, [first, second], "seed {seed}");
        assert_eq!(effects(&entries, "transfer"), 2, "seed {seed}");
        assert_eq!(effects(&entries, "booking in accounting"), 2, "seed {seed}");
    }
    // A key from the claim's number alone: the second payment arrives
    // under the first one's key, and is never booked or paid.
    let same = load("chain-key-per-payment", &["client.key=claim"]);
    let (entries, outcome) = trace_of(&same, 0);
    assert!(broke(&outcome, "one-key-one-operation"), "{outcome:?}");
    assert!(reached(&entries, payment::situations::KEY_COLLISION));
    assert_eq!(effects(&entries, "transfer"), 1);
}

/// Booked before the bank call, the bank cut off until the client gave up:
/// the books hold a payment the bank never made, which only `books-agree`
/// sees; the reconciliation job's re-drive makes the booking true.
#[test]
fn a_booking_the_bank_never_paid_breaks_books_agree_until_reconciliation_pays_it() {
    let (entries, outcome) = failing_trace("chain-booked-before-bank-cut-off");
    assert!(broke(&outcome, "books-agree"), "{outcome:?}");
    assert_eq!(effects(&entries, "transfer"), 0);
    assert_eq!(effects(&entries, "booking in accounting"), 1);
    let fixed = load("chain-booked-then-reconciled", &[]);
    let (entries, outcome) = trace_of(&fixed, 0);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert!(reached(&entries, payment::situations::RECONCILE_REDRIVEN));
    assert_eq!(effects(&entries, "transfer"), 1);
    assert_eq!(effects(&entries, "booking in accounting"), 1);
    // The same file, its job looking at its dead letter and no more.
    let no_job = load(
        "chain-booked-then-reconciled",
        &["client.reconcile.max_rounds=0"],
    );
    let (_, outcome) = trace_of(&no_job, 0);
    assert!(broke(&outcome, "books-agree"), "{outcome:?}");
}

/// `idemsim models` describes each situation once: the chain reuses the
/// payment and messaging situations and names them instead of repeating them.
#[test]
fn models_lists_the_chains_own_situations_and_names_the_reused_ones() {
    let (out, _) = support::cli::run_case(&support::cli::case("models", &["models"]));
    let chain = out
        .split("\nmodel ")
        .find(|m| m.starts_with("chain:"))
        .expect("the chain is listed");
    assert!(chain.contains("published-without-booking"), "{chain}");
    assert!(
        chain.contains("and those of payment and messaging (above)"),
        "{chain}"
    );
    assert!(!chain.contains("client-retried"), "{chain}");
    assert_eq!(out.matches("\n    client-retried ").count(), 1, "{out}");
}
