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

mod file;
pub mod sweep;

pub use file::file_name;
pub(crate) use file::is_regression_name;
use file::{position_in, read_regression, same_file, FIX};

use crate::catalog::{self, Entry, Origin, UsageError};
use crate::repro::{hash_hex, Repro};
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
    /// A folder that is a file, a device or under one is refused here, before
    /// anything runs ([`Db::check_folder`]).
    pub fn db(&self) -> Result<Option<Db>, UsageError> {
        if self.off {
            return Ok(None);
        }
        let (db, from) = if let Some(dir) = &self.dir {
            (Db::new(dir.clone()), "--regressions")
        } else if let Some(dir) = std::env::var_os(ENV).filter(|d| !d.is_empty()) {
            (Db::new(PathBuf::from(dir)), ENV)
        } else {
            let Ok(cwd) = std::env::current_dir() else {
                return Ok(None);
            };
            if inside_own_checkout(&cwd) {
                return Ok(None);
            }
            (
                Db::new(PathBuf::from(DEFAULT_DIR)),
                "the default regression folder",
            )
        };
        db.check_folder(from)?;
        Ok(Some(db))
    }
}

/// Whether `dir` lies in the source tree this idemsim was built from, outside
/// its `target/` folder (where tests make scratch folders of their own).
pub(crate) fn inside_own_checkout(dir: &Path) -> bool {
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

    /// Refuses a folder that cannot be one: a file or a device, or a path
    /// under one (`from` says who named it: `--regressions`, ...). A folder
    /// that does not exist yet is fine; it is created on the first failure.
    pub fn check_folder(&self, from: &str) -> Result<(), UsageError> {
        let shown = self.dir.display();
        let refuse = |what: String| {
            Err(UsageError(format!(
                "error: {from} {shown} is not a folder: {what}\nhelp: give a folder for the regression database (it is created on the first failure), or turn it off with --no-regressions\n"
            )))
        };
        if self.dir.as_os_str().is_empty() {
            return refuse("the path is empty".into());
        }
        // The folder, or the nearest of its ancestors that exists.
        let mut at: &Path = &self.dir;
        let mut first_error: Option<std::io::Error> = None;
        loop {
            match std::fs::metadata(at) {
                Ok(m) if m.is_dir() => break,
                Ok(m) if m.is_file() => return refuse(format!("{} is a file", at.display())),
                Ok(_) => {
                    return refuse(format!("{} is a device, a pipe or a socket", at.display()))
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                    match at.parent().filter(|p| !p.as_os_str().is_empty()) {
                        Some(p) => at = p,
                        None => break,
                    }
                }
            }
        }
        match first_error {
            Some(e) if e.kind() != std::io::ErrorKind::NotFound => {
                refuse(format!("{}: {e}", self.dir.display()))
            }
            _ => Ok(()),
        }
    }

    /// Every `.json` file of the folder, sorted by name; none if the folder
    /// does not exist yet. A file named as the database names its own
    /// (`NAME-HASH.json`) that cannot be read or does not validate is an
    /// error (`read_regression`), never skipped; another `.json` file is
    /// listed with the reason it is no repro file (`verify` reports it stale).
    pub fn stored(&self) -> Result<Vec<Stored>, UsageError> {
        let rd = match std::fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(UsageError(format!(
                    "error: cannot read the regression folder {}: {e}\nhelp: give a folder you can read with --regressions DIR, or turn the database off with --no-regressions\n",
                    self.dir.display()
                )))
            }
        };
        let mut paths: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let repro = if is_regression_name(&path) {
                    Ok(read_regression(&path)?)
                } else {
                    Repro::read(&path).map_err(|e| e.0.trim_end().to_string())
                };
                Ok(Stored { path, repro })
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
                        && catalog::parse_overrides(&r.sets).map_or(sets.is_empty(), |o| o == sets)
                })
            })
            .collect()
    }

    /// Replays one regression of `entry`. A regression whose scenario did not
    /// change since it was recorded, holding a decision its run cannot take
    /// (a loss decision of 7), was not written by idemsim: an error.
    pub fn replay(&self, stored: &Stored, entry: &Entry) -> Result<Replayed, UsageError> {
        let file = catalog::display_path(&stored.path);
        let stale = |scenario: String, reason: String| Replayed {
            file: file.clone(),
            scenario,
            status: Status::Stale { reason },
            scenario_changed: false,
        };
        let r = match &stored.repro {
            Ok(r) => r,
            Err(e) => return Ok(stale(entry.name.clone(), format!("not a repro file: {e}"))),
        };
        if !r.same_version() {
            return Ok(stale(
                r.scenario.clone(),
                format!(
                    "written by idemsim {}, and this is idemsim {}: its decisions may mean another run here; delete it (a new failure is recorded again)",
                    r.idemsim,
                    crate::repro::VERSION
                ),
            ));
        }
        let loaded = catalog::parse_overrides(&r.sets).and_then(|o| catalog::load_entry(entry, &o));
        let s = match loaded {
            Ok(s) => s,
            Err(e) => {
                let first = e.0.lines().next().unwrap_or("").to_string();
                return Ok(stale(
                    r.scenario.clone(),
                    format!("the scenario no longer loads with its overrides ({first}); delete it"),
                ));
            }
        };
        let record = match r.record(&s.system.world) {
            Ok(record) => record,
            Err(e) => {
                return Ok(stale(
                    r.scenario.clone(),
                    format!("the scenario's actors changed: {e}; delete it"),
                ))
            }
        };
        let (report, read) = replay_record(&s, &record);
        let scenario_changed = hash_hex(s.hash) != r.scenario_hash;
        if !scenario_changed {
            refuse_edited(&file, stored, &s, &record, read)?;
        }
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
        Ok(Replayed {
            file,
            scenario: s.name.clone(),
            status,
            scenario_changed,
        })
    }

    /// The stored regressions whose scenario file is gone: stale, reported
    /// by `verify` so that none is silently dropped.
    pub fn orphans(&self, stored: &[Stored]) -> Vec<Replayed> {
        stored
            .iter()
            .filter_map(|st| {
                let file = catalog::display_path(&st.path);
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
        // A file of that name that is no regression is the user's to look
        // at: it is never written over.
        if std::fs::symlink_metadata(&path).is_ok() && read_regression(&path)?.same_version() {
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

/// Under the scenario it was recorded from, every decision of a regression
/// fits: idemsim writes the values a run read. One that does not was edited,
/// and so was one that reads more than a record holds.
fn refuse_edited(
    file: &str,
    stored: &Stored,
    s: &Scenario,
    record: &Record,
    read: Option<Record>,
) -> Result<(), UsageError> {
    // Nor does a run idemsim recorded read more than a record
    // holds: it refuses to record one (sweep.rs).
    let Some(read) = read else {
        return Err(UsageError(format!(
                "error: {file}: replaying it reads more decisions than one run's record holds ({} values), so idemsim cannot check each against the scenario, and it never records a run that long: the file does not hold the run idemsim recorded\nhelp: {FIX}\n",
                sim::MAX_RECORDED_VALUES
            )));
    };
    if let Some((stream, index, given, max)) = clamped(record, &read) {
        let name = sim::shrink::stream_name(&s.system.world, stream);
        return Err(UsageError(format!(
                "error: {}{}: decision {index} of `{name}` is {given}, but that decision takes 0 to {max} in this scenario, so the file does not hold the run idemsim recorded\nhelp: {FIX}\n",
                file,
                position_in(&stored.path, &format!("\"{name}\""))
            )));
    }
    Ok(())
}

/// Replays `record` on `s` without a trace: the outcome, and the decisions
/// the run read (a value too large for its decision read as the largest);
/// `None` for those when they were more than a record holds, and the
/// record of them cut short.
fn replay_record(s: &Scenario, record: &Record) -> (Outcome, Option<Record>) {
    let mut sim = Sim::new(&s.system);
    let outcome = sim::shrink::replay(&mut sim, &s.system, record, false, &mut NoTrace).outcome;
    let read = sim.choices.take_recorded();
    (
        outcome,
        (!sim.choices.recorded_overflowed()).then_some(read),
    )
}

/// The first decision of `given` that the run read as another value (its
/// largest, `read`'s): (stream, index, given value, largest value).
fn clamped(given: &Record, read: &Record) -> Option<(sim::StreamId, usize, u64, u64)> {
    read.streams.iter().enumerate().find_map(|(s, values)| {
        let s = s as sim::StreamId;
        values
            .iter()
            .enumerate()
            .find(|&(i, &v)| given.get(s, i) != v)
            .map(|(i, &v)| (s, i, given.get(s, i), v))
    })
}
