//! `[producer] delivery_timeout_ms`: Kafka's `delivery.timeout.ms`, how long
//! the producer library retries a batch under its (producer id, sequence
//! number) before it gives the batch up and `send()` fails
//! (<https://kafka.apache.org/39/documentation/#producerconfigs_delivery.timeout.ms>;
//! KIP-91 introduced it in 2.1 with a default of 120 s). The relay's
//! resend after that is a new record (relay.rs).
//!
//! Kafka's rules, as `KafkaProducer.configureDeliveryTimeout` applies them
//! (3.9 and 4.0 alike): the value must be at least `linger.ms +
//! request.timeout.ms`, or the producer refuses to start when it was set
//! explicitly ("delivery.timeout.ms should be equal to or larger than
//! linger.ms + request.timeout.ms"), and raises the default to that sum,
//! with a logged warning, when it was not. `publish_timeout_ms` is the
//! request timeout here, and the model has no linger (`linger.ms` is 0 by
//! default in 3.9; 4.0's default of 5 ms, KIP-1030, adds 5 ms to the sum).
//! The setting is an `int`: 2147483647 ms, about 24.9 days, at most. There
//! is no value for "never": Kafka has none either.

use crate::core::input::{invalid, path, Invalid};

/// Kafka's default `delivery.timeout.ms` (2.1 and later).
pub(crate) const KAFKA_DEFAULT_MS: u64 = 120_000;

/// The largest `delivery.timeout.ms` Kafka takes (an `int` setting).
pub(crate) const KAFKA_MAX_MS: u64 = i32::MAX as u64;

/// The delivery timeout in effect for a producer whose request timeout is
/// `publish_timeout_ms`: the value written (`written`), checked as Kafka
/// checks it, or Kafka's default, raised to the request timeout where that
/// is longer, as Kafka raises it.
pub(crate) fn delivery_timeout_of(
    written: Option<u64>,
    publish_timeout_ms: u64,
) -> Result<u64, Invalid> {
    let at = path(&["producer", "delivery_timeout_ms"]);
    let Some(ms) = written else {
        return Ok(KAFKA_DEFAULT_MS.max(publish_timeout_ms));
    };
    if ms > KAFKA_MAX_MS {
        return Err(invalid(
            at,
            format!("{ms} ms is more than Kafka's delivery.timeout.ms takes: it is an int, at most {KAFKA_MAX_MS} ms (about 24.9 days)"),
            format!("write delivery_timeout_ms = {KAFKA_DEFAULT_MS} (Kafka's default, 2 min) or at most {KAFKA_MAX_MS}"),
        ));
    }
    if ms < publish_timeout_ms {
        return Err(invalid(
            at,
            format!("delivery_timeout_ms = {ms} is shorter than producer.publish_timeout_ms = {publish_timeout_ms} (Kafka's request.timeout.ms here; the model has no linger.ms): Kafka refuses to start such a producer (ConfigException: \"delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms\")"),
            format!("write delivery_timeout_ms = {} or more, or shorten publish_timeout_ms", publish_timeout_ms.max(1)),
        ));
    }
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka's default, raised to the request timeout where that is longer
    /// (Kafka logs a warning and starts); a value written below it is
    /// refused, as Kafka refuses to start; equal is fine.
    #[test]
    fn the_delivery_timeout_follows_kafkas_rules() {
        assert_eq!(delivery_timeout_of(None, 5_000), Ok(120_000));
        assert_eq!(delivery_timeout_of(None, 3_600_000), Ok(3_600_000));
        assert_eq!(delivery_timeout_of(Some(30_000), 30_000), Ok(30_000));
        let e = delivery_timeout_of(Some(29_999), 30_000).unwrap_err();
        assert!(
            e.message
                .contains("delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms"),
            "{}",
            e.message
        );
        assert_eq!(e.path, path(&["producer", "delivery_timeout_ms"]));
        // 0 is no "forever": it is below every request timeout.
        assert!(delivery_timeout_of(Some(0), 1).is_err());
        assert!(delivery_timeout_of(Some(KAFKA_MAX_MS), 5_000).is_ok());
        assert!(delivery_timeout_of(Some(KAFKA_MAX_MS + 1), 5_000).is_err());
    }
}
