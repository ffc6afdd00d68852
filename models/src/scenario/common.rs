//! The tables every scenario shares, whatever its model: `[expect]`,
//! `[run]`, `[network]` and `[crashes]`.

use super::network::{CrashDto, NetworkDto};
use super::{Expect, Override, Protection, Verdict};
use crate::core::input::{
    count_in, did_you_mean, duration_us, invalid, one_of, path, Invalid, Seg, MAX_DURATION_MS,
};
use crate::core::invariants;
use crate::core::SituationDoc;
use serde::Deserialize;
use sim::{Limits, TimeUs};
use std::collections::BTreeMap;

/// The top-level keys every model has.
pub const KEYS: &[&str] = &[
    "format", "summary", "model", "expect", "run", "network", "crashes",
];

const DAY_MS: u64 = 24 * 3600 * 1000;

/// The shared part of a scenario file; the model's own tables are parsed by
/// the model (unknown top-level keys are caught by the loader).
#[derive(Deserialize, Debug)]
pub struct CommonDto {
    /// The scenario format the file was written for (`scenario::format`).
    #[serde(default)]
    pub format: Option<u64>,
    pub summary: String,
    #[serde(default = "default_model")]
    pub model: String,
    /// Optional: a design being explored states no verdict yet.
    #[serde(default)]
    pub expect: Option<ExpectDto>,
    #[serde(default)]
    pub run: RunDto,
    #[serde(default)]
    pub network: NetworkDto,
    #[serde(default)]
    pub crashes: BTreeMap<String, CrashDto>,
}

fn default_model() -> String {
    "payment".into()
}

/// One protection: an override, several applied together, or a table
/// naming the invariant their removal must break.
#[derive(Deserialize, Debug, Clone)]
#[serde(
    untagged,
    deny_unknown_fields,
    expecting = "this is not a protection: write an override \"key=value\", a list of overrides removed together, or { set = \"key=value\", breaks = \"invariant\" }"
)]
pub enum ProtectionDto {
    One(String),
    Together(Vec<String>),
    Table {
        set: OneOrMore,
        #[serde(default)]
        breaks: Option<String>,
    },
}

#[derive(Deserialize, Debug, Clone)]
#[serde(
    untagged,
    expecting = "`set` is an override \"key=value\" or a list of them"
)]
pub enum OneOrMore {
    One(String),
    More(Vec<String>),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ExpectDto {
    verdict: String,
    invariant: Option<String>,
    #[serde(default)]
    situations: Vec<String>,
    #[serde(default)]
    protections: Vec<ProtectionDto>,
    /// Most work a holding run may take per operation, by name (`attempts`,
    /// or a layer: `consumer = 6`).
    #[serde(default)]
    max_load: BTreeMap<String, toml::Value>,
    /// Design warnings the settings are meant to carry, by id.
    #[serde(default)]
    warnings: Vec<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub struct RunDto {
    pub runs: u64,
    /// How `check` and `verify` search: "seeds" or "coverage".
    pub strategy: String,
    pub fault_phase_ms: u64,
    pub max_steps: u64,
    pub max_time_ms: u64,
    pub max_queue: u64,
}

impl Default for RunDto {
    fn default() -> Self {
        RunDto {
            runs: 1000,
            strategy: "seeds".to_string(),
            fault_phase_ms: 120_000,
            max_steps: 100_000,
            max_time_ms: 365 * DAY_MS,
            max_queue: 10_000,
        }
    }
}

/// The run's phase and limits, before the world exists (models check their
/// start times against them).
pub fn limits(r: &RunDto) -> Result<(TimeUs, Limits), Invalid> {
    let at = |k| path(&["run", k]);
    count_in(r.runs, 1, 1_000_000_000_000, at("runs"), "runs")?;
    let fault_phase_us = duration_us(r.fault_phase_ms, MAX_DURATION_MS, at("fault_phase_ms"))?;
    let limits = Limits {
        max_steps: count_in(r.max_steps, 1, 1_000_000_000, at("max_steps"), "steps")?,
        max_time_us: duration_us(r.max_time_ms, MAX_DURATION_MS, at("max_time_ms"))?,
        max_queue: count_in(r.max_queue, 1, 10_000_000, at("max_queue"), "queued events")? as usize,
    };
    if limits.max_time_us == 0 {
        return Err(invalid(
            at("max_time_ms"),
            "max_time_ms is 0: no event could run",
            "leave it out for a year, or give the virtual time a run may take",
        ));
    }
    if fault_phase_us > limits.max_time_us {
        return Err(invalid(
            at("fault_phase_ms"),
            "the fault phase is longer than run.max_time_ms: no run could heal",
            "make fault_phase_ms at most max_time_ms",
        ));
    }
    Ok((fault_phase_us, limits))
}

/// `run.strategy`: how `check` and `verify` look for a failure.
pub fn strategy(r: &RunDto) -> Result<super::Strategy, Invalid> {
    one_of(
        &r.strategy,
        &[
            ("seeds", super::Strategy::Seeds),
            ("coverage", super::Strategy::Coverage),
        ],
        path(&["run", "strategy"]),
    )
}

/// `[expect]`: the verdict, the invariant a violation breaks, the situations
/// a "holds" must reach, and the protections whose removal must break it.
pub fn expect(
    e: &ExpectDto,
    situations: &[&SituationDoc],
    metrics: &[crate::core::Metric],
) -> Result<Expect, Invalid> {
    let at = |k| path(&["expect", k]);
    let verdict = one_of(
        &e.verdict,
        &[
            ("holds", Verdict::Holds),
            ("violation", Verdict::Violation),
            ("inconclusive", Verdict::Inconclusive),
        ],
        at("verdict"),
    )?;
    let invariant = e
        .invariant
        .as_deref()
        .map(|name| invariant(name, at("invariant")))
        .transpose()?;
    match (verdict, invariant) {
        (Verdict::Violation, None) => {
            return Err(invalid(
                path(&["expect"]),
                "a scenario that expects a violation must name the invariant",
                "add invariant = \"no-duplicate-effect\" (or another) to [expect]",
            ))
        }
        (Verdict::Holds | Verdict::Inconclusive, Some(_)) => {
            return Err(invalid(
                at("invariant"),
                format!(
                    "a scenario that expects \"{}\" breaks no invariant",
                    e.verdict
                ),
                "remove `invariant`, or expect verdict = \"violation\"",
            ))
        }
        _ => {}
    }
    let mut ids = Vec::new();
    for (i, s) in e.situations.iter().enumerate() {
        let found = situations.iter().find(|d| d.name == s).ok_or_else(|| {
            let names: Vec<&str> = situations.iter().map(|d| d.name).collect();
            let help = match did_you_mean(s, names.iter().copied()) {
                Some(b) => format!("did you mean \"{b}\"?"),
                None => format!("this model's situations are {}", names.join(", ")),
            };
            invalid(
                vec![Seg::Key("expect"), Seg::Key("situations"), Seg::Index(i)],
                format!("unknown situation \"{s}\""),
                help,
            )
        })?;
        if ids.contains(&found.id) {
            return Err(listed_twice("situations", i, s));
        }
        ids.push(found.id);
    }
    if verdict != Verdict::Holds && !e.protections.is_empty() {
        return Err(invalid(
            at("protections"),
            "only a scenario that holds has protections to remove",
            "remove `protections`, or expect verdict = \"holds\"",
        ));
    }
    let mut protections = Vec::new();
    for (i, p) in e.protections.iter().enumerate() {
        let at = vec![Seg::Key("expect"), Seg::Key("protections"), Seg::Index(i)];
        protections.push(protection(p, at)?);
    }
    if verdict != Verdict::Holds && !e.max_load.is_empty() {
        return Err(invalid(
            at("max_load"),
            "only a scenario that holds has a load to bound",
            "remove `max_load`, or expect verdict = \"holds\"",
        ));
    }
    let max_load = e
        .max_load
        .iter()
        .map(|(name, v)| load_bound(name, v, metrics))
        .collect::<Result<Vec<_>, _>>()?;
    let mut warnings = Vec::new();
    for (i, w) in e.warnings.iter().enumerate() {
        let id = warning(
            w,
            vec![Seg::Key("expect"), Seg::Key("warnings"), Seg::Index(i)],
        )?;
        if warnings.contains(&id) {
            return Err(listed_twice("warnings", i, w));
        }
        warnings.push(id);
    }
    Ok(Expect {
        verdict,
        invariant,
        situations: ids,
        max_load,
        protections,
        warnings,
    })
}

/// The error for the second mention of `name` in the list `key` of `[expect]`.
fn listed_twice(key: &'static str, i: usize, name: &str) -> Invalid {
    invalid(
        vec![Seg::Key("expect"), Seg::Key(key), Seg::Index(i)],
        format!("\"{name}\" is listed twice"),
        "remove the second one",
    )
}

fn warning(id: &str, path: Vec<Seg>) -> Result<&'static str, Invalid> {
    use crate::core::hazard::RULES;
    RULES.iter().find(|&&r| r == id).copied().ok_or_else(|| {
        let help = match did_you_mean(id, RULES.iter().copied()) {
            Some(b) => format!("did you mean \"{b}\"?"),
            None => format!("the design warnings are {}", RULES.join(", ")),
        };
        invalid(path, format!("unknown design warning \"{id}\""), help)
    })
}

fn invariant(name: &str, path: Vec<Seg>) -> Result<&'static str, Invalid> {
    invariants::by_name(name).map(|i| i.name).ok_or_else(|| {
        let names = invariants::names();
        let help = match did_you_mean(name, names.iter().copied()) {
            Some(b) => format!("did you mean \"{b}\"?"),
            None => format!("the invariants are {}", names.join(", ")),
        };
        invalid(path, format!("unknown invariant \"{name}\""), help)
    })
}

fn protection(p: &ProtectionDto, at: Vec<Seg>) -> Result<Protection, Invalid> {
    let (sets, breaks): (Vec<String>, Option<&str>) = match p {
        ProtectionDto::One(s) => (vec![s.clone()], None),
        ProtectionDto::Together(v) => (v.clone(), None),
        ProtectionDto::Table { set, breaks } => (
            match set {
                OneOrMore::One(s) => vec![s.clone()],
                OneOrMore::More(v) => v.clone(),
            },
            breaks.as_deref(),
        ),
    };
    if sets.is_empty() {
        return Err(invalid(
            at,
            "a protection names at least one override",
            "write it as \"client.key=none\", the override that removes it",
        ));
    }
    let overrides = sets
        .iter()
        .map(|s| {
            Override::parse(s).map_err(|m| {
                invalid(
                    at.clone(),
                    m,
                    "a protection is the override that removes it, e.g. \"service.idempotency=none\"",
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let breaks = breaks.map(|b| invariant(b, at.clone())).transpose()?;
    Ok(Protection { overrides, breaks })
}

/// Most a ratio of work per operation may be: far above any design that
/// makes sense, below where a float stops counting runs exactly.
const MAX_LOAD: f64 = 1_000_000.0;

/// One `[expect].max_load` entry: a name the model counts, and a number
/// from 1 (no retry, no redelivery) up.
fn load_bound(
    name: &str,
    v: &toml::Value,
    metrics: &[crate::core::Metric],
) -> Result<super::LoadBound, Invalid> {
    use crate::core::LoadOf;
    let at = || {
        vec![
            Seg::Key("expect"),
            Seg::Key("max_load"),
            Seg::Name(name.to_string()),
        ]
    };
    let Some(of) = LoadOf::of_metrics(metrics).find(|l| l.name() == name) else {
        let names: Vec<&str> = LoadOf::of_metrics(metrics).map(LoadOf::name).collect();
        let help = if names.is_empty() {
            "this model counts no load; remove `max_load`".to_string()
        } else {
            match did_you_mean(name, names.iter().copied()) {
                Some(b) => format!(
                    "did you mean \"{b}\"? This model counts {}",
                    names.join(", ")
                ),
                None => format!("this model counts {}", names.join(", ")),
            }
        };
        return Err(invalid(at(), format!("no load named \"{name}\""), help));
    };
    let (name, per) = (of.name(), of.per().as_str());
    let max = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        other => {
            return Err(invalid(
                at(),
                format!("a load bound is a number, not {}", other.type_str()),
                format!("write {name} = 5 (at most 5 per {per}; 1 means no retry)"),
            ))
        }
    };
    if !(1.0..=MAX_LOAD).contains(&max) {
        return Err(invalid(
            at(),
            format!("{max} {name} per {per}: the range is 1 to {MAX_LOAD}"),
            "1 means no retry and no redelivery; write the most a run of this design may take, such as 5",
        ));
    }
    Ok(super::LoadBound { name, of, max })
}
