//! Acks and commits: an ack before the commit, exactly-once delivery's checked
//! acks, and the commit a consumer re-sends after a counted ack.

use super::helpers::{eod_checked, failing_trace, invariant, swept};
use crate::support;
use crate::support::{load, sweep, trace_of};
use models::messaging::{self, situations as sit};
use models::{Msg, Obs};
use sim::{Outcome, TraceKind};

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
    let plain = support::load_text("lossy-db.toml", text, &[]);
    let (sum, inv) = swept(&plain, 500);
    assert_eq!(inv, Some("no-duplicate-effect"), "{:?}", sum.first_failure);
    assert_eq!(sum.tally.faults.crashed, 0);
    assert!(sum.tally.situations.contains(sit::RESENT_TX_APPLIED_AGAIN));
    let inbox = support::load_text("lossy-db.toml", text, &["consumer.handler=inbox-same-tx"]);
    let (sum, inv) = swept(&inbox, 500);
    assert_eq!(inv, None, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::TX_RESENT_AFTER_ACK));
    assert!(sum.tally.situations.contains(sit::INBOX_HIT));
    // Crashes: the work between the ack and the commit dies with the
    // consumer, re-sends or not.
    let crashes = format!(
        "{text}[crashes.consumer-1]\ncrash_per_mille = [0, 200]\nrestart_ms_min = 1000\nrestart_ms_max = 30000\n"
    );
    let crashing = support::load_text(
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
    let after = support::load_text(
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
    let s = support::load_text("ack-results-lost.toml", &text, &[]);
    let (sum, inv) = swept(&s, 1000);
    assert_eq!(inv, None, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::ACK_RESENT_FOR_RESULT));
    // Asking once, the consumer drops work whose ack counted.
    let s = support::load_text(
        "ack-results-lost.toml",
        &text,
        &["consumer.tx_max_attempts=1"],
    );
    let (sum, inv) = swept(&s, 1000);
    assert_eq!(inv, Some("no-lost-effect"));
    assert!(sum.tally.situations.contains(sit::ACK_RESULT_MISSING));
    assert!(!sum.tally.situations.contains(sit::ACK_RESENT_FOR_RESULT));
}
