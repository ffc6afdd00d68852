//! The regression database: `.idemsim/regressions/`, in the manner of
//! proptest-regressions and Hypothesis's example database.
//!
//! Every unexpected failure `check` and `verify` find in a scenario file (a
//! violation its `[expect]` does not name) is written there as a repro file,
//! named by the scenario, its settings (`crate::meaning`) and the failing
//! seed (or its decisions), so finding the same failure again writes
//! nothing new. The next `check` or `verify` of that scenario replays its
//! regressions before the seed sweep and says, for each:
//!
//! - **still fails**: the recorded run breaks an invariant again;
//! - **fixed**: it now holds;
//! - **stale**: it can no longer mean the same run: another idemsim version
//!   wrote it, the scenario's actors changed (its decision streams are gone),
//!   its overrides no longer apply, or the scenario file is gone.
//!
//! A scenario whose settings changed is still replayed: fixing a design
//! usually means changing its scenario, and recorded decisions mean the same
//! faults under any design of the same actors (what `idemsim diff` rests
//! on). The report marks such a replay "scenario changed since" and names
//! each change; a comment or the order of keys is none.
//!
//! Nothing is ever deleted: a fixed regression keeps guarding against the
//! failure's return, and a stale one is reported on every run until a person
//! deletes it. Built-in scenarios are never recorded (they are idemsim's, not
//! the user's). `docs/ci.md` describes the folder and when it is on.

mod file;
mod folder;
mod replayed;
pub mod sweep;

pub use file::file_name;
pub(crate) use file::is_regression_name;
use file::{position_in, read_regression, same_file, FIX};
pub use folder::{find, Flags, DEFAULT_DIR, ENV, MARKER};
pub use replayed::{Replayed, Status};

use crate::catalog::{self, Entry, Origin, UsageError};
use crate::repro::{hash_hex, Repro};
use models::scenario::Verdict;
use models::Scenario;
use sim::{NoTrace, Outcome, Record, Sim};
use std::path::{Path, PathBuf};

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

/// A regression folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Db {
    /// The folder, as given.
    pub dir: PathBuf,
    /// The project root it was found in, which the scenario files its
    /// regressions name are relative to; `None` for a folder given by
    /// `--regressions` or `IDEMSIM_REGRESSIONS`, whose files name them
    /// from the working folder.
    pub base: Option<PathBuf>,
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
        Db { dir, base: None }
    }

    /// The database with scenario paths relative to `base` (see [`Db::base`]).
    pub fn with_base(mut self, base: PathBuf) -> Db {
        self.base = Some(base);
        self
    }

    /// The scenario file a regression names (`file`), found from the
    /// project root when the folder has one and the file is there, else
    /// from the working folder (as files written before were).
    pub fn scenario_path(&self, file: &str) -> PathBuf {
        let given = PathBuf::from(file);
        match &self.base {
            Some(base) if given.is_relative() && base.join(&given).is_file() => base.join(given),
            _ => given,
        }
    }

    /// `entry`'s path as this folder's regressions name it: relative to the
    /// project root when it is inside it, else as given.
    pub fn scenario_name(&self, entry: &Entry) -> String {
        let arg = entry.arg();
        let (Some(base), Origin::File(path)) = (&self.base, &entry.origin) else {
            return arg;
        };
        let (Ok(base), Ok(path)) = (base.canonicalize(), path.canonicalize()) else {
            return arg;
        };
        let rel = path.strip_prefix(&base).ok().and_then(|rel| {
            let parts: Option<Vec<&str>> =
                rel.components().map(|c| c.as_os_str().to_str()).collect();
            Some(parts?.join("/"))
        });
        rel.unwrap_or(arg)
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
        let mut paths: Vec<PathBuf> = Vec::new();
        for e in rd {
            let path = e.map_err(|e| self.unreadable(&e))?.path();
            if let Some(p) = self.listed(path)? {
                paths.push(p);
            }
        }
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

    fn unreadable(&self, e: &std::io::Error) -> UsageError {
        UsageError(format!(
            "error: cannot read the regression folder {}: {e}\nhelp: give a folder you can read with --regressions DIR, or turn the database off with --no-regressions\n",
            self.dir.display()
        ))
    }

    /// `path`, an entry of the folder, if it is a `.json` file to read. A
    /// folder, a link that leads nowhere (dangling, or a loop) or anything
    /// but a file is an error naming it: never skipped, since a regression
    /// may hide there. Hidden entries (a write in progress) are passed over.
    fn listed(&self, path: PathBuf) -> Result<Option<PathBuf>, UsageError> {
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            return Ok(None);
        }
        let shown = catalog::display_path(&path);
        let refuse = |what: String| {
            Err(UsageError(format!(
                "error: {shown}: {what}, in the regression folder {}\nhelp: the folder holds regression files only: move it out of the folder, or delete it\n",
                self.dir.display()
            )))
        };
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(path
                .extension()
                .is_some_and(|e| e == "json")
                .then_some(path)),
            Ok(m) if m.is_dir() => refuse("a folder".into()),
            Ok(_) => refuse("a device, a pipe or a socket".into()),
            Err(e) => {
                let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_symlink());
                if link && e.kind() == std::io::ErrorKind::NotFound {
                    refuse("a link to nothing (its target is gone)".into())
                } else if link {
                    refuse(format!("a link that cannot be followed ({e})"))
                } else {
                    refuse(format!("cannot be read ({e})"))
                }
            }
        }
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
                        && same_file(&self.scenario_path(&r.file), path)
                        && catalog::parse_overrides(&r.sets)
                            .map_or(sets.is_empty(), |o| canonical(&o) == canonical(sets))
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
            changes: Vec::new(),
            note: None,
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
        let (changes, note) = self.changes_since(stored, r, &s);
        let scenario_changed = !changes.is_empty();
        if !scenario_changed {
            refuse_edited(&file, stored, &s, &record, read)?;
        }
        // A file of an older idemsim whose scenario text is unchanged gets
        // its settings, and the name they give it (checked above first).
        let (file, note) = match note {
            None if r.settings.is_empty() => self.migrate(stored, r, &s),
            note => (file, note),
        };
        let status = status_of(&s, &report);
        Ok(Replayed {
            file,
            scenario: s.name.clone(),
            status,
            scenario_changed,
            changes: changes.into_iter().filter(|c| !c.is_empty()).collect(),
            note,
        })
    }

    /// How the scenario's settings changed since `r` was recorded, each
    /// change named; and a note for a file written before idemsim recorded
    /// settings. Such a file whose scenario text is unchanged is migrated
    /// ([`Db::migrate`]): its settings are written in, so from now on only
    /// a change of settings counts. One whose text changed cannot be: it
    /// counts any change of text, as it did (one empty change stands for it).
    fn changes_since(
        &self,
        stored: &Stored,
        r: &Repro,
        s: &Scenario,
    ) -> (Vec<String>, Option<String>) {
        let now = crate::meaning::settings(s);
        if !r.settings.is_empty() {
            return (crate::meaning::changes(&r.settings, &now), None);
        }
        let file = catalog::display_path(&stored.path);
        if hash_hex(s.hash) != r.scenario_hash {
            let note = format!(
                "note: {file} was recorded before idemsim keyed regressions by the scenario's settings, and the scenario's text changed since, so any edit counts as a change; delete it to record the failure anew, keyed by settings"
            );
            return (vec![String::new()], Some(note));
        }
        (Vec::new(), None)
    }

    /// Writes the settings into `stored`, a file written before idemsim
    /// recorded them whose scenario text is unchanged, and renames it to the
    /// name they give it ([`file_name`]): the name the same failure gets
    /// when it is found again, which would otherwise be a second file
    /// beside it. Returns the file as shown and the note saying what was done.
    fn migrate(&self, stored: &Stored, r: &Repro, s: &Scenario) -> (String, Option<String>) {
        let file = catalog::display_path(&stored.path);
        let mut migrated = r.clone();
        migrated.settings = crate::meaning::settings(s);
        let renamed = stored.path.with_file_name(file_name(&migrated));
        let (to, moved) = if renamed == stored.path || std::fs::symlink_metadata(&renamed).is_ok() {
            // Its name already, or a file of the new name is there: never
            // written over, so this one keeps its name.
            (stored.path.clone(), false)
        } else {
            (renamed, true)
        };
        let written = self.write(&to, &migrated).and_then(|()| {
            if moved {
                std::fs::remove_file(&stored.path)
            } else {
                Ok(())
            }
        });
        let shown = catalog::display_path(&to);
        let note = match &written {
            Ok(()) if moved => format!(
                "note: {file} was recorded before idemsim keyed regressions by the scenario's settings; its settings were added and it was renamed {shown}, the name the same failure is recorded under now, so a comment or key order no longer counts as a change"
            ),
            Ok(()) => format!(
                "note: {file} was recorded before idemsim keyed regressions by the scenario's settings; its settings were added, so a comment or key order no longer counts as a change"
            ),
            Err(e) => format!(
                "note: {file} was recorded before idemsim keyed regressions by the scenario's settings, and they could not be added ({e}); any edit of the scenario counts as a change"
            ),
        };
        let file = if moved && written.is_ok() {
            shown
        } else {
            file
        };
        (file, Some(note))
    }

    /// Writes `repro` to `path` whole or not at all: shards and parallel
    /// jobs may write at once.
    fn write(&self, path: &Path, repro: &Repro) -> std::io::Result<()> {
        let name = path
            .file_name()
            .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
        let tmp = self.dir.join(format!(".{name}.tmp-{}", std::process::id()));
        repro.write(&tmp)?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
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
                        changes: Vec::new(),
                        note: None,
                    }),
                    Ok(r) if r.file.is_empty() || !self.scenario_path(&r.file).is_file() => Some(Replayed {
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
                        changes: Vec::new(),
                        note: None,
                    }),
                    Ok(_) => None,
                }
            })
            .collect()
    }

    /// Records `repro` (an unexpected failure of a scenario file) unless the
    /// same failure of the same scenario is already there, written by this
    /// idemsim (a stale file of that name is replaced). Returns the file and
    /// whether it was written; a folder that cannot be written is an error.
    pub fn record(&self, repro: &Repro) -> Result<(PathBuf, bool), UsageError> {
        let (path, written) = self.try_record(repro)?;
        let new = written.map_err(|e| {
            UsageError(format!(
                "error: cannot write the regression {}: {e}\nhelp: give a writable folder with --regressions DIR, or turn the database off with --no-regressions\n",
                path.display()
            ))
        })?;
        Ok((path, new))
    }

    /// [`Db::record`], the write's failure kept apart from the error of a
    /// damaged file of that name: a folder that cannot be written (read
    /// only) leaves the run's verdict standing, a damaged file does not.
    pub fn try_record(&self, repro: &Repro) -> Result<(PathBuf, Result<bool, String>), UsageError> {
        let path = self.dir.join(file_name(repro));
        // A file of that name that is no regression is the user's to look
        // at: it is never written over.
        if std::fs::symlink_metadata(&path).is_ok() && read_regression(&path)?.same_version() {
            return Ok((path, Ok(false)));
        }
        let written = std::fs::create_dir_all(&self.dir)
            .and_then(|()| self.write(&path, repro))
            .map(|()| true)
            .map_err(|e| format!("cannot write the regression {}: {e}", path.display()));
        Ok((path, written))
    }
}

/// What a regression's replay ending in `report` says of `s`.
fn status_of(s: &Scenario, report: &Outcome) -> Status {
    match report {
        Outcome::Holds => Status::Fixed,
        Outcome::Inconclusive(l) => Status::Inconclusive { limit: l.as_str() },
        failed => Status::StillFails {
            invariant: match failed {
                Outcome::Violation(v) => Some(v.invariant.to_string()),
                _ => None,
            },
            sentence: crate::render::outcome_sentence(failed),
            expected: !unexpected(s, failed),
        },
    }
}

/// Overrides in one order (by key; a key is given once), so the same
/// variant asked for with its `--set`s in another order is the same variant.
pub fn canonical(sets: &[models::scenario::Override]) -> Vec<(&str, &str)> {
    let mut v: Vec<(&str, &str)> = sets
        .iter()
        .map(|o| (o.key.as_str(), o.value.as_str()))
        .collect();
    v.sort_unstable();
    v
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
