//! The messaging catalog: every `scenarios/messaging-*.toml` gives its expected
//! verdict within a bounded seed budget, each broken variant holds once its one
//! mistake is fixed (so the variant, not the fault mix, causes the failure),
//! and the traces of two classic failures have the shape the docs describe.

mod common;

use common::{load, reached, sweep, trace_of};
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
    let j = s.expect.judge(&sum);
    assert!(j.matched(), "{name} {sets:?}: {:?}", j.mismatch);
    if s.expect.verdict == Verdict::Holds {
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
    for seed in 0..100 {
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
            "outbox",
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
