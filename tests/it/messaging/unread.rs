//! Settings without effect, from the messaging model's side: each key that
//! `setting-without-effect` reports in a messaging design (the warnings
//! themselves are cases in `settings_without_effect`) is read by
//! nothing there, which the runs show.

use crate::support;
use crate::support::load_text;
use models::messaging::situations as sit;

/// The scenario (a catalog name or a text); the design that leaves the key
/// unread, as sets; the design that reads it; the key's two values; a
/// situation the unread design's runs reach.
type Unread = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    [&'static str; 2],
    sim::SituationId,
);

/// Each messaging key that `setting-without-effect` reports in a design is
/// read by nothing there: two sweeps whose only difference is its value
/// are the same, though the runs reach the path a reader would take; and
/// in a design that reads it, the same two values give different sweeps
/// (so the comparison can tell).
#[test]
fn a_messaging_setting_reported_without_effect_changes_no_run() {
    let lossy_tx = "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"broker-transaction\"\n[network]\nloss_per_mille = 200\n";
    let cases: &[Unread] = &[
        (
            "messaging-outbox-inbox",
            &[],
            &["producer.write=state-first"],
            [
                "producer.publish_max_attempts=1",
                "producer.publish_max_attempts=100",
            ],
            sit::PUBLISH_RETRIED,
        ),
        (
            lossy_tx,
            &[],
            &["producer.write=outbox"],
            ["broker.dedup_window_ms=0", "broker.dedup_window_ms=300000"],
            sit::PUBLISH_RETRIED,
        ),
        (
            "messaging-eod-checked-ack-lossy-db",
            &["consumer.ack=after-commit"],
            &[],
            ["consumer.tx_max_attempts=1", "consumer.tx_max_attempts=100"],
            sit::LEASE_EXPIRED_REDELIVERY,
        ),
        // Processing takes 0.5 to 2.5 s: a consumer that held a lease
        // would renew it every 0.2 s of that.
        (
            "messaging-ack-before-commit",
            &[],
            &["consumer.ack=after-commit"],
            [
                "consumer.lease_renewal_ms=0",
                "consumer.lease_renewal_ms=200",
            ],
            sit::CRASH_BETWEEN_ACK_AND_COMMIT,
        ),
    ];
    for &(scenario, unread_in, read_in, values, reached) in cases {
        let sweep_with = |design: &[&str], value: &str| {
            let sets: Vec<&str> = design.iter().copied().chain([value]).collect();
            let s = match scenario.starts_with("summary") {
                true => load_text("f.toml", scenario, &sets),
                false => support::load(scenario, &sets),
            };
            support::sweep(&s, 200)
        };
        let [a, b] = values.map(|v| sweep_with(unread_in, v));
        assert!(
            a.tally.situations.contains(reached),
            "{scenario}: {values:?}"
        );
        assert_eq!(a, b, "{scenario} {unread_in:?}: {values:?} changed a run");
        let [a, b] = values.map(|v| sweep_with(read_in, v));
        assert_ne!(a, b, "{scenario} {read_in:?}: {values:?} changed no run");
    }
}
