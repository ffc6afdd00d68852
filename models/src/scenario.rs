//! Scenario files: TOML, one design variant each, validated once.
//!
//! TOML → plain serde structures with `deny_unknown_fields` → validation into
//! the engine's configuration (integer microseconds and per-mille, actor names
//! resolved). `--set key.path=value` overrides edit the TOML tree *before*
//! validation, so an override gets exactly the checks and messages of the file.
//! Every mistake is an error naming the file, line and column, what was
//! expected, and how to fix it; never a panic.

use crate::node::{Node, System};
use crate::payment::{
    Bank, BankConfig, Client, ClientConfig, Concurrent, Idempotency, Jitter, KeyPolicy, Mode,
    OpSpec, RetryPolicy, Service, ServiceConfig,
};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use sim::{CrashConfig, Limits, LinkConfig, Partition, PerMilleRange, World, US_PER_MS};
use std::collections::BTreeMap;
use std::fmt;

#[path = "scenario_messaging.rs"]
mod messaging;

// ------------------------------------------------------------------ errors

/// A bad scenario file or override: names the place, what was expected and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub source_line: Option<String>,
    pub help: Option<String>,
}

impl std::error::Error for ScenarioError {}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "error: {}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )?;
        if let Some(src) = &self.source_line {
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            writeln!(f, "{pad} |")?;
            writeln!(f, "{num} | {src}")?;
            writeln!(f, "{pad} | {}^", " ".repeat(self.column.saturating_sub(1)))?;
        }
        if let Some(help) = &self.help {
            writeln!(f, "help: {help}")?;
        }
        Ok(())
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize, String) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[start..].chars().count() + 1;
    let src = text[start..].lines().next().unwrap_or("").to_string();
    (line, column, src)
}

/// A path into the TOML tree, for finding where a validated value was written.
#[derive(Clone, Debug)]
enum Seg {
    Key(&'static str),
    Name(String),
    Index(usize),
}

struct Invalid {
    path: Vec<Seg>,
    message: String,
    help: Option<String>,
}

fn invalid(path: Vec<Seg>, message: impl Into<String>, help: impl Into<String>) -> Invalid {
    Invalid {
        path,
        message: message.into(),
        help: Some(help.into()),
    }
}

/// The byte span of the value (or, failing that, the nearest table) at `path`.
fn span_of(text: &str, path: &[Seg]) -> Option<std::ops::Range<usize>> {
    let doc = toml_edit::ImDocument::parse(text.to_string()).ok()?;
    let mut best = None;
    let mut table: Option<&toml_edit::Table> = Some(doc.as_table());
    let mut item: Option<&toml_edit::Item> = None;
    for seg in path {
        let next: Option<&toml_edit::Item> = match (seg, table, item) {
            (Seg::Key(k), Some(t), _) => t.get(k),
            (Seg::Name(k), Some(t), _) => t.get(k.as_str()),
            (Seg::Index(i), _, Some(toml_edit::Item::ArrayOfTables(a))) => {
                let t = a.get(*i)?;
                best = t.span().or(best);
                table = Some(t);
                item = None;
                continue;
            }
            (Seg::Index(i), _, Some(it)) => it.get(*i),
            (Seg::Key(k), None, Some(it)) => it.get(k),
            (Seg::Name(k), None, Some(it)) => it.get(k.as_str()),
            _ => None,
        };
        let Some(it) = next else { break };
        best = it.span().or(best);
        table = it.as_table();
        item = Some(it);
    }
    best
}

// ------------------------------------------------------------------ DTOs

/// A per-mille probability, fixed (`20`) or a swarm range (`[0, 100]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct PerMille(u64, u64);

impl<'de> Deserialize<'de> for PerMille {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PerMille;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer per mille (0 to 1000) or a range [lo, hi] of them")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PerMille, E> {
                if v < 0 {
                    return Err(E::custom(format!(
                        "{v} is negative: a per-mille probability is 0 to 1000"
                    )));
                }
                Ok(PerMille(v as u64, v as u64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PerMille, E> {
                Ok(PerMille(v, v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PerMille, E> {
                Err(E::custom(format!(
                    "{v} is a float: probabilities are integer per mille, e.g. {} for {v}",
                    (v * 1000.0).round() as i64
                )))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PerMille, A::Error> {
                let lo: u64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::custom("a range needs two values [lo, hi]"))?;
                let hi: u64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::custom("a range needs two values [lo, hi]"))?;
                if seq.next_element::<u64>()?.is_some() {
                    return Err(de::Error::custom("a range has exactly two values [lo, hi]"));
                }
                Ok(PerMille(lo, hi))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FileDto {
    summary: String,
    #[serde(default = "default_model")]
    model: String,
    expect: ExpectDto,
    #[serde(default)]
    run: RunDto,
    #[serde(default)]
    network: NetworkDto,
    #[serde(default)]
    crashes: BTreeMap<String, CrashDto>,
    #[serde(default)]
    client: ClientDto,
    #[serde(default)]
    service: ServiceDto,
    #[serde(default)]
    bank: BankDto,
    #[serde(default = "default_operations")]
    operations: Vec<OpDto>,
}

fn default_model() -> String {
    "payment".into()
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ExpectDto {
    verdict: String,
    invariant: Option<String>,
    #[serde(default)]
    situations: Vec<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct RunDto {
    runs: u64,
    fault_phase_ms: u64,
    max_steps: u64,
    max_time_ms: u64,
    max_queue: u64,
}

impl Default for RunDto {
    fn default() -> Self {
        RunDto {
            runs: 1000,
            fault_phase_ms: 120_000,
            max_steps: 100_000,
            max_time_ms: 365 * 24 * 3600 * 1000,
            max_queue: 10_000,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct NetworkDto {
    #[serde(default)]
    loss_per_mille: PerMille,
    #[serde(default)]
    duplicate_per_mille: PerMille,
    #[serde(default = "one")]
    delay_ms_min: u64,
    #[serde(default = "fifty")]
    delay_ms_max: u64,
    #[serde(default)]
    links: Vec<LinkDto>,
    #[serde(default)]
    partitions: Vec<PartitionDto>,
    /// Swarm testing: the chance per seed of one random partition between two actors.
    #[serde(default)]
    random_partition_per_mille: PerMille,
    #[serde(default = "thousand")]
    random_partition_ms_min: u64,
    #[serde(default = "thirty_thousand")]
    random_partition_ms_max: u64,
}

impl Default for NetworkDto {
    fn default() -> Self {
        NetworkDto {
            loss_per_mille: PerMille::default(),
            duplicate_per_mille: PerMille::default(),
            delay_ms_min: 1,
            delay_ms_max: 50,
            links: Vec::new(),
            partitions: Vec::new(),
            random_partition_per_mille: PerMille::default(),
            random_partition_ms_min: thousand(),
            random_partition_ms_max: thirty_thousand(),
        }
    }
}

fn thousand() -> u64 {
    1000
}
fn thirty_thousand() -> u64 {
    30_000
}

fn one() -> u64 {
    1
}
fn fifty() -> u64 {
    50
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct LinkDto {
    from: String,
    to: String,
    loss_per_mille: Option<PerMille>,
    duplicate_per_mille: Option<PerMille>,
    delay_ms_min: Option<u64>,
    delay_ms_max: Option<u64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct PartitionDto {
    between: Vec<String>,
    #[serde(default)]
    one_way: bool,
    start_ms: u64,
    end_ms: u64,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct CrashDto {
    #[serde(default)]
    crash_per_mille: PerMille,
    #[serde(default)]
    restart_ms_min: u64,
    #[serde(default)]
    restart_ms_max: u64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ClientDto {
    key: String,
    key_bucket_ms: u64,
    timeout_ms: u64,
    retry: RetryDto,
}

impl Default for ClientDto {
    fn default() -> Self {
        ClientDto {
            key: "stable".into(),
            key_bucket_ms: 1000,
            timeout_ms: 10_000,
            retry: RetryDto::default(),
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct RetryDto {
    policy: String,
    max_attempts: u32,
    base_ms: u64,
    cap_ms: u64,
    jitter: String,
    window_ms: u64,
    retry_final_errors: bool,
    dead_letter: bool,
}

impl Default for RetryDto {
    fn default() -> Self {
        RetryDto {
            policy: "fixed".into(),
            max_attempts: 5,
            base_ms: 0,
            cap_ms: 60_000,
            jitter: "none".into(),
            window_ms: 0,
            retry_final_errors: false,
            dead_letter: true,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ServiceDto {
    idempotency: String,
    retention_ms: u64,
    fingerprint_check: bool,
    pass_key_to_bank: bool,
    bank_timeout_ms: u64,
    bank_max_attempts: u32,
    lease_ms: u64,
    concurrent: String,
    processing_ms: u64,
    max_keys: u32,
    max_in_flight: u32,
    mode: String,
}

impl Default for ServiceDto {
    fn default() -> Self {
        ServiceDto {
            idempotency: "claim-same-tx".into(),
            retention_ms: 30 * 24 * 3600 * 1000,
            fingerprint_check: true,
            pass_key_to_bank: true,
            bank_timeout_ms: 5_000,
            bank_max_attempts: 3,
            lease_ms: 0,
            concurrent: "reject".into(),
            processing_ms: 0,
            max_keys: 10_000,
            max_in_flight: 0,
            mode: "action".into(),
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct BankDto {
    accepts_key: bool,
    key_retention_ms: u64,
    status_query: bool,
}

impl Default for BankDto {
    fn default() -> Self {
        BankDto {
            accepts_key: true,
            key_retention_ms: 0,
            status_query: false,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct OpDto {
    claim: u32,
    amount_eur: u32,
    #[serde(default)]
    start_ms: u64,
    retry_amount_eur: Option<u32>,
}

fn default_operations() -> Vec<OpDto> {
    vec![OpDto {
        claim: 4711,
        amount_eur: 1200,
        start_ms: 0,
        retry_amount_eur: None,
    }]
}

// ------------------------------------------------------------------ validated

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Violation,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violation => "violation",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    pub verdict: Verdict,
    pub invariant: Option<&'static str>,
    /// Situation ids a run of this scenario must reach for "holds" to count.
    pub situations: Vec<u32>,
}

/// A validated scenario: what to run and what it must give.
pub struct Scenario {
    pub name: String,
    pub file: String,
    pub summary: String,
    /// FNV-1a of the effective text (after overrides): repro files check it.
    pub hash: u64,
    pub expect: Expect,
    pub runs: u64,
    pub system: System,
}

pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

const ACTORS_PAYMENT: &[&str] = &["client", "service", "bank"];

/// Suggests the right spelling for an unknown key, and the unit convention.
fn help_for_unknown(message: &str) -> Option<String> {
    let unknown = message.split('`').nth(1)?;
    let expected: Vec<&str> = message
        .split("expected")
        .nth(1)
        .map(|s| s.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default();
    let stem = |k: &str| {
        k.trim_end_matches("_ms")
            .trim_end_matches("_us")
            .trim_end_matches("_s")
            .trim_end_matches("_per_mille")
            .to_string()
    };
    if let Some(k) = expected.iter().find(|k| stem(k) == stem(unknown)) {
        return Some(format!(
            "write `{k}`: durations and probabilities carry their unit in the key (milliseconds `_ms`, per mille `_per_mille`)"
        ));
    }
    // A key written without its bound (`delay_ms` for `delay_ms_min`/`_max`).
    let extended: Vec<String> = expected
        .iter()
        .filter(|k| k.starts_with(unknown) && k.len() > unknown.len())
        .map(|k| format!("`{k}`"))
        .collect();
    if !extended.is_empty() {
        return Some(format!("did you mean {}?", extended.join(" or ")));
    }
    let best = expected
        .iter()
        .map(|k| (edit_distance(k, unknown), *k))
        .min()
        .filter(|(d, _)| *d <= 3)?;
    Some(format!("did you mean `{}`?", best.1))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// An override `key.path=value` from the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    pub key: String,
    pub value: String,
}

impl Override {
    pub fn parse(s: &str) -> Result<Override, String> {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}` is not KEY=VALUE, e.g. client.retry.max_attempts=3"))?;
        if k.trim().is_empty() {
            return Err(format!("`{s}` has an empty key"));
        }
        Ok(Override {
            key: k.trim().to_string(),
            value: v.trim().to_string(),
        })
    }
}

fn apply_overrides(
    file: &str,
    text: &str,
    overrides: &[Override],
) -> Result<String, ScenarioError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let (line, column, src) = line_col(text, e.span().map_or(0, |s| s.start));
        ScenarioError {
            file: file.into(),
            line,
            column,
            message: e.message().to_string(),
            source_line: Some(src),
            help: None,
        }
    })?;
    for o in overrides {
        let value: toml_edit::Value = match o.value.parse() {
            Ok(v) => v,
            // A bare word is a string: `--set client.key=stable`.
            Err(_) => toml_edit::Value::from(o.value.as_str()),
        };
        let parts: Vec<&str> = o.key.split('.').collect();
        let mut table = doc.as_table_mut();
        for p in &parts[..parts.len() - 1] {
            let entry = table
                .entry(p)
                .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
            table = match entry.as_table_mut() {
                Some(t) => t,
                None => {
                    return Err(ScenarioError {
                        file: format!("--set {}={}", o.key, o.value),
                        line: 1,
                        column: 1,
                        message: format!("`{p}` is not a table, so `{}` cannot be set", o.key),
                        source_line: None,
                        help: Some("use a key path such as client.retry.max_attempts".into()),
                    })
                }
            };
        }
        table.insert(parts[parts.len() - 1], toml_edit::value(value));
    }
    Ok(doc.to_string())
}

impl Scenario {
    /// Loads a scenario from its text; `file` names it in errors.
    pub fn load(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::load_with(file, text, &[])
    }

    pub fn load_with(
        file: &str,
        text: &str,
        overrides: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        let effective = apply_overrides(file, text, overrides)?;
        let shown_file = if overrides.is_empty() {
            file.to_string()
        } else {
            let sets: Vec<String> = overrides
                .iter()
                .map(|o| format!("--set {}={}", o.key, o.value))
                .collect();
            format!("{file} with {}", sets.join(" "))
        };
        if messaging::wants(&effective) {
            return load_model(file, &shown_file, &effective, messaging::build, |d| {
                (d.summary.clone(), d.run.runs)
            });
        }
        load_model(file, &shown_file, &effective, build, |d: &FileDto| {
            (d.summary.clone(), d.run.runs)
        })
    }
}

/// Parses a model's DTO from the effective text and builds it; every error is
/// placed at its file, line and column. `head` gives the summary and budget.
fn load_model<D: serde::de::DeserializeOwned>(
    file: &str,
    shown_file: &str,
    effective: &str,
    build: fn(&D) -> Result<(Expect, System), Invalid>,
    head: impl FnOnce(&D) -> (String, u64),
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
    let dto: D = toml::from_str(effective).map_err(|e| {
        let msg = e.message().trim().to_string();
        let help = if msg.starts_with("unknown field") {
            help_for_unknown(&msg)
        } else if msg.starts_with("missing field") {
            Some("add it; docs/scenario-format.md lists every key with its default".into())
        } else if msg.contains("invalid type") {
            Some("check the value's type against docs/scenario-format.md".into())
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
    let (summary, runs) = head(&dto);
    Ok(Scenario {
        name,
        file: file.to_string(),
        summary: summary.trim().to_string(),
        hash: fnv1a(effective.as_bytes()),
        expect,
        runs,
        system,
    })
}

fn per_mille(p: PerMille, path: Vec<Seg>) -> Result<PerMilleRange, Invalid> {
    if p.0 > 1000 || p.1 > 1000 {
        return Err(invalid(
            path,
            format!("probability {} is over 1000 per mille", p.0.max(p.1)),
            "per mille runs from 0 (never) to 1000 (always); 5% is 50",
        ));
    }
    if p.0 > p.1 {
        return Err(invalid(
            path,
            format!("range [{}, {}] has its minimum above its maximum", p.0, p.1),
            format!("write [{}, {}]", p.1, p.0),
        ));
    }
    Ok(PerMilleRange {
        lo: p.0 as u32,
        hi: p.1 as u32,
    })
}

fn min_max(lo: u64, hi: u64, path: Vec<Seg>, what: &str) -> Result<(), Invalid> {
    if lo > hi {
        return Err(invalid(
            path,
            format!("{what}: minimum {lo} is above maximum {hi}"),
            "swap them, or raise the maximum",
        ));
    }
    Ok(())
}

fn one_of<T: Copy>(value: &str, options: &[(&str, T)], path: Vec<Seg>) -> Result<T, Invalid> {
    options
        .iter()
        .find(|(n, _)| *n == value)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<String> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
            invalid(
                path,
                format!("unknown value \"{value}\""),
                format!("expected one of {}", names.join(", ")),
            )
        })
}

/// `[expect]`, shared by every model.
fn build_expect(e: &ExpectDto) -> Result<Expect, Invalid> {
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

/// `[run]`, `[network]` and `[crashes]`, shared by every model: the engine's
/// world for the actors `names`. `actors_hint` ends the unknown-actor help.
fn build_world(
    run: &RunDto,
    network: &NetworkDto,
    crashes: &BTreeMap<String, CrashDto>,
    names: &[String],
    actors_hint: &str,
) -> Result<World, Invalid> {
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
                    format!("actors are {}{actors_hint}", names.join(", ")),
                )
            })
    };

    // Run limits and phases.
    let r = run;
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

    // Network: a default for every link, then per-link overrides.
    let n = network;
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
    min_max(
        n.delay_ms_min,
        n.delay_ms_max,
        vec![Key("network"), Key("delay_ms_max")],
        "network delay",
    )?;
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
                format!("write between = [\"{}\", \"{}\"]", names[0], names[1]),
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
    min_max(
        n.random_partition_ms_min,
        n.random_partition_ms_max,
        vec![Key("network"), Key("random_partition_ms_max")],
        "random partition duration",
    )?;
    world.random_partition = sim::RandomPartition {
        per_mille: per_mille(
            n.random_partition_per_mille,
            vec![Key("network"), Key("random_partition_per_mille")],
        )?,
        duration_us_min: n.random_partition_ms_min * US_PER_MS,
        duration_us_max: n.random_partition_ms_max * US_PER_MS,
    };
    for (name, c) in crashes {
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

fn build(d: &FileDto) -> Result<(Expect, System), Invalid> {
    use Seg::{Index, Key};
    let expect = build_expect(&d.expect)?;
    if d.model != "payment" {
        return Err(invalid(
            vec![Key("model")],
            format!("unknown model \"{}\"", d.model),
            "expected \"payment\" or \"messaging\"",
        ));
    }
    let names: Vec<String> = ACTORS_PAYMENT.iter().map(|s| s.to_string()).collect();
    let world = build_world(&d.run, &d.network, &d.crashes, &names, "")?;

    // The client and its operations.
    let c = &d.client;
    let cat = |k| vec![Key("client"), Key(k)];
    let key = match c.key.as_str() {
        "timestamp" => KeyPolicy::Timestamp {
            bucket_ms: c.key_bucket_ms.max(1),
        },
        other => one_of(
            other,
            &[
                ("stable", KeyPolicy::Stable),
                ("per-attempt", KeyPolicy::PerAttempt),
                ("none", KeyPolicy::None),
                ("timestamp", KeyPolicy::None),
            ],
            cat("key"),
        )?,
    };
    if c.timeout_ms == 0 {
        return Err(invalid(
            cat("timeout_ms"),
            "timeout_ms must be above 0",
            "the articles' client waits 10 s: timeout_ms = 10000",
        ));
    }
    let rt = &c.retry;
    let rat = |k| vec![Key("client"), Key("retry"), Key(k)];
    let (multiplier, max_attempts) = match one_of(
        &rt.policy,
        &[("none", 0u8), ("fixed", 1), ("exponential", 2)],
        rat("policy"),
    )? {
        0 => (1, 1),
        m => (u64::from(m), rt.max_attempts),
    };
    min_max(
        rt.base_ms,
        rt.cap_ms.max(rt.base_ms),
        rat("cap_ms"),
        "retry backoff",
    )?;
    let jitter = one_of(
        &rt.jitter,
        &[
            ("none", Jitter::None),
            ("full", Jitter::Full),
            ("equal", Jitter::Equal),
            ("decorrelated", Jitter::Decorrelated),
        ],
        rat("jitter"),
    )?;
    if d.operations.is_empty() || d.operations.len() > 16 {
        return Err(invalid(
            vec![Key("operations")],
            format!("{} operations: a scenario has 1 to 16", d.operations.len()),
            "add an [[operations]] table with claim and amount_eur",
        ));
    }
    let mut ops = Vec::new();
    for (i, o) in d.operations.iter().enumerate() {
        if ops.iter().any(|p: &OpSpec| p.op == o.claim) {
            return Err(invalid(
                vec![Key("operations"), Index(i), Key("claim")],
                format!("claim {} appears twice", o.claim),
                "each operation needs its own claim number",
            ));
        }
        ops.push(OpSpec {
            op: o.claim,
            amount_eur: o.amount_eur,
            start_ms: o.start_ms,
            retry_amount_eur: o.retry_amount_eur,
        });
    }
    let client = ClientConfig {
        service: 1,
        timeout_ms: c.timeout_ms,
        key,
        retry: RetryPolicy {
            max_attempts,
            base_ms: rt.base_ms,
            cap_ms: rt.cap_ms,
            multiplier,
            jitter,
            window_ms: rt.window_ms,
            retry_final_errors: rt.retry_final_errors,
            dead_letter: rt.dead_letter,
        },
        ops,
    };

    let s = &d.service;
    let sat = |k| vec![Key("service"), Key(k)];
    let idempotency = one_of(
        &s.idempotency,
        &[
            ("none", Idempotency::None),
            ("check-then-act", Idempotency::CheckThenAct),
            ("claim-same-tx", Idempotency::ClaimSameTx),
            ("split-key-first", Idempotency::SplitKeyFirst),
            ("split-booking-first", Idempotency::SplitBookingFirst),
        ],
        sat("idempotency"),
    )?;
    let concurrent = one_of(
        &s.concurrent,
        &[("reject", Concurrent::Reject), ("wait", Concurrent::Wait)],
        sat("concurrent"),
    )?;
    let mode = one_of(
        &s.mode,
        &[("action", Mode::Action), ("state", Mode::State)],
        sat("mode"),
    )?;
    if s.bank_timeout_ms == 0 || s.bank_max_attempts == 0 {
        return Err(invalid(
            sat(if s.bank_timeout_ms == 0 {
                "bank_timeout_ms"
            } else {
                "bank_max_attempts"
            }),
            "the service's bank timeout and attempts must be above 0",
            "write bank_timeout_ms = 5000 and bank_max_attempts = 3",
        ));
    }
    let service = ServiceConfig {
        bank: 2,
        idempotency,
        retention_ms: s.retention_ms,
        fingerprint_check: s.fingerprint_check,
        pass_key_to_bank: s.pass_key_to_bank,
        bank_timeout_ms: s.bank_timeout_ms,
        bank_max_attempts: s.bank_max_attempts,
        lease_ms: s.lease_ms,
        concurrent,
        processing_ms: s.processing_ms,
        max_keys: s.max_keys,
        max_in_flight: s.max_in_flight,
        mode,
        query_before_retry: d.bank.status_query,
    };
    let bank = BankConfig {
        accepts_key: d.bank.accepts_key,
        key_retention_ms: d.bank.key_retention_ms,
        status_query: d.bank.status_query,
    };
    let system = System {
        world,
        nodes: vec![
            Node::Client(Client { cfg: client }),
            Node::Service(Service { cfg: service }),
            Node::Bank(Bank { cfg: bank }),
        ],
    };
    Ok((expect, system))
}

// ------------------------------------------------------------------ judging

/// A sweep's result held against a scenario's `[expect]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    pub found: Verdict,
    /// The invariant of the lowest failing seed (`model-panic` for a panic).
    pub invariant: Option<&'static str>,
    pub lowest_failing_seed: Option<u64>,
    /// Situations the expectation names that no run reached.
    pub missing: Vec<&'static str>,
    /// Why it does not match; `None` when it does.
    pub mismatch: Option<String>,
}

impl Judgement {
    pub fn matched(&self) -> bool {
        self.mismatch.is_none()
    }
}

impl Expect {
    /// The expectation as people read it: `violation (no-duplicate-effect)`.
    pub fn describe(&self) -> String {
        match self.invariant {
            Some(i) => format!("{} ({i})", self.verdict.as_str()),
            None => self.verdict.as_str().to_string(),
        }
    }

    /// Verdict must match; a violation must break the named invariant; a
    /// "holds" must have reached every situation it names, or it proves little.
    pub fn judge(&self, sum: &sim::Summary) -> Judgement {
        let (found, invariant) = match &sum.first_failure {
            Some(f) => match &f.outcome {
                sim::Outcome::Violation(v) => (Verdict::Violation, Some(v.invariant)),
                _ => (Verdict::Violation, Some("model-panic")),
            },
            None if sum.inconclusive > 0 => (Verdict::Inconclusive, None),
            None => (Verdict::Holds, None),
        };
        let missing: Vec<&'static str> = self
            .situations
            .iter()
            .filter(|&&id| sum.situations & (1 << id) == 0)
            .map(|&id| crate::situation::name(id))
            .collect();
        let found_text = match invariant {
            Some(i) => format!("{} of {i}", found.as_str()),
            None => found.as_str().to_string(),
        };
        let mismatch = if sum.schedules == 0 {
            Some("no seed ran".to_string())
        } else if found != self.verdict {
            Some(format!(
                "expected {}, found {found_text}",
                self.verdict.as_str()
            ))
        } else if self.verdict == Verdict::Violation && invariant != self.invariant {
            Some(format!("expected {}, found {found_text}", self.describe()))
        } else if self.verdict == Verdict::Holds && !missing.is_empty() {
            Some(format!("situations not reached: {}", missing.join(", ")))
        } else {
            None
        };
        Judgement {
            found,
            invariant,
            lowest_failing_seed: sum.first_failure.as_ref().map(|f| f.seed),
            missing,
            mismatch,
        }
    }
}
