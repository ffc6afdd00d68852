//! `check --strategy coverage`: a coverage-guided search (sim::coverage)
//! instead of a seed sweep, for bugs that need several rare faults at once.
//! It ends at its first failure, shrinks it like a failing seed, and prints
//! its record, since no seed replays it.

use super::protections::ProtectionsLine;
use crate::cmd::common::{exit_code, faults_line, shrink_found, situations_line, WarningLine};
use idemsim::catalog::{Entry, UsageError};
use idemsim::minimize::Budget;
use idemsim::regressions::sweep::{FailingRegression, Recorded};
use idemsim::render::{self, json_line};
use idemsim::repro::record_lines;
use models::registry;
use models::Scenario;
use sim::{Outcome, Record, SeedRange};
use std::sync::atomic::AtomicBool;

/// Records a failure in the regression folder, saying what it wrote.
pub type RecordFailure<'a> = dyn Fn(&Record, &Outcome) -> Result<Option<Recorded>, UsageError> + 'a;

/// What `check` hands over.
pub struct Request<'a> {
    /// The scenario, with its overrides applied.
    pub scenario: &'a Scenario,
    /// Where it was found: a file scenario's repro names its path.
    pub entry: &'a Entry,
    /// The `--set` arguments, for the repro file.
    pub sets: &'a [String],
    /// `start` seeds the search; `len()` schedules at most.
    pub seeds: SeedRange,
    /// JSON Lines on stdout, text on stderr.
    pub json: bool,
    /// Print the failure as found, unshrunk.
    pub no_shrink: bool,
    /// The shrinking budget.
    pub budget: Budget,
    /// Where to write the repro file.
    pub repro_out: Option<&'a str>,
    /// The replay command an external program's errors name.
    pub replay: &'a str,
    /// Set by Ctrl-C.
    pub stop: &'a AtomicBool,
    /// Records the (shrunk) failure in the regression folder; called before
    /// the summary prints, so that under --json the summary stays last.
    pub record: &'a RecordFailure<'a>,
    /// A recorded regression that still fails, named after the summary.
    pub failing_regression: Option<&'a FailingRegression>,
}

/// What the search ended with.
pub struct Found {
    /// The exit code of the search alone.
    pub code: u8,
}

/// Runs the search, prints its summary (and its shrunk failure).
pub fn run(q: Request<'_>) -> Result<Found, UsageError> {
    let s = q.scenario;
    let mut r = s.coverage(q.seeds, q.stop);
    idemsim::signals::forget_killed_schedules(&mut r.summary);
    idemsim::external::check_summary(s, q.replay, &r.summary)?;
    let (verdict, code) = verdict(&r.summary);
    let mut lines = summary_lines(&q, &r, verdict);
    let reached = registry::situation_names(&r.summary.tally.situations);
    lines.push(situations_line(&reached));
    let design_warnings = WarningLine::of(&s.design_warnings);
    lines.extend(design_warnings.iter().map(|h| h.text_in(&reached)));
    let protections = named_protections(&q, verdict);
    lines.extend(protections.iter().flat_map(ProtectionsLine::text_lines));
    let failure = failure_lines(&q, &r, &mut lines)?;
    let mut text = lines.join("\n") + "\n";
    if let Some(f) = q.failing_regression {
        text.push_str(&f.text(r.summary.first_failure.is_some()));
    }
    if q.json {
        idemsim::eout!("{text}");
        failure.recorded.iter().for_each(|r| r.print(true, ""));
        let mut data = json_summary(&q, &r, verdict, &reached, failure.record_json);
        if let Some(p) = &protections {
            data["protections"] = serde_json::to_value(p).expect("serialises");
        }
        idemsim::outln!("{}", json_line("summary", data));
        if let Some(t) = &failure.shrunk_text {
            idemsim::eout!("{t}");
        }
    } else {
        idemsim::out!("{text}");
        if let Some(t) = &failure.shrunk_text {
            idemsim::out!("{t}");
        }
        failure.recorded.iter().for_each(|r| r.print(false, ""));
    }
    failure.recorded.iter().for_each(Recorded::warn);
    Ok(Found { code })
}

/// The verdict word and its exit code: a failure wins over an interruption.
fn verdict(sum: &sim::Summary) -> (&'static str, u8) {
    match (&sum.first_failure, sum.interrupted, sum.tally.inconclusive) {
        (Some(f), _, _) => ("violation", exit_code(&f.outcome)),
        (None, true, _) => ("interrupted", idemsim::progress::INTERRUPTED),
        (None, false, 0) => ("holds", idemsim::exit::HOLDS),
        (None, false, _) => ("inconclusive", idemsim::exit::INCONCLUSIVE),
    }
}

/// The protections the file names, as a holding seed sweep names them
/// (check/protections.rs): only when the search holds, the file as written
/// (no `--set`) expects to hold, and no recorded regression still fails.
fn named_protections(q: &Request<'_>, verdict: &str) -> Option<ProtectionsLine> {
    if verdict != "holds" || q.failing_regression.is_some() {
        return None;
    }
    ProtectionsLine::of(q.scenario, q.entry, !q.sets.is_empty())
}

/// The verdict sentence, the first failure, what the search kept and the
/// faults it injected.
fn summary_lines(q: &Request<'_>, r: &sim::CoverageReport, verdict: &str) -> Vec<String> {
    let s = q.scenario;
    let sum = &r.summary;
    let t = &sum.tally;
    let budget = q.seeds.len();
    let mut lines = vec![match &sum.first_failure {
        Some(f) => format!(
            "{}: violation found by coverage-guided search after {} schedules (budget {budget}, search seed {}), {} events",
            s.name,
            f.seed + 1,
            q.seeds.start,
            t.events
        ),
        None => format!(
            "{}: {verdict} over {} schedules of coverage-guided search (budget {budget}, search seed {}), {} events",
            s.name, t.schedules, q.seeds.start, t.events
        ),
    }];
    if let Some(f) = &sum.first_failure {
        lines.push(format!(
            "first failure: {}",
            render::outcome_sentence(&f.outcome)
        ));
    }
    lines.push(format!(
        "coverage: {} records kept, {} coverage numbers reached",
        r.corpus, r.features
    ));
    let f = &t.faults;
    lines.push(faults_line(f.lost, f.duplicated, f.partitioned, f.crashed));
    lines
}

/// What the failing schedule left to print, if there was one.
#[derive(Default)]
struct Failure {
    /// The shrunk trace, printed after the summary.
    shrunk_text: Option<String>,
    /// The (shrunk) record, for the JSON summary.
    record_json: Option<serde_json::Value>,
    /// What the regression folder got.
    recorded: Option<Recorded>,
}

/// The failing schedule, shrunk unless `--no-shrink`: its repro lines go
/// into `lines`, and it is recorded in the regression folder.
fn failure_lines(
    q: &Request<'_>,
    r: &sim::CoverageReport,
    lines: &mut Vec<String>,
) -> Result<Failure, UsageError> {
    let Some(f) = &r.summary.first_failure else {
        return Ok(Failure::default());
    };
    let Some(record) = &r.failing else {
        // Too long to record whole: counted, but nothing replays it.
        let found = idemsim::testing::portfolio::Found {
            part: idemsim::testing::portfolio::Part::Coverage,
            after: f.seed + 1,
            record: None,
            outcome: f.outcome.clone(),
            events: f.events,
        };
        lines.push(found.unrecorded_note(&q.entry.shell_arg()));
        return Ok(Failure::default());
    };
    let s = q.scenario;
    let mut failure = Failure::default();
    let what = format!("coverage-guided schedule #{}", f.seed + 1);
    let shrunk = shrink_found(s, record, f.seed, &what, q.budget, q.no_shrink);
    let (shown, outcome) = match shrunk {
        Some(d) => {
            failure.shrunk_text = Some(format!(
                "\nshrunk (docs/shrinking.md):\n{}",
                render::formats::text(&d.trace)
            ));
            (d.shrunk.record, d.shrunk.report.outcome)
        }
        None => (record.clone(), f.outcome.clone()),
    };
    let json = record_lines(s, q.entry, q.sets, &shown, &outcome, q.repro_out, lines)?;
    failure.record_json = Some(json);
    failure.recorded = (q.record)(&shown, &outcome)?;
    Ok(failure)
}

/// The `summary` JSON Lines record of `--json`.
fn json_summary(
    q: &Request<'_>,
    r: &sim::CoverageReport,
    verdict: &str,
    reached: &[&str],
    record_json: Option<serde_json::Value>,
) -> serde_json::Value {
    let s = q.scenario;
    let sum = &r.summary;
    let t = &sum.tally;
    let invariant = sum.first_failure.as_ref().map(|f| match &f.outcome {
        Outcome::Violation(v) => v.invariant.to_string(),
        _ => "model-panic".to_string(),
    });
    let mut data = serde_json::json!({
                "scenario": s.name,
                "strategy": "coverage",
                "verdict": verdict,
                "interrupted": sum.interrupted,
                "invariant": invariant,
                "seed": serde_json::Value::Null,
                "search_seed": q.seeds.start,
                "budget": q.seeds.len(),
                "schedules": t.schedules,
                "events": t.events,
                "corpus": r.corpus,
                "features": r.features,
                "situations": reached,
                "hazards": WarningLine::json_in(&s.design_warnings, reached),
                "record": record_json,
    });
    if let Some(f) = q.failing_regression {
        data["failing_regression"] = serde_json::to_value(f).expect("serialises");
    }
    data
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn a_search_holds_only_when_nothing_stopped_it() {
        let mut sum = sim::Summary::default();
        assert_eq!(verdict(&sum), ("holds", idemsim::exit::HOLDS));
        sum.tally.inconclusive = 2;
        assert_eq!(verdict(&sum), ("inconclusive", idemsim::exit::INCONCLUSIVE));
        sum.interrupted = true;
        assert_eq!(
            verdict(&sum),
            ("interrupted", idemsim::progress::INTERRUPTED)
        );
    }
}
