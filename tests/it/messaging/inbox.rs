//! Inboxes: retention against redeliveries and resends, bounds, the
//! redelivered flag, and record-first rows.

use super::helpers::{eod_checked, failing_trace, swept};
use crate::support;
use crate::support::{load, reached, sweep, trace_of};
use models::core::Carries;
use models::messaging::{self, situations as sit};
use models::Obs;
use sim::{Outcome, TraceKind};

/// The inbox's cleanup, from the domain: a message keeps coming back one
/// visibility timeout (30 s) after each delivery whose ack was lost, so its
/// duplicates come for visibility timeout x (deliveries - 1) after the
/// commit. A row kept shorter than that is deleted before the last one; a
/// row kept longer, or forever, catches every one.
#[test]
fn an_inbox_row_outlives_the_redeliveries_only_when_its_retention_is_longer() {
    let name = "messaging-inbox-cleaned-too-early";
    // 10 s: the lowest failing seed's redelivery passes the inbox and pays again.
    let trace = failing_trace(name, "no-duplicate-effect", 300);
    let at = |situation| {
        trace
            .iter()
            .position(|k| matches!(k, TraceKind::Reached { situation: s, .. } if *s == situation))
    };
    let reaped = at(sit::INBOX_ROW_REAPED).expect("the cleanup deleted a row");
    let passed = at(sit::REDELIVERED_AFTER_INBOX_CLEANUP).expect("the duplicate passed");
    let redelivered = at(sit::LEASE_EXPIRED_REDELIVERY).expect("a lease ran out");
    assert!(redelivered < reaped && reaped < passed, "{trace:#?}");

    let judge = |sets: &[&str]| sweep(&load(name, sets), 300);
    let holds = |sets: &[&str]| {
        let sum = judge(sets);
        assert!(
            sum.first_failure.is_none(),
            "{sets:?}: {:?}",
            sum.first_failure
        );
        assert_eq!(sum.tally.inconclusive, 0, "{sets:?}");
        assert!(
            !sum.tally
                .situations
                .contains(sit::REDELIVERED_AFTER_INBOX_CLEANUP),
            "{sets:?}"
        );
        assert!(sum.tally.situations.contains(sit::INBOX_HIT), "{sets:?}");
    };
    let fails = |sets: &[&str]| {
        let sum = judge(sets);
        assert!(sum.first_failure.is_some(), "{sets:?} should duplicate");
        assert!(
            sum.tally
                .situations
                .contains(sit::REDELIVERED_AFTER_INBOX_CLEANUP),
            "{sets:?}"
        );
    };
    // Two deliveries: one redelivery, 30 s after the first.
    fails(&[
        "broker.max_deliveries=2",
        "consumer.inbox_retention_ms=29000",
    ]);
    holds(&[
        "broker.max_deliveries=2",
        "consumer.inbox_retention_ms=31000",
    ]);
    // Three: the last one 60 s after.
    fails(&[
        "broker.max_deliveries=3",
        "consumer.inbox_retention_ms=31000",
    ]);
    holds(&[
        "broker.max_deliveries=3",
        "consumer.inbox_retention_ms=61000",
    ]);
    // Unlimited deliveries: one lease's worth fails where two acks in a row
    // were lost; only a retention past every run's last redelivery holds.
    fails(&["consumer.inbox_retention_ms=31000"]);
    holds(&["consumer.inbox_retention_ms=0"]);
}

/// A webhook provider resends hourly for 3 days while the receiver's 2xx
/// answers are cut for 30 hours: ids kept 24 h let the settlement be booked
/// a second time, more than 24 h after the first booking and after the
/// receiver's cleanup deleted its id; ids kept past the provider's horizon,
/// or forever, catch every resend.
#[test]
fn webhook_event_ids_must_outlive_the_providers_retry_horizon() {
    const DAY_US: u64 = 24 * 3600 * 1_000_000;
    let name = "messaging-webhook-ids-forgotten";
    let s = load(name, &[]);
    let f = sweep(&s, 300).first_failure.expect("a resend books again");
    let (entries, outcome) = trace_of(&s, f.seed);
    assert!(matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-duplicate-effect"));
    let effects: Vec<u64> = entries
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                TraceKind::Observe {
                    obs: Obs::Effect { .. },
                    ..
                }
            )
        })
        .map(|e| e.time_us)
        .collect();
    assert_eq!(effects.len(), 2, "booked twice");
    assert!(
        effects[1] - effects[0] > DAY_US,
        "{effects:?}: the second after the id's 24 h"
    );
    let reaped = entries
        .iter()
        .find(|e| matches!(e.kind, TraceKind::Reached { situation, .. } if situation == sit::INBOX_ROW_REAPED))
        .expect("the cleanup deleted the id");
    assert!(effects[0] + DAY_US <= reaped.time_us && reaped.time_us <= effects[1]);
    // 73 h: past the last of 72 hourly resends; 0: kept forever.
    for kept in ["262800000", "0"] {
        let sum = sweep(
            &load(name, &[&format!("consumer.inbox_retention_ms={kept}")]),
            300,
        );
        assert!(
            sum.first_failure.is_none(),
            "kept {kept} ms: {:?}",
            sum.first_failure
        );
        assert!(
            sum.tally.situations.contains(sit::INBOX_HIT),
            "kept {kept} ms"
        );
    }
}

/// A bound on the inbox is judged on every insert: six events with rows
/// kept forever exceed 4 rows and 6 rows do not; rows kept an hour (one
/// event every 20 minutes) stay within 4.
#[test]
fn an_inbox_bound_fires_only_when_rows_outgrow_it() {
    let name = "messaging-inbox-retention";
    let forever = load(name, &["consumer.inbox_retention_ms=0"]);
    let sum = sweep(&forever, 50);
    let f = sum.first_failure.expect("6 rows over a bound of 4");
    match &f.outcome {
        Outcome::Violation(v) => assert_eq!(v.invariant, "dedup-store-bounded", "{f:?}"),
        o => panic!("{o:?}"),
    }
    for sets in [
        &["consumer.inbox_retention_ms=0", "consumer.inbox_max_rows=6"][..],
        &["consumer.inbox_retention_ms=0", "consumer.inbox_max_rows=0"][..],
        &[][..],
    ] {
        let s = load(name, sets);
        let sum = sweep(&s, 50);
        assert!(
            sum.first_failure.is_none(),
            "{sets:?}: {:?}",
            sum.first_failure
        );
    }
}

/// RabbitMQ's redelivered flag, from the domain: it is set on a delivery of
/// a message the broker delivered before, so a consumer that reads its inbox
/// only then catches every redelivery and no second message. With only the
/// consumer crashing, nothing publishes a second message and the design
/// holds on the same seeds; with lost confirmations, the unflagged copy pays.
#[test]
fn the_redelivered_flag_catches_redeliveries_and_not_a_second_message() {
    // Only the consumer's side fails: no lost publish confirmation.
    let text = std::fs::read_to_string(
        support::scenario_dir().join("messaging-dedup-only-redelivered.toml"),
    )
    .expect("the scenario file");
    let confirmed = text.replace("loss_per_mille = [0, 300]", "loss_per_mille = 0");
    assert_ne!(confirmed, text, "the confirmations' link is in the file");
    let s = support::load_text("confirmed.toml", &confirmed, &[]);
    let sum = sweep(&s, 300);
    assert!(sum.first_failure.is_none(), "{:?}", sum.first_failure);
    // Some crash came after a commit: the redelivery, flagged, hit the inbox.
    let caught = (0..300)
        .map(|seed| trace_of(&s, seed).0)
        .find(|t| reached(t, sit::INBOX_HIT));
    let caught = caught.expect("some redelivery is caught by the inbox");
    assert!(reached(&caught, sit::LEASE_EXPIRED_REDELIVERY));
    assert!(!reached(&caught, sit::REPUBLISH_TAKEN_FOR_FIRST_DELIVERY));

    // The failing seed: one event in two messages, each first delivered unflagged.
    let trace = failing_trace(
        "messaging-dedup-only-redelivered",
        "no-duplicate-effect",
        300,
    );
    let mut unflagged: Vec<(u32, u32)> = trace
        .iter()
        .filter_map(|k| match k {
            TraceKind::Deliver {
                msg,
                duplicate: false,
                ..
            } => match msg.peek() {
                Some(&messaging::Msg::Deliver {
                    ev,
                    receipt,
                    redelivered: false,
                    ..
                }) => Some((ev.id, receipt)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    unflagged.sort_unstable();
    assert!(
        unflagged
            .windows(2)
            .any(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1),
        "an event delivered unflagged under two receipts: {unflagged:?}"
    );
    assert!(trace.iter().any(|k| matches!(
        k,
        TraceKind::Reached { situation, .. } if *situation == sit::REPUBLISH_TAKEN_FOR_FIRST_DELIVERY
    )));
}

/// An inbox row is an insert keyed by the message id: a second insert fails
/// on the primary key. A record-first consumer can therefore lose an event
/// (a crash between the row and the effect) but never apply one twice, even
/// when two consumers hold copies of it at once; with the row written after
/// the effect, the same race applies it twice.
#[test]
fn a_record_first_inbox_never_applies_an_event_twice() {
    let text = r#"
summary = "two consumers race for republished copies"
model = "messaging"
[producer]
write = "outbox"
publish_timeout_ms = 100
[broker]
visibility_timeout_ms = 30000
consumers = 2
[consumer]
handler = "inbox-record-first"
ack = "after-commit"
processing_ms = 200
processing_jitter_ms = 2000
[network]
delay_ms_min = 1
delay_ms_max = 50
[[network.links]]
from = "broker"
to = "producer"
loss_per_mille = [0, 900]
[[events]]
entity = 4711
value = 1200
"#;
    let s = support::load_text("race.toml", text, &[]);
    let sum = sweep(&s, 1000);
    assert!(sum.violation().is_none(), "{:?}", sum.first_failure);
    // The race happened: a second copy met the first one's row.
    assert!(sum.tally.situations.contains(sit::DUPLICATE_PUBLISH));
    assert!(sum.tally.situations.contains(sit::INBOX_ROW_WITHOUT_EFFECT));
    let after = support::load_text("race.toml", text, &["consumer.handler=inbox-separate-tx"]);
    let raced = sweep(&after, 1000);
    let v = raced.violation().expect("the effect first races");
    assert_eq!(v.invariant, "no-duplicate-effect");
}

/// A record-first inbox behind a database that loses answers, acked before
/// the commit and never crashing: its effect is a transaction of its own
/// that reads nothing, so a re-sent effect lands twice; and a re-sent row
/// that finds its own first attempt's row skips the effect the consumer
/// owes, a loss no crash explains. Both now have their situation.
#[test]
fn a_record_first_inbox_resending_after_the_ack_doubles_or_loses() {
    let text = eod_checked("[[network.links]]\nkinds = [\"tx-done\"]\nloss_per_mille = [0, 300]\n");
    let s = support::load_text(
        "record-first.toml",
        &text,
        &["consumer.handler=inbox-record-first"],
    );
    let sum = sweep(&s, 1000);
    assert_eq!(sum.tally.faults.crashed, 0);
    assert!(sum.tally.situations.contains(sit::RESENT_TX_APPLIED_AGAIN));
    assert!(sum
        .tally
        .situations
        .contains(sit::RECORD_RESENT_TOOK_OWN_ROW));
    // Each kind of failure on some seed of these.
    let failures: Vec<&str> = (0..1000)
        .filter_map(|seed| match trace_of(&s, seed).1 {
            Outcome::Violation(v) => Some(v.invariant),
            _ => None,
        })
        .collect();
    for inv in ["no-duplicate-effect", "no-lost-effect"] {
        assert!(failures.contains(&inv), "{inv}");
    }
    // The same faults against an inbox row in the effect's transaction: one
    // effect each, and no row taken for a duplicate's.
    let s = support::load_text(
        "record-first.toml",
        &text,
        &["consumer.handler=inbox-same-tx"],
    );
    let (sum, inv) = swept(&s, 1000);
    assert_eq!(inv, None, "{:?}", sum.first_failure);
    assert!(!sum
        .tally
        .situations
        .contains(sit::RECORD_RESENT_TOOK_OWN_ROW));
}

/// `redelivered-after-inbox-cleanup` blames the cleanup, so it needs a row
/// the cleanup deleted. These rollouts keep every row forever: their old
/// consumer version wrote its effects with no inbox row at all, and a
/// second copy reaching a new version with an inbox finds nothing to find.
/// That is a redelivery after the effect, not after a cleanup.
#[test]
fn the_inbox_cleanup_is_blamed_only_for_a_row_it_deleted() {
    let name = "rollout-late-ack-during-inbox-window";
    let sum = sweep(&load(name, &[]), 300);
    let reached = |s| sum.tally.situations.contains(s);
    assert!(!reached(sit::REDELIVERED_AFTER_INBOX_CLEANUP));
    assert!(!reached(sit::INBOX_ROW_REAPED), "no row is ever deleted");
    assert!(reached(sit::REDELIVERED_AFTER_EFFECT));
    // A row the cleanup did delete is still blamed on it, as above.
    let cleaned = sweep(&load("messaging-inbox-cleaned-too-early", &[]), 300);
    assert!(cleaned
        .tally
        .situations
        .contains(sit::REDELIVERED_AFTER_INBOX_CLEANUP));
}
