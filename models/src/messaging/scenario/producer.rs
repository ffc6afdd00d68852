//! `[producer]`, validated into a [`ProducerConfig`]: the write mode, the timeouts and attempts,
//! and Kafka's rules for an idempotent or transactional relay (idempotence
//! and `transactional.id` only with a relay, at most five in flight,
//! `delivery.timeout.ms` at least the request timeout).

use super::{delivery, idempotence, written_in, DAY_MS, MAX_IN_FLIGHT};
use crate::core::input::{count_in, invalid, one_of, path, positive_duration_us, LoadError};
use crate::core::retry::RetryPolicy;
use crate::messaging::broker::SEQUENCE_WINDOW;
use crate::messaging::{ProducerConfig, WriteMode};
use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct ProducerDto {
    pub(super) write: String,
    pub(super) publish_timeout_ms: u64,
    pub(super) publish_max_attempts: u64,
    pub(super) commit_fail_per_mille: u64,
    /// true, false or "kafka-default" (idempotence.rs).
    pub(super) idempotence: toml::Value,
    pub(super) transactional_id: bool,
    pub(super) max_in_flight: u64,
    /// Kafka's `delivery.timeout.ms`; not written: Kafka's default
    /// (delivery.rs).
    pub(super) delivery_timeout_ms: Option<u64>,
}

impl Default for ProducerDto {
    fn default() -> Self {
        ProducerDto {
            write: "outbox".into(),
            publish_timeout_ms: 5_000,
            publish_max_attempts: 3,
            commit_fail_per_mille: 0,
            idempotence: toml::Value::Boolean(false),
            transactional_id: false,
            max_in_flight: 1,
            delivery_timeout_ms: None,
        }
    }
}

/// The producer's configuration, without its events, and its publish
/// attempts (a dual write's).
pub(super) fn producer_of(p: &ProducerDto, text: &str) -> Result<(ProducerConfig, u32), LoadError> {
    let pat = |k| path(&["producer", k]);
    let mode = one_of(
        &p.write,
        &[
            ("state-first", WriteMode::StateFirst),
            ("event-first", WriteMode::EventFirst),
            ("outbox", WriteMode::Outbox),
            ("broker-transaction", WriteMode::BrokerTransaction),
        ],
        pat("write"),
    )?;
    let publish_timeout_ms = positive_duration_us(
        p.publish_timeout_ms,
        DAY_MS,
        pat("publish_timeout_ms"),
        "write publish_timeout_ms = 5000",
    )? / 1000;
    let attempts = count_in(
        p.publish_max_attempts,
        1,
        100,
        pat("publish_max_attempts"),
        "attempts",
    )? as u32;
    let commit_fail_per_mille = count_in(
        p.commit_fail_per_mille,
        0,
        1000,
        pat("commit_fail_per_mille"),
        "per mille",
    )? as u32;
    let idem = stamps_of(p, mode, text)?;
    let max_in_flight = in_flight_of(p, idem)?;
    // Checked whatever the relay, as Kafka checks it at start.
    let delivery_timeout_ms =
        delivery::delivery_timeout_of(p.delivery_timeout_ms, publish_timeout_ms)?;
    let mut producer = ProducerConfig {
        broker: 1,
        mode,
        publish_timeout_ms,
        publish_retry: RetryPolicy::immediate(attempts),
        commit_fail_per_mille,
        idempotence: idem.on(),
        transactional_id: p.transactional_id,
        max_in_flight,
        delivery_timeout_ms: None,
        events: Vec::new(),
    };
    // Only an idempotent, non-transactional relay gives batches up (relay.rs).
    let gives_up = mode == WriteMode::Outbox && producer.stamps() && !p.transactional_id;
    producer.delivery_timeout_ms = gives_up.then_some(delivery_timeout_ms);
    Ok((producer, attempts))
}

/// `idempotence` and `transactional_id`: both stamp the outbox relay's
/// publishes, so a write mode without a relay has nothing to stamp; and a
/// transactional producer is always idempotent.
fn stamps_of(
    p: &ProducerDto,
    mode: WriteMode,
    text: &str,
) -> Result<idempotence::Idempotence, LoadError> {
    let pat = |k| path(&["producer", k]);
    let idem = idempotence::idempotence_of(&p.idempotence)?;
    for (on, key, value, what) in [
        (
            idem.on(),
            "idempotence",
            idem.written(),
            "numbers the outbox relay's publishes",
        ),
        (
            p.transactional_id,
            "transactional_id",
            "true".into(),
            "makes the outbox relay a transactional producer",
        ),
    ] {
        if on && mode != WriteMode::Outbox {
            return Err(invalid(
                pat(key),
                format!(
                    "{key} = {value} {what}, but write = \"{}\" has no relay",
                    p.write
                ),
                format!("set write = \"outbox\", or remove {key}"),
            )
            .into());
        }
    }
    if p.transactional_id && !idem.on() && written_in(text, "producer", "idempotence") {
        return Err(invalid(
            pat("idempotence"),
            "a transactional producer is always idempotent (Kafka refuses transactional.id with enable.idempotence = false)",
            "delete idempotence = false, or remove transactional_id",
        )
        .into());
    }
    Ok(idem)
}

/// `max_in_flight`, refused above five where Kafka refuses to start: with a
/// `transactional_id`, or with idempotence asked for explicitly.
fn in_flight_of(p: &ProducerDto, idem: idempotence::Idempotence) -> Result<u32, LoadError> {
    let at = path(&["producer", "max_in_flight"]);
    let max_in_flight = count_in(
        p.max_in_flight,
        1,
        MAX_IN_FLIGHT,
        at.clone(),
        "publishes in flight",
    )? as u32;
    if p.transactional_id && max_in_flight > SEQUENCE_WINDOW {
        return Err(invalid(
            at,
            format!("a transactional producer is always idempotent, and an idempotent one keeps at most {SEQUENCE_WINDOW} publishes in flight: Kafka refuses transactional.id with max.in.flight.requests.per.connection = {max_in_flight} (the broker recognises a retry among the last {SEQUENCE_WINDOW} only)"),
            format!("write max_in_flight = {SEQUENCE_WINDOW} or less, or remove transactional_id"),
        )
        .into());
    }
    idempotence::refuse_explicit_above_window(idem, max_in_flight)?;
    Ok(max_in_flight)
}
