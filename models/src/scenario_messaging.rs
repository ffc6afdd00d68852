//! Scenario files with `model = "messaging"`: producer, broker, consumers and
//! their shared database. A child module of `scenario`, so it reuses the
//! parent's DTOs for `[expect]`, `[run]`, `[network]` and `[crashes]`, its
//! error machinery and its helpers; only the messaging tables are new here.

use super::{
    build_expect, build_world, invalid, one_of, CrashDto, Expect, ExpectDto, Invalid, NetworkDto,
    RunDto, Seg,
};
use crate::messaging::{
    AckMode, Broker, BrokerConfig, Consumer, ConsumerConfig, ConsumerDb, EventSpec, Handler,
    Producer, ProducerConfig, WriteMode, MAX_EVENTS,
};
use crate::node::{Node, System};
use serde::Deserialize;
use sim::US_PER_MS;
use std::collections::BTreeMap;

pub const MAX_CONSUMERS: u32 = 8;

/// True when the text asks for the messaging model; anything unparsable is
/// left to the payment loader, which reports it.
pub(super) fn wants(text: &str) -> bool {
    #[derive(Deserialize)]
    struct ModelOnly {
        model: Option<String>,
    }
    matches!(
        toml::from_str::<ModelOnly>(text),
        Ok(ModelOnly { model: Some(m) }) if m == "messaging"
    )
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct FileDto {
    pub(super) summary: String,
    model: String,
    expect: ExpectDto,
    #[serde(default)]
    pub(super) run: RunDto,
    #[serde(default)]
    network: NetworkDto,
    #[serde(default)]
    crashes: BTreeMap<String, CrashDto>,
    #[serde(default)]
    producer: ProducerDto,
    #[serde(default)]
    broker: BrokerDto,
    #[serde(default)]
    consumer: ConsumerDto,
    #[serde(default = "default_events")]
    events: Vec<EventDto>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ProducerDto {
    write: String,
    publish_timeout_ms: u64,
    publish_max_attempts: u32,
    commit_fail_per_mille: u64,
}

impl Default for ProducerDto {
    fn default() -> Self {
        ProducerDto {
            write: "outbox".into(),
            publish_timeout_ms: 5_000,
            publish_max_attempts: 3,
            commit_fail_per_mille: 0,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct BrokerDto {
    visibility_timeout_ms: u64,
    max_deliveries: u32,
    dedup_window_ms: u64,
    consumers: u32,
}

impl Default for BrokerDto {
    fn default() -> Self {
        BrokerDto {
            visibility_timeout_ms: 30_000,
            max_deliveries: 0,
            dedup_window_ms: 0,
            consumers: 1,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ConsumerDto {
    handler: String,
    ack: String,
    processing_ms: u64,
    processing_jitter_ms: u64,
    tx_timeout_ms: u64,
}

impl Default for ConsumerDto {
    fn default() -> Self {
        ConsumerDto {
            handler: "inbox-same-tx".into(),
            ack: "after-commit".into(),
            processing_ms: 100,
            processing_jitter_ms: 0,
            tx_timeout_ms: 5_000,
        }
    }
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

/// Actor order: producer 0, broker 1, consumer-db 2, consumer-1.. from 3.
fn actor_names(consumers: u32) -> Vec<String> {
    let mut names: Vec<String> = ["producer", "broker", "consumer-db"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    names.extend((1..=consumers).map(|i| format!("consumer-{i}")));
    names
}

fn above_zero(v: u64, path: Vec<Seg>, example: &str) -> Result<(), Invalid> {
    if v == 0 {
        return Err(invalid(path, "must be above 0", example.to_string()));
    }
    Ok(())
}

pub(super) fn build(d: &FileDto) -> Result<(Expect, System), Invalid> {
    use Seg::{Index, Key};
    let expect = build_expect(&d.expect)?;
    debug_assert_eq!(d.model, "messaging");
    let b = &d.broker;
    let bat = |k| vec![Key("broker"), Key(k)];
    if b.consumers == 0 || b.consumers > MAX_CONSUMERS {
        return Err(invalid(
            bat("consumers"),
            format!(
                "{} consumers: a queue has 1 to {MAX_CONSUMERS}",
                b.consumers
            ),
            "write consumers = 2",
        ));
    }
    let names = actor_names(b.consumers);
    let world = build_world(
        &d.run,
        &d.network,
        &d.crashes,
        &names,
        " (broker.consumers sets how many consumers)",
    )?;
    above_zero(
        b.visibility_timeout_ms,
        bat("visibility_timeout_ms"),
        "SQS and NATS default to 30 s: visibility_timeout_ms = 30000",
    )?;

    let p = &d.producer;
    let pat = |k| vec![Key("producer"), Key(k)];
    let mode = one_of(
        &p.write,
        &[
            ("state-first", WriteMode::StateFirst),
            ("event-first", WriteMode::EventFirst),
            ("outbox", WriteMode::Outbox),
        ],
        pat("write"),
    )?;
    above_zero(
        p.publish_timeout_ms,
        pat("publish_timeout_ms"),
        "write publish_timeout_ms = 5000",
    )?;
    above_zero(
        u64::from(p.publish_max_attempts),
        pat("publish_max_attempts"),
        "write publish_max_attempts = 3",
    )?;
    if p.commit_fail_per_mille > 1000 {
        return Err(invalid(
            pat("commit_fail_per_mille"),
            format!(
                "probability {} is over 1000 per mille",
                p.commit_fail_per_mille
            ),
            "per mille runs from 0 (never) to 1000 (always); 5% is 50",
        ));
    }
    if d.events.is_empty() || d.events.len() > MAX_EVENTS {
        return Err(invalid(
            vec![Key("events")],
            format!(
                "{} events: a scenario has 1 to {MAX_EVENTS}",
                d.events.len()
            ),
            "add an [[events]] table with entity and value",
        ));
    }
    let events: Vec<EventSpec> = d
        .events
        .iter()
        .map(|e| EventSpec {
            op: e.entity,
            value: e.value,
            start_ms: e.start_ms,
        })
        .collect();
    for (i, e) in d.events.iter().enumerate() {
        if e.start_ms * US_PER_MS > world.limits.max_time_us {
            return Err(invalid(
                vec![Key("events"), Index(i), Key("start_ms")],
                format!("event starts at {} ms, after run.max_time_ms", e.start_ms),
                "start events within the fault phase",
            ));
        }
    }

    let c = &d.consumer;
    let cat = |k| vec![Key("consumer"), Key(k)];
    let handler = one_of(
        &c.handler,
        &[
            ("effect", Handler::Effect),
            ("inbox-same-tx", Handler::InboxSameTx),
            ("inbox-separate-tx", Handler::InboxSeparateTx),
            ("inbox-record-first", Handler::InboxRecordFirst),
            ("unique-key", Handler::UniqueKey),
            ("set-value", Handler::SetValue { versioned: false }),
            ("set-value-versioned", Handler::SetValue { versioned: true }),
        ],
        cat("handler"),
    )?;
    let ack = one_of(
        &c.ack,
        &[
            ("after-commit", AckMode::AfterCommit),
            ("before-commit", AckMode::BeforeCommit),
        ],
        cat("ack"),
    )?;
    above_zero(
        c.tx_timeout_ms,
        cat("tx_timeout_ms"),
        "write tx_timeout_ms = 5000",
    )?;

    let consumers: Vec<sim::ActorId> = (0..b.consumers).map(|i| 3 + i).collect();
    let mut nodes = vec![
        Node::Producer(Producer {
            cfg: ProducerConfig {
                broker: 1,
                mode,
                publish_timeout_ms: p.publish_timeout_ms,
                publish_max_attempts: p.publish_max_attempts,
                commit_fail_per_mille: p.commit_fail_per_mille as u32,
                events,
            },
        }),
        Node::Broker(Broker {
            cfg: BrokerConfig {
                consumers: consumers.clone(),
                visibility_timeout_ms: b.visibility_timeout_ms,
                max_deliveries: b.max_deliveries,
                dedup_window_ms: b.dedup_window_ms,
            },
        }),
        Node::ConsumerDb(ConsumerDb),
    ];
    for _ in &consumers {
        nodes.push(Node::Consumer(Consumer {
            cfg: ConsumerConfig {
                broker: 1,
                db: 2,
                handler,
                ack,
                processing_ms: c.processing_ms,
                processing_jitter_ms: c.processing_jitter_ms,
                tx_timeout_ms: c.tx_timeout_ms,
            },
        }));
    }
    assert_eq!(nodes.len(), names.len());
    Ok((expect, System { world, nodes }))
}
