//! What `check` shows of a sweep's failure: the lowest failing seed, shrunk
//! as always; or, when no seed failed, the failure a search of the default
//! portfolio found, shrunk from its record (no seed replays it), with its
//! `record:` and repro lines.

use super::summary::SweepLine;
use super::text::shrunk_text;
use super::Sweep;
use crate::cmd::common::shrink_found;
use idemsim::catalog::UsageError;
use idemsim::minimize::Done;
use idemsim::regressions::sweep::Recorded;
use idemsim::repro::record_lines;
use idemsim::testing::portfolio::{self, Found, Part, Searches};
use sim::{SeedRange, Summary};

/// Runs the portfolio's searches over `all`; a program that broke the
/// protocol in the failure they show is bad input, as in a sweep.
pub(crate) fn search(
    s: &models::Scenario,
    replay: &str,
    all: SeedRange,
    jobs: usize,
) -> Result<Searches, UsageError> {
    let mut r = portfolio::searches(&s.system, all, jobs, &idemsim::progress::STOP);
    r.forget_killed();
    if let Some(f) = r.first() {
        let what = format!("the portfolio's {} search ({replay})", f.part.as_str());
        idemsim::external::check_outcome(s, &what, &f.outcome)?;
    }
    Ok(r)
}

/// The sweep's summary as the file's `[expect]` judges it: with the
/// searches' situations, and their failure when no seed failed
/// ([`Searches::judged`]); without searches, the sweep's own.
pub(super) fn judged(sum: &Summary, searches: Option<&Searches>) -> Summary {
    searches.map_or_else(|| sum.clone(), |s| s.judged(sum))
}

/// The failure shown under the summary.
#[derive(Default)]
pub(super) struct Shown {
    /// Shrunk, unless --no-shrink.
    pub(super) done: Option<Done>,
    /// Printed after the summary: a search's record and repro lines, and
    /// the shrunk trace.
    pub(super) text: Option<String>,
    /// What the regression folder got.
    pub(super) recorded: Option<Recorded>,
}

impl Shown {
    /// Shrinks the lowest failing seed, else the searches' failure, records
    /// it in the regression folder and sets the summary's shrink fields.
    pub(super) fn of(
        sw: &Sweep<'_>,
        line: &mut SweepLine,
        sum: &Summary,
        searches: Option<&Searches>,
    ) -> Result<Shown, UsageError> {
        let a = sw.a;
        let searched = searches.and_then(Searches::first);
        let (None, Some(found)) = (&sum.first_failure, searched) else {
            let done = line.shrink_done(
                (sw.s, sw.entry),
                a.no_shrink,
                a.repro_out.as_deref(),
                sw.budget,
            )?;
            let recorded = match &sum.first_failure {
                Some(f) => {
                    let record = done.as_ref().map(|d| &d.shrunk.record);
                    let outcome = done
                        .as_ref()
                        .map_or(&f.outcome, |d| &d.shrunk.report.outcome);
                    sw.record_new(Some(f.seed), record, outcome)?
                }
                None => None,
            };
            let text = done.as_ref().map(shrunk_text);
            return Ok(Shown {
                done,
                text,
                recorded,
            });
        };
        Shown::searched(sw, line, found)
    }

    /// A search's failure: shrunk from its record, which the summary carries.
    fn searched(sw: &Sweep<'_>, line: &mut SweepLine, found: &Found) -> Result<Shown, UsageError> {
        let (a, s) = (sw.a, sw.s);
        // A run too long to record whole: counted, but nothing replays it.
        let Some(f) = SearchedFailure::shrink(s, found, sw.budget, a.no_shrink) else {
            return Ok(Shown::default());
        };
        let (shown, outcome) = f.shown();
        let mut lines = vec![format!("{}:", f.what)];
        let repro_out = a.repro_out.as_deref();
        let json = record_lines(s, sw.entry, &a.set, shown, outcome, repro_out, &mut lines)?;
        if let Some(p) = &mut line.portfolio {
            p.record = Some(json);
        }
        line.original_events = f.done.as_ref().map(|d| d.shrunk.original_report.events);
        line.shrunk_events = f.done.as_ref().map(|d| d.shrunk.report.events);
        let recorded = sw.record_new(None, Some(shown), outcome)?;
        let mut text = lines.join("\n") + "\n";
        if let Some(d) = &f.done {
            text.push_str(&shrunk_text(d));
        }
        Ok(Shown {
            done: f.done,
            text: Some(text),
            recorded,
        })
    }
}

/// A failure a search of the portfolio found, shrunk from its record (no
/// seed replays it): what `check` shows under its summary, and what
/// `verify` shows under a scenario's row and records, alike.
pub(crate) struct SearchedFailure<'a> {
    /// The failing schedule as people name it: `coverage-guided schedule
    /// #5`, `exhaustive schedule with at most 2 faults`.
    pub(crate) what: String,
    /// Shrunk, unless not asked to or a signal broke the reruns off.
    pub(crate) done: Option<Done>,
    /// As the search found it.
    found: &'a Found,
    record: &'a sim::Record,
}

impl<'a> SearchedFailure<'a> {
    /// Shrinks `found` within `budget` (unless `no_shrink`); `None` when
    /// its run was too long to record, so nothing replays it.
    pub(crate) fn shrink(
        s: &models::Scenario,
        found: &'a Found,
        budget: idemsim::minimize::Budget,
        no_shrink: bool,
    ) -> Option<SearchedFailure<'a>> {
        let record = found.record.as_ref()?;
        let what = match found.part {
            Part::Exhaustive(k) => format!(
                "exhaustive schedule with at most {k} {}",
                super::exhaustive::plural(k)
            ),
            _ => format!("coverage-guided schedule #{}", found.after),
        };
        let done = shrink_found(s, record, found.after - 1, &what, budget, no_shrink);
        Some(SearchedFailure {
            what,
            done,
            found,
            record,
        })
    }

    /// The run to show and record: shrunk, else as found; and its outcome.
    pub(crate) fn shown(&self) -> (&sim::Record, &sim::Outcome) {
        match &self.done {
            Some(d) => (&d.shrunk.record, &d.shrunk.report.outcome),
            None => (self.record, &self.found.outcome),
        }
    }
}
