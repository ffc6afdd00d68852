//! The messaging model's tables in a scenario file: `[producer]`,
//! `[broker]`, `[consumer]` and `[[events]]`.

use super::{
    AckMode, AtMaxDeliveries, Broker, BrokerConfig, Consumer, ConsumerConfig, ConsumerDb,
    EventSpec, Handler, InboxConfig, Producer, ProgramConsumer, WriteMode,
};
use crate::core::input::{
    count_in, duration_us, invalid, one_of, path, positive_duration_us, start_us, Invalid,
    LoadError, Seg,
};
use crate::core::{BuildInput, Built, Carries};
use crate::external::{self, ExternalConfig, DEFAULT_HANDLER_TIMEOUT_MS};
use serde::Deserialize;
use sim::ActorId;

pub(crate) use super::warnings::{copy_late_ms, hazards, ProducerIds, Spreads};
pub(crate) use unused::{broker_unused, consumer_unused};

#[path = "scenario_unused.rs"]
mod unused;

#[path = "scenario_idempotence.rs"]
mod idempotence;

#[path = "scenario_delivery.rs"]
mod delivery;

#[path = "scenario_hazards.rs"]
mod design;

#[path = "scenario_producer.rs"]
mod producer;

pub const TABLES: &[&str] = &["producer", "broker", "consumer", "events"];

pub const MAX_CONSUMERS: u64 = 64;
pub const MAX_EVENTS: u64 = 1000;
/// Most publishes the outbox relay keeps out at once (`max_in_flight`).
pub const MAX_IN_FLIGHT: u64 = 100;
/// Most rows an inbox bound may name: far above any run's messages.
pub const MAX_INBOX_ROWS: u64 = 1_000_000;
const DAY_MS: u64 = 24 * 3600 * 1000;

#[derive(Deserialize, Debug, Default)]
#[serde(default)]
struct FileDto {
    producer: ProducerDto,
    broker: BrokerDto,
    consumer: ConsumerDto,
    #[serde(default = "default_events")]
    events: Vec<EventDto>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ProducerDto {
    write: String,
    publish_timeout_ms: u64,
    publish_max_attempts: u64,
    commit_fail_per_mille: u64,
    /// true, false or "kafka-default" (scenario_idempotence.rs).
    idempotence: toml::Value,
    transactional_id: bool,
    max_in_flight: u64,
    /// Kafka's `delivery.timeout.ms`; not written: Kafka's default
    /// (scenario_delivery.rs).
    delivery_timeout_ms: Option<u64>,
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

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct BrokerDto {
    visibility_timeout_ms: u64,
    max_deliveries: u64,
    at_max_deliveries: String,
    dedup_window_ms: u64,
    consumers: u64,
    transaction_timeout_ms: u64,
    exactly_once_delivery: bool,
    producer_id_expiration_ms: u64,
}

impl Default for BrokerDto {
    fn default() -> Self {
        BrokerDto {
            visibility_timeout_ms: 30_000,
            max_deliveries: 0,
            at_max_deliveries: "dead-letter".into(),
            dedup_window_ms: 0,
            consumers: 1,
            transaction_timeout_ms: 60_000,
            exactly_once_delivery: false,
            producer_id_expiration_ms: 0,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ConsumerDto {
    handler: String,
    ack: String,
    processing_ms: u64,
    processing_jitter_ms: u64,
    tx_timeout_ms: u64,
    tx_max_attempts: u64,
    /// A user's program in the consumer's place (docs/protocol.md).
    program: Option<Vec<String>>,
    handler_timeout_ms: u64,
    inbox_retention_ms: u64,
    inbox_max_rows: u64,
    lease_renewal_ms: u64,
}

impl Default for ConsumerDto {
    fn default() -> Self {
        ConsumerDto {
            handler: "inbox-same-tx".into(),
            ack: "after-commit".into(),
            processing_ms: 100,
            processing_jitter_ms: 0,
            tx_timeout_ms: 5_000,
            // Spring Kafka's DefaultErrorHandler: ten attempts.
            tx_max_attempts: 10,
            program: None,
            handler_timeout_ms: DEFAULT_HANDLER_TIMEOUT_MS,
            inbox_retention_ms: 0,
            inbox_max_rows: 0,
            lease_renewal_ms: 0,
        }
    }
}

/// The built-in consumer's keys, which mean nothing when a program is the consumer.
const BUILT_IN_CONSUMER_KEYS: &[&str] = &[
    "handler",
    "ack",
    "processing_ms",
    "processing_jitter_ms",
    "tx_timeout_ms",
    "tx_max_attempts",
    "inbox_retention_ms",
    "inbox_max_rows",
    "lease_renewal_ms",
];

/// Most sends of one consumer transaction (`tx_max_attempts`).
const MAX_TX_ATTEMPTS: u64 = 100;

/// Longest wall-clock time a program's handler may be given.
const MAX_HANDLER_TIMEOUT_MS: u64 = 3600 * 1000;

/// Whether the scenario writes `[consumer] key` (a default is not written).
fn written(text: &str, key: &str) -> bool {
    written_in(text, "consumer", key)
}

/// Whether the scenario writes `[table] key`.
fn written_in(text: &str, table: &str, key: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| {
        t.get(table)
            .and_then(toml::Value::as_table)
            .is_some_and(|c| c.contains_key(key))
    })
}

/// For a model whose consumers are always built in (the chain's
/// `[accounting]`): the program keys are refused, not ignored.
pub(crate) fn refuse_program(
    c: &ConsumerDto,
    text: &str,
    table: &'static str,
    model: &str,
) -> Result<(), Invalid> {
    for key in ["program", "handler_timeout_ms"] {
        if (key == "program" && c.program.is_some()) || written_in(text, table, key) {
            return Err(invalid(
                path(&[table, key]),
                format!("the {model} model runs its built-in {table} consumer: {table}.{key} is for a program in the consumer's place, which only the messaging model takes"),
                "delete the line, or run the program with model = \"messaging\" and [consumer] program = [...]",
            ));
        }
    }
    Ok(())
}

/// `[consumer] program`, checked: the built-in consumer's keys are not
/// written beside it, and the program and its files exist.
fn program_of(
    c: &ConsumerDto,
    input: &BuildInput<'_>,
) -> Result<Option<(external::Program, u64)>, LoadError> {
    let cat = |k| path(&["consumer", k]);
    let Some(argv) = &c.program else {
        if written(input.text, "handler_timeout_ms") {
            return Err(invalid(
                cat("handler_timeout_ms"),
                "handler_timeout_ms is the time-out of an external program, and no consumer.program is given",
                "delete the line, or give the program: program = [\"python3\", \"consumer.py\"]",
            )
            .into());
        }
        return Ok(None);
    };
    if let Some(k) = BUILT_IN_CONSUMER_KEYS
        .iter()
        .find(|k| written(input.text, k))
    {
        return Err(invalid(
            cat(k),
            format!("consumer.{k} belongs to the built-in consumer, and consumer.program replaces it: the program decides how it handles a delivery and when it acks"),
            "delete the line, or delete consumer.program to use the built-in consumer",
        )
        .into());
    }
    let program = external::resolve_program(argv, input.dir, &cat("program"))?;
    let timeout_ms = positive_duration_us(
        c.handler_timeout_ms,
        MAX_HANDLER_TIMEOUT_MS,
        cat("handler_timeout_ms"),
        "write handler_timeout_ms = 10000 (wall-clock milliseconds per handler)",
    )? / 1000;
    Ok(Some((program, timeout_ms)))
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct EventDto {
    entity: u32,
    #[serde(default = "default_value")]
    value: u32,
    #[serde(default)]
    start_ms: u64,
}

fn default_value() -> u32 {
    1200
}

fn default_events() -> Vec<EventDto> {
    vec![EventDto {
        entity: 4711,
        value: 1200,
        start_ms: 0,
    }]
}

pub fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Producer<W>>
        + From<Broker<W>>
        + From<Consumer<W>>
        + From<ConsumerDb<W>>
        + From<ProgramConsumer<W>>,
    W: Carries<super::Msg>,
{
    let d: FileDto = toml::from_str(input.text)?;
    let program = program_of(&d.consumer, input)?;
    let consumers = consumer_count(&d.broker)?;
    // Actor order: producer 0, broker 1, consumer-db 2, consumer-1.. from 3;
    // a program keeps its own database, so then consumer-1.. start at 2.
    let first_consumer = if program.is_some() { 2 } else { 3 };
    let broker = broker(
        &d.broker,
        (0..consumers).map(|i| first_consumer + i).collect(),
    )?;

    let (mut producer, attempts) = producer::producer_of(&d.producer, input.text)?;
    producer.events = events_of(&d.events, input)?;
    let idempotence = (producer.idempotence, producer.stamps());
    let consumer = consumer(&d.consumer, "consumer", 1, 2)?;
    let inbox = inbox(&d.consumer, "consumer")?;
    let unused = unused_of(&d, program.is_some(), idempotence, &producer);
    let hazards = match program {
        Some(_) => Vec::new(),
        None => design::hazards(
            input,
            &design::Design {
                broker: &broker,
                consumer: &consumer,
                inbox: &inbox,
                mode: producer.mode,
                consumers,
                idempotence,
                transactional: producer.transactional_id,
                max_in_flight: producer.max_in_flight,
                publish_timeout_ms: producer.publish_timeout_ms,
                publish_attempts: attempts,
                delivery_timeout_ms: producer.delivery_timeout_ms,
            },
        ),
    };
    let mut actors = vec![
        ("producer".to_string(), N::from(Producer::new(producer))),
        ("broker".to_string(), N::from(Broker::new(broker))),
    ];
    match program {
        Some(program) => program_actors(&mut actors, program, consumers),
        None => {
            actors.push((
                "consumer-db".to_string(),
                N::from(ConsumerDb::default().with_inbox(inbox)),
            ));
            for i in 1..=consumers {
                actors.push((format!("consumer-{i}"), N::from(Consumer::new(consumer))));
            }
        }
    }
    Ok(Built {
        actors,
        actors_hint: " (broker.consumers sets how many consumers)",
        hazards,
        unused,
    })
}

/// The keys the scenario's settings leave without effect (a program's
/// consumer has its own: none of the built-in consumer's apply);
/// `idempotence`: asked for, and in effect.
fn unused_of(
    d: &FileDto,
    program: bool,
    (idem_on, idempotence): (bool, bool),
    producer: &super::ProducerConfig,
) -> Vec<crate::core::Unused> {
    let p = &d.producer;
    let mut unused = match program {
        true => Vec::new(),
        false => consumer_unused(&d.consumer, "consumer"),
    };
    let outbox = producer.mode == WriteMode::Outbox;
    let relay = outbox.then_some((idempotence, p.transactional_id));
    let default_off = (idem_on && !idempotence).then_some(producer.max_in_flight);
    unused.extend(broker_unused(
        &d.broker,
        producer.mode == WriteMode::BrokerTransaction,
        relay,
        default_off,
    ));
    unused.extend(unused::producer_unused(p, relay));
    unused
}

/// A user's program in each consumer's place (after the producer and the
/// broker in `actors`): each keeps its own database.
fn program_actors<N, W>(
    actors: &mut Vec<(String, N)>,
    (program, handler_timeout_ms): (external::Program, u64),
    consumers: u32,
) where
    N: From<ProgramConsumer<W>>,
    W: Carries<super::Msg>,
{
    let names: Vec<String> = actors
        .iter()
        .map(|a| a.0.clone())
        .chain((1..=consumers).map(|i| format!("consumer-{i}")))
        .collect();
    for name in &names[2..] {
        let cfg = ExternalConfig {
            name: name.clone(),
            program: program.clone(),
            handler_timeout_ms,
            actor_names: names.clone(),
        };
        actors.push((name.clone(), N::from(ProgramConsumer::new(cfg))));
    }
}

/// `[[events]]`: 1 to [`MAX_EVENTS`] state changes, each starting within the run.
fn events_of(events: &[EventDto], input: &BuildInput<'_>) -> Result<Vec<EventSpec>, LoadError> {
    if events.is_empty() || events.len() as u64 > MAX_EVENTS {
        return Err(invalid(
            vec![Seg::Key("events")],
            format!("{} events: a scenario has 1 to {MAX_EVENTS}", events.len()),
            "give [[events]] tables with entity and value",
        )
        .into());
    }
    let mut out = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let at = vec![Seg::Key("events"), Seg::Index(i), Seg::Key("start_ms")];
        start_us(e.start_ms, input.max_time_us, at, "event")?;
        out.push(EventSpec {
            entity: e.entity,
            value: e.value,
            start_ms: e.start_ms,
        });
    }
    Ok(out)
}

/// How many consumers `[broker] consumers` asks for.
pub(crate) fn consumer_count(b: &BrokerDto) -> Result<u32, Invalid> {
    let at = path(&["broker", "consumers"]);
    Ok(count_in(b.consumers, 1, MAX_CONSUMERS, at, "consumers")? as u32)
}

/// `[broker]`, delivering to the actors `consumers`.
pub(crate) fn broker(b: &BrokerDto, consumers: Vec<ActorId>) -> Result<BrokerConfig, Invalid> {
    let bat = |k| path(&["broker", k]);
    Ok(BrokerConfig {
        consumers,
        visibility_timeout_ms: positive_duration_us(
            b.visibility_timeout_ms,
            12 * 3600 * 1000,
            bat("visibility_timeout_ms"),
            "SQS and NATS default to 30 s: visibility_timeout_ms = 30000",
        )? / 1000,
        max_deliveries: count_in(
            b.max_deliveries,
            0,
            1000,
            bat("max_deliveries"),
            "deliveries",
        )? as u32,
        at_max_deliveries: one_of(
            &b.at_max_deliveries,
            &[
                ("dead-letter", AtMaxDeliveries::DeadLetter),
                ("discard", AtMaxDeliveries::Discard),
            ],
            bat("at_max_deliveries"),
        )?,
        // Service Bus keeps duplicate detection history for up to 7 days.
        dedup_window_ms: duration_us(b.dedup_window_ms, 7 * DAY_MS, bat("dedup_window_ms"))? / 1000,
        transaction_timeout_ms: positive_duration_us(
            b.transaction_timeout_ms,
            DAY_MS,
            bat("transaction_timeout_ms"),
            "Kafka aborts an open transaction after 60 s by default: transaction_timeout_ms = 60000",
        )? / 1000,
        exactly_once_delivery: b.exactly_once_delivery,
        producer_id_expiration_ms: duration_us(
            b.producer_id_expiration_ms,
            365 * DAY_MS,
            bat("producer_id_expiration_ms"),
        )? / 1000,
    })
}

/// A consumer's table (`[consumer]`, or `table` in a composed model), for
/// consumers that take deliveries from `broker` and write to `db`.
pub(crate) fn consumer(
    c: &ConsumerDto,
    table: &'static str,
    broker: ActorId,
    db: ActorId,
) -> Result<ConsumerConfig, Invalid> {
    let cat = |k| path(&[table, k]);
    Ok(ConsumerConfig {
        broker,
        db,
        handler: one_of(
            &c.handler,
            &[
                ("effect", Handler::Effect),
                ("inbox-same-tx", Handler::InboxSameTx),
                ("inbox-if-redelivered", Handler::InboxIfRedelivered),
                ("inbox-separate-tx", Handler::InboxSeparateTx),
                ("inbox-record-first", Handler::InboxRecordFirst),
                ("unique-key", Handler::UniqueKey),
                ("set-value", Handler::SetValue { versioned: false }),
                ("set-value-versioned", Handler::SetValue { versioned: true }),
            ],
            cat("handler"),
        )?,
        ack: one_of(
            &c.ack,
            &[
                ("after-commit", AckMode::AfterCommit),
                ("before-commit", AckMode::BeforeCommit),
                ("checked-before-commit", AckMode::CheckedBeforeCommit),
            ],
            cat("ack"),
        )?,
        processing_ms: duration_us(c.processing_ms, DAY_MS, cat("processing_ms"))? / 1000,
        processing_jitter_ms: duration_us(
            c.processing_jitter_ms,
            DAY_MS,
            cat("processing_jitter_ms"),
        )? / 1000,
        tx_timeout_ms: positive_duration_us(
            c.tx_timeout_ms,
            DAY_MS,
            cat("tx_timeout_ms"),
            "write tx_timeout_ms = 5000",
        )? / 1000,
        tx_max_attempts: count_in(
            c.tx_max_attempts,
            1,
            MAX_TX_ATTEMPTS,
            cat("tx_max_attempts"),
            "attempts",
        )? as u8,
        lease_renewal_ms: duration_us(c.lease_renewal_ms, DAY_MS, cat("lease_renewal_ms"))? / 1000,
    })
}

/// The inbox's cleanup from a consumer's table. A handler that keeps no
/// inbox has nothing to clean, and the keys are not refused beside it: so
/// that `--set consumer.handler=effect` can take the inbox out of a design
/// that cleans one (a protection, a sweep) without editing the file.
pub(crate) fn inbox(c: &ConsumerDto, table: &'static str) -> Result<InboxConfig, Invalid> {
    let cat = |k| path(&[table, k]);
    let retention_us = duration_us(
        c.inbox_retention_ms,
        365 * DAY_MS,
        cat("inbox_retention_ms"),
    )?;
    let max_rows = count_in(
        c.inbox_max_rows,
        0,
        MAX_INBOX_ROWS,
        cat("inbox_max_rows"),
        "rows",
    )? as u32;
    Ok(InboxConfig {
        retention_us,
        max_rows,
    })
}
