//! A failure that only one of `check`'s searches found, in `verify`: no
//! seed replays it, so, as `check` does (`idemsim::testing::shown::SearchedFailure`), it is
//! shrunk from the search's record and, when the file does not expect it,
//! written to the regression folder, which replays it first from then on.
//! Under the scenario's row `verify` prints the failing schedule, its
//! `record:` line and a `repro:` line: the regression file to replay, or,
//! without one, the `check` command that shows the same failure shrunk.

use super::searched::Portfolio;
use idemsim::catalog::{Entry, UsageError};
use idemsim::regressions::sweep::{record_failure, Recorded};
use idemsim::regressions::{unexpected, Db, Replayed};
use idemsim::testing::portfolio::Found;
use idemsim::testing::shown::SearchedFailure;
use models::Scenario;
use sim::{SeedRange, Summary};

/// What `verify` shows and records of a search's unexpected failure.
pub(super) struct SearchFailure {
    /// The failing schedule and its `record:` line.
    pub(super) lines: Vec<String>,
    /// How to replay it; `None` when nothing can.
    pub(super) repro: Option<String>,
    /// What the regression folder got; `None` without a folder, for a
    /// built-in scenario, or when it had the failure already and a
    /// replayed regression says so.
    pub(super) recorded: Option<Recorded>,
}

/// What the unexpected failure is checked and recorded against.
pub(super) struct Against<'a> {
    pub(super) s: &'a Scenario,
    pub(super) entry: &'a Entry,
    /// The seeds swept: the searches ran over them.
    pub(super) seeds: SeedRange,
    pub(super) db: Option<&'a Db>,
    /// The regressions replayed before the sweep.
    pub(super) replayed: &'a [Replayed],
}

impl SearchFailure {
    /// When a search found a failure the file does not expect: `check`'s
    /// searches of `portfolio` when no seed failed (`own` is the seeds'
    /// summary), or the file's own coverage-guided search (`own_found`):
    /// shrinks it, records it and sets the portfolio's `record`, as
    /// `check` does. `None` otherwise; a seed's failure is recorded as it was.
    pub(super) fn of(
        at: &Against<'_>,
        own: &Summary,
        portfolio: Option<&mut Portfolio>,
        own_found: Option<&Found>,
    ) -> Result<Option<SearchFailure>, UsageError> {
        let s = at.s;
        let by_portfolio = portfolio.as_ref().and_then(|p| p.found());
        let by_portfolio = by_portfolio.filter(|_| own.first_failure.is_none());
        let found = match by_portfolio.or(own_found) {
            Some(f) if unexpected(s, &f.outcome) => f.clone(),
            _ => return Ok(None),
        };
        let budget = idemsim::minimize::Budget::default();
        let Some(f) = SearchedFailure::shrink(s, &found, budget, false) else {
            // Too long to record: counted in the verdict, nothing replays it.
            let note = found.unrecorded_note(&at.entry.shell_arg());
            return Ok(Some(SearchFailure {
                lines: note.lines().map(String::from).collect(),
                repro: None,
                recorded: None,
            }));
        };
        let (shown, outcome) = f.shown();
        let mut lines = vec![format!("{}:", f.what)];
        let json =
            idemsim::repro::record_lines(s, at.entry, &[], shown, outcome, None, &mut lines)?;
        // That last line names `check --repro-out`, a flag verify has not.
        lines.pop();
        if let Some(p) = portfolio {
            p.set_record(json);
        }
        let recorded = match at.db {
            Some(db) => record_failure(db, s, at.entry, &[], None, Some(shown), outcome)?,
            None => None,
        };
        let repro = Some(repro_line(at, recorded.as_ref()));
        // A failure a replayed regression already shows: said once.
        let recorded = recorded.filter(|r| r.new || !at.replayed.iter().any(|x| x.file == r.file));
        Ok(Some(SearchFailure {
            lines,
            repro,
            recorded,
        }))
    }
}

/// The regression file's replay command, or, with none written, the
/// `check` that runs the same searches and shows the failure shrunk.
fn repro_line(at: &Against<'_>, recorded: Option<&Recorded>) -> String {
    if let Some(r) = recorded.filter(|r| r.warning.is_none()) {
        let replay = idemsim::repro::replay_command(&r.file, Some(&at.entry.arg()));
        return format!("repro: {replay}");
    }
    let file = at.entry.shell_arg();
    let file_seeds = SeedRange {
        start: 0,
        end: at.s.runs.into(),
    };
    let seeds = if at.seeds == file_seeds {
        String::new()
    } else {
        format!(" --seeds {}", at.seeds)
    };
    format!(
        "repro: `idemsim check {file}{seeds}` runs the same searches and shows it shrunk; add --repro-out FILE to write it"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use idemsim::catalog;
    use std::sync::atomic::AtomicBool;

    /// It expects to hold; its seeds hold, and the coverage-guided search
    /// of `check`'s portfolio loses a change in its 5th schedule.
    const FILE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/expect_reach/lost-only-by-a-search.toml"
    );

    /// What `verify FILE --jobs 1` shows under the file's row when every
    /// run records at most `bound` decision values.
    fn failure(bound: usize) -> SearchFailure {
        let entry = catalog::locate(FILE).unwrap();
        let s = catalog::load_entry(&entry, &[]).unwrap();
        let seeds = SeedRange {
            start: 0,
            end: s.runs.into(),
        };
        let stop = AtomicBool::new(false);
        sim::with_record_bound(bound, || {
            let (own, own_found) = super::super::searched::own(&s, seeds, 1, &stop);
            let replay = "idemsim replay s.toml";
            let mut portfolio = Portfolio::if_they_count(&s, &own, seeds, 1, replay).unwrap();
            let at = Against {
                s: &s,
                entry: &entry,
                seeds,
                db: None,
                replayed: &[],
            };
            SearchFailure::of(&at, &own, portfolio.as_mut(), own_found.as_ref())
                .unwrap()
                .expect("a failure the file does not expect")
        })
    }

    /// `verify`'s wiring of the library's note for a search's failure too
    /// long to record: the note's lines are what prints under the row, with
    /// no repro line and nothing recorded, since nothing replays it.
    #[test]
    fn a_search_failure_too_long_to_record_is_said_under_the_row() {
        let whole = failure(sim::MAX_RECORDED_VALUES);
        assert_eq!(whole.lines[0], "coverage-guided schedule #5:");
        assert!(whole.repro.is_some());
        let cut = failure(10);
        assert!(
            cut.lines[0]
                .starts_with("coverage-guided schedule #5 fails (violation of no-lost-effect"),
            "{:?}",
            cut.lines
        );
        assert!(
            cut.lines[0].contains("so nothing replays it"),
            "{:?}",
            cut.lines
        );
        assert!(
            cut.lines[1].starts_with("help: a failing seed replays without a record"),
            "{:?}",
            cut.lines
        );
        assert_eq!(cut.lines.len(), 2, "{:?}", cut.lines);
        assert_eq!(cut.repro, None);
        assert!(cut.recorded.is_none());
    }
}
