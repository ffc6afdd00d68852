//! What `check` shows of a sweep's failure: the lowest failing seed, shrunk
//! as always; or, when no seed failed, the failure a search of the default
//! portfolio found, shrunk from its record (no seed replays it), with its
//! `record:` and repro lines.

use super::summary::SweepLine;
use super::text::shrunk_text;
use super::Sweep;
use idemsim::catalog::UsageError;
use idemsim::minimize::Done;
use idemsim::regressions::sweep::Recorded;
use idemsim::repro::record_lines;
use idemsim::testing::portfolio::{Found, Searches};
use idemsim::testing::shown::{self, SearchedFailure};
use sim::{SeedRange, Summary};

/// Runs the portfolio's searches over `all` as every command that runs
/// them does (`idemsim::testing::shown::searches`); a program that broke
/// the protocol in the failure they show is bad input, as in a sweep.
pub(crate) fn search(
    s: &models::Scenario,
    replay: &str,
    all: SeedRange,
    jobs: usize,
) -> Result<Searches, UsageError> {
    shown::searches(s, replay, all, jobs, &idemsim::progress::STOP)
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
        // A run too long to record whole: counted, but nothing replays it;
        // said under the summary, where its record would be.
        let Some(f) = SearchedFailure::shrink(s, found, sw.budget, a.no_shrink) else {
            let note = found.unrecorded_note(&sw.entry.shell_arg());
            return Ok(Shown {
                text: Some(note + "\n"),
                ..Shown::default()
            });
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
