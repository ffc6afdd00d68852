//! `[producer] idempotence`: off, asked for explicitly, or left on at
//! Kafka's default. Kafka 3.0.1 to 3.9 tell the last two apart above five
//! requests in flight: one left at its default is turned off with one WARN
//! log line (KAFKA-13673), one set explicitly refuses to start. Kafka 4.0
//! refuses both (KAFKA-17927): its preset writes `idempotence = true`.

use super::super::broker::SEQUENCE_WINDOW;
use crate::core::input::{invalid, path, Invalid};

/// The word for idempotence left at Kafka's default (on since 3.0).
pub(crate) const KAFKA_DEFAULT: &str = "kafka-default";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Idempotence {
    Off,
    /// `idempotence = true`: Kafka's `enable.idempotence=true` written out.
    Explicit,
    /// `idempotence = "kafka-default"`: on, unless a setting beside it
    /// conflicts (more than five in flight), then off with a logged warning
    /// (Kafka 3.0.1 to 3.9).
    KafkaDefault,
}

impl Idempotence {
    pub(crate) fn on(self) -> bool {
        self != Idempotence::Off
    }

    /// As the file writes it, for messages.
    pub(crate) fn written(self) -> String {
        match self {
            Idempotence::Off => "false".into(),
            Idempotence::Explicit => "true".into(),
            Idempotence::KafkaDefault => format!("\"{KAFKA_DEFAULT}\""),
        }
    }
}

/// `producer.idempotence`: true, false or "kafka-default".
pub(crate) fn idempotence_of(v: &toml::Value) -> Result<Idempotence, Invalid> {
    let values = format!("true, false or \"{KAFKA_DEFAULT}\"");
    match v {
        toml::Value::Boolean(true) => Ok(Idempotence::Explicit),
        toml::Value::Boolean(false) => Ok(Idempotence::Off),
        toml::Value::String(s) if s == KAFKA_DEFAULT => Ok(Idempotence::KafkaDefault),
        toml::Value::String(s) => Err(invalid(
            path(&["producer", "idempotence"]),
            format!("unknown value \"{s}\": idempotence is {values}"),
            format!("write idempotence = true, false or \"{KAFKA_DEFAULT}\" (Kafka 3.x's default: on, turned off with a logged warning above five in flight)"),
        )),
        other => Err(invalid(
            path(&["producer", "idempotence"]),
            format!("wrong type: {}, expected {values}", other.type_str()),
            format!("write idempotence = true, false or \"{KAFKA_DEFAULT}\""),
        )),
    }
}

/// Kafka refuses to start a producer with `enable.idempotence=true` written
/// out beside more than five requests in flight (a transactional one is
/// refused above five whatever idempotence says, scenario.rs).
pub(crate) fn refuse_explicit_above_window(
    idempotence: Idempotence,
    max_in_flight: u32,
) -> Result<(), Invalid> {
    if idempotence != Idempotence::Explicit || max_in_flight <= SEQUENCE_WINDOW {
        return Ok(());
    }
    // At max_in_flight, the line to change whether idempotence is written
    // out or a preset's.
    Err(invalid(
        path(&["producer", "max_in_flight"]),
        format!("an idempotent producer (idempotence = true: written out, or Kafka 4.0's default) with max_in_flight = {max_in_flight}, more publishes in flight than the broker recognises a retry among (the last {SEQUENCE_WINDOW} batches per producer id and partition): Kafka refuses to start it with a ConfigException: 4.0, idempotence written out or at its default, \"To use the idempotent producer, max.in.flight.requests.per.connection must be set to at most {SEQUENCE_WINDOW}. Current value is {max_in_flight}.\" (KAFKA-17927); 3.x, idempotence written out, \"Must set max.in.flight.requests.per.connection to at most {SEQUENCE_WINDOW} to use the idempotent producer\""),
        format!("write max_in_flight = {SEQUENCE_WINDOW} or less, or idempotence = false; on Kafka 3.x, idempotence left at its default (idempotence = \"{KAFKA_DEFAULT}\", broker.preset = \"kafka-3.9\") is turned off above {SEQUENCE_WINDOW} in flight with a logged warning, and every retry is stored again"),
    ))
}
