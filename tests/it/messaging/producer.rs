//! Producers: the outbox relay's republish, broker transactions, and
//! idempotent and transactional producers.

use super::helpers::failing_trace;
use crate::support;
use crate::support::{load, reached, sweep, trace_of};
use models::core::Carries;
use models::messaging::{self, situations as sit};
use models::{Msg, Obs, Scenario};
use sim::{Outcome, TraceKind};

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

/// A dual write's retries live in the process's memory and end: they
/// cover an outage of the broker only while the last one comes after it.
/// `messaging-dual-write-retry-gap` cuts the broker off from 1 s to 31 s
/// and commits claim 4712 at 2 s, publishing at once and every 5 s after:
/// the 7th attempt (32 s) comes after the outage, the 6th (27 s) inside
/// it. No crash is needed to lose the event; the outbox's relay, which
/// retries from a durable row, never gives up.
#[test]
fn a_dual_writes_retries_survive_only_an_outage_shorter_than_they_last() {
    let calm = "network.loss_per_mille=0";
    let with = |attempts: &str| {
        let set = format!("producer.publish_max_attempts={attempts}");
        sweep(&load("messaging-dual-write-retry-gap", &[calm, &set]), 50)
    };
    let short = with("6");
    assert_eq!(super::helpers::invariant(&short), Some("no-lost-effect"));
    assert!(short.tally.situations.contains(sit::PUBLISH_GIVEN_UP));
    assert_eq!(short.tally.faults.crashed, 0);
    let long = with("7");
    assert_eq!(super::helpers::invariant(&long), None);
    assert!(!long.tally.situations.contains(sit::PUBLISH_GIVEN_UP));
    let outbox = load("messaging-dual-write-retry-gap", &["producer.write=outbox"]);
    assert_eq!(super::helpers::invariant(&sweep(&outbox, 300)), None);
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
    // within the transaction, and the broker stores the transaction's
    // publish once, as Kafka's idempotent transactional producer does.
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
    let stored = |entries: &[support::Entry]| {
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
