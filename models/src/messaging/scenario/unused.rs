//! The keys of `[producer]`, `[broker]` and a consumer's table that the
//! other settings leave without effect (`core::unused`): the messaging
//! model's list, whose broker and consumer parts the chain's loader reads
//! too.

use super::{BrokerDto, ConsumerDto, ProducerDto};
use crate::core::Unused;

/// The keys of `[producer]` and `[broker]` the write mode leaves without
/// effect: the relay counts no publish attempts (it publishes until the
/// broker confirms, relay.rs); the broker's dedup window is not applied to
/// a broker transaction's publishes (broker_publish.rs `on_tx_publish`);
/// only an idempotent, non-transactional relay gives a batch up at the
/// delivery timeout (`relay`: the outbox relay's idempotence in effect and
/// `transactional_id`, `None` without a relay).
pub(super) fn producer_unused(p: &ProducerDto, relay: Option<(bool, bool)>) -> Vec<Unused> {
    let mut out = Vec::new();
    out.extend(delivery_timeout_unused(relay));
    if p.write == "outbox" {
        out.push(Unused::new(
            &["producer", "publish_max_attempts"],
            &[&["producer", "write"]],
            "the outbox relay publishes a row until the broker confirms it and never gives up (producer.write = \"outbox\"): only a dual write or a broker transaction counts its publish attempts",
            "remove it (producer.publish_timeout_ms paces the relay's publishes), or write without a relay: write = \"state-first\"",
        ));
    }
    if p.write != "outbox" {
        out.push(
            Unused::new(
                &["producer", "max_in_flight"],
                &[&["producer", "write"]],
                format!("only the outbox relay keeps publishes in flight (producer.write = \"{}\" has no relay)", p.write),
                "remove it, or publish through a relay: write = \"outbox\"",
            )
            .unless("1"),
        );
    }
    if p.write == "broker-transaction" {
        out.push(
            Unused::new(
                &["broker", "dedup_window_ms"],
                &[&["producer", "write"]],
                "the producer publishes inside a broker transaction (producer.write = \"broker-transaction\"), and the broker's dedup window drops repeats of plain publishes only",
                "remove it, or publish plainly: write = \"outbox\" in [producer]",
            )
            .unless("0"),
        );
    }
    out
}

/// `producer.delivery_timeout_ms` where no producer library gives a batch
/// up (relay.rs says why each one does not): it is still checked against
/// `publish_timeout_ms`, as Kafka checks it at start.
fn delivery_timeout_unused(relay: Option<(bool, bool)>) -> Option<Unused> {
    let key = &["producer", "delivery_timeout_ms"];
    let (why, because, fix): (&str, &[&[&'static str]], &str) = match relay {
        Some((true, false)) => return None,
        None => (
            "only the outbox relay's producer library retries a batch until a delivery timeout, and producer.write has no relay",
            &[&["producer", "write"]],
            "remove it, or publish through a relay: write = \"outbox\" and idempotence = true",
        ),
        Some((_, true)) => (
            "a transactional relay's batch given up at the delivery timeout aborts its transaction, and the aborted copy never reaches a read_committed consumer; this model commits each one-message transaction as the broker stores it and keeps resending under the same numbers, which comes to the same single copy (producer.transactional_id = true)",
            &[&["producer", "transactional_id"]],
            "remove it, or publish as an idempotent producer without transactional_id",
        ),
        Some((false, false)) => (
            "the outbox relay stamps no producer id (producer.idempotence is false, or \"kafka-default\" and off above five in flight): every resend is a new copy at the broker, whether the library retries or the relay publishes again after the delivery timeout",
            &[&["producer", "idempotence"], &["producer", "max_in_flight"]],
            "remove it, or make the relay idempotent: idempotence = true and max_in_flight = 5 or less",
        ),
    };
    Some(Unused::new(key, because, why, fix))
}

/// The keys of a consumer's table (`[consumer]`, or `table` in a composed
/// model) its handler and its ack leave without effect: an inbox's cleanup
/// beside a handler that keeps no inbox; the sends of a transaction where
/// the broker still holds the message; a lease's renewal where the delivery
/// was acked on receipt.
pub(crate) fn consumer_unused(c: &ConsumerDto, table: &'static str) -> Vec<Unused> {
    let mut out = Vec::new();
    let inbox = matches!(
        c.handler.as_str(),
        "inbox-same-tx" | "inbox-if-redelivered" | "inbox-separate-tx" | "inbox-record-first"
    );
    if !inbox {
        out.extend(Unused::each(
            &[table],
            &["inbox_retention_ms=0", "inbox_max_rows=0"],
            &[&[table, "handler"]],
            &format!(
                "the handler keeps no inbox ({table}.handler = \"{}\"), so there are no rows to clean",
                c.handler
            ),
            "remove it, or keep an inbox: handler = \"inbox-same-tx\"",
        ));
    }
    // consumer.rs: a transaction is sent again only once the ack let the
    // message go (`let_go`), and an ack asking for its result only under
    // a checked ack; after the commit the broker still holds the message,
    // so a timed-out job is given up at its first send.
    if c.ack == "after-commit" {
        out.push(
            Unused::new(
                &[table, "tx_max_attempts"],
                &[&[table, "ack"]],
                format!("the consumer acks after the commit ({table}.ack = \"after-commit\"), so the broker still holds a message whose transaction gets no answer: the job is given up after one send and the lease redelivers the message; only a consumer that acks before the commit sends a transaction, or asks for an ack's result, more than once"),
                "remove it, or ack before the commit and ask whether the ack counted: ack = \"checked-before-commit\"",
            )
            .unless("1"),
        );
    }
    // consumer.rs `on_deliver`: an ack on receipt leaves no lease to renew.
    if c.ack == "before-commit" {
        out.push(
            Unused::new(
                &[table, "lease_renewal_ms"],
                &[&[table, "ack"]],
                format!("the consumer acks on receipt ({table}.ack = \"before-commit\"), so no delivery it holds has a lease left to renew"),
                "remove it, or ack after the commit: ack = \"after-commit\"",
            )
            .unless("0"),
        );
    }
    out
}

/// The keys of `[broker]` the design leaves without effect: what happens at
/// the delivery cap without a cap; a transaction's timeout where the
/// producer opens none (`transactions`: it writes with a broker
/// transaction); producer ids' expiry where the relay stamps none (`relay`:
/// the outbox relay's `idempotence` in effect and `transactional_id`, `None`
/// without a relay; `default_off_in_flight`: the `max_in_flight` above five
/// at which idempotence left at `"kafka-default"` is off).
pub(crate) fn broker_unused(
    b: &BrokerDto,
    transactions: bool,
    relay: Option<(bool, bool)>,
    default_off_in_flight: Option<u32>,
) -> Vec<Unused> {
    let mut out = Vec::new();
    if b.max_deliveries == 0 {
        out.push(Unused::new(
            &["broker", "at_max_deliveries"],
            &[&["broker", "max_deliveries"]],
            "the broker delivers without a cap (broker.max_deliveries = 0), so no message reaches one",
            "remove it, or cap the deliveries: max_deliveries = 5",
        ));
    }
    if !transactions {
        out.push(Unused::new(
            &["broker", "transaction_timeout_ms"],
            &[&["producer", "write"]],
            "no producer opens a broker transaction (only producer.write = \"broker-transaction\" does)",
            "remove it, or write with a transaction: write = \"broker-transaction\" in [producer]",
        ));
    }
    let give_id = "remove it, or give the relay an id: write = \"outbox\" and idempotence = true in [producer]";
    let (why, because, fix): (String, &[&[&'static str]], String) = match (relay, default_off_in_flight) {
        // Asked for, at Kafka's default, and turned off: setting it true
        // above five is refused, so the fix is fewer in flight.
        (Some((false, false)), Some(n)) => (
            format!("producer.idempotence = \"kafka-default\" is off here: producer.max_in_flight = {n} is above the {} publishes in flight an idempotent producer may keep, and Kafka 3.0.1 to 3.9 turn idempotence left at its default off then, with one WARN log line; with no producer.transactional_id either, the outbox relay stamps no producer id", crate::messaging::broker::SEQUENCE_WINDOW),
            &[&["producer", "idempotence"], &["producer", "max_in_flight"], &["producer", "transactional_id"]],
            format!("remove it, or keep the relay idempotent: max_in_flight = {} or less in [producer]", crate::messaging::broker::SEQUENCE_WINDOW),
        ),
        (Some((false, false)), None) => (
            "the outbox relay stamps no producer id (producer.idempotence and producer.transactional_id are false)".into(),
            &[&["producer", "idempotence"], &["producer", "transactional_id"]],
            give_id.into(),
        ),
        (Some(_), _) => return out,
        (None, _) => (
            "no outbox relay publishes, and only an idempotent or transactional relay has a producer id".into(),
            &[&["producer", "write"]],
            give_id.into(),
        ),
    };
    out.push(Unused::new(&["broker", "producer_id_expiration_ms"], because, why, fix).unless("0"));
    out
}
