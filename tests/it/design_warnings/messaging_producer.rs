//! `producer-id-expiry-below-retries`: a broker's producer id must outlive
//! the relay's retries under it.

use super::helpers::{failed_with, ids};
use crate::support::{load, sweep};

/// A broker forgets a producer id a while after the last publish it stored
/// under it; a relay whose confirmations are cut for longer keeps retrying
/// under that id, and the retry after the expiry is stored again.
#[test]
fn producer_ids_forgotten_while_the_relay_still_retries_are_a_warning() {
    const RULE: &str = "producer-id-expiry-below-retries";
    let s = load("messaging-producer-id-expired", &[]);
    assert_eq!(ids(&s), [RULE]);
    let h = &s.design_warnings[0];
    assert!(
        h.text.contains("1 day after the last publish") && h.text.contains("up to 2 days"),
        "{}",
        h.text
    );
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("producer-id-expired")
    );
    // The cut (2 days = 172,800,000 ms) against the expiration: the last
    // retry under the cut can reach the broker up to the delay spread
    // (199 ms) later than the first copy, and an id that has idled exactly
    // the expiration is forgotten (seen failing, silent, at the cut and at
    // the cut + 100 ms before). This file's network can also lose the
    // confirmation after the cut, which costs one more hourly retry.
    let with = |sets: &[&str]| ids(&load("messaging-producer-id-expired", sets));
    assert_eq!(
        with(&["broker.producer_id_expiration_ms=172799999"]),
        [RULE]
    );
    let calm = |e: &str| with(&[e, "network.loss_per_mille=0"]);
    assert_eq!(calm("broker.producer_id_expiration_ms=172800000"), [RULE]);
    assert_eq!(calm("broker.producer_id_expiration_ms=172800199"), [RULE]);
    assert!(calm("broker.producer_id_expiration_ms=172800200").is_empty());
    assert_eq!(
        with(&["broker.producer_id_expiration_ms=176400199"]),
        [RULE]
    );
    assert!(with(&["broker.producer_id_expiration_ms=176400200"]).is_empty());
    // A retry the network loses on its way after the cut costs the same
    // retry as a lost confirmation (silent before: only confirmations were
    // read).
    let publishes_lost = |e: &str| {
        with(&[
            e,
            "network.loss_per_mille=0",
            r#"network.links=[{from="producer", to="broker", loss_per_mille=[0, 100]}]"#,
        ])
    };
    assert_eq!(
        publishes_lost("broker.producer_id_expiration_ms=176400199"),
        [RULE]
    );
    assert!(publishes_lost("broker.producer_id_expiration_ms=176400200").is_empty());
    let s = load(
        "messaging-producer-id-expired",
        &[
            "broker.producer_id_expiration_ms=172800100",
            "network.loss_per_mille=0",
        ],
    );
    let sum = sweep(&s, 200);
    assert_eq!(failed_with(&sum), Some("no-duplicate-effect"));
    assert!(sum
        .tally
        .situations
        .contains(s.design_warnings[0].shown_by.expect("marked")));
    assert!(with(&["broker.producer_id_expiration_ms=0"]).is_empty());
    // A transactional producer's ids expire the same way.
    assert_eq!(with(&["producer.transactional_id=true"]), [RULE]);
    // Without producer ids there is nothing to forget: every retry is a new
    // message, and the inbox's short memory is the warning instead.
    assert_eq!(
        with(&["producer.idempotence=false"]),
        ["inbox-retention-below-republish"]
    );
}

/// An idempotent producer keeps at most five publishes in flight: the
/// broker recognises a retry among the last five batches per producer id
/// and partition only. Above that Kafka 3.0.1 to 3.9 turn idempotence left at
/// its default off, logging one WARN line, and every retry after a lost
/// confirmation is stored again; Kafka 4.0 refuses the configuration.
#[test]
fn an_idempotent_producer_above_five_in_flight_is_a_warning() {
    const RULE: &str = "idempotence-off-above-five-in-flight";
    let s = load("messaging-max-in-flight-above-five", &[]);
    assert!(ids(&s).contains(&RULE), "{:?}", ids(&s));
    let h = s
        .design_warnings
        .iter()
        .find(|h| h.id == RULE)
        .expect("fires");
    // The place that writes the setting, as setting-without-effect names it.
    assert!(
        h.text
            .contains("messaging-max-in-flight-above-five.toml:35:17: producer.max_in_flight = 6"),
        "{}",
        h.text
    );
    assert!(
        h.text.contains("Kafka 3.0.1 to 3.9")
            && h.text.contains("WARN")
            && h.text.contains("Kafka 4.0 refuses")
            && h.text.contains("stored again")
            && h.text.contains("max_in_flight = 5 or less"),
        "{}",
        h.text
    );
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("duplicate-publish")
    );
    assert_eq!(h.example, "messaging-max-in-flight-above-five");
    // A run of the scenario reaches the gap: a retry is stored again.
    let sum = sweep(&s, 20);
    assert!(sum.tally.situations.contains(h.shown_by.expect("marked")));
    // A --set that writes the setting is named as such.
    let set = load(
        "messaging-max-in-flight-five",
        &["producer.max_in_flight=6"],
    );
    let text = set
        .design_warnings
        .iter()
        .find(|h| h.id == RULE)
        .map(|h| h.text.clone())
        .expect("fires at the --set");
    assert!(
        text.starts_with("--set producer.max_in_flight=6: "),
        "{text}"
    );

    let with = |sets: &[&str]| ids(&load("messaging-max-in-flight-above-five", sets));
    // Five in flight: every retry is among the broker's last five.
    assert!(!with(&["producer.max_in_flight=5"]).contains(&RULE));
    assert!(!ids(&load("messaging-max-in-flight-five", &[])).contains(&RULE));
    // No idempotence asked for: nothing is silently off (the inbox's short
    // memory against the republishes is the warning then).
    assert_eq!(
        with(&["producer.idempotence=false"]),
        ["inbox-retention-below-republish"]
    );
    // A transactional producer is idempotent whatever max_in_flight says at
    // five or less, and refused above.
    assert!(!with(&["producer.transactional_id=true", "producer.max_in_flight=5"]).contains(&RULE));
    let refused = models::Scenario::load_with(
        "f.toml",
        &std::fs::read_to_string(
            crate::support::scenario_dir().join("messaging-max-in-flight-above-five.toml"),
        )
        .expect("file"),
        &[models::scenario::Override::parse("producer.transactional_id=true").expect("override")],
    );
    assert!(refused.is_err());
}
