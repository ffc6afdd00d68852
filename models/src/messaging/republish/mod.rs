//! The design warnings a queue's settings carry only under the scenario's
//! own faults, read from them: `inbox-retention-below-republish` (an outbox
//! relay publishes a row again for as long as the broker's confirmations do
//! not reach it, and an inbox that forgets message ids sooner lets a late
//! copy through; the design alone sets no limit, the relay never gives up
//! on a row, and an idempotent relay's resend after its library gave a
//! batch up is a new copy),
//! `producer-id-expiry-below-retries` (the broker forgets the id the relay
//! still retries under), `ack-before-commit-under-crashes` (a consumer
//! that acks first, in a scenario that crashes it) and
//! `commit-resent-without-dedup` (a consumer that acks first sends a
//! transaction again when its database's answer does not come, and the
//! scenario can keep answers from coming); the consumer's rules are in
//! `republish/consumer.rs`.
//!
//! The file's values are read before the network is validated, so anything
//! malformed here is skipped (the loader refuses it right after) and every
//! sum saturates.

use super::situations as sit;
use crate::core::design_warning::about_ms;
use crate::core::DesignWarning;
use crate::messaging::rules::{INBOX_RETENTION_BELOW_REPUBLISH, PRODUCER_ID_EXPIRY_BELOW_RETRIES};

mod consumer;
pub(crate) use consumer::{
    ack_before_commit_under_crashes, ack_result_lost_drops_work, commit_resent_without_dedup,
};

/// What the relay stamps on its publishes, as far as this rule cares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Stamps {
    /// Every retry is stored as a new copy.
    Nothing,
    /// Retries of one session are dropped (a transactional producer): only
    /// a restarted relay's republish is a new copy.
    PerSession,
    /// Retries of one batch are dropped until the producer library gives
    /// the batch up, `delivery_timeout_ms` after its first send (an
    /// idempotent producer): the relay's resend after that is a new copy,
    /// and so is a restarted relay's republish.
    PerBatch { delivery_timeout_ms: u64 },
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
) -> Option<DesignWarning> {
    if retention_ms == 0 {
        return None;
    }
    let doc: toml::Table = text.parse().ok()?;
    let (cut_ms, cut_by) = longest_cut(&doc, relay.actor)?;
    let after_ms = match retry_can_be_lost(&doc, relay.actor) {
        true => relay.publish_timeout_ms,
        false => 0,
    };
    let unstamped = match relay.stamps {
        Stamps::Nothing => Some("every retry is stored by the broker as a new copy".to_string()),
        Stamps::PerBatch { delivery_timeout_ms } if delivery_timeout_ms <= unconfirmed_ms(cut_ms, relay.publish_timeout_ms, after_ms) => Some(format!(
            "the producer library gives a batch up {} after its first send (producer.delivery_timeout_ms, Kafka's delivery.timeout.ms), and the relay's resend after that is a new record, stored by the broker as a new copy",
            about_ms(delivery_timeout_ms)
        )),
        Stamps::PerBatch { .. } | Stamps::PerSession => None,
    };
    let (horizon_ms, copies) = match unstamped {
        Some(copies) => (cut_ms.saturating_add(after_ms), copies),
        None => {
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
    Some(DesignWarning {
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

/// How old a batch can be when its confirmation first gets through the
/// broker's confirmations being cut for `cut_ms`: a batch first sent as
/// the cut starts, or just after, is retried every `publish_timeout_ms`,
/// and its first retry at or after the cut's end (a whole number of
/// timeouts after its first send) is confirmed, or one more where the
/// network can lose it (`after_ms`); the network's delays aside.
fn unconfirmed_ms(cut_ms: u64, publish_timeout_ms: u64, after_ms: u64) -> u64 {
    let timeout_ms = publish_timeout_ms.max(1);
    cut_ms
        .div_ceil(timeout_ms)
        .saturating_mul(timeout_ms)
        .saturating_add(after_ms)
}

/// Whether an idempotent relay in the actor `relay` (the producer) can have
/// a batch given up under the faults `text` sets: the broker's
/// confirmations cut for as long as the library's delivery timeout, so the
/// relay's resend is a new record, a second copy without any restart.
pub(crate) fn batch_given_up_in_cut(
    text: &str,
    relay: &str,
    (publish_timeout_ms, delivery_timeout_ms): (u64, u64),
) -> bool {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return true;
    };
    let Some((cut_ms, _)) = longest_cut(&doc, relay) else {
        return false;
    };
    let after_ms = match retry_can_be_lost(&doc, relay) {
        true => publish_timeout_ms,
        false => 0,
    };
    delivery_timeout_ms <= unconfirmed_ms(cut_ms, publish_timeout_ms, after_ms)
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
) -> Option<DesignWarning> {
    if retention_ms == 0 || attempts < 2 {
        return None;
    }
    let span_ms = u64::from(attempts - 1).saturating_mul(timeout_ms);
    if span_ms.saturating_add(late_ms) < retention_ms {
        return None;
    }
    Some(DesignWarning {
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
    delivery_timeout_ms: Option<u64>,
) -> Option<DesignWarning> {
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
    let retries_ms = cut_ms.saturating_add(spread_ms).saturating_add(after_ms);
    // An idempotent producer's library retries a batch under its numbers
    // until the delivery timeout only; its resend after that is stored.
    let given_up_ms = delivery_timeout_ms.map(|d| d.saturating_add(spread_ms));
    let horizon_ms = given_up_ms.map_or(retries_ms, |g| g.min(retries_ms));
    // The broker forgets the id once it has idled the expiration.
    if horizon_ms < expiration_ms {
        return None;
    }
    let until = match given_up_ms {
        Some(g) if g < retries_ms => format!(
            ", until the producer library gives the batch up {} after its first send (producer.delivery_timeout_ms)",
            about_ms(g.saturating_sub(spread_ms))
        ),
        _ => String::new(),
    };
    let more = match lossy {
        true => format!(
            ", a retry or its confirmation lost after the cut one more retry {} later (producer.publish_timeout_ms)",
            about_ms(publish_timeout_ms)
        ),
        false => String::new(),
    };
    Some(DesignWarning {
        id: PRODUCER_ID_EXPIRY_BELOW_RETRIES,
        text: format!(
            "the broker forgets a producer id {} after the last publish it stored under it (broker.producer_id_expiration_ms), and the retries it drops as duplicates store nothing; but {cut_by} cuts the confirmations for up to {}, and the relay keeps retrying under the same id{until} (its last retry can reach the broker up to {} later than the first copy, with the delay spread{more}): a retry after the id was forgotten is stored as a new message",
            about_ms(expiration_ms),
            about_ms(cut_ms),
            about_ms(horizon_ms),
        ),
        shown_by: Some(sit::PRODUCER_ID_EXPIRED),
        example: "messaging-producer-id-expired",
        at: None,
    })
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
mod tests;
