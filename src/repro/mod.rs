//! Repro files: one run's recorded decisions on disk, keyed by stream names
//! (`swarm`, `link:service->client`, `crash:service`, `actor:client`), tied
//! to the configuration and the idemsim version that made them.
//!
//! A record is the decisions themselves (lost = 1, a delay's offset), never
//! random words, so a repro replays the same run on any machine; written by
//! another version, the same numbers may mean another run, which is why the
//! version is kept. These functions work for any model: the CLI's repro files
//! of scenarios (written by `idemsim shrink` and `check --repro-out`) and a library user's
//! own are the same format.
//!
//! ```
//! use idemsim::repro::Repro;
//! let s = idemsim::catalog::load("payment-stable-key", &[]).unwrap();
//! let record = idemsim::render::run::record_of_seed(&s.system, 7).unwrap();
//! let repro = Repro::new("payment-stable-key", s.hash, &s.system.world, Some(7), &record, &sim::Outcome::Holds);
//! let back = Repro::from_json(&repro.to_json()).unwrap();
//! assert_eq!(back.record(&s.system.world).unwrap(), record);
//! ```

mod file;

pub use file::{
    inside, load_repro, note_explicit, record_lines, replay_command, repro_of, repro_text,
    write_repro, LoadedRepro,
};

use crate::catalog::UsageError;
use sim::shrink::{stream_by_name, stream_name};
use sim::{Outcome, Record, StreamLayout, World};
use std::collections::BTreeMap;
use std::path::Path;

/// A recorded run on disk: small, and tied to the exact configuration it came from.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Repro {
    /// The idemsim version that wrote it.
    pub idemsim: String,
    /// The scenario format its `scenario_hash` and `sets` were read in
    /// (`format = N` of scenario files); a file written before the key
    /// existed is of the current one.
    #[serde(default = "current_format")]
    pub format: u64,
    /// The scenario's name (or a library user's name for their model).
    pub scenario: String,
    /// The scenario file it was made from, as shown in messages.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    /// FNV-1a of the scenario's effective text (after `--set`), in hex; for
    /// a library user's model, whatever hash they tie the run to.
    pub scenario_hash: String,
    /// The scenario's settings the run was made under (`crate::meaning`):
    /// the repro applies while they hold, whatever else changed in the text.
    /// Empty in files written before idemsim recorded them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, serde_json::Value>,
    /// The `--set` overrides the run was made under.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<String>,
    /// The seed the run came from, if it came from one (shrunk or not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The invariant the run violates, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariant: Option<String>,
    /// The operation the violation concerns, as the ledger numbers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<u64>,
    /// Decision values per stream, by stream name; streams not listed are all zeros.
    pub choices: BTreeMap<String, Vec<u64>>,
}

/// A hash as repro files and JSON output write it: 16 hex digits.
pub fn hash_hex(h: u64) -> String {
    format!("{h:016x}")
}

fn current_format() -> u64 {
    models::scenario::format::FORMAT
}

/// This idemsim's version, as repro files record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The non-empty streams of `record`, by the names of `world`'s streams.
pub(crate) fn choices_of(world: &World, record: &Record) -> BTreeMap<String, Vec<u64>> {
    record
        .streams
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(i, v)| (stream_name(world, i as sim::StreamId), v.clone()))
        .collect()
}

impl Repro {
    /// The repro of `record`, a run of a model whose world is `world`; `name`
    /// and `hash` say which configuration it belongs to. The scenario file
    /// and overrides are left empty (the CLI fills them in).
    pub fn new(
        name: &str,
        hash: u64,
        world: &World,
        seed: Option<u64>,
        record: &Record,
        outcome: &Outcome,
    ) -> Repro {
        let (invariant, operation) = match outcome {
            Outcome::Violation(v) => (Some(v.invariant.to_string()), Some(v.operation)),
            _ => (None, None),
        };
        Repro {
            idemsim: VERSION.to_string(),
            format: current_format(),
            scenario: name.to_string(),
            file: String::new(),
            scenario_hash: hash_hex(hash),
            settings: BTreeMap::new(),
            sets: Vec::new(),
            seed,
            invariant,
            operation,
            choices: choices_of(world, record),
        }
    }

    /// The file's text: pretty JSON with each list of decisions on one line.
    pub fn to_json(&self) -> String {
        one_line_arrays(&serde_json::to_string_pretty(self).expect("a repro serializes")) + "\n"
    }

    /// Parses a repro file's text.
    pub fn from_json(text: &str) -> Result<Repro, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Writes the file.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_json())
    }

    /// Reads a repro file; the error names the file, the line and column, and a fix.
    pub fn read(path: &Path) -> Result<Repro, UsageError> {
        let shown = path.display();
        let text = std::fs::read_to_string(path)
            .map_err(|e| {
                UsageError(format!(
                    "error: cannot read repro file {shown}: {e}\nhelp: give a file written by `idemsim check --repro-out FILE` or `idemsim shrink --out FILE`\n"
                ))
            })?;
        Repro::from_json(&text).map_err(|e| {
            UsageError(format!(
                "error: {shown}:{}:{}: not a repro file: {e}\nhelp: write one with `idemsim shrink SCENARIO --seed S --out {shown}`\n",
                e.line(),
                e.column()
            ))
        })
    }

    /// Whether this idemsim wrote it: decisions of another version may mean another run.
    pub fn same_version(&self) -> bool {
        self.idemsim == VERSION
    }

    /// The record to replay on `world`; an error names a stream the world
    /// does not have (its actors changed since).
    pub fn record(&self, world: &World) -> Result<Record, String> {
        let mut record = Record::with_streams(
            StreamLayout {
                actors: world.actor_count(),
            }
            .count(),
        );
        for (name, values) in &self.choices {
            let id = stream_by_name(world, name).ok_or_else(|| {
                format!(
                    "no decision stream `{name}` in scenario `{}`",
                    self.scenario
                )
            })?;
            record.streams[id as usize] = values.clone();
        }
        Ok(record)
    }
}

/// Puts each list of decision values on one line, so a repro stays short to read.
fn one_line_arrays(pretty: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in pretty.lines() {
        let t = line.trim();
        match &mut open {
            Some((head, items)) if t.starts_with(']') => {
                out.push(format!("{head}{}{t}", items.join(", ")));
                open = None;
            }
            Some((_, items)) if t.trim_end_matches(',').parse::<u64>().is_ok() => {
                items.push(t.trim_end_matches(',').to_string());
            }
            Some((head, items)) => {
                // Not a list of numbers after all: keep it as it was.
                out.push(head.clone());
                out.append(items);
                out.push(line.to_string());
                open = None;
            }
            None if t.ends_with('[') => open = Some((line.to_string(), Vec::new())),
            None => out.push(line.to_string()),
        }
    }
    out.join("\n")
}
