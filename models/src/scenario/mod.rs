//! Scenario files: TOML, one design variant each, validated once.
//!
//! TOML → the shared tables (this module) and the model's own tables (the
//! model's loader, found in the registry by `model = "..."`) → the engine's
//! configuration. `--set key.path=value` overrides edit the TOML tree before
//! validation, so an override gets exactly the checks of the file, and a
//! mistake in one is blamed on the `--set` argument, not on a line of the file.

mod common;
mod error;

pub use error::ScenarioError;

use crate::core::input::{did_you_mean, invalid, Invalid, LoadError};
use crate::core::BuildInput;
use crate::registry::{self, System};
use error::{help_for_unknown, line_col, plain, span_of};
use sim::SituationId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
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

/// How `check` and `verify` look for a failure within a scenario's `runs`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// Seeds 0..runs, each drawing its own fault mix (swarm testing).
    #[default]
    Seeds,
    /// Coverage-guided mutation of records ([`sim::coverage`]), `runs`
    /// schedules at most: for bugs that need several rare faults at once.
    Coverage,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Seeds => "seeds",
            Strategy::Coverage => "coverage",
        }
    }
}

/// One protection of a holding scenario: the overrides that remove it
/// (several when layers back each other up), and the invariant their
/// removal must break, if the scenario names one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protection {
    pub overrides: Vec<Override>,
    pub breaks: Option<&'static str>,
}

impl Protection {
    /// As people read it: `client.key=none + bank.accepts_key=false`.
    pub fn describe(&self) -> String {
        self.overrides
            .iter()
            .map(|o| format!("{}={}", o.key, o.value))
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    pub verdict: Verdict,
    pub invariant: Option<&'static str>,
    /// Situations a run of this scenario must reach for "holds" to count.
    pub situations: Vec<SituationId>,
    /// Each must turn "holds" into a violation when removed.
    pub protections: Vec<Protection>,
}

/// A validated scenario: what to run and what it must give.
pub struct Scenario {
    pub name: String,
    /// The file as shown in messages (and the overrides, if any).
    pub file: String,
    /// The text as written, before overrides: ablations reload it.
    pub text: String,
    pub overrides: Vec<Override>,
    pub summary: String,
    /// FNV-1a of the effective text (after overrides): repro files check it.
    pub hash: u64,
    pub expect: Expect,
    pub runs: u64,
    pub strategy: Strategy,
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
        let key = k.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(format!(
                "`{s}` has an empty key or key part; write a path such as client.retry.max_attempts"
            ));
        }
        if v.trim().is_empty() {
            return Err(format!("`{s}` has no value; write {key}=VALUE"));
        }
        Ok(Override {
            key: key.to_string(),
            value: v.trim().to_string(),
        })
    }

    fn shown(&self) -> String {
        format!("--set {}={}", self.key, self.value)
    }
}

fn set_error(o: &Override, message: String, help: Option<String>) -> ScenarioError {
    ScenarioError {
        file: o.shown(),
        line: 1,
        column: 1,
        message,
        source_line: None,
        help,
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
            message: plain(e.message()),
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
                    return Err(set_error(
                        o,
                        format!("`{p}` is not a table, so `{}` cannot be set", o.key),
                        Some("use a key path such as client.retry.max_attempts".into()),
                    ))
                }
            };
        }
        table.insert(parts[parts.len() - 1], toml_edit::value(value));
    }
    Ok(doc.to_string())
}

/// Where a mistake is: in the file, or in the value an override put there.
struct Locator<'a> {
    file: &'a str,
    effective: &'a str,
    overrides: &'a [Override],
}

impl Locator<'_> {
    fn at(&self, offset: usize, message: String, help: Option<String>) -> ScenarioError {
        for o in self.overrides {
            let path: Vec<crate::core::input::Seg> = o
                .key
                .split('.')
                .map(|k| crate::core::input::Seg::Name(k.to_string()))
                .collect();
            if let Some(span) = span_of(self.effective, &path) {
                if span.contains(&offset) || span.start == offset {
                    return set_error(o, message, help);
                }
            }
        }
        let (line, column, src) = line_col(self.effective, offset);
        ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            message,
            source_line: Some(src),
            help,
        }
    }

    fn toml(&self, e: &toml::de::Error) -> ScenarioError {
        let msg = plain(e.message());
        let help = if msg.starts_with("unknown field") {
            help_for_unknown(&msg)
        } else if msg.starts_with("missing field") {
            Some("add it; docs/scenario-format.md lists every key with its default".into())
        } else if msg.contains("wrong type") {
            Some("check the value's type against docs/scenario-format.md".into())
        } else {
            None
        };
        self.at(e.span().map_or(0, |s| s.start), msg, help)
    }

    fn invalid(&self, i: Invalid) -> ScenarioError {
        let offset = span_of(self.effective, &i.path).map_or(0, |s| s.start);
        self.at(offset, i.message, i.help)
    }

    fn load(&self, e: LoadError) -> ScenarioError {
        match e {
            LoadError::Toml(e) => self.toml(&e),
            LoadError::Invalid(i) => self.invalid(i),
        }
    }
}

/// Top-level keys neither shared nor the model's.
fn check_top_level(
    effective: &str,
    model_tables: &[&'static str],
    model: &str,
) -> Result<(), Invalid> {
    let Ok(doc) = effective.parse::<toml::Table>() else {
        return Ok(()); // the parse error is reported by the typed parse
    };
    let known: Vec<&str> = common::KEYS.iter().chain(model_tables).copied().collect();
    for key in doc.keys() {
        if known.contains(&key.as_str()) {
            continue;
        }
        let help = match did_you_mean(key, known.iter().copied()) {
            Some(b) => format!("did you mean `{b}`?"),
            None => format!(
                "a {model} scenario has the keys {}",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        return Err(invalid(
            vec![crate::core::input::Seg::Name(key.clone())],
            format!("unknown key `{key}` for the {model} model"),
            help,
        ));
    }
    Ok(())
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
        let loc = Locator {
            file,
            effective: &effective,
            overrides,
        };
        let dto: common::CommonDto = toml::from_str(&effective).map_err(|e| loc.toml(&e))?;
        let model = registry::model(&dto.model).ok_or_else(|| {
            let names = registry::model_names();
            let help = match did_you_mean(&dto.model, names.iter().copied()) {
                Some(b) => format!("did you mean \"{b}\"? The models are {}", names.join(", ")),
                None => format!("the models are {}", names.join(", ")),
            };
            loc.invalid(invalid(
                vec![crate::core::input::Seg::Key("model")],
                format!("unknown model \"{}\"", dto.model),
                help,
            ))
        })?;
        check_top_level(&effective, model.tables(), model.name()).map_err(|i| loc.invalid(i))?;
        let situations: Vec<_> = model.situations().iter().collect();
        let expect = common::expect(&dto.expect, &situations).map_err(|i| loc.invalid(i))?;
        let (fault_phase_us, limits) = common::limits(&dto.run).map_err(|i| loc.invalid(i))?;
        let strategy = common::strategy(&dto.run).map_err(|i| loc.invalid(i))?;
        let built = model
            .build(&BuildInput {
                text: &effective,
                fault_phase_us,
                max_time_us: limits.max_time_us,
            })
            .map_err(|e| loc.load(e))?;
        let (names, nodes): (Vec<String>, Vec<_>) = built.actors.into_iter().unzip();
        let world = common::world(&dto, &names, built.actors_hint, fault_phase_us, limits)
            .map_err(|i| loc.invalid(i))?;
        let name = std::path::Path::new(file)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(file)
            .to_string();
        let shown = if overrides.is_empty() {
            file.to_string()
        } else {
            let sets: Vec<String> = overrides.iter().map(Override::shown).collect();
            format!("{file} with {}", sets.join(" "))
        };
        Ok(Scenario {
            name,
            file: shown,
            text: text.to_string(),
            overrides: overrides.to_vec(),
            summary: dto.summary.trim().to_string(),
            hash: fnv1a(effective.as_bytes()),
            expect,
            runs: dto.run.runs,
            strategy,
            system: System {
                world,
                nodes,
                model,
            },
        })
    }

    /// The scenario with `protection` removed: its overrides applied on top
    /// of this scenario's own.
    pub fn ablated(&self, file: &str, protection: &Protection) -> Result<Scenario, ScenarioError> {
        let mut overrides = self.overrides.clone();
        overrides.extend(protection.overrides.iter().cloned());
        Scenario::load_with(file, &self.text, &overrides)
    }

    /// The scenario's own search, as `check` and `verify` run it: every seed
    /// of `seeds` on `jobs` threads, or a coverage-guided search of at most
    /// `seeds.len()` schedules seeded by `seeds.start`, which ends at its
    /// first failure (its `seed` is then the schedule's index in the search).
    pub fn search(
        &self,
        seeds: sim::SeedRange,
        jobs: usize,
        stop: &std::sync::atomic::AtomicBool,
    ) -> sim::Summary {
        match self.strategy {
            Strategy::Seeds => sim::explore(&self.system, seeds, jobs, stop, &|_| {}),
            Strategy::Coverage => self.coverage(seeds, stop).summary,
        }
    }

    /// Like [`search`](Scenario::search), but seeds stop at the lowest failing one.
    pub fn search_failure(
        &self,
        seeds: sim::SeedRange,
        jobs: usize,
        stop: &std::sync::atomic::AtomicBool,
    ) -> sim::Summary {
        match self.strategy {
            Strategy::Seeds => sim::find_failure(&self.system, seeds, jobs, stop),
            Strategy::Coverage => self.coverage(seeds, stop).summary,
        }
    }

    /// The coverage-guided search of `seeds.len()` schedules seeded by `seeds.start`.
    pub fn coverage(
        &self,
        seeds: sim::SeedRange,
        stop: &std::sync::atomic::AtomicBool,
    ) -> sim::CoverageReport {
        let cfg = sim::CoverageConfig::new(seeds.start, seeds.len());
        sim::coverage_search(&self.system, &cfg, stop)
    }
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

    /// The verdict and invariant of a sweep.
    pub fn found_in(sum: &sim::Summary) -> (Verdict, Option<&'static str>) {
        match &sum.first_failure {
            Some(f) => match &f.outcome {
                sim::Outcome::Violation(v) => (Verdict::Violation, Some(v.invariant)),
                _ => (Verdict::Violation, Some("model-panic")),
            },
            None if sum.tally.inconclusive > 0 => (Verdict::Inconclusive, None),
            None => (Verdict::Holds, None),
        }
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
        let (found, invariant) = Judgement::found_in(sum);
        let missing: Vec<&'static str> = self
            .situations
            .iter()
            .filter(|&&id| !sum.tally.situations.contains(id))
            .map(|&id| registry::situation_name(id))
            .collect();
        let found_text = match invariant {
            Some(i) => format!("{} of {i}", found.as_str()),
            None => found.as_str().to_string(),
        };
        let mismatch = if sum.tally.schedules == 0 {
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

/// What removing one protection gave on the same seeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ablation {
    pub protection: Protection,
    pub found: Verdict,
    pub invariant: Option<&'static str>,
    pub lowest_failing_seed: Option<u64>,
    /// Why it does not count as load-bearing; `None` when it does.
    pub mismatch: Option<String>,
}

impl Protection {
    /// Judges the sweep of the scenario with this protection removed: it must
    /// be a violation, of the named invariant if there is one.
    pub fn judge(&self, sum: &sim::Summary) -> Ablation {
        let (found, invariant) = Judgement::found_in(sum);
        let mismatch = match (found, invariant, self.breaks) {
            (Verdict::Violation, Some(i), Some(want)) if i != want => Some(format!(
                "removing it breaks {i}, not {want}"
            )),
            (Verdict::Violation, _, _) => None,
            (other, _, _) => Some(format!(
                "removing it still gives {}: the protection is not load-bearing, or the faults never reach the danger it guards against",
                other.as_str()
            )),
        };
        Ablation {
            protection: self.clone(),
            found,
            invariant,
            lowest_failing_seed: sum.first_failure.as_ref().map(|f| f.seed),
            mismatch,
        }
    }
}
