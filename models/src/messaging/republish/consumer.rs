//! The design warnings of a consumer that acks before its commit, read
//! from the scenario's faults (split off `republish.rs`, whose helpers read
//! the file for both): `ack-before-commit-under-crashes` (a scenario that
//! crashes it), `commit-resent-without-dedup` (its database's answers can be
//! kept away, and it sends its commit again) and `ack-result-lost-drops-work`
//! (every answer to its ack can be kept away, and it drops its work).

use super::{answer_loss_per_mille, cuts_link, highest, whole};
use crate::core::design_warning::{about_ms, Delays};
use crate::core::DesignWarning;
use crate::messaging::rules::{
    ACK_BEFORE_COMMIT_UNDER_CRASHES, ACK_RESULT_LOST_DROPS_WORK, COMMIT_RESENT_WITHOUT_DEDUP,
};
use crate::messaging::situations as sit;
use crate::messaging::{AckMode, ConsumerConfig, Handler};

/// The warning for a consumer that acks (`ack`) before its commit, when the
/// scenario `text` crashes consumers (the actors named `prefix`N): a crash
/// between the ack and the commit loses the event, since the broker has let
/// the message go. The consumer reports the crash that falls there
/// (`crash-between-ack-and-commit`, from its `on_crash`): nothing after the
/// restart could.
pub(crate) fn ack_before_commit_under_crashes(
    text: &str,
    ack: AckMode,
    (table, prefix): (&str, &str),
) -> Option<DesignWarning> {
    let (setting, when) = match ack {
        AckMode::AfterCommit => return None,
        AckMode::BeforeCommit => (
            "before-commit",
            "on receipt, before its work and its commit",
        ),
        AckMode::CheckedBeforeCommit => (
            "checked-before-commit",
            "when its work is done, before its commit",
        ),
    };
    let doc: toml::Table = text.parse().ok()?;
    let crashes = doc.get("crashes").and_then(toml::Value::as_table)?;
    let crashing: Vec<&str> = crashes
        .iter()
        .filter(|(name, c)| {
            name.starts_with(prefix) && c.get("crash_per_mille").and_then(highest).unwrap_or(0) > 0
        })
        .map(|(name, _)| name.as_str())
        .collect();
    let first = crashing.first()?;
    Some(DesignWarning {
        id: ACK_BEFORE_COMMIT_UNDER_CRASHES,
        text: format!(
            "the consumer acks {when} ({table}.ack = \"{setting}\"), and the scenario crashes {} ([crashes.{first}]): a crash between the ack and the commit loses the event, since the broker has let the message go for good",
            crashing.join(", ")
        ),
        shown_by: Some(sit::CRASH_BETWEEN_ACK_AND_COMMIT),
        example: "messaging-ack-before-commit",
        at: None,
    })
}

/// The warning for a consumer that acks before its commit (`consumer.ack`)
/// and whose commit is not keyed by the message id (`consumer.handler`),
/// when the scenario `text` (with its `delays`) can keep the answer of the
/// database `db` from reaching one of `consumers` within the consumer's
/// `tx_timeout_ms`: once the ack let the message go, the consumer sends the
/// transaction again (`tx_max_attempts` above 1), and a first one whose
/// answer was lost or late had committed.
pub(crate) fn commit_resent_without_dedup(
    text: &str,
    consumer: &ConsumerConfig,
    (table, db, consumers): (&str, &str, &[String]),
    delays: &Delays,
) -> Option<DesignWarning> {
    if consumer.ack == AckMode::AfterCommit || consumer.tx_max_attempts < 2 {
        return None;
    }
    let (setting, again) = match consumer.handler {
        Handler::Effect => ("effect", "the effect, with no inbox, lands again"),
        Handler::InboxSeparateTx => (
            "inbox-separate-tx",
            "the inbox row follows the effect in a transaction of its own, so the re-sent effect finds none and lands again",
        ),
        Handler::InboxIfRedelivered => (
            "inbox-if-redelivered",
            "a first delivery's transaction does not read the inbox, and the re-send repeats it: the effect lands again",
        ),
        // The row comes first and is keyed, but the effect after it is a
        // transaction of its own that reads nothing.
        Handler::InboxRecordFirst => (
            "inbox-record-first",
            "the effect follows the inbox row in a transaction of its own that reads no inbox, so a re-sent effect lands again (and a re-sent row that finds its own first attempt's row is taken for a duplicate's: the effect is skipped and the event lost, record-resent-took-own-row)",
        ),
        // Keyed by the message id: the re-send finds its row; a set-value
        // write repeats itself.
        _ => return None,
    };
    let doc: toml::Table = text.parse().ok()?;
    let late = late_answer(&doc, (db, consumers), delays, consumer.tx_timeout_ms)?;
    let acked = match consumer.ack {
        AckMode::BeforeCommit => format!("acks on receipt ({table}.ack = \"before-commit\")"),
        _ => {
            format!("acks with result before its commit ({table}.ack = \"checked-before-commit\")")
        }
    };
    Some(DesignWarning {
        id: COMMIT_RESENT_WITHOUT_DEDUP,
        text: format!(
            "the consumer {acked}, so once the ack let the message go nothing delivers it again and the consumer sends a transaction again when its database does not answer within {} ({table}.tx_timeout_ms, up to {table}.tx_max_attempts = {} sends); {late}, and a transaction whose answer was lost or late had committed: {again} ({table}.handler = \"{setting}\")",
            about_ms(consumer.tx_timeout_ms),
            consumer.tx_max_attempts,
        ),
        shown_by: Some(sit::RESENT_TX_APPLIED_AGAIN),
        example: "messaging-eod-checked-ack-lossy-db",
        at: None,
    })
}

/// The warning for a consumer that acks with result before its commit
/// (`checked-before-commit`) when the scenario `text` (with its `delays`)
/// can keep the broker's answer from every one of its asks: the consumer
/// asks up to `tx_max_attempts` times, `tx_timeout_ms` apart, then drops
/// its work, though the ack may have counted, and then nothing delivers the
/// message again. One ask: any loss of the results, a cut of them, a round
/// trip as long as the timeout. More: a cut (declared or random) as long as
/// the asks' span, or a round trip as long as all their timeouts.
pub(crate) fn ack_result_lost_drops_work(
    text: &str,
    consumer: &ConsumerConfig,
    (table, consumers): (&str, &[String]),
    delays: &Delays,
) -> Option<DesignWarning> {
    if consumer.ack != AckMode::CheckedBeforeCommit {
        return None;
    }
    let doc: toml::Table = text.parse().ok()?;
    let empty = toml::Table::new();
    let network = doc
        .get("network")
        .and_then(toml::Value::as_table)
        .unwrap_or(&empty);
    let asks = u64::from(consumer.tx_max_attempts);
    let timeout_ms = consumer.tx_timeout_ms;
    let why = ack_results_kept_from(network, consumers, delays, (asks, timeout_ms))?;
    let asking = match asks {
        1 => format!("asks for the result once ({table}.tx_max_attempts = 1) and drops its work when no answer comes within {} ({table}.tx_timeout_ms)", about_ms(timeout_ms)),
        _ => format!("asks for the result up to {asks} times, {} apart ({table}.tx_max_attempts, {table}.tx_timeout_ms), then drops its work", about_ms(timeout_ms)),
    };
    Some(DesignWarning {
        id: ACK_RESULT_LOST_DROPS_WORK,
        text: format!(
            "the consumer acks with result before its commit ({table}.ack = \"checked-before-commit\") and {asking}; {why}: an ack that counted whose every answer was lost lets the message go with its work dropped, and the event is lost"
        ),
        shown_by: Some(sit::ACK_RESULT_MISSING),
        example: "messaging-eod-checked-ack",
        at: None,
    })
}

/// What in the scenario can keep the broker's answer from every one of a
/// consumer's `asks`, `timeout_ms` apart: the first found of a loss of the
/// results (one ask), a cut as long as the asks' span (declared or
/// random), a round trip as long as all their timeouts.
fn ack_results_kept_from(
    network: &toml::Table,
    consumers: &[String],
    delays: &Delays,
    (asks, timeout_ms): (u64, u64),
) -> Option<String> {
    let span_ms = (asks - 1).saturating_mul(timeout_ms);
    for c in consumers {
        let loss = answer_loss_per_mille(network, ("broker", c), "ack-result");
        if loss > 0 && asks == 1 {
            return Some(format!(
                "the network loses up to {loss}‰ of the broker's ack results to {c}"
            ));
        }
    }
    let partitions = network
        .get("partitions")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table);
    for p in partitions {
        let start = whole(p.get("start_ms")).unwrap_or(0);
        let end = whole(p.get("end_ms")).unwrap_or(0);
        let cut_ms = end.saturating_sub(start);
        let cuts = consumers
            .iter()
            .any(|c| cuts_link(p, ("broker", c.as_str())));
        if cuts && cut_ms >= span_ms {
            return Some(format!(
                "a [[network.partitions]] entry cuts the broker's answers to a consumer for {}",
                about_ms(cut_ms)
            ));
        }
    }
    let random = network
        .get("random_partition_per_mille")
        .and_then(highest)
        .unwrap_or(0);
    let random_ms = whole(network.get("random_partition_ms_max")).unwrap_or(30_000);
    if random > 0 && random_ms >= span_ms {
        return Some(format!(
            "a random partition (random_partition_per_mille) may cut the broker off from a consumer for up to {}",
            about_ms(random_ms)
        ));
    }
    for c in consumers {
        let trip_ms = delays.path_ms(&[c.as_str(), "broker", c.as_str()]).1;
        if trip_ms >= asks.saturating_mul(timeout_ms) {
            return Some(format!(
                "an ack from {c} and its result can take up to {} on the network",
                about_ms(trip_ms)
            ));
        }
    }
    None
}

/// What in the scenario can keep an answer of `db` from reaching one of
/// `consumers` within `timeout_ms`: a loss of its `tx-done` answers, a
/// partition that cuts them, or a round trip as long as the timeout.
fn late_answer(
    doc: &toml::Table,
    (db, consumers): (&str, &[String]),
    delays: &Delays,
    timeout_ms: u64,
) -> Option<String> {
    let empty = toml::Table::new();
    let network = doc
        .get("network")
        .and_then(toml::Value::as_table)
        .unwrap_or(&empty);
    for c in consumers {
        let loss = answer_loss_per_mille(network, (db, c), "tx-done");
        if loss > 0 {
            return Some(format!(
                "the network loses up to {loss}‰ of {db}'s answers (tx-done) to {c}"
            ));
        }
    }
    for c in consumers {
        let cuts = network
            .get("partitions")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(toml::Value::as_table)
            .any(|p| cuts_link(p, (db, c)));
        if cuts {
            return Some(format!(
                "a [[network.partitions]] entry cuts {db}'s answers to {c}"
            ));
        }
    }
    let random = network
        .get("random_partition_per_mille")
        .and_then(highest)
        .unwrap_or(0);
    if random > 0 {
        return Some(format!(
            "a random partition (random_partition_per_mille) may cut {db} off from a consumer"
        ));
    }
    for c in consumers {
        let trip_ms = delays.path_ms(&[c.as_str(), db, c.as_str()]).1;
        if trip_ms >= timeout_ms {
            return Some(format!(
                "a transaction from {c} and its answer can take up to {} on the network",
                about_ms(trip_ms)
            ));
        }
    }
    None
}
