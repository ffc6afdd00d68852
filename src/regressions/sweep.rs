//! What `check` and `verify` do with the regression database: replay a
//! scenario's regressions first, print them, and record a new unexpected
//! failure after the sweep.

use super::{unexpected, Db, Replayed, Status};
use crate::catalog::{Entry, UsageError};
use crate::render::json_line;
use crate::repro::Repro;
use models::Scenario;
use sim::{Outcome, Record, Sim};

/// Replays every regression of `entry` under the overrides `sets` in `db`,
/// in file-name order; a file of the database that cannot be read or does
/// not validate is an error (exit 2).
pub fn replay_scenario(
    db: &Db,
    entry: &Entry,
    sets: &[models::scenario::Override],
) -> Result<Vec<Replayed>, UsageError> {
    replay_stored(db, &db.stored()?, entry, sets)
}

/// [`replay_scenario`] over the files `stored` read from `db` already.
pub fn replay_stored(
    db: &Db,
    stored: &[super::Stored],
    entry: &Entry,
    sets: &[models::scenario::Override],
) -> Result<Vec<Replayed>, UsageError> {
    db.of(stored, entry, sets)
        .into_iter()
        .map(|st| db.replay(st, entry))
        .collect()
}

/// Prints one regression: its line on the text stream (stdout, or stderr
/// under `--json`), and under `--json` its `regression` record on stdout.
pub fn print(r: &Replayed, json: bool, indent: &str) {
    if let Some(note) = &r.note {
        crate::eoutln!("{indent}{note}");
    }
    if json {
        crate::eoutln!("{indent}{}", r.text());
        crate::outln!("{}", json_line("regression", r.json()));
    } else {
        crate::outln!("{indent}{}", r.text());
    }
}

/// Records the failure of `seed` (its run `record`, shrunk or not, with
/// `outcome`) when `s` does not expect it and `entry` is the user's file.
/// Returns what to report: the file, as `Replayed` with status "recorded".
pub fn record_failure(
    db: &Db,
    s: &Scenario,
    entry: &Entry,
    sets: &[String],
    seed: Option<u64>,
    record: Option<&Record>,
    outcome: &Outcome,
) -> Result<Option<Recorded>, UsageError> {
    if entry.is_built_in() || !unexpected(s, outcome) {
        return Ok(None);
    }
    let owned;
    let record = match (record, seed) {
        (Some(r), _) => r,
        (None, Some(seed)) => {
            let mut sim = Sim::new(&s.system);
            owned = sim::shrink::record_seed(&mut sim, &s.system, seed).0;
            if sim.choices.recorded_overflowed() {
                return Err(UsageError(format!(
                    "error: seed {seed} of {} fails, but its run makes more than {} decisions, too many to record as a regression\nhelp: the seed reproduces it; lower run.max_steps to record it\n",
                    s.name,
                    sim::MAX_RECORDED_VALUES
                )));
            }
            &owned
        }
        // A failure with neither: nothing that could replay it.
        (None, None) => return Ok(None),
    };
    let mut repro: Repro = crate::repro::repro_of(s, entry, sets, seed, record, outcome);
    repro.file = db.scenario_name(entry);
    // One order for the same variant, so its replay command reads the same.
    repro
        .sets
        .sort_by(|a, b| a.split_once('=').cmp(&b.split_once('=')));
    let (path, written) = db.try_record(&repro)?;
    // The run's verdict stands without it: said after the summary.
    let (new, warning) = match written {
        Ok(new) => (new, None),
        Err(e) => (false, Some(format!("warning: {e}"))),
    };
    let file = crate::catalog::display_path(&path);
    Ok(Some(Recorded {
        file,
        scenario: s.name.clone(),
        invariant: repro.invariant.clone(),
        new,
        warning,
    }))
}

/// A failure written to the database (or found there already).
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The repro file, as shown.
    pub file: String,
    /// The scenario's name.
    pub scenario: String,
    /// The invariant the run breaks (none for a panic).
    pub invariant: Option<String>,
    /// False when the same failure was recorded before, or could not be written.
    pub new: bool,
    /// Why it could not be written (a read-only folder), as a `warning:`
    /// line printed after the summary: the run's verdict stands without it.
    pub warning: Option<String>,
}

impl Recorded {
    /// One line for people.
    pub fn text(&self) -> String {
        if self.new {
            format!(
                "recorded regression {}: it is replayed first from now on",
                self.file
            )
        } else {
            format!("regression {} records this failure already", self.file)
        }
    }

    /// The JSON `regression` record's data: status `recorded` (or `known`
    /// when the same failure was recorded before).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "file": self.file,
            "scenario": self.scenario,
            "status": if self.new { "recorded" } else { "known" },
            "invariant": self.invariant,
            "detail": null,
            "scenario_changed": false,
            "changes": [],
        })
    }

    /// Prints it as [`print()`] does a replayed regression; one that could
    /// not be written prints nothing here (see [`Recorded::warn`]).
    pub fn print(&self, json: bool, indent: &str) {
        if self.warning.is_some() {
            return;
        }
        if json {
            crate::eoutln!("{indent}{}", self.text());
            crate::outln!("{}", json_line("regression", self.json()));
        } else {
            crate::outln!("{indent}{}", self.text());
        }
    }
}

impl Recorded {
    /// After the summary: the warning line of a failure that could not be
    /// recorded, on stderr, and how to give a folder that can be written.
    pub fn warn(&self) {
        if let Some(w) = &self.warning {
            crate::eoutln!("{w} (the verdict above stands; give a writable folder with --regressions DIR or {}, or turn the database off with --no-regressions)", super::ENV);
        }
    }

    /// After a command that recorded into one folder for several scenarios
    /// (`verify`): one warning for all the failures that could not be
    /// written, the first named and the others counted, since the folder,
    /// not each scenario, is what the user must fix.
    pub fn warn_once(all: &[Recorded]) {
        let mut unwritten = all.iter().filter_map(|r| r.warning.as_ref());
        let Some(first) = unwritten.next() else {
            return;
        };
        let more = match unwritten.count() {
            0 => String::new(),
            1 => ", nor 1 other failure".to_string(),
            n => format!(", nor {n} other failures"),
        };
        crate::eoutln!("{first}{more} (the verdicts above stand; give a writable folder with --regressions DIR or {}, or turn the database off with --no-regressions)", super::ENV);
    }
}

/// The first replayed regression that still fails unexpectedly: what makes
/// `check` exit 1 even when its own seeds hold, so its output names it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FailingRegression {
    /// The repro file, as shown.
    pub file: String,
    /// The invariant its run breaks (none for a panic).
    pub invariant: Option<String>,
    /// The command that replays it.
    pub replay: String,
}

impl FailingRegression {
    /// The first of `replayed` that fails unexpectedly, replayed by `entry`.
    pub fn first(replayed: &[Replayed], entry: &Entry) -> Option<FailingRegression> {
        let r = replayed.iter().find(|r| r.status.is_failure())?;
        let invariant = match &r.status {
            Status::StillFails { invariant, .. } => invariant.clone(),
            _ => None,
        };
        // The scenario named explicitly: a regression folder rarely holds it.
        let replay = crate::repro::replay_command(&r.file, Some(&entry.arg()));
        Some(FailingRegression {
            file: r.file.clone(),
            invariant,
            replay,
        })
    }

    /// The lines after the summary; its `repro:` line unless the sweep has
    /// a failure (and a repro line) of its own.
    pub fn text(&self, sweep_failed: bool) -> String {
        if sweep_failed {
            format!(
                "regression {} still fails too; replay it with: {}\n",
                self.file, self.replay
            )
        } else {
            format!(
                "regression {} still fails, so check exits 1\nrepro: {}\n",
                self.file, self.replay
            )
        }
    }
}

/// The exit code of a run whose sweep gave `code` and whose replayed
/// regressions are `replayed`: a regression that still fails unexpectedly
/// is a violation even when the sweep held.
pub fn exit_code(code: u8, replayed: &[Replayed]) -> u8 {
    let failed = replayed.iter().any(|r| r.status.is_failure());
    if failed && matches!(code, crate::exit::HOLDS | crate::exit::INCONCLUSIVE) {
        crate::exit::VIOLATION
    } else {
        code
    }
}

/// Counts of replayed regressions by status, for `verify`'s summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Regressions replayed (or found stale).
    pub replayed: usize,
    /// Still failing, unexpectedly.
    pub still_failing: usize,
    /// Holding now.
    pub fixed: usize,
    /// Stale: not replayable as the run they were.
    pub stale: usize,
    /// New failures written.
    pub recorded: usize,
}

impl Counts {
    /// Adds one replayed regression.
    pub fn add(&mut self, r: &Replayed) {
        self.replayed += 1;
        match r.status {
            Status::Fixed => self.fixed += 1,
            Status::Stale { .. } => self.stale += 1,
            _ if r.status.is_failure() => self.still_failing += 1,
            _ => {}
        }
    }

    /// The `regressions` object of `verify_summary`; `db` is the folder in use.
    pub fn json(&self, db: Option<&Db>) -> serde_json::Value {
        serde_json::json!({
            "folder": db.map(|d| d.dir.to_string_lossy().into_owned()),
            "replayed": self.replayed,
            "still_failing": self.still_failing,
            "fixed": self.fixed,
            "stale": self.stale,
            "recorded": self.recorded,
        })
    }

    /// The summary's clause, empty when nothing happened.
    pub fn text(&self, db: &Db) -> String {
        if self.replayed == 0 && self.recorded == 0 {
            return String::new();
        }
        format!(
            "; regressions in {}: {} replayed ({} still fail, {} fixed, {} stale), {} recorded",
            db.dir.display(),
            self.replayed,
            self.still_failing,
            self.fixed,
            self.stale,
            self.recorded
        )
    }
}

/// After `verify`'s sweep of `s`: when its lowest failing seed's failure
/// is one the scenario does not expect, shrinks it and records it. A
/// failure a search found is not a seed's: the caller records it from the
/// search's own record (searching again could find another run), so it is
/// left alone here.
pub fn record_sweep_failure(
    db: &Db,
    s: &Scenario,
    entry: &Entry,
    own: &sim::Summary,
) -> Result<Option<Recorded>, UsageError> {
    let Some(f) = &own.first_failure else {
        return Ok(None);
    };
    let by_seed =
        crate::testing::shown::Plan::of(s).strategy() == models::scenario::Strategy::Seeds;
    if !by_seed || entry.is_built_in() || !unexpected(s, &f.outcome) {
        return Ok(None);
    }
    let budget = crate::minimize::Budget::default();
    let done = crate::minimize::shrink_seed(s, f.seed, budget);
    let outcome = done
        .as_ref()
        .map_or(&f.outcome, |d| &d.shrunk.report.outcome);
    let record = done.as_ref().map(|d| &d.shrunk.record);
    let seed = Some(f.seed);
    record_failure(db, s, entry, &[], seed, record, outcome)
}
