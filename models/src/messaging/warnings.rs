//! The design warnings a queue's settings show (docs/design-warnings.md):
//! a consumer without dedup, one that trusts the redelivered flag, an inbox
//! that forgets while the broker still redelivers, a lease shorter than the
//! work. The messaging and chain models both build them from their tables.

use super::{AckMode, BrokerConfig, ConsumerConfig, Handler, InboxConfig};

/// What the producer's relay stamps on its publishes for the broker to
/// deduplicate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ProducerIds {
    /// Nothing: every publish is a new message.
    None,
    /// A producer id and sequence numbers per session.
    Idempotent,
    /// One producer id, an epoch per session, sequence numbers per epoch.
    Transactional,
}

/// The gaps in a queue's design that its settings show: an inbox that forgets
/// a message id while the broker may still redeliver it (`table` is the
/// consumer's table, `consumer` or `accounting`, with what its producer
/// stamps on its publishes and whether it can publish a second copy of an
/// event all the same: the scenario restarts it, or cuts its confirmations
/// until its library gives a batch up).
/// `spreads`: what the network's delays add to the lease rules' times.
pub(crate) fn design_warnings(
    broker: &BrokerConfig,
    consumer: &ConsumerConfig,
    inbox: &InboxConfig,
    (table, ids, restarts): (&'static str, ProducerIds, bool),
    spreads: Spreads,
) -> Vec<crate::core::DesignWarning> {
    let mut out = Vec::new();
    match consumer.handler {
        // Without dedup the inbox's retention does not matter: nothing reads it.
        Handler::Effect => out.extend(without_dedup(broker, consumer, table, (ids, restarts))),
        // A unique key and a set-value write keep no inbox: its retention
        // is read by nothing.
        Handler::UniqueKey | Handler::SetValue { .. } => {}
        handler => {
            if handler == Handler::InboxIfRedelivered {
                out.push(only_on_redelivery(table));
            }
            out.extend(inbox_retention(
                broker,
                (consumer, inbox),
                table,
                (spreads.redelivery_ms, spreads.broker_restart_ms),
            ));
        }
    }
    out.extend(visibility_below_processing(
        broker, consumer, table, spreads,
    ));
    out
}

/// A consumer that trusts the broker's redelivered flag to tell duplicates.
fn only_on_redelivery(table: &str) -> crate::core::DesignWarning {
    crate::core::DesignWarning {
        id: crate::messaging::rules::DEDUP_ONLY_ON_REDELIVERY,
        text: format!(
            "the consumer reads its inbox only for deliveries the broker flags as redelivered ({table}.handler = \"inbox-if-redelivered\"), but the flag belongs to the delivery, not to the event: a second copy a producer published (a retry after a lost confirmation, a relay's republish after a restart) is a new message, its first delivery is not flagged, and it takes effect again"
        ),
        shown_by: Some(super::situations::REPUBLISH_TAKEN_FOR_FIRST_DELIVERY),
        example: "messaging-dedup-only-redelivered",
        at: None,
    }
}

/// A consumer that applies every delivery, whatever the broker filters;
/// none where no second copy can reach it: exactly-once delivery with a
/// checked ack keeps a message's redeliveries from taking effect twice, and
/// a producer that stamps its publishes and never publishes a second copy
/// (`restarts`: it restarts, or its library gives a batch up at the
/// delivery timeout and the relay's resend is a new record) gets every
/// retry dropped.
fn without_dedup(
    broker: &BrokerConfig,
    consumer: &ConsumerConfig,
    table: &str,
    (ids, restarts): (ProducerIds, bool),
) -> Option<crate::core::DesignWarning> {
    let checked = broker.exactly_once_delivery && consumer.ack == AckMode::CheckedBeforeCommit;
    if checked && ids != ProducerIds::None && !restarts {
        return None;
    }
    // What the broker filters, each named with what it leaves through.
    let mut filters = Vec::new();
    if consumer.ack == AckMode::CheckedBeforeCommit && !broker.exactly_once_delivery {
        filters.push(format!(
            "{table}.ack = \"checked-before-commit\" asks whether each ack counted, but without broker.exactly_once_delivery the broker says every ack did, a late one too"
        ));
    }
    if checked {
        filters.push(format!(
            "exactly-once delivery and {table}.ack = \"checked-before-commit\" keep the redeliveries of one message from taking effect twice, not a second copy a producer published, which is a new message"
        ));
    }
    if broker.dedup_window_ms != 0 {
        filters.push(format!(
            "the broker's dedup window of {} filters publishes only, and only within it",
            crate::core::design_warning::about_ms(broker.dedup_window_ms)
        ));
    }
    match ids {
        ProducerIds::None => {}
        ProducerIds::Idempotent => filters.push(
            "the idempotent producer's sequence numbers drop the retries of one batch, not the relay's resend once the producer library gave the batch up (producer.delivery_timeout_ms), nor a restarted relay's republish"
                .to_string(),
        ),
        ProducerIds::Transactional => filters.push(
            "the transactional producer's sequence numbers drop the retries of one relay session, and its epoch fences a crashed session's late publishes, not the restarted relay's own republish"
                .to_string(),
        ),
    }
    Some(crate::core::DesignWarning {
        id: crate::messaging::rules::CONSUMER_WITHOUT_DEDUP,
        text: format!(
            "the consumer applies the effect for every delivery ({table}.handler = \"effect\"), and a broker delivers at least once: a redelivery after a lost ack or a consumer crash, or a second copy a producer published, takes effect again{}",
            match filters.is_empty() {
                true => String::new(),
                false => format!(" ({})", filters.join("; ")),
            }
        ),
        shown_by: Some(super::situations::REDELIVERED_AFTER_EFFECT),
        example: "messaging-broker-exactly-once",
        at: None,
    })
}

/// An inbox that forgets ids before the broker's last redelivery. The row
/// is written after the first copy's work and the last copy's inbox read
/// follows its own: where the read comes after the processing (the row in
/// the effect's transaction), a last copy drawn slower than the first comes
/// later by up to `processing_jitter_ms`, on top of the network's spread
/// (`spread_ms`, broker to consumer to database).
fn inbox_retention(
    broker: &BrokerConfig,
    (consumer, inbox): (&ConsumerConfig, &InboxConfig),
    table: &str,
    (spread_ms, broker_restart_ms): (u64, Option<u64>),
) -> Option<crate::core::DesignWarning> {
    let read_after_work = matches!(
        consumer.handler,
        Handler::InboxSameTx | Handler::InboxIfRedelivered
    );
    let jitter_ms = match read_after_work {
        true => consumer.processing_jitter_ms,
        false => 0,
    };
    let spread_by = match jitter_ms {
        0 => "the delay ranges in [network]".to_string(),
        _ => format!(
            "the delay ranges in [network], and {table}.processing_jitter_ms: the row is written after the first copy's work, the last copy reads the inbox after its own"
        ),
    };
    // A broker that restarts gives every lease out a fresh one: a crash just
    // before a lease ran out, and the restart, put the next delivery up to a
    // lease and a restart later. Counted once in each gap between two
    // deliveries, as the client's restarts are.
    let gap_ms = match broker_restart_ms {
        Some(restart_ms) => broker
            .visibility_timeout_ms
            .saturating_mul(2)
            .saturating_add(restart_ms),
        None => broker.visibility_timeout_ms,
    };
    let span_ms = (broker.max_deliveries > 0)
        .then(|| u64::from(broker.max_deliveries - 1).saturating_mul(gap_ms));
    let redelivers = match broker_restart_ms {
        None => format!(
            "the broker redelivers an unacked message every {} (broker.visibility_timeout_ms)",
            crate::core::design_warning::about_ms(broker.visibility_timeout_ms)
        ),
        Some(restart_ms) => format!(
            "the broker redelivers an unacked message every {} (broker.visibility_timeout_ms), and the scenario crashes it ([crashes.broker], back within {}): a restart starts every lease over, so each redelivery can come up to {} after the one before",
            crate::core::design_warning::about_ms(broker.visibility_timeout_ms),
            crate::core::design_warning::about_ms(restart_ms),
            crate::core::design_warning::about_ms(gap_ms)
        ),
    };
    crate::core::design_warning::inbox_retention(
        &format!("{table}.inbox_retention_ms"),
        inbox.retention_us / sim::US_PER_MS,
        span_ms,
        (spread_ms.saturating_add(jitter_ms), &spread_by),
        &redelivers,
        super::situations::REDELIVERED_AFTER_INBOX_CLEANUP,
        "messaging-inbox-cleaned-too-early",
    )
}

/// How much later than the first copy's row the last copy a producer
/// published can read the inbox, beyond the time between the two publishes:
/// the spread of the trip from `producer` to the broker and on through a
/// consumer to its database, and the consumer's processing jitter where its
/// inbox read follows the work.
pub(crate) fn copy_late_ms(
    delays: &crate::core::design_warning::Delays,
    producer: &str,
    spreads: &Spreads,
    consumer: &ConsumerConfig,
) -> u64 {
    let publish_ms = delays.spread_ms(&[vec![producer, "broker"]]);
    let jitter_ms = match consumer.handler {
        Handler::InboxSameTx | Handler::InboxIfRedelivered => consumer.processing_jitter_ms,
        _ => 0,
    };
    publish_ms
        .saturating_add(spreads.redelivery_ms)
        .saturating_add(jitter_ms)
}

/// How the network's delay spread between a broker and its `consumers`
/// (names) moves the lease rules' times.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spreads {
    /// How much later than a message's first delivery one of its
    /// redeliveries can reach the consumers' database through a consumer
    /// (perhaps another one): the inbox row is written over the first trip,
    /// and read over the last.
    pub redelivery_ms: u64,
    /// How much longer than the renewal period a lease renewal can take to
    /// reach the broker: the first counts from the delivery leaving the
    /// broker (the delivery's trip, the period, the renewal's trip, both
    /// trips at their longest); each later one from the arrival of the one
    /// before (the spread of the consumer's link).
    pub renewal_ms: u64,
    /// The longest the broker stays down, when the scenario crashes it:
    /// after its restart every lease starts over.
    pub broker_restart_ms: Option<u64>,
    /// The longest trips a delivery's handling takes on the network besides
    /// the work: the delivery to a consumer and its ack back (the longest
    /// such pair over the consumers), and one transaction's round trip from
    /// a consumer to its database.
    pub handling_trips_ms: (u64, u64),
    /// The same trips at their shortest, over the consumers.
    pub shortest_trips_ms: (u64, u64),
}

impl Spreads {
    pub(crate) fn of(
        delays: &crate::core::design_warning::Delays,
        consumers: &[String],
        db: &str,
    ) -> Spreads {
        let to: Vec<Vec<&str>> = consumers
            .iter()
            .map(|c| vec!["broker", c.as_str(), db])
            .collect();
        // A consumer renews its own delivery's lease over its own link.
        let renewal_ms = consumers
            .iter()
            .map(|c| {
                let first = delays.path_ms(&["broker", c.as_str(), "broker"]).1;
                first.max(delays.spread_ms(&[vec![c.as_str(), "broker"]]))
            })
            .max()
            .unwrap_or(0);
        let deliver_and_ack = |c: &String| delays.path_ms(&["broker", c.as_str(), "broker"]);
        let tx_round = |c: &String| delays.path_ms(&[c.as_str(), db, c.as_str()]);
        let longest = |trip: &dyn Fn(&String) -> (u64, u64)| {
            consumers.iter().map(|c| trip(c).1).max().unwrap_or(0)
        };
        let shortest = |trip: &dyn Fn(&String) -> (u64, u64)| {
            consumers.iter().map(|c| trip(c).0).min().unwrap_or(0)
        };
        Spreads {
            redelivery_ms: delays.spread_ms(&to),
            renewal_ms,
            broker_restart_ms: None,
            handling_trips_ms: (longest(&deliver_and_ack), longest(&tx_round)),
            shortest_trips_ms: (shortest(&deliver_and_ack), shortest(&tx_round)),
        }
    }
}

/// What holds a delivery's lease besides the delivery's trip and the ack's:
/// whether the work does, and how many of the handler's transactions. An
/// ack on receipt holds it for the trips alone; an ack with result goes
/// when the work is done, before the commit's transactions, so only an
/// inbox check before the work holds it.
fn lease_holds(consumer: &ConsumerConfig) -> (bool, u64) {
    let checks_first = matches!(
        consumer.handler,
        Handler::InboxSeparateTx | Handler::InboxRecordFirst
    );
    match consumer.ack {
        AckMode::BeforeCommit => (false, 0),
        AckMode::CheckedBeforeCommit => (true, u64::from(checks_first)),
        AckMode::AfterCommit if checks_first => (true, 3),
        AckMode::AfterCommit => (true, 1),
    }
}

/// How long a handling holds the lease, `(total, on the network)`, for
/// `work_ms` of work and the trips `(delivery and ack, one transaction's
/// round trip)`: each transaction at most its timeout, since an answer later
/// than that gives the delivery up.
fn lease_held_ms(
    consumer: &ConsumerConfig,
    work_ms: u64,
    (deliver_and_ack_ms, tx_round_ms): (u64, u64),
) -> (u64, u64) {
    let (works, txs) = lease_holds(consumer);
    let trips_ms = deliver_and_ack_ms
        .saturating_add(txs.saturating_mul(tx_round_ms.min(consumer.tx_timeout_ms)));
    let work_ms = if works { work_ms } else { 0 };
    (work_ms.saturating_add(trips_ms), trips_ms)
}

/// The rule of the lease: a broker must not hand a message to a consumer
/// again while the first one is still working on it. The lease runs from the
/// broker's send of the delivery to the arrival of its ack: the longest
/// handling is the delivery's trip, the work (for an ack after the commit),
/// the handler's transactions and the ack's trip, each at its longest.
fn visibility_below_processing(
    broker: &BrokerConfig,
    consumer: &ConsumerConfig,
    table: &str,
    spreads: Spreads,
) -> Option<crate::core::DesignWarning> {
    // Under exactly-once delivery the late ack fails, and a consumer that
    // checks it before committing drops the work: wasted, not doubled,
    // unless no ack can ever come in time.
    if broker.exactly_once_delivery && consumer.ack == AckMode::CheckedBeforeCommit {
        return checked_ack_livelock(broker, consumer, table, spreads);
    }
    let work_ms = consumer
        .processing_ms
        .saturating_add(consumer.processing_jitter_ms);
    let (longest_ms, trips_ms) = lease_held_ms(consumer, work_ms, spreads.handling_trips_ms);
    // A renewal that always arrives before the lease runs out keeps
    // extending it for as long as the handler runs; what a lost renewal
    // does is a fault's business (messaging-lease-renewal-lost).
    let renewed = consumer.lease_renewal_ms > 0
        && consumer.lease_renewal_ms.saturating_add(spreads.renewal_ms)
            < broker.visibility_timeout_ms;
    if longest_ms < broker.visibility_timeout_ms || renewed {
        return None;
    }
    let setting = handling_parts(
        consumer,
        table,
        &crate::core::design_warning::about_ms(trips_ms),
        false,
    );
    // Under exactly-once delivery the late ack fails instead of counting:
    // the first handler has committed by then, unless it checks the result.
    let (late, shown_by) = match broker.exactly_once_delivery {
        false => ("the first ack comes late", super::situations::LATE_ACK),
        true => (
            "the broker refuses the first ack as stale (exactly-once delivery), though its handler may have committed",
            super::situations::STALE_ACK_REFUSED,
        ),
    };
    Some(crate::core::DesignWarning {
        id: crate::messaging::rules::VISIBILITY_BELOW_PROCESSING,
        text: format!(
            "handling a delivery takes up to {} ({setting}), but the broker makes an unacked message visible again after {} (broker.visibility_timeout_ms): it is delivered a second time while the first handler still runs, {late}, and only a dedup that is atomic with the effect keeps the two handlers to one effect",
            crate::core::design_warning::about_ms(longest_ms),
            crate::core::design_warning::about_ms(broker.visibility_timeout_ms)
        ),
        shown_by: Some(shown_by),
        example: "messaging-visibility-below-processing",
        at: None,
    })
}

/// What a handling holding the lease is made of, for the text: the work
/// and `trips` on the network, for the longest handling or the `shortest`
/// (without the jitter).
fn handling_parts(consumer: &ConsumerConfig, table: &str, trips: &str, shortest: bool) -> String {
    let bound = if shortest { "at least" } else { "up to" };
    let work = match consumer.processing_jitter_ms {
        0 => format!("{table}.processing_ms"),
        _ if shortest => format!("{table}.processing_ms"),
        _ => format!("{table}.processing_ms + {table}.processing_jitter_ms"),
    };
    match (consumer.ack, lease_holds(consumer).1) {
        (AckMode::BeforeCommit, _) => format!(
            "the delivery's trip and its ack's, which {table}.ack = \"before-commit\" sends on receipt: {bound} {trips} on the network"
        ),
        (_, 0) => format!(
            "{work}, and {bound} {trips} on the network: the delivery and the ack, which {table}.ack = \"checked-before-commit\" sends before the commit"
        ),
        (AckMode::CheckedBeforeCommit, _) => format!(
            "{work}, and {bound} {trips} on the network: the delivery, the inbox check and the ack, which {table}.ack = \"checked-before-commit\" sends before the commit"
        ),
        (_, 1) => format!(
            "{work}, and {bound} {trips} on the network: the delivery, the transaction and the ack"
        ),
        (_, txs) => format!(
            "{work}, and {bound} {trips} on the network: the delivery, {txs} transactions and the ack"
        ),
    }
}

/// The lease against the shortest handling, for a checked ack under
/// exactly-once delivery: where even the fastest handling (the work without
/// jitter, every trip at its shortest) is at least the lease, every ack
/// arrives after a newer delivery went out and is refused, every handler
/// drops its work, and the event comes back until the broker gives it up:
/// never handled. A renewal that can arrive before the lease ends may keep
/// it, so only one that never can leaves the loop certain.
fn checked_ack_livelock(
    broker: &BrokerConfig,
    consumer: &ConsumerConfig,
    table: &str,
    spreads: Spreads,
) -> Option<crate::core::DesignWarning> {
    let lease_ms = broker.visibility_timeout_ms;
    let (shortest_ms, trips_ms) =
        lease_held_ms(consumer, consumer.processing_ms, spreads.shortest_trips_ms);
    let first_renewal_ms = spreads
        .shortest_trips_ms
        .0
        .saturating_add(consumer.lease_renewal_ms);
    let may_renew = consumer.lease_renewal_ms > 0 && first_renewal_ms < lease_ms;
    if shortest_ms < lease_ms || may_renew {
        return None;
    }
    let work_ms = consumer
        .processing_ms
        .saturating_add(consumer.processing_jitter_ms);
    let (longest_ms, _) = lease_held_ms(consumer, work_ms, spreads.handling_trips_ms);
    let about = crate::core::design_warning::about_ms;
    let setting = handling_parts(consumer, table, &about(trips_ms), true);
    let end = match (broker.max_deliveries, broker.at_max_deliveries) {
        (0, _) => "the event is redelivered without end and no event is ever handled: the runs end at their step limit, inconclusive".to_string(),
        (n, super::AtMaxDeliveries::DeadLetter) => format!(
            "after {n} deliveries (broker.max_deliveries) the broker moves the event to the dead-letter queue: no event is ever handled"
        ),
        (n, super::AtMaxDeliveries::Discard) => format!(
            "after {n} deliveries (broker.max_deliveries) the broker discards the event: no event is ever handled, and every effect is lost"
        ),
    };
    Some(crate::core::DesignWarning {
        id: crate::messaging::rules::VISIBILITY_BELOW_PROCESSING,
        text: format!(
            "even the shortest handling of a delivery takes at least {} ({setting}), and the broker makes an unacked message visible again after {} (broker.visibility_timeout_ms): every ack arrives after the lease ran out and a newer delivery went out, so under exactly-once delivery the broker refuses every ack as stale and every handler drops its work; {end}; write a visibility timeout above the longest handling ({}), or have the consumer renew the lease ({table}.lease_renewal_ms, below the visibility timeout by more than a delivery's trip and a renewal's)",
            about(shortest_ms),
            about(lease_ms),
            about(longest_ms),
        ),
        shown_by: Some(super::situations::STALE_ACK_REFUSED),
        // Its runs end at the step limit or in the dead-letter queue: no
        // catalog scenario fails by it.
        example: "",
        at: Some(crate::core::input::path(&["broker", "visibility_timeout_ms"])),
    })
}

/// An idempotent producer with more publishes in flight than the broker
/// keeps sequence numbers for ([`SEQUENCE_WINDOW`] batches per producer
/// id and partition): Kafka 3.0.1 to 3.9 turn idempotence left at its
/// default (`"kafka-default"`) off then, with one WARN log line (KAFKA-13673), and the relay stamps nothing
/// (`Relay::max_in_flight`); `idempotence = true` is refused above five
/// (scenario/idempotence.rs), and so is a transactional producer
/// (scenario.rs); a dual write has no relay to stamp.
///
/// [`SEQUENCE_WINDOW`]: super::broker::SEQUENCE_WINDOW
pub(crate) fn idempotence_off_above_window(
    (idempotence, transactional): (bool, bool),
    outbox: bool,
    max_in_flight: u32,
) -> Option<crate::core::DesignWarning> {
    let window = super::broker::SEQUENCE_WINDOW;
    if !idempotence || transactional || !outbox || max_in_flight <= window {
        return None;
    }
    Some(crate::core::DesignWarning {
        id: crate::messaging::rules::IDEMPOTENCE_OFF_ABOVE_FIVE_IN_FLIGHT,
        text: format!(
            "producer.max_in_flight = {max_in_flight} with producer.idempotence = \"kafka-default\": the broker recognises a retry among the last {window} batches per producer id and partition only, so an idempotent producer keeps at most {window} publishes in flight, and Kafka 3.0.1 to 3.9 turn idempotence left at its default off above that, with one WARN line in the producer's log that is easy to miss (one set explicitly, idempotence = true, is refused; Kafka 4.0 refuses both, KAFKA-17927): the outbox relay's publishes carry no producer id or sequence number, and every retry after a lost confirmation is stored again, a second copy of the event for the consumers; write max_in_flight = {window} or less"
        ),
        shown_by: Some(super::situations::DUPLICATE_PUBLISH),
        example: "messaging-max-in-flight-above-five",
        at: Some(crate::core::input::path(&["producer", "max_in_flight"])),
    })
}
