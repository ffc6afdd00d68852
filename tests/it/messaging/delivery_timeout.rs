//! Kafka's `delivery.timeout.ms` (KIP-91) in the idempotent relay: within
//! it the library retries a batch under its numbers and the broker drops
//! the retries; past it the batch is given up and the relay's resend is a
//! new record under a bumped epoch (KIP-360), which the broker stores again.

use crate::support::{load, reached, trace_of, Entry};
use models::core::Carries;
use models::messaging::{self, situations as sit};
use models::Obs;
use sim::{Outcome, TraceKind, US_PER_MS};

/// The idempotent publishes the broker received: (ms, epoch, seq).
fn received(entries: &[Entry]) -> Vec<(u64, u32, u32)> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Deliver { msg, .. } => match msg.peek() {
                Some(&messaging::Msg::SeqPublish { epoch, seq, .. }) => {
                    Some((e.time_us / US_PER_MS, epoch, seq))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The times, in ms, at which the broker stored a message.
fn stored_ms(entries: &[Entry]) -> Vec<u64> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Observe {
                obs: Obs::Accepted { .. },
                ..
            } => Some(e.time_us / US_PER_MS),
            _ => None,
        })
        .collect()
}

/// The pair pins the boundary to the millisecond: the same resend at
/// 120,000 ms is the library's retry with a delivery timeout of 120,001 ms
/// (dropped), and a new record with one of 119,999 ms (stored again).
#[test]
fn a_resend_1_ms_inside_the_delivery_timeout_is_dropped_and_1_ms_past_it_stored_again() {
    let (inside, outcome) = trace_of(&load("messaging-kafka-delivery-timeout-inside", &[]), 0);
    assert_eq!(outcome, Outcome::Holds);
    assert_eq!(
        received(&inside),
        [(0, 0, 0), (60_000, 0, 0), (120_000, 0, 0)]
    );
    assert_eq!(stored_ms(&inside), [0]);
    assert!(reached(&inside, sit::PRODUCER_SEQUENCE_DEDUP_HIT));
    assert!(!reached(&inside, sit::RESENT_AFTER_DELIVERY_TIMEOUT));

    let (past, outcome) = trace_of(&load("messaging-kafka-delivery-timeout-past", &[]), 0);
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-duplicate-effect"),
        "{outcome:?}"
    );
    // The resend at 120,000 ms: epoch 1, numbered from 0 again.
    assert_eq!(
        received(&past),
        [(0, 0, 0), (60_000, 0, 0), (120_000, 1, 0)]
    );
    assert_eq!(stored_ms(&past), [0, 120_000]);
    assert!(reached(&past, sit::RESENT_AFTER_DELIVERY_TIMEOUT));
    assert!(reached(&past, sit::REPUBLISH_UNDER_NEW_EPOCH));
}

/// An outage shorter than the delivery timeout stores each event once; a
/// 10-minute one stores it again at every expiry, each resend a new epoch.
#[test]
fn an_outage_past_the_delivery_timeout_stores_the_event_again_at_every_expiry() {
    // One publish in flight (the preset's Kafka default is 5), so that each
    // expiry is one batch's and the cadence below is the library's alone.
    let one = "producer.max_in_flight=1";
    let s = load("messaging-kafka-outage-within-delivery-timeout", &[one]);
    let (within, outcome) = trace_of(&s, 0);
    assert_eq!(outcome, Outcome::Holds);
    assert_eq!(stored_ms(&within).len(), 2, "two events, stored once each");
    assert!(received(&within).iter().all(|&(_, epoch, _)| epoch == 0));

    // An inbox that never forgets, so that the run goes on past the first
    // duplicate and stores every copy.
    let s = load(
        "messaging-kafka-outage-past-delivery-timeout",
        &["consumer.handler=inbox-same-tx", one],
    );
    let (past, outcome) = trace_of(&s, 0);
    assert_eq!(outcome, Outcome::Holds, "the inbox absorbs the copies");
    let epochs = received(&past).iter().map(|p| p.1).max();
    // The first event's batch is given up at 2, 4, 6, 8 and 10 minutes,
    // each resend a new epoch and a new copy; the second event waits
    // behind it (one publish in flight) and goes out after the outage.
    assert_eq!(epochs, Some(5));
    let stored = stored_ms(&past);
    assert_eq!(stored.len(), 6 + 1, "{stored:?}");
    assert_eq!(
        stored[..6].iter().map(|ms| ms / 60_000).collect::<Vec<_>>(),
        [0, 2, 4, 6, 8, 10]
    );
    assert!(reached(&past, sit::RESENT_AFTER_DELIVERY_TIMEOUT));
}
