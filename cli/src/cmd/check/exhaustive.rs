//! `idemsim check --exhaustive`: every schedule with at most `--max-faults`
//! faults, its verdict, and the shortest counterexample with its trace.

use super::args::Args;
use super::protections::ProtectionsLine;
use crate::cmd::common::{exit_code, faults_line, situations_line, WarningLine};
use idemsim::catalog::{self, UsageError};
use idemsim::progress::{self, Progress};
use idemsim::render::{self, json_line};
use idemsim::repro::record_lines;
use models::registry;
use sim::exhaustive::{exhaustive, Bounds, ExhaustiveReport};
use sim::{Outcome, Record, Recorder, Sim, Source, StreamLayout};

/// The non-zero decisions of a record outside the swarm mix, named as in repro files.
fn describe_record(world: &sim::World, record: &Record) -> Vec<String> {
    let mut out = Vec::new();
    for (stream, values) in record.streams.iter().enumerate() {
        let stream = stream as u32;
        if stream == StreamLayout::SWARM {
            continue;
        }
        for (i, v) in values.iter().enumerate() {
            if *v != 0 {
                out.push(format!(
                    "{} decision #{i} = {v}",
                    sim::shrink::stream_name(world, stream)
                ));
            }
        }
    }
    out
}

pub(super) fn run_exhaustive(
    a: &Args,
    (s, entry): (&models::Scenario, &catalog::Entry),
    replay: &str,
    jobs: usize,
) -> Result<u8, UsageError> {
    if a.max_schedules == 0 || a.max_events == 0 {
        return Err(UsageError(
            "error: --max-schedules and --max-events must be at least 1\nhelp: leave them out for the defaults\n".into(),
        ));
    }
    let mut r = enumerate(a, s, jobs);
    idemsim::signals::forget_killed_enumeration(&mut r);
    if let Some(c) = &r.shortest {
        idemsim::external::check_outcome(s, "the shortest counterexample", &c.outcome)?;
    }
    let (verdict, code) = verdict(&r);
    let mut lines = Vec::new();
    headline_lines(a, s, &r, verdict, &mut lines);
    let reached = registry::situation_names(&r.tally.situations);
    tally_lines(s, &r, &reached, &mut lines);
    // As a holding seed sweep does: a file as written (no `--set`) that
    // expects to hold names what earns the "holds", which no schedule removed.
    let protections = (verdict == "holds")
        .then(|| ProtectionsLine::of(s, entry, !a.set.is_empty()))
        .flatten();
    lines.extend(protections.iter().flat_map(ProtectionsLine::text_lines));
    let record_json = counterexample_lines(a, s, &r, &mut lines)?;
    let limit_json = first_limit_lines(a, s, &r, &mut lines)?;
    let text = lines.join("\n") + "\n";
    if a.json {
        idemsim::eout!("{text}");
        let found = Found {
            verdict,
            reached: &reached,
            record_json,
            limit_json,
            protections,
        };
        idemsim::outln!("{}", json_record(a, s, replay, &r, found));
    } else {
        idemsim::out!("{text}");
    }
    Ok(code)
}

/// Every schedule within the bounds, with a progress bar that Ctrl-C stops.
fn enumerate(a: &Args, s: &models::Scenario, jobs: usize) -> ExhaustiveReport {
    let bar = Progress::new(None, a.json);
    let r = exhaustive(
        &s.system,
        a.max_faults,
        Bounds {
            max_schedules: a.max_schedules,
            max_events: a.max_events,
        },
        jobs,
        &progress::STOP,
        &|done| bar.update(done),
    );
    bar.finish();
    r
}

/// "fault" or "faults", as `n` needs.
pub(super) fn plural(n: u32) -> &'static str {
    if n == 1 {
        "fault"
    } else {
        "faults"
    }
}

/// The verdict word and its exit code: a counterexample wins over an
/// interruption, which wins over an incomplete enumeration.
fn verdict(r: &ExhaustiveReport) -> (&'static str, u8) {
    match (
        &r.shortest,
        r.interrupted,
        r.truncated || r.too_many_points,
        r.tally.inconclusive,
    ) {
        (Some(c), _, _, _) => ("violation", exit_code(&c.outcome)),
        (None, true, _, _) => ("interrupted", progress::INTERRUPTED),
        (None, false, true, _) | (None, false, false, 1..) => {
            ("inconclusive", idemsim::exit::INCONCLUSIVE)
        }
        (None, false, false, 0) => ("holds", idemsim::exit::HOLDS),
    }
}

/// The verdict sentence, then why the enumeration is incomplete, if it is.
fn headline_lines(
    a: &Args,
    s: &models::Scenario,
    r: &ExhaustiveReport,
    verdict: &str,
    lines: &mut Vec<String>,
) {
    let k = a.max_faults;
    match verdict {
        // Each decision is enumerated at zero or its largest value, so a delay
        // only at its range's ends (docs/performance.md): said where the claim
        // is made, lest "every schedule" read as every delay in between.
        "holds" => lines.push(format!(
            "{}: holds for every schedule with at most {k} {}, delays only at each range's minimum or maximum ({} schedules, {} events)",
            s.name,
            plural(k),
            r.tally.schedules,
            r.tally.events
        )),
        "violation" => lines.push(format!(
            "{}: violation among {} schedules with at most {k} {} ({} events)",
            s.name,
            r.tally.schedules,
            plural(k),
            r.tally.events
        )),
        _ => lines.push(format!(
            "{}: {verdict} after {} schedules with at most {k} {} ({} events)",
            s.name,
            r.tally.schedules,
            plural(k),
            r.tally.events
        )),
    }
    if r.interrupted {
        lines.push(format!(
            "interrupted after {} schedules ({}): the enumeration is incomplete",
            r.tally.schedules,
            idemsim::signals::name()
        ));
    }
    if r.too_many_points {
        lines.push(format!(
            "stopped: a run met more than {} decision points, more than exhaustive mode logs for one run: the enumeration is incomplete (lower run.max_steps)",
            sim::MAX_LOGGED_POINTS
        ));
    }
    if r.truncated {
        let (flag, value) = if r.tally.schedules >= a.max_schedules {
            ("--max-schedules", a.max_schedules)
        } else {
            ("--max-events", a.max_events)
        };
        lines.push(format!(
            "stopped at {flag} {value}: the enumeration is incomplete"
        ));
    }
}

/// What the enumeration covered: schedules by fault count, faults injected,
/// situations reached and the scenario's design warnings among them.
fn tally_lines(
    s: &models::Scenario,
    r: &ExhaustiveReport,
    reached: &[&str],
    lines: &mut Vec<String>,
) {
    lines.push(format!(
        "enumerated: {} schedules ({})",
        r.tally.schedules,
        r.by_faults
            .iter()
            .enumerate()
            .map(|(k, n)| format!("{n} with {k} {}", plural(k as u32)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if r.tally.inconclusive > 0 {
        lines.push(format!("{} schedules hit a limit", r.tally.inconclusive));
    }
    let f = &r.tally.faults;
    lines.push(faults_line(f.lost, f.duplicated, f.partitioned, f.crashed));
    lines.push(situations_line(reached));
    let design_warnings = WarningLine::of(&s.design_warnings);
    lines.extend(design_warnings.iter().map(|h| h.text_in(reached)));
}

/// The shortest counterexample, if any: its decisions, report, repro and
/// trace; returns its record as JSON.
fn counterexample_lines(
    a: &Args,
    s: &models::Scenario,
    r: &ExhaustiveReport,
    lines: &mut Vec<String>,
) -> Result<Option<serde_json::Value>, UsageError> {
    let Some(c) = &r.shortest else {
        return Ok(None);
    };
    lines.push(format!(
        "shortest counterexample: {} {}, {} events: {}",
        c.faults,
        plural(c.faults),
        c.events,
        render::outcome_sentence(&c.outcome)
    ));
    for d in describe_record(&s.system.world, &c.record) {
        lines.push(format!("  {d}"));
    }
    let from = catalog::locate(a.scenario.as_deref().unwrap_or(catalog::DEFAULT))?;
    // After a signal its program is killed at every rerun: the schedule
    // found before it is shown by its decisions and repro line alone.
    let rerun = !idemsim::signals::reruns_break_off(s);
    if let (Some(dir), true) = (&a.html, rerun) {
        let path = crate::cmd::report::write_counterexample(
            s,
            &from,
            &a.set,
            &c.record,
            a.max_faults,
            dir,
        )?;
        lines.push(format!("report: {}", path.display()));
    }
    let repro_out = a.repro_out.as_deref();
    let json = record_lines(s, &from, &a.set, &c.record, &c.outcome, repro_out, lines)?;
    if rerun {
        trace_lines(s, &c.record, &c.outcome, lines);
    } else {
        lines.push(idemsim::signals::not_rerun_note(
            "the shortest counterexample",
            "not traced",
        ));
    }
    Ok(Some(json))
}

/// The trace of a counterexample, re-derived by replaying its record.
fn trace_lines(s: &models::Scenario, record: &Record, outcome: &Outcome, lines: &mut Vec<String>) {
    let mut sim = Sim::new(&s.system);
    let mut rec = Recorder::default();
    let report = sim.run(
        &s.system,
        Source::Replay {
            record,
            log_points: false,
        },
        &mut rec,
    );
    debug_assert_eq!(&report.outcome, outcome, "a record replays its run");
    lines.push(format!("# trace · {} events", report.events));
    lines.push(
        render::text(&s.system.world, &rec.entries)
            .trim_end()
            .to_string(),
    );
    lines.push(format!("=> {}", render::outcome_sentence(&report.outcome)));
}

/// Without a counterexample, the schedule that hit a limit is the finding:
/// its decisions say which faults keep the run going, and a repro replays it.
fn first_limit_lines(
    a: &Args,
    s: &models::Scenario,
    r: &ExhaustiveReport,
    lines: &mut Vec<String>,
) -> Result<Option<serde_json::Value>, UsageError> {
    let (None, Some((record, limit))) = (&r.shortest, &r.first_inconclusive) else {
        return Ok(None);
    };
    lines.push(format!(
        "first schedule that hit a limit ({}):",
        limit.as_str()
    ));
    for d in describe_record(&s.system.world, record) {
        lines.push(format!("  {d}"));
    }
    let from = catalog::locate(a.scenario.as_deref().unwrap_or(catalog::DEFAULT))?;
    let outcome = Outcome::Inconclusive(*limit);
    let repro_out = a.repro_out.as_deref();
    let json = record_lines(s, &from, &a.set, record, &outcome, repro_out, lines)?;
    Ok(Some(
        serde_json::json!({"limit": limit.as_str(), "record": json}),
    ))
}

/// What the text phases found, for the JSON record.
struct Found<'a> {
    verdict: &'a str,
    reached: &'a [&'a str],
    record_json: Option<serde_json::Value>,
    limit_json: Option<serde_json::Value>,
    /// The file's protections, when it holds as its `[expect]` says.
    protections: Option<ProtectionsLine>,
}

/// The `exhaustive` JSON Lines record of `--json`.
fn json_record(
    a: &Args,
    s: &models::Scenario,
    replay: &str,
    r: &ExhaustiveReport,
    found: Found,
) -> String {
    let invariant = r.shortest.as_ref().map(|c| match &c.outcome {
        Outcome::Violation(v) => v.invariant.to_string(),
        _ => "model-panic".to_string(),
    });
    let mut data = serde_json::json!({
        "scenario": s.name,
        "replay": replay,
        "verdict": found.verdict,
        "invariant": invariant,
        "max_faults": a.max_faults,
        "schedules": r.tally.schedules,
        "events": r.tally.events,
        "holds": r.tally.holds,
        "violations": r.tally.violations,
        "panics": r.tally.panics,
        "inconclusive": r.tally.inconclusive,
        "complete": r.complete(),
        "interrupted": r.interrupted,
        "by_faults": r.by_faults,
        "faults": {
            "lost": r.tally.faults.lost,
            "duplicated": r.tally.faults.duplicated,
            "partitioned": r.tally.faults.partitioned,
            "crashed": r.tally.faults.crashed,
        },
        "situations": found.reached,
        "hazards": WarningLine::json_in(&s.design_warnings, found.reached),
        "first_inconclusive": found.limit_json,
        "counterexample": r.shortest.as_ref().map(|c| serde_json::json!({
            "faults": c.faults,
            "events": c.events,
            "sentence": render::outcome_sentence(&c.outcome),
            "record": found.record_json,
        })),
    });
    if let Some(p) = &found.protections {
        data["protections"] = serde_json::to_value(p).expect("serialises");
    }
    json_line("exhaustive", data)
}

#[cfg(test)]
mod tests {
    use super::{plural, verdict};
    use sim::exhaustive::ExhaustiveReport;

    #[test]
    fn an_incomplete_enumeration_never_holds() {
        let done = ExhaustiveReport::default();
        assert_eq!(verdict(&done), ("holds", idemsim::exit::HOLDS));
        let truncated = ExhaustiveReport {
            truncated: true,
            ..ExhaustiveReport::default()
        };
        assert_eq!(verdict(&truncated).0, "inconclusive");
        let mut limited = ExhaustiveReport::default();
        limited.tally.inconclusive = 1;
        assert_eq!(verdict(&limited).0, "inconclusive");
        // Ctrl-C is said as such, even when a bound was also hit.
        let stopped = ExhaustiveReport {
            interrupted: true,
            truncated: true,
            ..ExhaustiveReport::default()
        };
        assert_eq!(
            verdict(&stopped),
            ("interrupted", idemsim::progress::INTERRUPTED)
        );
    }

    #[test]
    fn one_fault_is_singular() {
        assert_eq!(plural(0), "faults");
        assert_eq!(plural(1), "fault");
        assert_eq!(plural(2), "faults");
    }
}
