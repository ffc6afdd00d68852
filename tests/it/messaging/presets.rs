//! The presets against their systems' own rules (Pub/Sub's dead-letter
//! policy at the end); first Kafka's: the relay case of
//! docs/fidelity.md's `delivery.timeout.ms` row on both versions, and the
//! sixth request in flight, which 3.9 turns into a logged warning and 4.0
//! refuses.

use crate::support::{check, load_error, load_text};
use models::scenario::Verdict;

#[test]
fn an_outage_past_the_delivery_timeout_stores_the_relays_resend_on_both_kafka_presets() {
    for preset in ["kafka-3.9", "kafka-4.0"] {
        let set = format!("broker.preset={preset}");
        check(
            "messaging-kafka-outage-within-delivery-timeout",
            &[&set],
            30,
            Verdict::Holds,
            None,
        );
        check(
            "messaging-kafka-outage-past-delivery-timeout",
            &[&set],
            30,
            Verdict::Violation,
            Some("no-duplicate-effect"),
        );
    }
}

const SIX_IN_FLIGHT: &str =
    "summary = \"k\"\nmodel = \"messaging\"\n[broker]\npreset = \"PRESET\"\n[producer]\nmax_in_flight = 6\n";

#[test]
fn six_in_flight_is_refused_by_kafka_4_and_a_warning_on_kafka_3() {
    let e = load_error("k.toml", &SIX_IN_FLIGHT.replace("PRESET", "kafka-4.0"));
    // Kafka 4.0's own words (ProducerConfig since KAFKA-17927), at the line
    // to change; 3.x's differ, and are quoted beside them.
    assert_eq!((e.line, e.column), (6, 17), "{e}");
    assert!(
        e.message.contains(
            "\"To use the idempotent producer, max.in.flight.requests.per.connection must be set to at most 5. Current value is 6.\" (KAFKA-17927)"
        ) && e
            .message
            .contains("Must set max.in.flight.requests.per.connection to at most 5"),
        "{e}"
    );
    let s = load_text("k.toml", &SIX_IN_FLIGHT.replace("PRESET", "kafka-3.9"), &[]);
    let warned = s
        .design_warnings
        .iter()
        .find(|h| h.id == "idempotence-off-above-five-in-flight")
        .expect("3.9 turns idempotence off above five: a warning");
    assert!(warned.text.contains("WARN"), "{}", warned.text);
    // 4.0 has no silent turn-off: 3.x's "kafka-default" is refused beside it.
    let default =
        SIX_IN_FLIGHT.replace("PRESET", "kafka-4.0") + "idempotence = \"kafka-default\"\n";
    let e = load_error("k.toml", &default);
    assert_eq!(e.line, 7, "{e}");
    assert!(e.message.contains("no silent turn-off"), "{e}");
    // Written out beside either version, idempotence = false is accepted.
    let off = SIX_IN_FLIGHT.replace("PRESET", "kafka-4.0") + "idempotence = false\n";
    load_text("k.toml", &off, &[]);
}

#[test]
fn kafka_refuses_a_transaction_timeout_above_its_brokers_maximum() {
    let text = "summary = \"k\"\nmodel = \"messaging\"\n[broker]\npreset = \"kafka-3.9\"\ntransaction_timeout_ms = 900001\n";
    let e = load_error("k.toml", text);
    assert_eq!(e.line, 5, "{e}");
    assert!(e.message.contains("transaction.max.timeout.ms"), "{e}");
}

/// Pub/Sub refuses a dead-letter policy whose maxDeliveryAttempts is not 5
/// to 100; 0 is the preset's "no policy", which Pub/Sub's default is.
#[test]
fn pubsub_takes_no_dead_letter_policy_or_five_to_a_hundred_attempts() {
    let at = |n: u32| {
        format!("summary = \"p\"\nmodel = \"messaging\"\n[broker]\npreset = \"pubsub-exactly-once\"\nmax_deliveries = {n}\n")
    };
    for refused in [1, 4, 101] {
        let e = load_error("p.toml", &at(refused));
        assert_eq!((e.line, e.column), (5, 18), "{refused}: {e}");
        assert!(e.message.contains("must be between 5 and 100"), "{e}");
    }
    for taken in [0, 5, 100] {
        load_text("p.toml", &at(taken), &[]);
    }
}

/// Service Bus's MaxDeliveryCount is an int of at least 1 with no maximum of
/// its own ("Minimum value is 1"; NServiceBus creates queues with
/// int.MaxValue), and its LockDuration is at most 5 minutes.
#[test]
fn servicebus_takes_any_max_delivery_count_from_one_and_a_lock_up_to_five_minutes() {
    let at = |line: &str| {
        format!(
            "summary = \"s\"\nmodel = \"messaging\"\n[broker]\npreset = \"servicebus\"\n{line}\n"
        )
    };
    for taken in [
        "max_deliveries = 1",
        "max_deliveries = 2000",
        "max_deliveries = 2147483647",
        "visibility_timeout_ms = 300000",
        "visibility_timeout_ms = 1000",
    ] {
        load_text("s.toml", &at(taken), &[]);
    }
    let e = load_error("s.toml", &at("max_deliveries = 2147483648"));
    assert_eq!(e.line, 5, "{e}");
    let e = load_error("s.toml", &at("visibility_timeout_ms = 300001"));
    assert_eq!(e.line, 5, "{e}");
    assert!(e.message.contains("Max value is 5 minutes"), "{e}");
}

/// SQS's redrive policy takes maxReceiveCount 1 to 1,000 (0: no policy).
#[test]
fn sqs_takes_no_redrive_policy_or_one_to_a_thousand_receives() {
    for preset in ["sqs-standard", "sqs-fifo"] {
        let at = |n: u32| {
            format!("summary = \"q\"\nmodel = \"messaging\"\n[broker]\npreset = \"{preset}\"\nmax_deliveries = {n}\n")
        };
        for taken in [0, 1, 1000] {
            load_text("q.toml", &at(taken), &[]);
        }
        let e = load_error("q.toml", &at(1001));
        assert_eq!(e.line, 5, "{preset}: {e}");
        assert!(e.message.contains("between 1 and 1,000"), "{preset}: {e}");
    }
}

#[test]
fn a_mechanism_the_presets_system_lacks_is_refused_and_kafka_4_needs_linger_on_top() {
    let base = "summary = \"k\"\nmodel = \"messaging\"\n[broker]\npreset = \"PRESET\"\n";
    for (preset, line, what) in [
        (
            "rabbitmq-quorum",
            "dedup_window_ms = 120000",
            "does not deduplicate publishes",
        ),
        (
            "kafka-3.9",
            "dedup_window_ms = 120000",
            "no broker-side deduplication",
        ),
        ("servicebus", "max_deliveries = 0", "can't be disabled"),
        (
            "servicebus",
            "at_max_deliveries = \"discard\"",
            "dead-letter subqueue",
        ),
        (
            "sqs-standard",
            "at_max_deliveries = \"discard\"",
            "by age only",
        ),
        (
            "nats-jetstream",
            "exactly_once_delivery = true",
            "will be considered",
        ),
    ] {
        let text = format!("{}{line}\n", base.replace("PRESET", preset));
        let e = load_error("b.toml", &text);
        assert_eq!(e.line, 5, "{preset} {line}: {e}");
        assert!(e.message.contains(what), "{preset} {line}: {e}");
        assert!(e
            .help
            .as_deref()
            .unwrap_or("")
            .contains(&format!("drop preset = \"{preset}\"")));
    }
    // Kafka 4.0's linger.ms of 5 ms: a delivery timeout written at the
    // request timeout is refused; 5 ms more is accepted; 3.9 takes it.
    let at = |preset: &str, ms: u64| {
        format!(
            "{}[producer]\nwrite = \"outbox\"\ndelivery_timeout_ms = {ms}\n",
            base.replace("PRESET", preset)
        )
    };
    let e = load_error("k.toml", &at("kafka-4.0", 30_004));
    assert!(e.message.contains("linger.ms"), "{e}");
    load_text("k.toml", &at("kafka-4.0", 30_005), &[]);
    load_text("k.toml", &at("kafka-3.9", 30_000), &[]);
    // A request timeout raised past the default delivery timeout is Kafka's
    // to raise the delivery timeout for, not to refuse: it is left unwritten.
    let raised = format!(
        "{}[producer]\npublish_timeout_ms = 130000\n",
        base.replace("PRESET", "kafka-4.0")
    );
    load_text("k.toml", &raised, &[]);
}
