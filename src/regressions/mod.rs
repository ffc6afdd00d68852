//! The regression database: `.idemsim/regressions/`, in the manner of
//! proptest-regressions and Hypothesis's example database.
//!
//! Every unexpected failure `check` and `verify` find in a scenario file (a
//! violation its `[expect]` does not name) is written there as a repro file,
//! named by the scenario and a hash of its decisions, so finding the same
//! failure again writes nothing new. The next `check` or `verify` of that
//! scenario replays its regressions before the seed sweep and says, for each:
//!
//! - **still fails**: the recorded run breaks an invariant again;
//! - **fixed**: it now holds;
//! - **stale**: it can no longer mean the same run: another idemsim version
//!   wrote it, the scenario's actors changed (its decision streams are gone),
//!   its overrides no longer apply, or the scenario file is gone.
//!
//! A scenario whose text changed is still replayed: fixing a design usually
//! means changing its scenario, and recorded decisions mean the same faults
//! under any design of the same actors (what `idemsim diff` rests on). The
//! report marks such a replay "scenario changed since".
//!
//! Nothing is ever deleted: a fixed regression keeps guarding against the
//! failure's return, and a stale one is reported on every run until a person
//! deletes it. Built-in scenarios are never recorded (they are idemsim's, not
//! the user's). `docs/ci.md` describes the folder and when it is on.

pub mod cli;

use crate::repro::{hash_hex, Repro};
use crate::scenarios::{self, Entry, Origin, UsageError};
use models::scenario::Verdict;
use models::Scenario;
use sim::{NoTrace, Outcome, Record, Sim};
use std::path::{Path, PathBuf};

/// The folder used when none is given, relative to the working directory.
pub const DEFAULT_DIR: &str = ".idemsim/regressions";

/// The environment variable naming the folder (as `--regressions` does).
pub const ENV: &str = "IDEMSIM_REGRESSIONS";

/// The command-line flags of `check` and `verify`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Flags {
    /// Folder of the regression database: failures are recorded there and
    /// replayed first [default: IDEMSIM_REGRESSIONS, else .idemsim/regressions;
    /// off by default inside idemsim's own source tree].
    #[arg(long = "regressions", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Neither replay nor record regressions.
    #[arg(long = "no-regressions", conflicts_with = "dir")]
    pub off: bool,
}

impl Flags {
    /// The database these flags ask for, if any: `--regressions DIR`, else
    /// `IDEMSIM_REGRESSIONS`, else `.idemsim/regressions` under the working
    /// directory unless that is inside idemsim's own source tree (outside its
    /// `target/`), so idemsim's tests and developers do not litter the checkout.
    pub fn db(&self) -> Option<Db> {
        if self.off {
            return None;
        }
        if let Some(dir) = &self.dir {
            return Some(Db::new(dir.clone()));
        }
        if let Some(dir) = std::env::var_os(ENV).filter(|d| !d.is_empty()) {
            return Some(Db::new(PathBuf::from(dir)));
        }
        let cwd = std::env::current_dir().ok()?;
        if inside_own_checkout(&cwd) {
            return None;
        }
        Some(Db::new(PathBuf::from(DEFAULT_DIR)))
    }
}

/// Whether `dir` lies in the source tree this idemsim was built from, outside
/// its `target/` folder (where tests make scratch folders of their own).
pub fn inside_own_checkout(dir: &Path) -> bool {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (Ok(dir), Ok(root)) = (dir.canonicalize(), manifest.canonicalize()) else {
        return false;
    };
    dir.starts_with(&root) && !dir.starts_with(root.join("target"))
}

/// Whether `outcome`, a run of `s`, is a failure `s` does not expect: a panic,
/// or a violation when the scenario expects another verdict or invariant.
/// Only these are regressions; a known-broken design's violation is not.
pub fn unexpected(s: &Scenario, outcome: &Outcome) -> bool {
    match outcome {
        Outcome::Panicked(_) => true,
        Outcome::Violation(v) => {
            // Without an [expect], no violation is known: each is kept.
            s.expected_verdict() != Some(Verdict::Violation)
                || s.expected_invariant().is_some_and(|i| i != v.invariant)
        }
        Outcome::Holds | Outcome::Inconclusive(_) => false,
    }
}

/// What replaying one regression found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// It breaks an invariant again; `expected` when the scenario's
    /// `[expect]` now names that failure.
    StillFails {
        /// The invariant broken, or `None` for a panic.
        invariant: Option<String>,
        /// The outcome in one sentence.
        sentence: String,
        /// The scenario now expects this violation.
        expected: bool,
    },
    /// It holds now.
    Fixed,
    /// It hit a limit (steps, time, queue): neither failing nor fixed.
    Inconclusive {
        /// The limit's name.
        limit: &'static str,
    },
    /// It cannot be replayed as the run it was; why, in words.
    Stale {
        /// Why, and what to do.
        reason: String,
    },
}

impl Status {
    /// `still-fails`, `fixed`, `inconclusive` or `stale`: the JSON status.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::StillFails { .. } => "still-fails",
            Status::Fixed => "fixed",
            Status::Inconclusive { .. } => "inconclusive",
            Status::Stale { .. } => "stale",
        }
    }

    /// A failure the scenario does not expect: the run must not pass.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Status::StillFails {
                expected: false,
                ..
            }
        )
    }
}

/// One regression, replayed.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The repro file, as shown.
    pub file: String,
    /// The scenario it belongs to (its name).
    pub scenario: String,
    /// What the replay found.
    pub status: Status,
    /// The scenario's text changed since the regression was recorded.
    pub scenario_changed: bool,
}

impl Replayed {
    /// One line for people.
    pub fn text(&self) -> String {
        let what = match &self.status {
            Status::StillFails {
                sentence, expected, ..
            } => format!(
                "still fails: {sentence}{}",
                if *expected {
                    " (as the scenario now expects)"
                } else {
                    ""
                }
            ),
            Status::Fixed => "fixed: it holds now".to_string(),
            Status::Inconclusive { limit } => {
                format!("inconclusive: the replay hit its {limit} limit")
            }
            Status::Stale { reason } => format!("stale: {reason}"),
        };
        let changed = if self.scenario_changed {
            " (scenario changed since it was recorded)"
        } else {
            ""
        };
        format!("regression {}: {what}{changed}", self.file)
    }

    /// The JSON `regression` record's data (docs/json-output.md).
    pub fn json(&self) -> serde_json::Value {
        let (invariant, detail) = match &self.status {
            Status::StillFails {
                invariant,
                sentence,
                ..
            } => (invariant.clone(), Some(sentence.clone())),
            Status::Inconclusive { limit } => (None, Some(format!("hit {limit}"))),
            Status::Stale { reason } => (None, Some(reason.clone())),
            Status::Fixed => (None, None),
        };
        serde_json::json!({
            "file": self.file,
            "scenario": self.scenario,
            "status": self.status.as_str(),
            "invariant": invariant,
            "detail": detail,
            "scenario_changed": self.scenario_changed,
        })
    }
}

/// A regression folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Db {
    /// The folder, as given.
    pub dir: PathBuf,
}

/// A repro file in the folder, read or not.
pub struct Stored {
    /// Its path.
    pub path: PathBuf,
    /// Its content, or why it could not be read.
    pub repro: Result<Repro, String>,
}

impl Db {
    /// The database in `dir` (created when the first regression is written).
    pub fn new(dir: PathBuf) -> Db {
        Db { dir }
    }

    /// Every `.json` file of the folder, sorted by name; none if the folder
    /// does not exist yet.
    pub fn stored(&self) -> Vec<Stored> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let repro = Repro::read(&path).map_err(|e| e.0.trim_end().to_string());
                Stored { path, repro }
            })
            .collect()
    }

    /// The stored regressions of scenario `entry` (a file; built-ins have none).
    ///
    /// Only those recorded under the same `--set` overrides: a failure of a
    /// variant the user explored (`check FILE --set client.key=none`, often
    /// the very ablation `verify` expects to fail) says nothing about the
    /// file as written, and must not make its `verify` a mismatch. One whose
    /// overrides no longer parse goes with the file as written, where its
    /// replay reports it stale.
    pub fn of<'a>(
        &self,
        stored: &'a [Stored],
        entry: &Entry,
        sets: &[models::scenario::Override],
    ) -> Vec<&'a Stored> {
        let Origin::File(path) = &entry.origin else {
            return Vec::new();
        };
        stored
            .iter()
            .filter(|st| {
                st.repro.as_ref().is_ok_and(|r| {
                    !r.file.is_empty()
                        && same_file(Path::new(&r.file), path)
                        && scenarios::parse_overrides(&r.sets)
                            .map_or(sets.is_empty(), |o| o == sets)
                })
            })
            .collect()
    }

    /// Replays one regression of `entry`.
    pub fn replay(&self, stored: &Stored, entry: &Entry) -> Replayed {
        let file = scenarios::display_path(&stored.path);
        let stale = |scenario: String, reason: String| Replayed {
            file: file.clone(),
            scenario,
            status: Status::Stale { reason },
            scenario_changed: false,
        };
        let r = match &stored.repro {
            Ok(r) => r,
            Err(e) => return stale(entry.name.clone(), format!("not a repro file: {e}")),
        };
        if !r.same_version() {
            return stale(
                r.scenario.clone(),
                format!(
                    "written by idemsim {}, and this is idemsim {}: its decisions may mean another run here; delete it (a new failure is recorded again)",
                    r.idemsim,
                    crate::repro::VERSION
                ),
            );
        }
        let loaded =
            scenarios::parse_overrides(&r.sets).and_then(|o| scenarios::load_entry(entry, &o));
        let s = match loaded {
            Ok(s) => s,
            Err(e) => {
                let first = e.0.lines().next().unwrap_or("").to_string();
                return stale(
                    r.scenario.clone(),
                    format!("the scenario no longer loads with its overrides ({first}); delete it"),
                );
            }
        };
        let record = match r.record(&s.system.world) {
            Ok(record) => record,
            Err(e) => {
                return stale(
                    r.scenario.clone(),
                    format!("the scenario's actors changed: {e}; delete it"),
                )
            }
        };
        let report = replay_record(&s, &record);
        let status = match &report {
            Outcome::Holds => Status::Fixed,
            Outcome::Inconclusive(l) => Status::Inconclusive { limit: l.as_str() },
            failed => Status::StillFails {
                invariant: match failed {
                    Outcome::Violation(v) => Some(v.invariant.to_string()),
                    _ => None,
                },
                sentence: crate::render::outcome_sentence(failed),
                expected: !unexpected(&s, failed),
            },
        };
        Replayed {
            file,
            scenario: s.name.clone(),
            status,
            scenario_changed: hash_hex(s.hash) != r.scenario_hash,
        }
    }

    /// The stored regressions whose scenario file is gone: stale, reported
    /// by `verify` so that none is silently dropped.
    pub fn orphans(&self, stored: &[Stored]) -> Vec<Replayed> {
        stored
            .iter()
            .filter_map(|st| {
                let file = scenarios::display_path(&st.path);
                match &st.repro {
                    Err(e) => Some(Replayed {
                        file,
                        scenario: String::new(),
                        status: Status::Stale {
                            reason: format!("not a repro file: {e}"),
                        },
                        scenario_changed: false,
                    }),
                    Ok(r) if r.file.is_empty() || !Path::new(&r.file).is_file() => Some(Replayed {
                        file,
                        scenario: r.scenario.clone(),
                        status: Status::Stale {
                            reason: if r.file.is_empty() {
                                "it names no scenario file (built-in scenarios have no regressions); delete it".to_string()
                            } else {
                                format!("its scenario file {} is gone; delete it", r.file)
                            },
                        },
                        scenario_changed: false,
                    }),
                    Ok(_) => None,
                }
            })
            .collect()
    }

    /// Records `repro` (an unexpected failure of a scenario file) unless the
    /// same decisions of the same scenario are already there, written by this
    /// idemsim (a stale file of that name is replaced). Returns the file and
    /// whether it was written.
    pub fn record(&self, repro: &Repro) -> Result<(PathBuf, bool), UsageError> {
        let path = self.dir.join(file_name(repro));
        if Repro::read(&path).is_ok_and(|r| r.same_version()) {
            return Ok((path, false));
        }
        let fail = |e: std::io::Error| {
            UsageError(format!(
                "error: cannot write the regression {}: {e}\nhelp: give a writable folder with --regressions DIR, or turn the database off with --no-regressions\n",
                path.display()
            ))
        };
        std::fs::create_dir_all(&self.dir).map_err(fail)?;
        // Written whole or not at all: shards and parallel jobs may record at once.
        let tmp = self
            .dir
            .join(format!(".{}.tmp-{}", file_name(repro), std::process::id()));
        repro.write(&tmp).map_err(fail)?;
        std::fs::rename(&tmp, &path).map_err(fail)?;
        Ok((path, true))
    }
}

/// Replays `record` on `s` without a trace.
fn replay_record(s: &Scenario, record: &Record) -> Outcome {
    let mut sim = Sim::new(&s.system);
    sim::shrink::replay(&mut sim, &s.system, record, false, &mut NoTrace).outcome
}

/// Two paths name the same file (compared as written when one is missing).
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// `<scenario>-<16 hex digits>.json`: the hash covers the scenario's name,
/// its overrides and the decisions, so the same failure gets the same name.
pub fn file_name(repro: &Repro) -> String {
    let mut text = format!("{}\n{}\n", repro.scenario, repro.sets.join("\n"));
    for (stream, values) in &repro.choices {
        text.push_str(stream);
        for v in values {
            text.push(' ');
            text.push_str(&v.to_string());
        }
        text.push('\n');
    }
    let safe: String = repro
        .scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "{safe}-{}.json",
        hash_hex(models::scenario::fnv1a(text.as_bytes()))
    )
}
