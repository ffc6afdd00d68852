//! Scenario files with `model = "messaging"`: producer, broker, consumers and
//! their shared database. A child module of `scenario`, so it reuses the
//! parent's DTOs for `[expect]`, `[run]`, `[network]` and `[crashes]`, its
//! error machinery and its helpers; only the messaging tables are new here.

use super::{
    fnv1a, help_for_unknown, invalid, line_col, min_max, one_of, per_mille, span_of, CrashDto,
    Expect, ExpectDto, Invalid, NetworkDto, RunDto, Scenario, ScenarioError, Seg, Verdict,
};
use crate::messaging::{
    AckMode, Broker, BrokerConfig, Consumer, ConsumerConfig, ConsumerDb, EventSpec, Handler,
    Producer, ProducerConfig, WriteMode, MAX_EVENTS,
};
use crate::node::{Node, System};
use serde::Deserialize;
use sim::{CrashConfig, Limits, LinkConfig, Partition, World, US_PER_MS};
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
struct FileDto {
    summary: String,
    model: String,
    expect: ExpectDto,
    #[serde(default)]
    run: RunDto,
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

pub(super) fn load(
    file: &str,
    shown_file: &str,
    effective: &str,
) -> Result<Scenario, ScenarioError> {
    let located = |span: Option<std::ops::Range<usize>>, message: String, help| {
        let (line, column, src) = line_col(effective, span.map_or(0, |s| s.start));
        ScenarioError {
            file: shown_file.to_string(),
            line,
            column,
            message,
            source_line: Some(src),
            help,
        }
    };
    let dto: FileDto = toml::from_str(effective).map_err(|e| {
        let msg = e.message().trim().to_string();
        let help = if msg.starts_with("unknown field") {
            help_for_unknown(&msg)
        } else if msg.contains("invalid type") {
            Some("check the value's type against docs/catalog-messaging.md".into())
        } else {
            None
        };
        located(e.span(), msg, help)
    })?;
    let name = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(file)
        .to_string();
    let (expect, system) =
        build(&dto).map_err(|inv| located(span_of(effective, &inv.path), inv.message, inv.help))?;
    Ok(Scenario {
        name,
        file: file.to_string(),
        summary: dto.summary.trim().to_string(),
        hash: fnv1a(effective.as_bytes()),
        expect,
        runs: dto.run.runs,
        system,
    })
}

// The next two functions mirror the payment loader's checks of the shared
// tables, so both models refuse the same mistakes with the same messages.

fn expect(e: &ExpectDto) -> Result<Expect, Invalid> {
    use Seg::{Index, Key};
    let verdict = one_of(
        &e.verdict,
        &[
            ("holds", Verdict::Holds),
            ("violation", Verdict::Violation),
            ("inconclusive", Verdict::Inconclusive),
        ],
        vec![Key("expect"), Key("verdict")],
    )?;
    let invariant = match &e.invariant {
        None => None,
        Some(name) => Some(
            *crate::ledger::inv::ALL
                .iter()
                .find(|i| **i == name.as_str())
                .ok_or_else(|| {
                    invalid(
                        vec![Key("expect"), Key("invariant")],
                        format!("unknown invariant \"{name}\""),
                        format!("expected one of {}", crate::ledger::inv::ALL.join(", ")),
                    )
                })?,
        ),
    };
    if verdict == Verdict::Violation && invariant.is_none() {
        return Err(invalid(
            vec![Key("expect")],
            "a scenario that expects a violation must name the invariant",
            "add invariant = \"no-duplicate-effect\" (or another) to [expect]",
        ));
    }
    let mut situations = Vec::new();
    for (i, s) in e.situations.iter().enumerate() {
        let id = crate::situation::id(s).ok_or_else(|| {
            let names: Vec<&str> = crate::situation::NAMES.iter().map(|(_, n)| *n).collect();
            invalid(
                vec![Key("expect"), Key("situations"), Index(i)],
                format!("unknown situation \"{s}\""),
                format!("expected one of {}", names.join(", ")),
            )
        })?;
        situations.push(id);
    }
    Ok(Expect {
        verdict,
        invariant,
        situations,
    })
}

fn world(d: &FileDto, names: &[String]) -> Result<World, Invalid> {
    use Seg::{Index, Key, Name};
    let mut world = World::new(names.to_vec());
    let actor = |name: &str, path: Vec<Seg>| {
        names
            .iter()
            .position(|n| n == name)
            .map(|i| i as sim::ActorId)
            .ok_or_else(|| {
                invalid(
                    path,
                    format!("no actor named \"{name}\" in this model"),
                    format!(
                        "actors are {} (broker.consumers sets how many consumers)",
                        names.join(", ")
                    ),
                )
            })
    };
    let r = &d.run;
    if r.runs == 0 {
        return Err(invalid(
            vec![Key("run"), Key("runs")],
            "runs must be at least 1",
            "write runs = 1000",
        ));
    }
    world.fault_phase_us = r.fault_phase_ms * US_PER_MS;
    world.limits = Limits {
        max_steps: r.max_steps.max(1),
        max_time_us: r.max_time_ms.saturating_mul(US_PER_MS),
        max_queue: r.max_queue.max(1) as usize,
    };
    let n = &d.network;
    min_max(
        n.delay_ms_min,
        n.delay_ms_max,
        vec![Key("network"), Key("delay_ms_max")],
        "network delay",
    )?;
    let base = LinkConfig {
        loss_per_mille: per_mille(
            n.loss_per_mille,
            vec![Key("network"), Key("loss_per_mille")],
        )?,
        duplicate_per_mille: per_mille(
            n.duplicate_per_mille,
            vec![Key("network"), Key("duplicate_per_mille")],
        )?,
        delay_us_min: n.delay_ms_min * US_PER_MS,
        delay_us_max: n.delay_ms_max * US_PER_MS,
    };
    for l in &mut world.links {
        *l = base;
    }
    for (i, l) in n.links.iter().enumerate() {
        let at = |k| vec![Key("network"), Key("links"), Index(i), Key(k)];
        let from = actor(&l.from, at("from"))?;
        let to = actor(&l.to, at("to"))?;
        let mut cfg = *world.link(from, to);
        if let Some(p) = l.loss_per_mille {
            cfg.loss_per_mille = per_mille(p, at("loss_per_mille"))?;
        }
        if let Some(p) = l.duplicate_per_mille {
            cfg.duplicate_per_mille = per_mille(p, at("duplicate_per_mille"))?;
        }
        if let Some(v) = l.delay_ms_min {
            cfg.delay_us_min = v * US_PER_MS;
        }
        if let Some(v) = l.delay_ms_max {
            cfg.delay_us_max = v * US_PER_MS;
        }
        min_max(
            cfg.delay_us_min,
            cfg.delay_us_max,
            at("delay_ms_max"),
            "link delay",
        )?;
        *world.link_mut(from, to) = cfg;
    }
    for (i, p) in n.partitions.iter().enumerate() {
        let at = |k| vec![Key("network"), Key("partitions"), Index(i), Key(k)];
        if p.between.len() != 2 {
            return Err(invalid(
                at("between"),
                format!("a partition is between two actors, not {}", p.between.len()),
                "write between = [\"producer\", \"broker\"]",
            ));
        }
        let a = actor(&p.between[0], at("between"))?;
        let b = actor(&p.between[1], at("between"))?;
        min_max(p.start_ms, p.end_ms, at("end_ms"), "partition window")?;
        world.partitions.push(Partition {
            a,
            b,
            both_ways: !p.one_way,
            start_us: p.start_ms * US_PER_MS,
            end_us: p.end_ms * US_PER_MS,
        });
    }
    for (name, c) in &d.crashes {
        let at = |k| vec![Key("crashes"), Name(name.clone()), Key(k)];
        let id = actor(name, vec![Key("crashes"), Name(name.clone())])?;
        min_max(
            c.restart_ms_min,
            c.restart_ms_max,
            at("restart_ms_max"),
            "restart delay",
        )?;
        world.crashes[id as usize] = CrashConfig {
            crash_per_mille: per_mille(c.crash_per_mille, at("crash_per_mille"))?,
            restart_us_min: c.restart_ms_min * US_PER_MS,
            restart_us_max: c.restart_ms_max * US_PER_MS,
        };
    }
    Ok(world)
}

fn above_zero(v: u64, path: Vec<Seg>, example: &str) -> Result<(), Invalid> {
    if v == 0 {
        return Err(invalid(path, "must be above 0", example.to_string()));
    }
    Ok(())
}

fn build(d: &FileDto) -> Result<(Expect, System), Invalid> {
    use Seg::{Index, Key};
    let expect = expect(&d.expect)?;
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
    let world = world(d, &names)?;
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
