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

#[cfg(test)]
mod tests {
    use super::super::portfolio::PortfolioLine;
    use super::super::{sweep_line, Args};
    use super::*;
    use clap::Parser;
    use idemsim::catalog;
    use idemsim::testing::portfolio::search_seed;

    #[derive(Parser)]
    struct Check {
        #[command(flatten)]
        a: Args,
    }

    /// Its seeds hold; the coverage-guided search of the portfolio loses a
    /// change in its 5th schedule (tests/it/expect_reach.rs).
    const FILE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/expect_reach/lost-only-by-a-search.toml"
    );

    /// What `check FILE --jobs 1` shows under its summary when every run
    /// records at most `bound` decision values: the summary, and the text
    /// after it.
    fn shown(bound: usize) -> (SweepLine, Shown) {
        let a = Check::parse_from(["check", FILE, "--no-regressions", "--jobs", "1"]).a;
        let entry = catalog::locate(FILE).unwrap();
        let s = catalog::load_entry(&entry, &[]).unwrap();
        let all = SeedRange {
            start: 0,
            end: s.runs.into(),
        };
        let replay = "idemsim replay s.toml".to_string();
        let sw = Sweep {
            a: &a,
            s: &s,
            entry: &entry,
            db: None,
            replayed: Vec::new(),
            failing: None,
            budget: idemsim::minimize::Budget::default(),
            replay: replay.clone(),
            all,
            seeds: all,
        };
        sim::with_record_bound(bound, || {
            let stop = std::sync::atomic::AtomicBool::new(false);
            let sum = sim::explore(&s.system, all, 1, &stop, &|_| {});
            let searches = search(&s, &replay, all, 1).unwrap();
            let mut line = sweep_line(&a, &s, &entry, replay.clone(), (all, all), &sum);
            line.portfolio = Some(PortfolioLine::of(&searches, search_seed(all)));
            line.derive();
            let shown = Shown::of(&sw, &mut line, &sum, Some(&searches)).unwrap();
            (line, shown)
        })
    }

    /// The library says a search's failure too long to record
    /// (`Found::unrecorded_note`); this is `check`'s wiring of it: the note
    /// is what prints under the summary, where the record would be, and
    /// nothing is shrunk, recorded or carried as a record, while the
    /// verdict still counts the failure.
    #[test]
    fn a_search_failure_too_long_to_record_is_said_under_the_summary() {
        let (line, whole) = shown(sim::MAX_RECORDED_VALUES);
        let text = whole.text.expect("the failure is shown");
        assert!(text.starts_with("coverage-guided schedule #5:\n"), "{text}");
        assert!(whole.done.is_some(), "shrunk from its record");
        assert!(line.portfolio.and_then(|p| p.record).is_some());
        let (line, cut) = shown(10);
        assert_eq!(line.verdict.as_str(), "violation");
        assert_eq!(line.invariant.as_deref(), Some("no-lost-effect"));
        let text = cut.text.expect("the failure is said, not dropped");
        assert!(
            text.starts_with("coverage-guided schedule #5 fails (violation of no-lost-effect"),
            "{text}"
        );
        assert!(text.contains("so nothing replays it"), "{text}");
        assert!(text.contains("\nhelp: a failing seed replays without a record: sweep more seeds with `idemsim check "), "{text}");
        assert!(cut.done.is_none() && cut.recorded.is_none());
        assert_eq!(line.portfolio.and_then(|p| p.record), None);
        assert_eq!((line.original_events, line.shrunk_events), (None, None));
    }
}
