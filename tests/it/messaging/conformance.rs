//! Conformance: each broker's documented limits, pinned by a pair of
//! scenarios, one on each side of the limit (docs/catalog-messaging.md,
//! "Conformance"). Their schedules are fixed (1 ms trips, declared
//! partitions), so every seed runs the same; a few seeds show it. They need
//! no random fault to hold, which is why they are checked here and not by
//! the catalog's `check`, which asks every holding scenario for a fault.

use crate::support::{load, sweep};
use models::messaging::situations as sit;
use models::scenario::Verdict;
use sim::SituationId;

/// Seeds per scenario: one would do, a few show that the seed changes nothing.
const SEEDS: u64 = 5;

/// Each limit: the scenario inside it, the one past it, and the situation
/// only the side past the limit reaches (what the vendor documents happens
/// there).
const PAIRS: &[(&str, &str, SituationId)] = &[
    (
        "messaging-sqs-fifo-dedup-inside",
        "messaging-sqs-fifo-dedup-past",
        sit::REPUBLISH_AFTER_DEDUP_WINDOW,
    ),
    (
        "messaging-nats-duplicate-window-inside",
        "messaging-nats-duplicate-window-past",
        sit::REPUBLISH_AFTER_DEDUP_WINDOW,
    ),
    // How NATS counts its window: from the stored message, not restarted by
    // a duplicate it drops (nats-server#7302). Both resend one id every
    // minute (stored, dropped, stored again, dropped); the limit is the
    // consumer's inbox against the copy stored again 2 minutes later.
    (
        "messaging-nats-duplicate-window-inbox-outlasts",
        "messaging-nats-duplicate-window-not-restarted",
        sit::REDELIVERED_AFTER_INBOX_CLEANUP,
    ),
    (
        "messaging-servicebus-duplicate-detection-inside",
        "messaging-servicebus-duplicate-detection-past",
        sit::REPUBLISH_AFTER_DEDUP_WINDOW,
    ),
    (
        "messaging-sqs-visibility-inside",
        "messaging-sqs-visibility-past",
        sit::LEASE_EXPIRED_REDELIVERY,
    ),
    (
        "messaging-nats-ack-wait-inside",
        "messaging-nats-ack-wait-past",
        sit::LATE_ACK,
    ),
    (
        "messaging-nats-max-deliver-inside",
        "messaging-nats-max-deliver-past",
        sit::BROKER_DISCARDED,
    ),
    (
        "messaging-sqs-redrive-below-max-receives",
        "messaging-sqs-redrive-at-max-receives",
        sit::BROKER_DEAD_LETTERED,
    ),
    (
        "messaging-servicebus-max-delivery-count-inside",
        "messaging-servicebus-max-delivery-count-past",
        sit::BROKER_DEAD_LETTERED,
    ),
    (
        "messaging-rabbitmq-delivery-limit-inside",
        "messaging-rabbitmq-delivery-limit-past",
        sit::BROKER_DISCARDED,
    ),
    (
        "messaging-pubsub-eod-ack-inside-deadline",
        "messaging-pubsub-eod-ack-past-deadline",
        sit::STALE_ACK_REFUSED,
    ),
    (
        "messaging-pubsub-max-delivery-attempts-inside",
        "messaging-pubsub-max-delivery-attempts-past",
        sit::BROKER_DEAD_LETTERED,
    ),
];

/// Every conformance scenario, for the catalog's list of tested ones.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    PAIRS.iter().flat_map(|&(inside, past, _)| [inside, past])
}

/// One side of a pair: it matches its `[expect]` on every seed alike, and
/// reaches `crossing` exactly when it lies past the limit.
#[track_caller]
fn side(name: &str, crossing: SituationId, past: bool) {
    let s = load(name, &[]);
    let sum = sweep(&s, SEEDS);
    assert_eq!(sum.tally.panics, 0, "{name}: a model panicked");
    let j = s.judge(&sum);
    assert!(j.matched(), "{name}: {:?}", j.mismatch);
    match s.expected_verdict() {
        Some(Verdict::Holds) => assert_eq!(sum.tally.holds, SEEDS, "{name}: a seed differed"),
        _ => assert_eq!(j.lowest_failing_seed, Some(0), "{name}: seed 0 held"),
    }
    assert_eq!(
        sum.tally.situations.contains(crossing),
        past,
        "{name}: {} reached = {}, expected {past}",
        models::registry::situation_name(crossing),
        !past
    );
}

#[test]
fn each_limit_holds_its_pair_to_what_the_vendor_documents() {
    for &(inside, past, crossing) in PAIRS {
        side(inside, crossing, false);
        side(past, crossing, true);
    }
}

/// Both sides of NATS's no-restart pair store the id again, 2 ms past the
/// first copy's window and a minute after the duplicate the stream dropped:
/// a window restarted by that duplicate would drop it (and the `-not-restarted`
/// side would hold).
#[test]
fn a_duplicate_nats_drops_does_not_restart_its_window() {
    for name in [
        "messaging-nats-duplicate-window-inbox-outlasts",
        "messaging-nats-duplicate-window-not-restarted",
    ] {
        let sum = sweep(&load(name, &[]), SEEDS);
        for s in [sit::BROKER_DEDUP_HIT, sit::REPUBLISH_AFTER_DEDUP_WINDOW] {
            assert!(
                sum.tally.situations.contains(s),
                "{name}: {} not reached",
                models::registry::situation_name(s)
            );
        }
    }
}

/// The sides of a pair differ in one setting, the number that crosses the
/// limit; the comments, the summary and `[expect]` say what follows.
#[test]
fn the_two_sides_of_each_pair_differ_in_one_setting() {
    let settings = |name: &str| -> Vec<String> {
        let path = format!("{}/scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).expect("scenario file exists");
        let mut table = String::new();
        let mut lines = Vec::new();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.starts_with('[') {
                table = line.to_string();
            }
            if line.is_empty() || line.starts_with("summary") || table == "[expect]" {
                continue;
            }
            lines.push(format!("{table} {line}"));
        }
        lines
    };
    for &(inside, past, _) in PAIRS {
        let (a, b) = (settings(inside), settings(past));
        assert_eq!(a.len(), b.len(), "{inside} and {past} set other keys");
        let differ: Vec<_> = a.iter().zip(&b).filter(|(x, y)| x != y).collect();
        assert_eq!(differ.len(), 1, "{inside} and {past}: {differ:?}");
    }
}
