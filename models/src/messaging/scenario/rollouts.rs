//! `[rollouts.NAME]` in the messaging model: from `at_ms` on, the built-in
//! consumers run with other settings (`set`, keys of `[consumer]` written
//! over it). `actor = "consumer"` rolls every instance; with `over_ms` the
//! instances are replaced one after another across the window, the first
//! at `at_ms` and the last at `at_ms + over_ms`, as a rolling deploy goes,
//! so old and new versions consume the same queue side by side in between.
//! `actor = "consumer-N"` rolls one instance. Each instance finishes the
//! deliveries it holds under the version that took them
//! (`consumer/rollout.rs`).

use super::queue::{consumer, ConsumerDto};
use super::FileDto;
use crate::core::input::{invalid, path, start_us, Invalid, Seg};
use crate::core::overlay::{known_keys, moved, overlay, typed};
use crate::messaging::{ConsumerConfig, MAX_CONSUMER_VERSIONS};
use serde::Deserialize;
use sim::TimeUs;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct RolloutDto {
    actor: String,
    at_ms: u64,
    #[serde(default)]
    over_ms: u64,
    #[serde(default)]
    set: toml::Table,
}

/// The `[consumer]` keys a rollout may set: the handler's, the ack's and
/// the timing. Not the inbox's cleanup, which the shared database runs,
/// nor a program, which is not a version of the built-in consumer.
const CONSUMER_KEYS: &[&str] = &[
    "handler",
    "ack",
    "processing_ms",
    "processing_jitter_ms",
    "tx_timeout_ms",
    "tx_max_attempts",
    "lease_renewal_ms",
];

/// Where rollout `name` is in the file, with `more` below it.
fn at(name: &str, more: &[&'static str]) -> Vec<Seg> {
    let mut p = vec![Seg::Key("rollouts"), Seg::Name(name.to_string())];
    p.extend(path(more));
    p
}

/// Rollouts beside a program in the consumer's place: a version of the
/// program is the program's own business.
pub(super) fn program_refused() -> Invalid {
    invalid(
        vec![Seg::Key("rollouts")],
        "rollouts of a program in the consumer's place",
        "run each version of your program as a scenario of its own, or drop consumer.program",
    )
}

/// Which instances (0-based) rollout `r` replaces, and when each (µs).
fn schedule(r: &RolloutDto, consumers: u32) -> Vec<(u32, TimeUs)> {
    let at_us = r.at_ms * 1000;
    match r.actor.strip_prefix("consumer-") {
        Some(n) => vec![(n.parse::<u32>().expect("checked") - 1, at_us)],
        None if consumers == 1 => vec![(0, at_us)],
        None => (0..consumers)
            .map(|i| {
                let step_us = r.over_ms * 1000 * u64::from(i) / u64::from(consumers - 1);
                (i, at_us + step_us)
            })
            .collect(),
    }
}

/// Checks one rollout: its actor, times and keys.
fn check_one(
    name: &str,
    r: &RolloutDto,
    consumers: u32,
    max_time_us: TimeUs,
) -> Result<(), Invalid> {
    let instance = r
        .actor
        .strip_prefix("consumer-")
        .and_then(|n| n.parse::<u32>().ok());
    if r.actor != "consumer" && !instance.is_some_and(|n| (1..=consumers).contains(&n)) {
        return Err(invalid(
            at(name, &["actor"]),
            format!("no actor \"{}\" to roll out", r.actor),
            format!(
                "roll out \"consumer\" (every instance) or one of consumer-1 to consumer-{consumers}"
            ),
        ));
    }
    if r.at_ms == 0 {
        return Err(invalid(
            at(name, &["at_ms"]),
            "a rollout at 0 ms is the first version itself",
            "write these settings in [consumer], or roll out later (at_ms = 30000)",
        ));
    }
    start_us(r.at_ms, max_time_us, at(name, &["at_ms"]), "rollout")?;
    if r.over_ms > 0 {
        if r.actor != "consumer" || consumers < 2 {
            return Err(invalid(
                at(name, &["over_ms"]),
                format!(
                    "{} is one instance: there is nothing to replace one by one",
                    r.actor
                ),
                "roll out actor = \"consumer\" with broker.consumers = 2 or more, or drop over_ms",
            ));
        }
        let end_ms = r.at_ms.saturating_add(r.over_ms);
        start_us(
            end_ms,
            max_time_us,
            at(name, &["over_ms"]),
            "rollout's last instance",
        )?;
    }
    if r.set.is_empty() {
        return Err(invalid(
            at(name, &["set"]),
            "the rollout changes nothing",
            "give the settings of the new version: set = { handler = \"inbox-same-tx\" }",
        ));
    }
    known_keys(&r.set, CONSUMER_KEYS, &at(name, &["set"]))
}

/// Every consumer instance's later versions, each from its time:
/// `[consumer]` with every `set` that reached the instance by then written
/// over it, checked as `[consumer]` is. Empty lists without rollouts.
pub(super) fn consumer_versions(
    d: &FileDto,
    raw: &toml::Table,
    consumers: u32,
    max_time_us: TimeUs,
) -> Result<Vec<Vec<(TimeUs, ConsumerConfig)>>, Invalid> {
    let mut per_instance: Vec<Vec<(TimeUs, &str, &RolloutDto)>> =
        vec![Vec::new(); consumers as usize];
    for (name, r) in &d.rollouts {
        check_one(name, r, consumers, max_time_us)?;
        for (i, at_us) in schedule(r, consumers) {
            per_instance[i as usize].push((at_us, name, r));
        }
    }
    let base = match raw.get("consumer") {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => toml::Table::new(),
    };
    let mut all = Vec::with_capacity(per_instance.len());
    for (i, mut rollouts) in per_instance.into_iter().enumerate() {
        rollouts.sort_by_key(|(at_us, name, _)| (*at_us, *name));
        if let Some(w) = rollouts.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(invalid(
                at(w[1].1, &["at_ms"]),
                format!(
                    "rollout `{}` reaches consumer-{} at the same time",
                    w[0].1,
                    i + 1
                ),
                "give each version of an instance a time of its own, or merge the two `set`s",
            ));
        }
        if rollouts.len() >= MAX_CONSUMER_VERSIONS {
            return Err(invalid(
                vec![Seg::Key("rollouts")],
                format!("{} rollouts of consumer-{}", rollouts.len(), i + 1),
                format!(
                    "give an instance at most {} rollouts",
                    MAX_CONSUMER_VERSIONS - 1
                ),
            ));
        }
        let mut t = base.clone();
        let mut later = Vec::with_capacity(rollouts.len());
        for (at_us, name, r) in rollouts {
            overlay(&mut t, &r.set);
            let dto: ConsumerDto = typed(t.clone(), &at(name, &["set"]))?;
            let cfg = consumer(&dto, "consumer", 1, 2)
                .map_err(|e| moved(e, &["consumer"], &r.set, &at(name, &["set"])))?;
            later.push((at_us, cfg));
        }
        all.push(later);
    }
    Ok(all)
}
