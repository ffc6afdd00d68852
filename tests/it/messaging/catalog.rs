//! The catalog: every `messaging-*` scenario against its `[expect]`, each
//! broken variant fixed by its one mistake, determinism, and bad input.

use crate::support::{load, load_text, sweep, trace_of};
use models::scenario::Verdict;
use models::Scenario;

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
    state_first_retries_run_out: "messaging-dual-write-retry-gap", 300;
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
    // Chapter 16 of the learning path; their fixes are its exercises (the `docs` tests).
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
    max_in_flight_five_holds: "messaging-max-in-flight-five", 100;
    max_in_flight_above_five_duplicates: "messaging-max-in-flight-above-five", 100;
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
    producer_id_kept_holds: "messaging-producer-id-kept", 100;
    // Kafka's delivery.timeout.ms (KIP-91): the library's retries are
    // dropped within it, the relay's resend after it is stored again.
    kafka_outage_within_delivery_timeout_holds: "messaging-kafka-outage-within-delivery-timeout", 100;
    kafka_outage_past_delivery_timeout_duplicates: "messaging-kafka-outage-past-delivery-timeout", 100;
    kafka_delivery_timeout_inside_holds: "messaging-kafka-delivery-timeout-inside", 20;
    kafka_delivery_timeout_past_duplicates: "messaging-kafka-delivery-timeout-past", 20;
}

#[test]
fn every_messaging_scenario_has_a_test() {
    let dir = format!("{}/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(dir).expect("scenarios/ exists") {
        let name = entry.expect("readable").file_name();
        let name = name.to_string_lossy();
        if let Some(stem) = name.strip_suffix(".toml") {
            let conformance = || super::conformance::names().any(|n| n == stem);
            if stem.starts_with("messaging-") && !COVERED.contains(&stem) && !conformance() {
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
        ("messaging-dual-write-retry-gap", "producer.write=outbox"),
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
        // A delivery timeout that outlasts the outage: the library's
        // retries keep their numbers, and the broker drops them.
        (
            "messaging-kafka-outage-past-delivery-timeout",
            "producer.delivery_timeout_ms=900000",
        ),
        (
            "messaging-kafka-delivery-timeout-past",
            "producer.delivery_timeout_ms=120001",
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
            "unknown value \"yes\": idempotence is true, false or \"kafka-default\"",
            "write idempotence = true, false or \"kafka-default\"",
        ),
        (
            "[producer]\nidempotence = 1\n",
            "wrong type: integer",
            "true, false or \"kafka-default\"",
        ),
        // Kafka refuses to start a producer whose delivery.timeout.ms is
        // below linger.ms + request.timeout.ms (KafkaProducer's
        // configureDeliveryTimeout), and has no "never".
        (
            "[producer]\nidempotence = true\npublish_timeout_ms = 30000\ndelivery_timeout_ms = 29999\n",
            "\"delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms\"",
            "write delivery_timeout_ms = 30000 or more",
        ),
        (
            "[producer]\nidempotence = true\ndelivery_timeout_ms = 0\n",
            "delivery_timeout_ms = 0 is shorter than producer.publish_timeout_ms = 5000",
            "write delivery_timeout_ms = 5000 or more",
        ),
        (
            "[producer]\nidempotence = true\ndelivery_timeout_ms = 2147483648\n",
            "it is an int, at most 2147483647 ms",
            "delivery_timeout_ms = 120000",
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

/// Service Bus keeps duplicate detection history for up to 7 days; the key
/// takes that much, and refuses more as a unit mix-up.
#[test]
fn the_dedup_window_takes_service_bus_seven_days_and_no_more() {
    let base = "summary = \"x\"\nmodel = \"messaging\"\n[broker]\n";
    // Panics if the file is refused.
    load_text(
        "week.toml",
        &format!("{base}dedup_window_ms = 604800000\n"),
        &[],
    );
    let longer = format!("{base}dedup_window_ms = 604800001\n");
    let e = match Scenario::load("longer.toml", &longer) {
        Ok(_) => panic!("a window above 7 days was accepted"),
        Err(e) => e,
    };
    assert!(e.message.contains("longer than the"), "{}", e.message);
    assert!(e.to_string().contains("604800000"), "{e}");
}
