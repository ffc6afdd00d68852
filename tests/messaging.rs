//! The messaging catalog: every `scenarios/messaging-*.toml` gives its expected
//! verdict within a bounded seed budget, each broken variant holds once its one
//! mistake is fixed (so the variant, not the fault mix, causes the failure),
//! and the traces of two classic failures have the shape the docs describe.

mod common;

use common::{load, reached, sweep, trace_of};
use models::core::Carries;
use models::messaging::{self, situations as sit};
use models::scenario::Verdict;
use models::{Msg, Obs, Scenario};
use sim::{Outcome, TraceKind};

/// Runs `seeds` seeds of a scenario (with overrides) and asserts its `[expect]`,
/// and for a holding one that faults fired and its situations were reached.
#[track_caller]
fn check(name: &str, sets: &[&str], seeds: u64) {
    let s = load(name, sets);
    let sum = sweep(&s, seeds);
    assert_eq!(
        sum.tally.panics, 0,
        "{name}: a model panicked: {:?}",
        sum.first_failure
    );
    let j = s.judge(&sum);
    assert!(j.matched(), "{name} {sets:?}: {:?}", j.mismatch);
    if s.expected_verdict() == Some(Verdict::Holds) {
        assert!(sum.tally.faults.total() > 0, "{name}: no fault fired");
    }
}

/// The lowest seed of `name` that breaks `invariant`, replayed with a trace.
fn failing_trace(
    name: &str,
    invariant: &str,
    seeds: u64,
) -> Vec<TraceKind<Msg, Obs, models::NodeTimer>> {
    let s = load(name, &[]);
    let sum = sweep(&s, seeds);
    let f = sum
        .first_failure
        .unwrap_or_else(|| panic!("{name}: no failure in {seeds} seeds"));
    let (entries, outcome) = trace_of(&s, f.seed);
    match outcome {
        Outcome::Violation(v) => assert_eq!(v.invariant, invariant, "{}", v.message),
        o => panic!("seed {} replayed to {o:?}", f.seed),
    }
    entries.into_iter().map(|e| e.kind).collect()
}

// One test per scenario, so a failure names it.
macro_rules! scenario_tests {
    ($($test:ident: $name:literal, $seeds:expr;)*) => {
        $(#[test] fn $test() { check($name, &[], $seeds); })*
        const COVERED: &[&str] = &[$($name),*];
    };
}

scenario_tests! {
    outbox_inbox_holds: "messaging-outbox-inbox", 2000;
    set_value_versioned_holds: "messaging-set-value-versioned", 2000;
    unique_key_holds: "messaging-unique-key", 2000;
    dead_letter_holds: "messaging-dead-letter", 2000;
    state_first_loses: "messaging-dual-write-state-first", 300;
    event_first_phantom: "messaging-dual-write-event-first", 300;
    relay_without_dedup_duplicates: "messaging-outbox-relay-no-dedup", 300;
    ack_before_commit_loses: "messaging-ack-before-commit", 300;
    inbox_separate_tx_duplicates: "messaging-inbox-separate-tx", 300;
    inbox_record_first_loses: "messaging-inbox-record-first", 300;
    broker_exactly_once_duplicates: "messaging-broker-exactly-once", 300;
    retry_after_dedup_window_duplicates: "messaging-retry-after-dedup-window", 300;
    short_visibility_duplicates: "messaging-visibility-below-processing", 100;
    set_value_without_version_diverges: "messaging-set-value-no-version", 300;
    discard_at_max_deliveries_loses: "messaging-discard-at-max-deliveries", 300;
    // Chapter 16 of the learning path; their fixes are its exercises (tests/docs.rs).
    webhook_without_dedup_duplicates: "messaging-webhook-no-dedup", 300;
    webhook_event_id_holds: "messaging-webhook-event-id", 2000;
    import_rerun_append_duplicates: "messaging-import-rerun-append", 300;
    import_line_id_holds: "messaging-import-line-id", 2000;
    inbox_cleaned_too_early_duplicates: "messaging-inbox-cleaned-too-early", 300;
    inbox_retention_holds: "messaging-inbox-retention", 300;
    webhook_ids_forgotten_duplicates: "messaging-webhook-ids-forgotten", 300;
    webhook_ids_kept_holds: "messaging-webhook-ids-kept", 300;
    broker_transaction_loses: "messaging-broker-transaction", 300;
    idempotent_producer_holds: "messaging-idempotent-producer", 200;
    idempotent_producer_restart_duplicates: "messaging-idempotent-producer-restart", 200;
    transactional_id_restart_duplicates: "messaging-transactional-id-restart", 200;
    dedup_only_redelivered_duplicates: "messaging-dedup-only-redelivered", 300;
    lease_renewal_lost_duplicates: "messaging-lease-renewal-lost", 300;
    // Pub/Sub's exactly-once delivery (domain catalog 7.6).
    eod_checked_ack_holds: "messaging-eod-checked-ack", 2000;
    eod_ack_unchecked_duplicates: "messaging-eod-ack-unchecked", 300;
    eod_checked_ack_crash_loses: "messaging-eod-checked-ack-crash", 300;
    eod_checked_ack_lossy_db_duplicates: "messaging-eod-checked-ack-lossy-db", 300;
    eod_checked_ack_inbox_holds: "messaging-eod-checked-ack-inbox", 2000;
    producer_id_expired_duplicates: "messaging-producer-id-expired", 100;
}

#[test]
fn every_messaging_scenario_has_a_test() {
    let dir = format!("{}/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(dir).expect("scenarios/ exists") {
        let name = entry.expect("readable").file_name();
        let name = name.to_string_lossy();
        if let Some(stem) = name.strip_suffix(".toml") {
            if stem.starts_with("messaging-") && !COVERED.contains(&stem) {
                missing.push(stem.to_string());
            }
        }
    }
    assert!(missing.is_empty(), "scenarios without a test: {missing:?}");
}

/// Each broken variant, with only its mistake fixed, holds on the same seeds:
/// the mistake is the cause, not the faults.
#[test]
fn fixing_the_one_mistake_makes_each_broken_scenario_hold() {
    let fixes: &[(&str, &str)] = &[
        ("messaging-dual-write-state-first", "producer.write=outbox"),
        ("messaging-dual-write-event-first", "producer.write=outbox"),
        ("messaging-broker-transaction", "producer.write=outbox"),
        (
            "messaging-outbox-relay-no-dedup",
            "consumer.handler=inbox-same-tx",
        ),
        ("messaging-ack-before-commit", "consumer.ack=after-commit"),
        (
            "messaging-inbox-separate-tx",
            "consumer.handler=inbox-same-tx",
        ),
        (
            "messaging-inbox-record-first",
            "consumer.handler=inbox-same-tx",
        ),
        (
            "messaging-broker-exactly-once",
            "consumer.handler=inbox-same-tx",
        ),
        (
            "messaging-retry-after-dedup-window",
            "broker.dedup_window_ms=3600000",
        ),
        (
            "messaging-visibility-below-processing",
            "broker.visibility_timeout_ms=360000",
        ),
        (
            "messaging-set-value-no-version",
            "consumer.handler=set-value-versioned",
        ),
        (
            "messaging-discard-at-max-deliveries",
            "broker.at_max_deliveries=dead-letter",
        ),
        (
            "messaging-inbox-cleaned-too-early",
            "consumer.inbox_retention_ms=3600000",
        ),
        // Renewal narrows the window, the atomic inbox closes it.
        (
            "messaging-lease-renewal-lost",
            "consumer.handler=inbox-same-tx",
        ),
        // An inbox read on every delivery, whatever its flag says.
        (
            "messaging-dedup-only-redelivered",
            "consumer.handler=inbox-same-tx",
        ),
        // Or no second message at all: without producer crashes here, the
        // idempotent producer drops every retry of the one session.
        (
            "messaging-dedup-only-redelivered",
            "producer.idempotence=true",
        ),
        // An inbox that remembers for as long as the relay may republish.
        (
            "messaging-idempotent-producer-restart",
            "consumer.inbox_retention_ms=0",
        ),
        (
            "messaging-transactional-id-restart",
            "consumer.inbox_retention_ms=0",
        ),
        // Producer ids kept for as long as the relay retries, or an inbox
        // that keeps its rows.
        (
            "messaging-producer-id-expired",
            "broker.producer_id_expiration_ms=0",
        ),
        (
            "messaging-producer-id-expired",
            "broker.producer_id_expiration_ms=259200000",
        ),
        (
            "messaging-producer-id-expired",
            "consumer.inbox_retention_ms=0",
        ),
        // Read the ack's result before committing.
        (
            "messaging-eod-ack-unchecked",
            "consumer.ack=checked-before-commit",
        ),
        // Make the re-sent commit idempotent by the message id.
        (
            "messaging-eod-checked-ack-lossy-db",
            "consumer.handler=inbox-same-tx",
        ),
    ];
    for (name, fix) in fixes {
        let s = load(name, &[fix]);
        let sum = sweep(&s, 150);
        assert!(
            sum.first_failure.is_none() && sum.tally.inconclusive == 0,
            "{name} with {fix}: {:?}",
            sum.first_failure
        );
    }
}

#[test]
fn a_relay_crash_between_publish_and_mark_sent_republishes_the_same_row() {
    let trace = failing_trace(
        "messaging-outbox-relay-no-dedup",
        "no-duplicate-effect",
        300,
    );
    let producer = 0;
    // The broker stored one message id twice, with a producer crash in between.
    let accepted: Vec<(usize, u32)> = trace
        .iter()
        .enumerate()
        .filter_map(|(i, k)| match k {
            TraceKind::Observe {
                obs: Obs::Accepted { op },
                ..
            } => Some((i, op.id)),
            _ => None,
        })
        .collect();
    let (first, second, id) = accepted
        .iter()
        .enumerate()
        .find_map(|(n, &(i, id))| {
            accepted[n + 1..]
                .iter()
                .find(|&&(_, j)| j == id)
                .map(|&(k, _)| (i, k, id))
        })
        .expect("one message id accepted twice");
    assert!(
        trace[first..second]
            .iter()
            .any(|k| matches!(k, TraceKind::Crash { actor } if *actor == producer)),
        "the producer crashed between the two publishes of event #{id}"
    );
    assert!(trace.iter().any(|k| matches!(
        k,
        TraceKind::Reached { situation: s, .. } if *s == sit::REPUBLISH_AFTER_CRASH
    )));
}

#[test]
fn ack_before_commit_loses_the_message_with_the_crash() {
    let trace = failing_trace("messaging-ack-before-commit", "no-lost-effect", 300);
    // Some delivery was acked, its consumer crashed, and no effect ever landed for it.
    let acked: Vec<u32> = trace
        .iter()
        .filter_map(|k| match k {
            TraceKind::Deliver {
                msg: Msg::Messaging(messaging::Msg::Ack { id, .. }),
                ..
            } => Some(*id),
            _ => None,
        })
        .collect();
    let effects = trace
        .iter()
        .filter(|k| {
            matches!(
                k,
                TraceKind::Observe {
                    obs: Obs::Effect { .. },
                    ..
                }
            )
        })
        .count();
    assert!(
        effects < acked.len(),
        "fewer effects ({effects}) than acked messages ({})",
        acked.len()
    );
    assert!(trace
        .iter()
        .any(|k| matches!(k, TraceKind::Crash { actor } if *actor >= 3)));
}

#[test]
fn the_same_seed_gives_the_same_messaging_run() {
    let s = load("messaging-outbox-inbox", &[]);
    for seed in 0..20 {
        assert_eq!(trace_of(&s, seed), trace_of(&s, seed));
    }
}

/// Two changes to one entity are two events, each owed its own effect: with
/// acks before commits, losing one of them is caught although the entity got
/// the other's effect (the ledger counts per event, not per entity).
#[test]
fn an_entitys_second_event_is_judged_on_its_own() {
    let s = load("messaging-ack-before-commit", &[]);
    let sum = sweep(&s, 300);
    let v = sum.violation().expect("a lost event");
    assert_eq!(v.invariant, "no-lost-effect");
    // The outbox + inbox design handles both events of entity 4711 once each.
    check("messaging-outbox-inbox", &[], 300);
}

/// Situations name the mechanism that happened: a relay that republishes
/// after a publish timeout reports `publish-retried`, never a crash.
#[test]
fn a_republish_without_a_crash_is_not_reported_as_one() {
    let s = load(
        "messaging-outbox-inbox",
        &["crashes.producer.crash_per_mille=0"],
    );
    for seed in 0..40 {
        let (entries, _) = trace_of(&s, seed);
        assert!(
            !reached(&entries, sit::REPUBLISH_AFTER_CRASH),
            "seed {seed}"
        );
        assert!(
            !reached(&entries, sit::RELAY_CRASH_BETWEEN_STEPS),
            "seed {seed}"
        );
    }
    let s = load("messaging-outbox-inbox", &[]);
    let sum = sweep(&s, 300);
    assert!(sum.tally.situations.contains(sit::PUBLISH_RETRIED));
    assert!(sum.tally.situations.contains(sit::REPUBLISH_AFTER_CRASH));
}

#[test]
fn bad_messaging_input_names_the_place_and_the_fix() {
    let base = "summary = \"x\"\nmodel = \"messaging\"\n[expect]\nverdict = \"holds\"\n";
    let cases: &[(&str, &str, &str)] = &[
        (
            "[consumer]\nhandler = \"inbox\"\n",
            "unknown value \"inbox\"",
            "inbox-same-tx",
        ),
        ("[broker]\nconsumers = 0\n", "0 consumers", "1 to 64"),
        (
            "[broker]\nvisibility_timeout = 5\n",
            "unknown field",
            "visibility_timeout_ms",
        ),
        (
            "[crashes.consumer-3]\ncrash_per_mille = 10\n",
            "no actor named",
            "consumer-1",
        ),
        (
            "[producer]\nwrite = \"both\"\n",
            "unknown value \"both\"",
            "broker-transaction",
        ),
        (
            "[broker]\ntransaction_timeout_ms = 0\n",
            "must be above 0",
            "transaction_timeout_ms = 60000",
        ),
        (
            "[broker]\ntransaction_timeout_ms = 86400001\n",
            "longer than the 24 h",
            "the range is 1 to 86400000",
        ),
        (
            "[broker]\ntransaction_timeout_ms = \"60s\"\n",
            "without a unit",
            "transaction_timeout_ms = 60000",
        ),
        (
            "[producer]\nwrite = \"state-first\"\nidempotence = true\n",
            "has no relay",
            "set write = \"outbox\", or remove idempotence",
        ),
        (
            "[producer]\nwrite = \"event-first\"\ntransactional_id = true\n",
            "makes the outbox relay a transactional producer, but write = \"event-first\" has no relay",
            "set write = \"outbox\", or remove transactional_id",
        ),
        (
            "[producer]\ntransactional_id = true\nidempotence = false\n",
            "a transactional producer is always idempotent",
            "delete idempotence = false",
        ),
        (
            "[producer]\nidempotence = \"yes\"\n",
            "wrong type",
            "true or false",
        ),
        (
            "[consumer]\nlease_renewal_ms = \"10s\"\n",
            "without a unit",
            "lease_renewal_ms",
        ),
        (
            "[consumer]\nlease_renewal_ms = 86400001\n",
            "longer than the 24 h",
            "the range is 0 to 86400000",
        ),
    ];
    for (extra, message, help) in cases {
        let text = format!("{base}{extra}");
        let e = match Scenario::load("bad.toml", &text) {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e,
        };
        assert!(
            e.line >= 5,
            "{extra}: line {} points into the table",
            e.line
        );
        assert!(e.message.contains(message), "{extra}: {}", e.message);
        let shown = e.to_string();
        assert!(shown.contains(help), "{extra}: no `{help}` in {shown}");
    }
}

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

/// What a sweep of `messaging-broker-transaction` with `sets` found: the
/// invariant broken (if any) and whether `situation` was reached.
fn broker_tx(sets: &[&str], situation: sim::SituationId) -> (Option<&'static str>, bool) {
    let s = load("messaging-broker-transaction", sets);
    let sum = sweep(&s, 300);
    assert_eq!(sum.tally.panics, 0, "{sets:?}");
    (
        sum.violation().map(|v| v.invariant),
        sum.tally.situations.contains(situation),
    )
}

#[test]
fn a_broker_transaction_closes_the_event_first_gap_and_not_the_one_between_the_commits() {
    let no_crash = "crashes={}";
    let fails = "producer.commit_fail_per_mille=300";
    // A failed database commit aborts the broker transaction: nothing is
    // announced, where publishing first announces a change that never was.
    assert_eq!(
        broker_tx(&[no_crash, fails], sit::BROKER_TX_ABORTED),
        (None, true)
    );
    assert_eq!(
        broker_tx(
            &[no_crash, fails, "producer.write=event-first"],
            sit::COMMIT_FAILED
        )
        .0,
        Some("no-phantom-event")
    );
    // Lost and repeated messages between producer and broker are retried
    // within the transaction; the inbox takes the copies a commit makes
    // visible together.
    let lossy = [
        no_crash,
        "network.loss_per_mille=200",
        "network.duplicate_per_mille=100",
    ];
    assert_eq!(broker_tx(&lossy, sit::PUBLISH_RETRIED), (None, true));
    // A crash between the two commits: the broker aborts at its timeout and
    // the committed change is never announced.
    assert_eq!(
        broker_tx(&[], sit::BROKER_TX_TIMED_OUT),
        (Some("no-lost-effect"), true)
    );
    // No crash is needed when the transaction times out before the commit
    // request arrives: the broker refuses it.
    let slow = [
        no_crash,
        "network.delay_ms_min=50",
        "network.delay_ms_max=100",
        "broker.transaction_timeout_ms=60",
    ];
    assert_eq!(
        broker_tx(&slow, sit::COMMIT_AFTER_TX_TIMEOUT),
        (Some("no-lost-effect"), true)
    );
    // With time to spare, the same delays are harmless.
    assert_eq!(
        broker_tx(&[slow[0], slow[1], slow[2]], sit::COMMIT_AFTER_TX_TIMEOUT),
        (None, false)
    );
}

/// Kafka's idempotent producer, from the domain: the broker stores a
/// (producer id, sequence number) once, so the relay's retries within one
/// session are dropped, however long they go on; a restarted relay is a new
/// producer id, and its republish is stored again.
#[test]
fn an_idempotent_producer_drops_one_sessions_retries_and_not_a_restarts_republish() {
    // No fault but the cut confirmations: the relay retries every 5 s for 30 min.
    let quiet = [
        "network.loss_per_mille=0",
        "network.duplicate_per_mille=0",
        "crashes.consumer-1.crash_per_mille=0",
    ];
    let s = load("messaging-idempotent-producer", &quiet);
    let (entries, outcome) = trace_of(&s, 0);
    assert_eq!(outcome, Outcome::Holds, "the design holds on this seed");
    assert!(reached(&entries, sit::PRODUCER_SEQUENCE_DEDUP_HIT));
    assert!(!reached(&entries, sit::DUPLICATE_PUBLISH));
    assert!(!reached(&entries, sit::REPUBLISH_UNDER_NEW_PRODUCER_ID));
    let stored = |entries: &[common::Entry]| {
        entries
            .iter()
            .filter(|e| {
                matches!(
                    &e.kind,
                    TraceKind::Observe {
                        obs: Obs::Accepted { .. },
                        ..
                    }
                )
            })
            .count()
    };
    assert_eq!(stored(&entries), 2, "each event stored once");
    let mut off = quiet.to_vec();
    off.push("producer.idempotence=false");
    // The same run without idempotence stores a copy per retry, and the
    // one after the inbox's 10 minutes pays again.
    let (entries, outcome) = trace_of(&load("messaging-idempotent-producer", &off), 0);
    assert!(reached(&entries, sit::DUPLICATE_PUBLISH));
    assert!(!reached(&entries, sit::PRODUCER_SEQUENCE_DEDUP_HIT));
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-duplicate-effect"),
        "{outcome:?}"
    );
    assert!(
        stored(&entries) > 100,
        "a copy per retry: {}",
        stored(&entries)
    );

    // A restart's republish carries producer id 2 and sequence number 0,
    // and the broker stores it again.
    let trace = failing_trace(
        "messaging-idempotent-producer-restart",
        "no-duplicate-effect",
        200,
    );
    let republish = trace.iter().position(|k| {
        matches!(k, TraceKind::Deliver { msg, .. }
            if matches!(msg.peek(), Some(&messaging::Msg::SeqPublish { pid: 2, seq: 0, .. })))
    });
    let republish = republish.expect("the restarted relay publishes as producer 2");
    assert!(trace[republish..].iter().any(|k| matches!(
        k,
        TraceKind::Reached { situation, .. } if *situation == sit::REPUBLISH_UNDER_NEW_PRODUCER_ID
    )));
    assert!(trace[..republish]
        .iter()
        .any(|k| matches!(k, TraceKind::Crash { .. })));
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
        common::scenario_dir().join("messaging-dedup-only-redelivered.toml"),
    )
    .expect("the scenario file");
    let confirmed = text.replace("loss_per_mille = [0, 300]", "loss_per_mille = 0");
    assert_ne!(confirmed, text, "the confirmations' link is in the file");
    let s = common::load_text("confirmed.toml", &confirmed, &[]);
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

/// The broker keeps its idempotent producers' sequence numbers with the log
/// (durable), so a broker that crashes and restarts during the outage still
/// drops the relay's retries: the design holds with broker crashes too.
#[test]
fn the_brokers_producer_table_survives_its_crashes() {
    let s = load(
        "messaging-idempotent-producer",
        &[
            "crashes.broker.crash_per_mille=20",
            "crashes.consumer-1.crash_per_mille=0",
        ],
    );
    let sum = sweep(&s, 100);
    assert!(sum.first_failure.is_none(), "{:?}", sum.first_failure);
    assert!(
        sum.tally.faults.crashed > 0,
        "the broker, the one actor that may, crashed"
    );
}

/// Lease renewal, from the domain: a consumer that asks for a whole
/// visibility timeout more before the lease runs out keeps the message to
/// itself however long its handler runs; one that asks only as the lease
/// runs out, or whose renewals are lost, does not.
#[test]
fn a_renewed_lease_keeps_a_long_handler_alone_only_while_renewals_arrive() {
    const RULE: &str = "visibility-below-processing";
    let name = "messaging-visibility-below-processing";
    let renewed = load(name, &["consumer.lease_renewal_ms=10000"]);
    assert!(renewed.hazards.is_empty(), "{:?}", renewed.hazards);
    let sum = sweep(&renewed, 300);
    assert!(sum.first_failure.is_none(), "{:?}", sum.first_failure);
    let (entries, _) = trace_of(&renewed, 4);
    assert!(reached(&entries, sit::LEASE_RENEWED));
    assert!(!reached(&entries, sit::LEASE_EXPIRED_REDELIVERY));
    // Asked for when the lease runs out is too late: the broker redelivers first.
    let late = load(name, &["consumer.lease_renewal_ms=30000"]);
    assert_eq!(
        late.hazards.iter().map(|h| h.id).collect::<Vec<_>>(),
        [RULE]
    );
    assert!(sweep(&late, 300).first_failure.is_some());
    // Lost renewals: the failing trace has renewals cut off, then one too late.
    let trace = failing_trace("messaging-lease-renewal-lost", "no-duplicate-effect", 300);
    let cut = trace.iter().any(|k| {
        matches!(k, TraceKind::Drop { msg, .. }
            if matches!(msg.peek(), Some(&messaging::Msg::Extend { .. })))
    });
    assert!(cut, "a renewal was cut off");
    assert!(trace.iter().any(|k| matches!(
        k,
        TraceKind::Reached { situation, .. } if *situation == sit::LEASE_EXPIRED_REDELIVERY
    )));
}

/// Kafka's transactional producer, from the domain: one producer id for
/// every session and an epoch one higher at each start. The broker refuses
/// a publish of an older epoch (a crashed session's publish still on the
/// network), which a plain idempotent producer's broker would store as a
/// new message; but the new epoch numbers from 0, so the restarted relay's
/// own republish is stored again.
#[test]
fn a_transactional_producer_fences_zombies_and_still_republishes_after_a_restart() {
    let name = "messaging-transactional-id-restart";
    // What the broker received from the producer, in order: (epoch, seq).
    let publishes = |trace: &[TraceKind<Msg, Obs, models::NodeTimer>]| -> Vec<(u32, u32)> {
        trace
            .iter()
            .filter_map(|k| match k {
                TraceKind::Deliver { msg, .. } => match msg.peek() {
                    Some(&messaging::Msg::SeqPublish {
                        pid, epoch, seq, ..
                    }) => {
                        assert_eq!(pid, 1, "one producer id for every session");
                        Some((epoch, seq))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    };
    let trace = failing_trace(name, "no-duplicate-effect", 200);
    let epochs = publishes(&trace);
    let restart = epochs
        .iter()
        .position(|&(e, seq)| e > 1 && seq == 0)
        .expect("a restarted session publishes with a higher epoch from seq 0");
    assert!(trace.iter().any(|k| matches!(
        k,
        TraceKind::Reached { situation, .. } if *situation == sit::REPUBLISH_UNDER_NEW_EPOCH
    )));
    assert!(epochs[..restart]
        .iter()
        .all(|&(e, _)| e < epochs[restart].0));

    // Fencing: over some seeds, every refused publish carries an older epoch
    // than one the broker had received before it, and the same seeds with a
    // plain idempotent producer refuse nothing and store more copies.
    // Many crashes with restarts within 2 s: a session often dies before any
    // of its publishes arrived (they take up to 20 s here). An inbox that
    // never forgets, so that no violation ends a run before its copies are
    // stored.
    let sets = [
        "crashes.producer.crash_per_mille=400",
        "crashes.producer.restart_ms_max=2000",
        "consumer.inbox_retention_ms=0",
    ];
    let s = load(name, &sets);
    let mut plain_sets = sets.to_vec();
    plain_sets.extend([
        "producer.transactional_id=false",
        "producer.idempotence=true",
    ]);
    let plain = load(name, &plain_sets);
    let (mut fenced, mut copies, mut plain_copies) = (0, 0, 0);
    // The messages the broker stored in a whole run of `seed`.
    let stored = |sc: &Scenario, seed: u64| -> usize {
        let mut sim = sim::Sim::new(&sc.system);
        sim.run(
            &sc.system,
            sim::Source::Seed {
                seed,
                record: false,
            },
            &mut sim::NoTrace,
        );
        match sim.storage(1) {
            Some(models::registry::NodeStorage::Broker(b)) => b.queue.len(),
            _ => panic!("actor 1 is the broker"),
        }
    };
    for seed in 0..40 {
        let (entries, _) = trace_of(&s, seed);
        copies += stored(&s, seed);
        let kinds: Vec<_> = entries.iter().map(|e| e.kind.clone()).collect();
        let mut newest = 0;
        for k in &kinds {
            if let TraceKind::Deliver { msg, .. } = k {
                if let Some(&messaging::Msg::SeqPublish { epoch, .. }) = msg.peek() {
                    newest = newest.max(epoch);
                }
            }
            if matches!(k, TraceKind::Reached { situation, .. } if *situation == sit::ZOMBIE_PUBLISH_FENCED)
            {
                fenced += 1;
                let last = kinds
                    .iter()
                    .take_while(|x| !std::ptr::eq(*x, k))
                    .filter_map(|x| match x {
                        TraceKind::Deliver { msg, .. } => match msg.peek() {
                            Some(&messaging::Msg::SeqPublish { epoch, .. }) => Some(epoch),
                            _ => None,
                        },
                        _ => None,
                    });
                let refused = last.last().expect("the fenced publish was received");
                assert!(
                    refused < newest,
                    "seed {seed}: epoch {refused} fenced, newest {newest}"
                );
            }
        }
        let (entries, _) = trace_of(&plain, seed);
        plain_copies += stored(&plain, seed);
        assert!(!reached(&entries, sit::ZOMBIE_PUBLISH_FENCED));
    }
    assert!(fenced > 0, "some seed fences a zombie's publish");
    assert!(
        copies < plain_copies,
        "fencing stores fewer copies: {copies} against {plain_copies}"
    );
}

/// What a consumer of `messaging-eod-checked-ack*` did with each delivery:
/// per (consumer, receipt), the ack results it got and whether it then sent
/// the effect's transaction.
fn checked_acks(trace: &[TraceKind<Msg, Obs, models::NodeTimer>]) -> Vec<(u32, u32, bool, bool)> {
    let mut out: Vec<(u32, u32, bool, bool)> = Vec::new();
    for k in trace {
        match k {
            TraceKind::Deliver {
                to,
                msg: Msg::Messaging(messaging::Msg::AckResult { receipt, ok, .. }),
                ..
            } => out.push((*to, *receipt, *ok, false)),
            TraceKind::Send {
                from,
                msg: Msg::Messaging(messaging::Msg::Tx { receipt, .. }),
                ..
            } => {
                if let Some(r) = out.iter_mut().find(|r| r.0 == *from && r.1 == *receipt) {
                    r.3 = true;
                }
            }
            _ => {}
        }
    }
    out
}

/// Pub/Sub's exactly-once delivery: the broker refuses an ack that does not
/// name the latest delivery, and a consumer that checks the result commits
/// only after a counted ack, and never after a failed one.
#[test]
fn a_checked_consumer_commits_after_a_counted_ack_only() {
    let s = load("messaging-eod-checked-ack", &[]);
    let (mut failed, mut counted) = (0, 0);
    for seed in 0..60 {
        let (entries, outcome) = trace_of(&s, seed);
        assert_eq!(outcome, Outcome::Holds, "seed {seed}");
        let trace: Vec<_> = entries.into_iter().map(|e| e.kind).collect();
        for (consumer, receipt, ok, committed) in checked_acks(&trace) {
            assert_eq!(
                ok, committed,
                "seed {seed}: consumer {consumer}, receipt {receipt}"
            );
            if ok {
                counted += 1;
            } else {
                failed += 1;
            }
        }
        // Every transaction follows a counted ack of its delivery.
        for k in &trace {
            if let TraceKind::Send {
                msg: Msg::Messaging(messaging::Msg::Tx { receipt, .. }),
                ..
            } = k
            {
                assert!(
                    trace.iter().any(|j| matches!(j, TraceKind::Deliver {
                        msg: Msg::Messaging(messaging::Msg::AckResult { receipt: r, ok: true, .. }),
                        ..
                    } if r == receipt)),
                    "seed {seed}: a transaction for receipt {receipt} without a counted ack"
                );
            }
        }
    }
    assert!(
        failed > 10 && counted > 100,
        "failed {failed}, counted {counted}"
    );
}

/// The two halves of the guarantee, each taken away: a broker without
/// exactly-once delivery counts a late ack, so both handlers commit; and a
/// crash between a counted ack and the commit loses the event, which only an
/// inbox under an ack after the commit survives.
#[test]
fn exactly_once_delivery_is_not_exactly_once_processing() {
    let late = load(
        "messaging-eod-checked-ack",
        &["broker.exactly_once_delivery=false"],
    );
    let sum = sweep(&late, 300);
    assert_eq!(invariant(&sum), Some("no-duplicate-effect"));
    assert!(sum.tally.situations.contains(sit::LATE_ACK));
    assert!(!sum.tally.situations.contains(sit::STALE_ACK_REFUSED));

    // The crash scenario with an inbox row in the effect's transaction still
    // loses events while it acks first; acking after the commit holds.
    let inbox_only = load(
        "messaging-eod-checked-ack-crash",
        &["consumer.handler=inbox-same-tx"],
    );
    let sum = sweep(&inbox_only, 300);
    assert_eq!(invariant(&sum), Some("no-lost-effect"));
    let fixed = load(
        "messaging-eod-checked-ack-crash",
        &[
            "consumer.handler=inbox-same-tx",
            "consumer.ack=after-commit",
        ],
    );
    let sum = sweep(&fixed, 300);
    assert!(sum.first_failure.is_none(), "{:?}", sum.first_failure);
    assert!(sum.tally.faults.crashed > 0);
}

/// The invariant a sweep's first failure broke.
fn invariant(sum: &sim::Summary) -> Option<&'static str> {
    match &sum.first_failure.as_ref()?.outcome {
        Outcome::Violation(v) => Some(v.invariant),
        _ => None,
    }
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
    let s = common::load_text("race.toml", text, &[]);
    let sum = sweep(&s, 1000);
    assert!(sum.violation().is_none(), "{:?}", sum.first_failure);
    // The race happened: a second copy met the first one's row.
    assert!(sum.tally.situations.contains(sit::DUPLICATE_PUBLISH));
    assert!(sum.tally.situations.contains(sit::INBOX_ROW_WITHOUT_EFFECT));
    let after = common::load_text("race.toml", text, &["consumer.handler=inbox-separate-tx"]);
    let raced = sweep(&after, 1000);
    let v = raced.violation().expect("the effect first races");
    assert_eq!(v.invariant, "no-duplicate-effect");
}

/// A renewal that arrives after its own delivery's ack finds the message
/// done, not delivered again: `renewal-after-redelivery` says the lease ran
/// out and the message went out again, so only a run where it did shows it.
#[test]
fn a_renewal_that_trails_its_ack_is_not_a_renewal_after_redelivery() {
    let s = load(
        "messaging-visibility-below-processing",
        &["consumer.lease_renewal_ms=10000"],
    );
    for seed in 0..3000 {
        let (entries, _) = trace_of(&s, seed);
        if reached(&entries, sit::RENEWAL_AFTER_REDELIVERY) {
            assert!(
                reached(&entries, sit::LEASE_EXPIRED_REDELIVERY),
                "seed {seed}: a renewal after a redelivery that never happened"
            );
        }
    }
    // The reviewer's seed: the renewal crossed its own ack.
    let (entries, _) = trace_of(&s, 2498);
    assert!(!reached(&entries, sit::RENEWAL_AFTER_REDELIVERY));
    assert!(entries.iter().any(|e| matches!(
        &e.kind,
        TraceKind::Deliver { msg, .. } if matches!(Carries::<messaging::Msg>::peek(msg), Some(messaging::Msg::Extend { .. }))
    )));
}

/// The runs' situations, faults and the invariant of the first failure.
fn swept(s: &Scenario, seeds: u64) -> (sim::Summary, Option<&'static str>) {
    let sum = sweep(s, seeds);
    assert_eq!(sum.tally.panics, 0, "{:?}", sum.first_failure);
    let inv = invariant(&sum);
    (sum, inv)
}

/// After a counted ack the broker never delivers the message again, so a
/// consumer whose database does not answer owns the event: it sends the same
/// transaction again. No consumer crashes here; only the link to the
/// database loses transactions and their answers.
#[test]
fn after_a_counted_ack_the_consumer_sends_its_commit_again_and_only_an_inbox_makes_that_safe() {
    // The fix holds on every seed; before the consumer sent its commit
    // again, 252 of these 2,000 seeds lost an event.
    let (sum, inv) = swept(&load("messaging-eod-checked-ack-inbox", &[]), 2000);
    assert_eq!(inv, None, "{:?}", sum.first_failure);
    assert_eq!(sum.tally.faults.crashed, 0);
    for s in [sit::TX_RESENT_AFTER_ACK, sit::INBOX_HIT] {
        assert!(sum.tally.situations.contains(s), "{s}");
    }
    assert!(!sum.tally.situations.contains(sit::TX_GIVEN_UP_AFTER_ACK));
    // Giving the commit up at its first timeout, as the consumer did before:
    // events lost without a crash, and the trace says where.
    let (sum, inv) = swept(
        &load(
            "messaging-eod-checked-ack-inbox",
            &["consumer.tx_max_attempts=1"],
        ),
        2000,
    );
    assert_eq!(inv, Some("no-lost-effect"));
    assert_eq!(sum.tally.faults.crashed, 0);
    assert!(sum.tally.situations.contains(sit::TX_GIVEN_UP_AFTER_ACK));
    assert!(!sum.tally.situations.contains(sit::TX_RESENT_AFTER_ACK));
    // Without the inbox, a re-sent commit whose first answer was lost
    // applies the effect a second time.
    let (sum, inv) = swept(&load("messaging-eod-checked-ack-lossy-db", &[]), 300);
    assert_eq!(inv, Some("no-duplicate-effect"));
    assert!(sum.tally.situations.contains(sit::RESENT_TX_APPLIED_AGAIN));
}

/// The re-sends in a holding run: each repeats a transaction of the same
/// delivery that followed a counted ack, and some found the inbox row its
/// own first attempt had written (the answer, not the commit, was lost).
#[test]
fn a_resent_commit_repeats_the_first_after_a_counted_ack() {
    let s = load("messaging-eod-checked-ack-inbox", &[]);
    let (mut resent, mut absorbed) = (0, 0);
    for seed in 0..200 {
        let (entries, outcome) = trace_of(&s, seed);
        assert_eq!(outcome, Outcome::Holds, "seed {seed}");
        let trace: Vec<_> = entries.into_iter().map(|e| e.kind).collect();
        let mut sent: Vec<(u32, u32, messaging::TxKind)> = Vec::new();
        for (i, k) in trace.iter().enumerate() {
            // A send the network lost was sent all the same.
            let (TraceKind::Send { from, msg, .. } | TraceKind::Drop { from, msg, .. }) = k else {
                continue;
            };
            let Msg::Messaging(messaging::Msg::Tx {
                receipt,
                kind,
                attempt,
                ..
            }) = msg
            else {
                continue;
            };
            if *attempt == 1 {
                sent.push((*from, *receipt, *kind));
                continue;
            }
            resent += 1;
            assert!(
                sent.contains(&(*from, *receipt, *kind)),
                "seed {seed}: a re-send of a transaction never sent"
            );
            assert!(
                trace[..i].iter().any(|j| matches!(j, TraceKind::Deliver {
                    to,
                    msg: Msg::Messaging(messaging::Msg::AckResult { receipt: r, ok: true, .. }),
                    ..
                } if r == receipt && to == from)),
                "seed {seed}: a re-send before the ack counted"
            );
        }
        absorbed += trace
            .iter()
            .filter(|k| {
                matches!(
                    k,
                    TraceKind::Deliver {
                        msg: Msg::Messaging(messaging::Msg::TxDone {
                            result: messaging::TxResult::Duplicate,
                            ..
                        }),
                        ..
                    }
                )
            })
            .count();
    }
    assert!(
        resent > 5 && absorbed > 0,
        "resent {resent}, absorbed {absorbed}"
    );
}

/// Ack on receipt (`before-commit`) behind a database link that loses
/// transactions and answers, no crashes: a plain effect re-sent after a lost
/// answer takes effect twice, an inbox row absorbs the re-send, and crashes
/// still lose the event in the gap before the commit. Acked after the
/// commit, nothing is re-sent: the lease redelivers.
#[test]
fn ack_on_receipt_behind_a_lossy_database_resends_its_commit() {
    let text = r#"
summary = "ack on receipt, the database link loses"
model = "messaging"
[producer]
write = "outbox"
[broker]
visibility_timeout_ms = 30000
consumers = 2
[consumer]
handler = "effect"
ack = "before-commit"
processing_ms = 500
processing_jitter_ms = 2000
[network]
delay_ms_min = 1
delay_ms_max = 50
[[network.links]]
kinds = ["tx", "tx-done"]
loss_per_mille = [0, 200]
[[events]]
entity = 4711
value = 1200
[[events]]
entity = 4712
value = 800
start_ms = 2000
"#;
    let plain = common::load_text("lossy-db.toml", text, &[]);
    let (sum, inv) = swept(&plain, 500);
    assert_eq!(inv, Some("no-duplicate-effect"), "{:?}", sum.first_failure);
    assert_eq!(sum.tally.faults.crashed, 0);
    assert!(sum.tally.situations.contains(sit::RESENT_TX_APPLIED_AGAIN));
    let inbox = common::load_text("lossy-db.toml", text, &["consumer.handler=inbox-same-tx"]);
    let (sum, inv) = swept(&inbox, 500);
    assert_eq!(inv, None, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::TX_RESENT_AFTER_ACK));
    assert!(sum.tally.situations.contains(sit::INBOX_HIT));
    // Crashes: the work between the ack and the commit dies with the
    // consumer, re-sends or not.
    let crashes = format!(
        "{text}[crashes.consumer-1]\ncrash_per_mille = [0, 200]\nrestart_ms_min = 1000\nrestart_ms_max = 30000\n"
    );
    let crashing = common::load_text(
        "lossy-db.toml",
        &crashes,
        &["consumer.handler=inbox-same-tx"],
    );
    let (sum, inv) = swept(&crashing, 500);
    assert_eq!(inv, Some("no-lost-effect"));
    assert!(sum
        .tally
        .situations
        .contains(sit::CRASH_BETWEEN_ACK_AND_COMMIT));
    // Acked after the commit, the broker holds the message: a transaction
    // without an answer is given up and the lease redelivers it.
    let after = common::load_text(
        "lossy-db.toml",
        text,
        &[
            "consumer.handler=inbox-same-tx",
            "consumer.ack=after-commit",
        ],
    );
    let (sum, inv) = swept(&after, 500);
    assert_eq!(inv, None, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::LEASE_EXPIRED_REDELIVERY));
    assert!(!sum.tally.situations.contains(sit::TX_RESENT_AFTER_ACK));
}

/// Pub/Sub's exactly-once delivery with a consumer that checks its ack
/// before committing and no inbox, the idempotent producer never crashing:
/// the design `messaging-eod-checked-ack` shows holding, here over the
/// faults the scenario leaves out. `tail` adds a `[[network.links]]` entry.
fn eod_checked(tail: &str) -> String {
    format!(
        r#"
summary = "exactly-once delivery, checked ack, no inbox"
model = "messaging"
[producer]
write = "outbox"
idempotence = true
[broker]
visibility_timeout_ms = 10000
consumers = 2
exactly_once_delivery = true
[consumer]
handler = "effect"
ack = "checked-before-commit"
processing_ms = 2000
processing_jitter_ms = 12000
[network]
loss_per_mille = 0
duplicate_per_mille = 0
delay_ms_min = 1
delay_ms_max = 200
[[events]]
entity = 4711
value = 1200
[[events]]
entity = 4712
value = 800
start_ms = 500
{tail}"#
    )
}

/// A delivery the network hands over twice is one delivery: one receipt,
/// one lease, one job. Before the consumer recognised the copy it ran two
/// jobs under one receipt; the second's ack repeated the first's, which the
/// broker answers "counted", and both committed: a double effect under a
/// design whose broker delivered the message once.
#[test]
fn a_network_copy_of_a_delivery_is_not_a_second_job() {
    let text =
        eod_checked("[[network.links]]\nkinds = [\"deliver\"]\nduplicate_per_mille = [0, 200]\n");
    let s = common::load_text("deliver-copies.toml", &text, &[]);
    let (sum, inv) = swept(&s, 1000);
    assert_eq!(inv, None, "{:?}", sum.first_failure);
    assert!(sum.tally.faults.duplicated > 0, "no delivery was copied");
    // The copies still double a consumer without the broker's promise:
    // the protection is the design's, not the copy's absence.
    let s = common::load_text(
        "deliver-copies.toml",
        &text,
        &["broker.exactly_once_delivery=false"],
    );
    let (_, inv) = swept(&s, 1000);
    assert_eq!(inv, Some("no-duplicate-effect"));
}

/// An ack's result lost on its way back leaves the consumer not knowing
/// whether its ack counted. Pub/Sub's client library repeats the ack until
/// it gets an answer, and the broker answers a repeat of the ack that
/// counted with "counted" again: so the consumer asks again rather than
/// drop work the broker has let go. Before, it dropped it at the first
/// timeout, and an ack that had counted lost its event.
#[test]
fn a_missing_ack_result_is_asked_again_before_the_work_is_dropped() {
    let text =
        eod_checked("[[network.links]]\nkinds = [\"ack-result\"]\nloss_per_mille = [0, 300]\n");
    let s = common::load_text("ack-results-lost.toml", &text, &[]);
    let (sum, inv) = swept(&s, 1000);
    assert_eq!(inv, None, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::ACK_RESENT_FOR_RESULT));
    // Asking once, the consumer drops work whose ack counted.
    let s = common::load_text(
        "ack-results-lost.toml",
        &text,
        &["consumer.tx_max_attempts=1"],
    );
    let (sum, inv) = swept(&s, 1000);
    assert_eq!(inv, Some("no-lost-effect"));
    assert!(sum.tally.situations.contains(sit::ACK_RESULT_MISSING));
    assert!(!sum.tally.situations.contains(sit::ACK_RESENT_FOR_RESULT));
}

/// A record-first inbox behind a database that loses answers, acked before
/// the commit and never crashing: its effect is a transaction of its own
/// that reads nothing, so a re-sent effect lands twice; and a re-sent row
/// that finds its own first attempt's row skips the effect the consumer
/// owes, a loss no crash explains. Both now have their situation.
#[test]
fn a_record_first_inbox_resending_after_the_ack_doubles_or_loses() {
    let text = eod_checked("[[network.links]]\nkinds = [\"tx-done\"]\nloss_per_mille = [0, 300]\n");
    let s = common::load_text(
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
    let s = common::load_text(
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

/// A renewal from a delivery whose lease ran out is "after redelivery"
/// whatever became of the newer delivery: still out, or already acked.
/// Before, a renewal that arrived after the redelivered copy's ack found the
/// message done and passed for one trailing its own ack.
#[test]
fn a_renewal_after_the_redelivered_copy_was_acked_is_still_after_redelivery() {
    let text = r#"
summary = "renewals cut while the lease runs out"
model = "messaging"
[producer]
write = "outbox"
[broker]
visibility_timeout_ms = 10000
consumers = 1
[consumer]
handler = "inbox-same-tx"
processing_ms = 1000
processing_jitter_ms = 40000
lease_renewal_ms = 5000
[network]
delay_ms_min = 1
delay_ms_max = 50
[[network.partitions]]
between = ["consumer-1", "broker"]
one_way = true
start_ms = 0
end_ms = 12000
[[events]]
entity = 4711
value = 1200
"#;
    let s = common::load_text("renewals.toml", text, &[]);
    let mut cases = 0;
    for seed in 0..300 {
        let (entries, _) = trace_of(&s, seed);
        // Acks the broker took, by receipt, in the order they arrived.
        let mut acked: Vec<u32> = Vec::new();
        let mut older_renewed = false;
        for e in &entries {
            let TraceKind::Deliver { to: 1, msg, .. } = &e.kind else {
                continue;
            };
            match Carries::<messaging::Msg>::peek(msg) {
                Some(messaging::Msg::Ack { receipt, .. }) => acked.push(*receipt),
                Some(messaging::Msg::Extend { receipt, .. }) => {
                    older_renewed |= acked.iter().any(|r| r > receipt) && !acked.contains(receipt)
                }
                _ => {}
            }
        }
        if older_renewed {
            cases += 1;
            assert!(
                reached(&entries, sit::RENEWAL_AFTER_REDELIVERY),
                "seed {seed}: a renewal of a superseded delivery after the newer one's ack"
            );
        }
    }
    assert!(
        cases > 0,
        "no run renewed a superseded delivery after the newer one's ack"
    );
}

/// Two stored copies of one event (a publish the network duplicated) out at
/// once, each under its own receipt, and no lease ever running out: each
/// ack is its own copy's. Before, an ack took the first copy out with the
/// event's id, whatever its receipt: the other copy's ack then passed for a
/// late one (late-ack, which marks visibility-below-processing as reached),
/// or under exactly-once delivery was refused as stale and its copy sat out
/// its whole lease to be delivered again.
#[test]
fn each_copys_ack_acks_that_copy() {
    let text = r#"
summary = "two copies of one event out at once, no lease ever runs out"
model = "messaging"
[producer]
write = "outbox"
[broker]
visibility_timeout_ms = 600000
consumers = 2
exactly_once_delivery = false
[consumer]
handler = "inbox-same-tx"
ack = "after-commit"
processing_ms = 1000
processing_jitter_ms = 1000
[network]
loss_per_mille = 0
duplicate_per_mille = 0
delay_ms_min = 1
delay_ms_max = 100
[[network.links]]
from = "producer"
to = "broker"
duplicate_per_mille = [0, 500]
[[events]]
entity = 4711
value = 1200
"#;
    for sets in [
        &[][..],
        &[
            "broker.exactly_once_delivery=true",
            "consumer.ack=checked-before-commit",
        ][..],
    ] {
        let s = common::load_text("two-copies.toml", text, sets);
        let (sum, inv) = swept(&s, 1000);
        assert_eq!(inv, None, "{sets:?}: {:?}", sum.first_failure);
        assert!(
            sum.tally.situations.contains(sit::DUPLICATE_PUBLISH),
            "{sets:?}"
        );
        for never in [
            sit::LATE_ACK,
            sit::STALE_ACK_REFUSED,
            sit::LEASE_EXPIRED_REDELIVERY,
        ] {
            assert!(!sum.tally.situations.contains(never), "{sets:?}: {never}");
        }
    }
}
