//! Messaging consumers: missing dedup and acks before the commit (leases in
//! `messaging_leases`, commits re-sent after the ack in `messaging_commits`).

use super::helpers::ids;
use crate::support::{load, load_text, scenario_dir, sweep};

#[test]
fn a_consumer_that_applies_every_delivery_is_a_warning_whatever_the_broker_filters() {
    const RULE: &str = "consumer-without-dedup";
    let s = load("messaging-broker-exactly-once", &[]);
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.design_warnings[0].text.contains("dedup window of 5 min"),
        "{}",
        s.design_warnings[0].text
    );
    assert_eq!(
        s.design_warnings[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("redelivered-after-effect")
    );
    assert!(load("messaging-outbox-inbox", &[])
        .design_warnings
        .is_empty());
    assert_eq!(
        ids(&load(
            "messaging-outbox-inbox",
            &["consumer.handler=effect"]
        )),
        [RULE]
    );
    for handler in ["unique-key", "inbox-same-tx", "set-value-versioned"] {
        let set = format!("consumer.handler={handler}");
        let s = load("messaging-broker-exactly-once", &[&set]);
        assert!(
            s.design_warnings.is_empty(),
            "{handler}: {:?}",
            s.design_warnings
        );
    }
    assert_eq!(
        ids(&load("chain-outbox-inbox", &["accounting.handler=effect"])),
        [RULE]
    );
    // An idempotent producer is no reason to drop the consumer's dedup: the
    // warning still fires, and says what the producer ids leave through.
    let idem = load(
        "messaging-idempotent-producer-restart",
        &["consumer.handler=effect"],
    );
    assert_eq!(ids(&idem), [RULE]);
    assert!(
        idem.design_warnings[0].text.contains(
            "not the relay's resend once the producer library gave the batch up (producer.delivery_timeout_ms), nor a restarted relay's republish"
        ),
        "{}",
        idem.design_warnings[0].text
    );
    // A transactional producer's fencing is named for what it stops.
    let fenced = load(
        "messaging-transactional-id-restart",
        &["consumer.handler=effect"],
    );
    assert_eq!(ids(&fenced), [RULE]);
    assert!(
        fenced.design_warnings[0].text.contains(
            "fences a crashed session's late publishes, not the restarted relay's own republish"
        ),
        "{}",
        fenced.design_warnings[0].text
    );
    let plain = load(
        "messaging-idempotent-producer-restart",
        &["consumer.handler=effect", "producer.idempotence=false"],
    );
    assert!(
        !plain.design_warnings[0].text.contains("idempotent"),
        "{}",
        plain.design_warnings[0].text
    );
    // Reading the inbox only for redelivered messages is a rule of its own;
    // the inbox's retention still counts for the redeliveries it reads.
    let flag = load("messaging-dedup-only-redelivered", &[]);
    assert_eq!(ids(&flag), ["dedup-only-on-redelivery"]);
    assert_eq!(
        flag.design_warnings[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("republish-taken-for-first-delivery")
    );
    let short = load(
        "messaging-dedup-only-redelivered",
        &["consumer.inbox_retention_ms=10000"],
    );
    assert_eq!(
        ids(&short),
        [
            "dedup-only-on-redelivery",
            "inbox-retention-below-redelivery"
        ]
    );
    assert!(load(
        "messaging-dedup-only-redelivered",
        &["consumer.handler=inbox-same-tx"]
    )
    .design_warnings
    .is_empty());
    assert_eq!(
        ids(&load(
            "chain-outbox-inbox",
            &["accounting.handler=inbox-if-redelivered"]
        )),
        ["dedup-only-on-redelivery"]
    );
    // Both filters at once are both named.
    let both = load(
        "messaging-idempotent-producer-restart",
        &["consumer.handler=effect", "broker.dedup_window_ms=300000"],
    );
    let text = &both.design_warnings[0].text;
    assert!(
        text.contains("dedup window of 5 min") && text.contains("retries of one batch"),
        "{text}"
    );
}

/// Under exactly-once delivery with the ack checked before the commit, a
/// message's redeliveries cannot take effect twice; a consumer without dedup
/// is then warned only while a second copy can still come from the producer.
#[test]
fn a_checked_ack_under_exactly_once_delivery_narrows_the_missing_dedup_to_the_producer() {
    const RULE: &str = "consumer-without-dedup";
    // No warning at all: checked ack, producer ids, a producer that never crashes.
    let s = load("messaging-eod-checked-ack", &[]);
    assert!(s.design_warnings.is_empty(), "{:?}", s.design_warnings);
    // Each condition taken away brings the warning back.
    for sets in [
        &["producer.idempotence=false"][..],
        &["consumer.ack=after-commit"][..],
        &["broker.exactly_once_delivery=false"][..],
        &["crashes.producer={crash_per_mille=10, restart_ms_min=1000, restart_ms_max=2000}"][..],
    ] {
        let s = load("messaging-eod-checked-ack", sets);
        assert!(ids(&s).contains(&RULE), "{sets:?}: {:?}", ids(&s));
    }
    // With the checked ack in place, the warning says what it filters.
    let s = load("messaging-eod-checked-ack", &["producer.idempotence=false"]);
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.design_warnings[0].text.contains(
            "keep the redeliveries of one message from taking effect twice, not a second copy a producer published"
        ),
        "{}",
        s.design_warnings[0].text
    );
    // A checked ack without the broker's promise is named for what it misses.
    let s = load(
        "messaging-eod-checked-ack",
        &["broker.exactly_once_delivery=false"],
    );
    let h = s
        .design_warnings
        .iter()
        .find(|h| h.id == RULE)
        .expect("warned");
    assert!(
        h.text
            .contains("without broker.exactly_once_delivery the broker says every ack did"),
        "{}",
        h.text
    );
    // Exactly-once delivery with a checked ack and an idempotent producer
    // that never restarts: no second copy, no warning, unless the broker's
    // confirmations are cut for as long as the library's delivery timeout
    // (2 min): then the relay's resend is a new record.
    let within = load("messaging-kafka-outage-within-delivery-timeout", &[]);
    assert!(
        within.design_warnings.is_empty(),
        "{:?}",
        within.design_warnings
    );
    assert_eq!(
        ids(&load("messaging-kafka-outage-past-delivery-timeout", &[])),
        [RULE]
    );
    // A 1-min cut and retries every 30 s: confirmed by the 60 s retry, given
    // up with a delivery timeout of 60 s (the first retry at or after the
    // cut is a whole number of timeouts after the first send).
    let at = |d: &str| {
        let set = format!("producer.delivery_timeout_ms={d}");
        ids(&load(
            "messaging-kafka-outage-within-delivery-timeout",
            &[&set],
        ))
    };
    assert_eq!(at("60000"), [RULE]);
    assert!(at("60001").is_empty());
    // A crash rate of 0 is no crash.
    let zero = load(
        "messaging-eod-checked-ack",
        &["crashes.producer={crash_per_mille=0, restart_ms_min=1000, restart_ms_max=2000}"],
    );
    assert!(
        zero.design_warnings.is_empty(),
        "{:?}",
        zero.design_warnings
    );
}

/// A consumer that acks before its commit loses the event when it crashes
/// in between: a warning wherever the scenario crashes its consumers.
#[test]
fn an_ack_before_the_commit_under_consumer_crashes_is_a_warning() {
    const RULE: &str = "ack-before-commit-under-crashes";
    let s = load("messaging-ack-before-commit", &[]);
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.design_warnings[0].text.contains("on receipt")
            && s.design_warnings[0].text.contains("consumer-1, consumer-2"),
        "{}",
        s.design_warnings[0].text
    );
    assert_eq!(
        s.design_warnings[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("crash-between-ack-and-commit")
    );
    // The checked ack too, after the ack counted.
    let checked = load("messaging-eod-checked-ack-crash", &[]);
    assert!(ids(&checked).contains(&RULE));
    assert!(
        !ids(&load("messaging-eod-checked-ack", &[])).contains(&RULE),
        "no crashes"
    );
    // After the commit, or with crash rates of 0, silent.
    assert!(load(
        "messaging-ack-before-commit",
        &["consumer.ack=after-commit"]
    )
    .design_warnings
    .is_empty());
    let calm = load(
        "messaging-ack-before-commit",
        &[
            "crashes.consumer-1.crash_per_mille=0",
            "crashes.consumer-2.crash_per_mille=0",
        ],
    );
    assert!(calm.design_warnings.is_empty(), "{:?}", ids(&calm));
    // A crashing producer is not a crashing consumer.
    let producer = load(
        "messaging-ack-before-commit",
        &[
            "crashes.consumer-1.crash_per_mille=0",
            "crashes.consumer-2.crash_per_mille=0",
            "crashes.producer={crash_per_mille=100, restart_ms_min=1000, restart_ms_max=2000}",
        ],
    );
    assert!(!ids(&producer).contains(&RULE));
    // The chain's accounting consumers.
    assert!(ids(&load("chain-accounting-ack-before-commit", &[])).contains(&RULE));
}

/// The gap of `ack-before-commit-under-crashes` is marked by the crash that
/// falls into it, reported by the consumer as it crashes: reached by the
/// catalog's scenarios, never by the same consumers acking after the commit,
/// though they crash as often.
#[test]
fn a_crash_between_the_ack_and_the_commit_is_a_situation_the_sweep_reaches() {
    use models::messaging::situations::CRASH_BETWEEN_ACK_AND_COMMIT as GAP;
    for (name, sets) in [
        ("messaging-ack-before-commit", &[][..]),
        ("messaging-eod-checked-ack-crash", &[][..]),
        ("chain-accounting-ack-before-commit", &[][..]),
    ] {
        let sum = sweep(&load(name, sets), 300);
        assert!(sum.tally.situations.contains(GAP), "{name}");
    }
    let after = load(
        "messaging-ack-before-commit",
        &["consumer.ack=after-commit"],
    );
    let sum = sweep(&after, 300);
    assert!(sum.tally.faults.crashed > 0, "the consumers still crash");
    assert!(!sum.tally.situations.contains(GAP));
    // A design claiming to hold with the warning listed must show a run
    // reaching the gap: a sweep too short for a crash to fall there says so
    // instead of "holds".
    let text = std::fs::read_to_string(scenario_dir().join("messaging-ack-before-commit.toml"))
        .expect("catalog file")
        .replace(
            "verdict = \"violation\"\ninvariant = \"no-lost-effect\"",
            "verdict = \"holds\"\nwarnings = [\"ack-before-commit-under-crashes\"]",
        )
        .replace("crash_per_mille = [0, 200]", "crash_per_mille = 1");
    let lucky = load_text("lucky.toml", &text, &[]);
    let sum = sweep(&lucky, 5);
    assert!(sum.violation().is_none() && !sum.tally.situations.contains(GAP));
    let m = lucky.judge(&sum).mismatch.expect("no run reached the gap");
    assert!(m.contains("crash-between-ack-and-commit: 0 runs"), "{m}");
}
