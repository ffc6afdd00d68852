//! The design warnings a queue's settings carry only under the scenario's
//! own faults, read from them: `inbox-retention-below-republish` (an outbox
//! relay publishes a row again for as long as the broker's confirmations do
//! not reach it, and an inbox that forgets message ids sooner lets a late
//! copy through; the design alone sets no limit, the relay never gives up),
//! `producer-id-expiry-below-retries` (the broker forgets the id the relay
//! still retries under), `ack-before-commit-under-crashes` (a consumer
//! that acks first, in a scenario that crashes it) and
//! `commit-resent-without-dedup` (a consumer that acks first sends a
//! transaction again when its database's answer does not come, and the
//! scenario can keep answers from coming).
//!
//! The file's values are read before the network is validated, so anything
//! malformed here is skipped (the loader refuses it right after) and every
//! sum saturates.

use super::situations as sit;
use super::{AckMode, ConsumerConfig, Handler};
use crate::core::hazard::{
    about_ms, Delays, ACK_BEFORE_COMMIT_UNDER_CRASHES, ACK_RESULT_LOST_DROPS_WORK,
    COMMIT_RESENT_WITHOUT_DEDUP, INBOX_RETENTION_BELOW_REPUBLISH, PRODUCER_ID_EXPIRY_BELOW_RETRIES,
};
use crate::core::Hazard;

/// What the relay stamps on its publishes, as far as this rule cares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Stamps {
    /// Every retry is stored as a new copy.
    Nothing,
    /// Retries of one session are dropped (an idempotent or transactional
    /// producer): only a restarted relay's republish is a new copy.
    PerSession,
}

/// An outbox relay, as the republish rules read it.
pub(crate) struct Relay<'a> {
    /// The actor it runs in (`producer`, the chain's `service`).
    pub actor: &'a str,
    /// What it stamps on its publishes.
    pub stamps: Stamps,
    /// How long it waits for a confirmation before it publishes again.
    pub publish_timeout_ms: u64,
    /// Where the file sets that: `producer.publish_timeout_ms`.
    pub timeout_key: &'a str,
}

/// The warning for an inbox that keeps ids `retention_ms` (0: forever) behind
/// `relay`, under the faults `text` sets; the inbox belongs to the
/// consumer's `table`. `late_ms`: how much later than the first copy's row
/// the last copy can read the inbox beyond the time between their publishes
/// (the delay spreads on the way, the consumer's processing jitter). A
/// retry or a confirmation the network can lose after the cut costs one
/// more retry, a publish timeout later (one loss counted, as the rules
/// count one crash per gap).
pub(crate) fn inbox_retention_below_republish(
    text: &str,
    (retention_ms, late_ms): (u64, u64),
    relay: &Relay<'_>,
    table: &str,
) -> Option<Hazard> {
    if retention_ms == 0 {
        return None;
    }
    let doc: toml::Table = text.parse().ok()?;
    let (cut_ms, cut_by) = longest_cut(&doc, relay.actor)?;
    let after_ms = match retry_can_be_lost(&doc, relay.actor) {
        true => relay.publish_timeout_ms,
        false => 0,
    };
    let (horizon_ms, copies) = match relay.stamps {
        Stamps::Nothing => (
            cut_ms.saturating_add(after_ms),
            "every retry is stored by the broker as a new copy".to_string(),
        ),
        Stamps::PerSession => {
            let restart_ms = producer_restart_ms(&doc, relay.actor)?;
            (
                cut_ms.saturating_add(after_ms).saturating_add(restart_ms),
                "a restarted relay's republish is a new message to the broker (the producer crashes here)".to_string(),
            )
        }
    };
    // A row is gone once its age reaches the retention.
    if horizon_ms.saturating_add(late_ms) < retention_ms {
        return None;
    }
    let more = match after_ms {
        0 => String::new(),
        _ => format!(
            ", and a retry or its confirmation the network loses after the cut costs one more retry {} later ({})",
            about_ms(after_ms),
            relay.timeout_key
        ),
    };
    Some(Hazard {
        id: INBOX_RETENTION_BELOW_REPUBLISH,
        text: format!(
            "the inbox forgets a message id after {} ({table}.inbox_retention_ms), but the outbox relay publishes a row again until a confirmation reaches it, and {cut_by} cuts the confirmations for up to {}{more}; {copies}, so a copy can come up to {} after the first{}: one after the inbox forgot takes effect again",
            about_ms(retention_ms),
            about_ms(cut_ms),
            about_ms(horizon_ms),
            later(late_ms),
        ),
        shown_by: Some(sit::REDELIVERED_AFTER_INBOX_CLEANUP),
        example: "messaging-idempotent-producer-restart",
        at: None,
    })
}

/// The words for a last copy reaching the inbox `late_ms` later than the
/// time between the publishes says.
fn later(late_ms: u64) -> String {
    match late_ms {
        0 => String::new(),
        _ => format!(
            ", and reach the inbox up to {} later than that (the delay ranges in [network], the consumer's processing jitter)",
            about_ms(late_ms)
        ),
    }
}

/// The warning for an inbox that keeps ids `retention_ms` (0: forever) behind
/// a dual-write producer (state first or event first) that publishes an
/// event up to `attempts` times, `timeout_ms` apart, while no confirmation
/// comes: the broker stores every retry as a new copy, and the design sets
/// the span, whatever the faults. `late_ms` as for the relay's rule.
pub(crate) fn inbox_retention_below_publish_retries(
    (retention_ms, late_ms): (u64, u64),
    (attempts, timeout_ms): (u32, u64),
    table: &str,
) -> Option<Hazard> {
    if retention_ms == 0 || attempts < 2 {
        return None;
    }
    let span_ms = u64::from(attempts - 1).saturating_mul(timeout_ms);
    if span_ms.saturating_add(late_ms) < retention_ms {
        return None;
    }
    Some(Hazard {
        id: INBOX_RETENTION_BELOW_REPUBLISH,
        text: format!(
            "the inbox forgets a message id after {} ({table}.inbox_retention_ms), but the producer publishes an event again each time no confirmation comes within {} (producer.publish_timeout_ms), up to producer.publish_max_attempts = {attempts} times, and the broker stores every retry as a new copy: the last can come up to {} after the first{}; one after the inbox forgot takes effect again",
            about_ms(retention_ms),
            about_ms(timeout_ms),
            about_ms(span_ms),
            later(late_ms),
        ),
        shown_by: Some(sit::REDELIVERED_AFTER_INBOX_CLEANUP),
        example: "messaging-idempotent-producer-restart",
        at: None,
    })
}

/// The warning for a broker that forgets an idle producer id after
/// `expiration_ms` (0: never) while a relay that stamps its publishes may
/// still retry under it, under the faults `text` sets: a retry the broker
/// drops stores nothing, so the id idles from the first stored copy on.
/// The relay retries every `publish_timeout_ms`; `spread_ms` is how much
/// later than the first copy the last retry can reach the broker beyond the
/// cut (the delay spread producer to broker). A retry or a confirmation
/// the network can lose after the cut costs one more retry, a timeout later
/// (one loss counted, as the other rules count one crash per gap).
pub(crate) fn producer_id_expiry_below_retries(
    text: &str,
    expiration_ms: u64,
    (publish_timeout_ms, spread_ms): (u64, u64),
) -> Option<Hazard> {
    if expiration_ms == 0 {
        return None;
    }
    let doc: toml::Table = text.parse().ok()?;
    let (cut_ms, cut_by) = longest_cut(&doc, "producer")?;
    let lossy = retry_can_be_lost(&doc, "producer");
    let after_ms = match lossy {
        true => publish_timeout_ms,
        false => 0,
    };
    let horizon_ms = cut_ms.saturating_add(spread_ms).saturating_add(after_ms);
    // The broker forgets the id once it has idled the expiration.
    if horizon_ms < expiration_ms {
        return None;
    }
    let more = match lossy {
        true => format!(
            ", a retry or its confirmation lost after the cut one more retry {} later (producer.publish_timeout_ms)",
            about_ms(publish_timeout_ms)
        ),
        false => String::new(),
    };
    Some(Hazard {
        id: PRODUCER_ID_EXPIRY_BELOW_RETRIES,
        text: format!(
            "the broker forgets a producer id {} after the last publish it stored under it (broker.producer_id_expiration_ms), and the retries it drops as duplicates store nothing; but {cut_by} cuts the confirmations for up to {}, and the relay keeps retrying under the same id (its last retry can reach the broker up to {} later than the first copy, with the delay spread{more}): a retry after the id was forgotten is stored as a new message",
            about_ms(expiration_ms),
            about_ms(cut_ms),
            about_ms(horizon_ms),
        ),
        shown_by: Some(sit::PRODUCER_ID_EXPIRED),
        example: "messaging-producer-id-expired",
        at: None,
    })
}

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
) -> Option<Hazard> {
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
    Some(Hazard {
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
) -> Option<Hazard> {
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
    Some(Hazard {
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
) -> Option<Hazard> {
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
    let span_ms = (asks - 1).saturating_mul(timeout_ms);
    let mut why: Option<String> = None;
    for c in consumers {
        let loss = answer_loss_per_mille(network, ("broker", c), "ack-result");
        if loss > 0 && asks == 1 && why.is_none() {
            why = Some(format!(
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
        if cuts && cut_ms >= span_ms && why.is_none() {
            why = Some(format!(
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
    if random > 0 && random_ms >= span_ms && why.is_none() {
        why = Some(format!(
            "a random partition (random_partition_per_mille) may cut the broker off from a consumer for up to {}",
            about_ms(random_ms)
        ));
    }
    for c in consumers {
        let trip_ms = delays.path_ms(&[c.as_str(), "broker", c.as_str()]).1;
        if trip_ms >= asks.saturating_mul(timeout_ms) && why.is_none() {
            why = Some(format!(
                "an ack from {c} and its result can take up to {} on the network",
                about_ms(trip_ms)
            ));
        }
    }
    let why = why?;
    let asking = match asks {
        1 => format!("asks for the result once ({table}.tx_max_attempts = 1) and drops its work when no answer comes within {} ({table}.tx_timeout_ms)", about_ms(timeout_ms)),
        _ => format!("asks for the result up to {asks} times, {} apart ({table}.tx_max_attempts, {table}.tx_timeout_ms), then drops its work", about_ms(timeout_ms)),
    };
    Some(Hazard {
        id: ACK_RESULT_LOST_DROPS_WORK,
        text: format!(
            "the consumer acks with result before its commit ({table}.ack = \"checked-before-commit\") and {asking}; {why}: an ack that counted whose every answer was lost lets the message go with its work dropped, and the event is lost"
        ),
        shown_by: Some(sit::ACK_RESULT_MISSING),
        example: "messaging-eod-checked-ack",
        at: None,
    })
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

/// The highest loss `[network]` and its `[[network.links]]` entries set for
/// the messages of kind `answer` (a reply such as `tx-done`, or a request)
/// on the link `from → to`, as the loader
/// resolves them: an entry without `kinds` sets the link's loss; an entry
/// naming the kind with a loss of its own sets the kind's, which from then on
/// only such entries change; a kind no entry gave a loss follows the link's
/// final loss (`scenario/network.rs`, `kind_faults`).
fn answer_loss_per_mille(network: &toml::Table, (from, to): (&str, &str), answer: &str) -> u64 {
    let mut link = network.get("loss_per_mille").and_then(highest).unwrap_or(0);
    let mut kind: Option<u64> = None;
    for l in network
        .get("links")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
    {
        let side = |k: &str, name: &str| {
            l.get(k)
                .and_then(toml::Value::as_str)
                .is_none_or(|n| n == name)
        };
        if !side("from", from) || !side("to", to) {
            continue;
        }
        let loss = l.get("loss_per_mille").and_then(highest);
        match l.get("kinds").and_then(toml::Value::as_array) {
            None => link = loss.unwrap_or(link),
            Some(kinds) if kinds.iter().any(|k| k.as_str() == Some(answer)) => {
                kind = loss.or(kind);
            }
            Some(_) => {}
        }
    }
    kind.unwrap_or(link)
}

/// Whether the network can lose a relay's publish to the broker or the
/// broker's confirmation of it, outside any cut: either way the relay
/// publishes once more, a publish timeout later.
fn retry_can_be_lost(doc: &toml::Table, relay: &str) -> bool {
    let empty = toml::Table::new();
    let network = doc
        .get("network")
        .and_then(toml::Value::as_table)
        .unwrap_or(&empty);
    answer_loss_per_mille(network, ("broker", relay), "publish-ack") > 0
        || answer_loss_per_mille(network, (relay, "broker"), "publish") > 0
}

/// Whether a partition entry drops messages from `from` to `to`.
fn cuts_link(p: &toml::Table, (from, to): (&str, &str)) -> bool {
    let between: Vec<&str> = p
        .get("between")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_str)
        .collect();
    let one_way = p
        .get("one_way")
        .and_then(toml::Value::as_bool)
        .unwrap_or(false);
    match between[..] {
        [a, b] => (a == from && b == to) || (!one_way && a == to && b == from),
        _ => false,
    }
}

/// The longest window in which the broker's confirmations cannot reach the
/// actor `producer`, and what sets it.
fn longest_cut(doc: &toml::Table, producer: &str) -> Option<(u64, &'static str)> {
    let network = doc.get("network").and_then(toml::Value::as_table)?;
    let mut longest: Option<(u64, &'static str)> = None;
    let mut consider = |ms: u64, by: &'static str| {
        if ms > 0 && longest.is_none_or(|(l, _)| ms > l) {
            longest = Some((ms, by));
        }
    };
    for p in network
        .get("partitions")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
    {
        if cuts_confirmations(p, producer) {
            let start = whole(p.get("start_ms")).unwrap_or(0);
            let end = whole(p.get("end_ms")).unwrap_or(0);
            consider(end.saturating_sub(start), "a [[network.partitions]] entry");
        }
    }
    // Swarm testing may cut any two actors, so broker and producer too.
    let random = network
        .get("random_partition_per_mille")
        .and_then(highest)
        .unwrap_or(0);
    if random > 0 {
        let max_ms = whole(network.get("random_partition_ms_max")).unwrap_or(30_000);
        consider(max_ms, "a random partition (random_partition_per_mille)");
    }
    longest
}

/// Whether a partition entry drops messages from the broker to `producer`.
fn cuts_confirmations(p: &toml::Table, producer: &str) -> bool {
    cuts_link(p, ("broker", producer))
}

/// Whether the scenario `text` crashes (and so restarts) the producer; a
/// file that does not parse counts as one that does (the loader refuses it).
pub(crate) fn producer_restarts(text: &str) -> bool {
    text.parse::<toml::Table>()
        .map_or(true, |doc| producer_restart_ms(&doc, "producer").is_some())
}

/// The longest the broker stays down when the scenario `text` crashes it
/// (`None`: it never crashes).
pub(crate) fn broker_restart_ms(text: &str) -> Option<u64> {
    let doc: toml::Table = text.parse().ok()?;
    producer_restart_ms(&doc, "broker")
}

/// The longest a crashed actor (`producer`: its name) stays down, if it can
/// crash at all.
fn producer_restart_ms(doc: &toml::Table, producer: &str) -> Option<u64> {
    let crashes = doc
        .get("crashes")
        .and_then(toml::Value::as_table)?
        .get(producer)
        .and_then(toml::Value::as_table)?;
    let per_mille = crashes.get("crash_per_mille").and_then(highest)?;
    (per_mille > 0).then(|| whole(crashes.get("restart_ms_max")).unwrap_or(0))
}

/// A whole number of the file, if it is one.
fn whole(v: Option<&toml::Value>) -> Option<u64> {
    v.and_then(toml::Value::as_integer)
        .and_then(|i| u64::try_from(i).ok())
}

/// The upper end of a per-mille value: `50` or `[0, 50]`.
fn highest(v: &toml::Value) -> Option<u64> {
    match v {
        toml::Value::Array(a) => whole(a.last()),
        other => whole(Some(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "[[network.partitions]]\nbetween = [\"broker\", \"producer\"]\none_way = true\nstart_ms = 0\nend_ms = 1800000\n";

    fn relay(stamps: Stamps) -> Relay<'static> {
        Relay {
            actor: "producer",
            stamps,
            publish_timeout_ms: 5_000,
            timeout_key: "producer.publish_timeout_ms",
        }
    }

    fn warn(text: &str, retention_ms: u64, stamps: Stamps) -> Option<String> {
        inbox_retention_below_republish(text, (retention_ms, 0), &relay(stamps), "consumer")
            .map(|h| h.text)
    }

    #[test]
    fn retries_stored_as_copies_outlast_an_inbox_shorter_than_the_cut() {
        let t = warn(BASE, 600_000, Stamps::Nothing).expect("30 min against 10 min");
        assert!(t.contains("up to 30 min"), "{t}");
        assert!(t.contains("every retry is stored"), "{t}");
        assert_eq!(
            warn(BASE, 1_800_001, Stamps::Nothing),
            None,
            "one ms past the cut holds"
        );
        assert!(
            warn(BASE, 1_800_000, Stamps::Nothing).is_some(),
            "a row is gone once its age reaches the retention"
        );
        assert!(warn(BASE, 1_799_999, Stamps::Nothing).is_some());
        // The last copy's trips and work can come later than the first's.
        let late = |retention_ms| {
            inbox_retention_below_republish(
                BASE,
                (retention_ms, 2_000),
                &relay(Stamps::Nothing),
                "consumer",
            )
        };
        let t = late(1_801_000)
            .expect("2 s late against 1 s of margin")
            .text;
        assert!(t.contains("up to 2 s later"), "{t}");
        assert!(late(1_802_001).is_none());
        assert_eq!(warn(BASE, 0, Stamps::Nothing), None, "kept forever");
    }

    #[test]
    fn a_per_session_stamp_needs_a_restart_to_copy() {
        assert_eq!(warn(BASE, 600_000, Stamps::PerSession), None, "no crashes");
        let crashes = format!("{BASE}[crashes.producer]\ncrash_per_mille = [0, 20]\nrestart_ms_min = 1000\nrestart_ms_max = 30000\n");
        let t = warn(&crashes, 600_000, Stamps::PerSession).expect("a restart republishes");
        assert!(t.contains("restarted relay's republish"), "{t}");
        assert!(t.contains("up to 30.5 min after the first"), "{t}");
        assert_eq!(warn(&crashes, 1_830_001, Stamps::PerSession), None);
        assert!(warn(&crashes, 1_830_000, Stamps::PerSession).is_some());
        let never = crashes.replace("[0, 20]", "0");
        assert_eq!(warn(&never, 600_000, Stamps::PerSession), None);
    }

    #[test]
    fn only_cuts_of_the_confirmations_count() {
        let other_way = BASE.replace("[\"broker\", \"producer\"]", "[\"producer\", \"broker\"]");
        assert_eq!(
            warn(&other_way, 600_000, Stamps::Nothing),
            None,
            "publishes cut, not confirmations"
        );
        let both = other_way.replace("one_way = true", "one_way = false");
        assert!(warn(&both, 600_000, Stamps::Nothing).is_some());
        let consumer = BASE.replace("\"producer\"", "\"consumer-1\"");
        assert_eq!(warn(&consumer, 600_000, Stamps::Nothing), None);
        let random =
            "[network]\nrandom_partition_per_mille = [0, 100]\nrandom_partition_ms_max = 900000\n";
        let t = warn(random, 600_000, Stamps::Nothing).expect("a random cut may hit the producer");
        assert!(t.contains("random partition"), "{t}");
        assert_eq!(warn(random, 900_001, Stamps::Nothing), None);
        // Malformed values are the loader's to refuse, not a panic here.
        let odd = BASE.replace("end_ms = 1800000", "end_ms = \"30min\"");
        assert_eq!(warn(&odd, 600_000, Stamps::Nothing), None);
    }
}
