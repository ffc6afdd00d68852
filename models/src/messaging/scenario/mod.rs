//! The messaging model's tables in a scenario file: `[producer]`,
//! `[broker]`, `[consumer]` and `[[events]]`. Each table has its module:
//! `producer.rs` (with `idempotence.rs` and `delivery.rs` for Kafka's
//! rules), `queue.rs` (`[broker]` and `[consumer]`, which the chain's
//! loader reads too), `program.rs` (a program in the consumer's place),
//! `rollouts.rs` (`[rollouts.NAME]`: the consumers' later versions);
//! `unused.rs` and `warnings.rs` read the validated tables.

use super::{Broker, Consumer, ConsumerDb, EventSpec, Producer, ProgramConsumer, WriteMode};
use crate::core::input::{invalid, start_us, LoadError, Seg};
use crate::core::{BuildInput, Built, Carries};
use producer::ProducerDto;
use serde::Deserialize;

pub(crate) use super::warnings::{copy_late_ms, design_warnings, ProducerIds, Spreads};
pub(crate) use program::refuse_program;
pub(crate) use queue::{broker, consumer, consumer_count, inbox, BrokerDto, ConsumerDto};
pub(crate) use unused::{broker_unused, consumer_unused};

mod delivery;
mod idempotence;
mod producer;
mod program;
mod queue;
mod rollouts;
mod unused;
mod warnings;

pub(crate) const TABLES: &[&str] = &[
    "producer", "broker", "consumer", "events", "rollouts", "relay",
];

pub(crate) const MAX_EVENTS: u64 = 1000;
/// Most publishes the outbox relay keeps out at once (`max_in_flight`).
pub(crate) const MAX_IN_FLIGHT: u64 = 100;
const DAY_MS: u64 = 24 * 3600 * 1000;

#[derive(Deserialize, Debug, Default)]
#[serde(default)]
struct FileDto {
    producer: ProducerDto,
    broker: BrokerDto,
    consumer: ConsumerDto,
    #[serde(default = "default_events")]
    events: Vec<EventDto>,
    rollouts: std::collections::BTreeMap<String, rollouts::RolloutDto>,
    relay: program::RelayDto,
}

/// Whether the scenario writes `[table] key`.
fn written_in(text: &str, table: &str, key: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| {
        t.get(table)
            .and_then(toml::Value::as_table)
            .is_some_and(|c| c.contains_key(key))
    })
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

/// The messaging model's actors from its tables: producer 0, broker 1,
/// then the built-in consumers' database and consumers, or a program in
/// each consumer's place.
pub(crate) fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Producer<W>>
        + From<Broker<W>>
        + From<Consumer<W>>
        + From<ConsumerDb<W>>
        + From<ProgramConsumer<W>>
        + From<super::ProgramRelay<W>>,
    W: Carries<super::Msg>,
{
    let d: FileDto = toml::from_str(input.text)?;
    let program = program::program_of(&d.consumer, input)?;
    let consumers = consumer_count(&d.broker)?;
    let versions = match (d.rollouts.is_empty(), &program) {
        (true, _) => vec![Vec::new(); consumers as usize],
        (false, Some(_)) => return Err(rollouts::program_refused().into()),
        (false, None) => {
            let raw: toml::Table = toml::from_str(input.text)?;
            rollouts::consumer_versions(&d, &raw, consumers, input.max_time_us)?
        }
    };
    // Actor order: producer 0, broker 1, consumer-db 2, consumer-1.. from 3;
    // a program keeps its own database, so then consumer-1.. start at 2.
    let first_consumer = if program.is_some() { 2 } else { 3 };
    let broker = broker(
        &d.broker,
        (0..consumers).map(|i| first_consumer + i).collect(),
    )?;
    let (mut producer, attempts) = producer::producer_of(&d.producer, input.text)?;
    producer.events = events_of(&d.events, input)?;
    let relay = program::relay_program_of(&d.relay, producer.mode, input)?;
    if relay.is_some() {
        // The relay program, the last actor, takes the rows in the broker's place.
        producer.broker = 2 + consumers + u32::from(program.is_none());
    }
    let idempotence = (producer.idempotence, producer.stamps());
    let consumer = consumer(&d.consumer, "consumer", 1, 2)?;
    let inbox = inbox(&d.consumer, "consumer")?;
    let unused = unused_of(&d, program.is_some(), idempotence, &producer);
    // The rules judge the design the consumers end at: a rollout's earlier
    // versions are what its runs try, each for its part of the time.
    let ends_at = versions
        .first()
        .and_then(|v| v.last())
        .map_or(consumer, |(_, c)| *c);
    let design_warnings = match program {
        Some(_) => Vec::new(),
        None => warnings::design_warnings(
            input,
            &warnings::Design {
                broker: &broker,
                consumer: &ends_at,
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
        Some(program) => program::program_actors(&mut actors, program, consumers),
        None => built_in_consumers(&mut actors, consumer, inbox, versions),
    }
    if let Some(relay) = &relay {
        program::relay_actor(&mut actors, relay);
    }
    Ok(Built {
        actors,
        actors_hint: " (broker.consumers sets how many consumers)",
        design_warnings,
        unused,
    })
}

/// The built-in consumers' shared database and the consumers themselves,
/// each with its later versions (`versions`, one list per consumer), after
/// the producer and the broker in `actors`.
fn built_in_consumers<N, W>(
    actors: &mut Vec<(String, N)>,
    consumer: super::ConsumerConfig,
    inbox: super::InboxConfig,
    versions: Vec<Vec<(sim::TimeUs, super::ConsumerConfig)>>,
) where
    N: From<Consumer<W>> + From<ConsumerDb<W>>,
    W: Carries<super::Msg>,
{
    actors.push((
        "consumer-db".to_string(),
        N::from(ConsumerDb::default().with_inbox(inbox)),
    ));
    for (i, later) in versions.into_iter().enumerate() {
        let c = Consumer::with_rollouts(consumer, later);
        actors.push((format!("consumer-{}", i + 1), N::from(c)));
    }
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
