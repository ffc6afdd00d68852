//! `idemsim check --exhaustive`: every schedule with at most `--max-faults`
//! faults, its verdict, and the shortest counterexample with its trace.

use super::args::Args;
use crate::cmd::common::{exit_code, faults_line, situations_line, HazardLine};
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
    s: &models::Scenario,
    replay: &str,
    jobs: usize,
) -> Result<u8, UsageError> {
    if a.max_schedules == 0 || a.max_events == 0 {
        return Err(UsageError(
            "error: --max-schedules and --max-events must be at least 1\nhelp: leave them out for the defaults\n".into(),
        ));
    }
    let bar = Progress::new(None, a.json);
    let r: ExhaustiveReport = exhaustive(
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
    if let Some(c) = &r.shortest {
        idemsim::external::check_outcome(s, "the shortest counterexample", &c.outcome)?;
    }
    let k = a.max_faults;
    let plural = |n: u32| if n == 1 { "fault" } else { "faults" };
    let (verdict, code) = match (
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
    };
    let mut lines = Vec::new();
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
            "interrupted after {} schedules (Ctrl-C): the enumeration is incomplete",
            r.tally.schedules
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
    let reached = registry::situation_names(&r.tally.situations);
    lines.push(situations_line(&reached));
    let hazards = HazardLine::of(&s.hazards);
    lines.extend(hazards.iter().map(|h| h.text_in(&reached)));
    let mut record_json = None;
    if let Some(c) = &r.shortest {
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
        if let Some(dir) = &a.html {
            let path =
                crate::cmd::report::write_counterexample(s, &from, &a.set, &c.record, k, dir)?;
            lines.push(format!("report: {}", path.display()));
        }
        let repro_out = a.repro_out.as_deref();
        let json = record_lines(
            s, &from, &a.set, &c.record, &c.outcome, repro_out, &mut lines,
        )?;
        record_json = Some(json);
        // The trace of the counterexample, re-derived by replaying its record.
        let mut sim = Sim::new(&s.system);
        let mut rec = Recorder::default();
        let report = sim.run(
            &s.system,
            Source::Replay {
                record: &c.record,
                log_points: false,
            },
            &mut rec,
        );
        debug_assert_eq!(report.outcome, c.outcome, "a record replays its run");
        lines.push(format!("# trace · {} events", report.events));
        lines.push(
            render::text(&s.system.world, &rec.entries)
                .trim_end()
                .to_string(),
        );
        lines.push(format!("=> {}", render::outcome_sentence(&report.outcome)));
    }
    // Without a counterexample, the schedule that hit a limit is the finding:
    // its decisions say which faults keep the run going, and a repro replays it.
    let mut limit_json = None;
    if let (None, Some((record, limit))) = (&r.shortest, &r.first_inconclusive) {
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
        let json = record_lines(s, &from, &a.set, record, &outcome, repro_out, &mut lines)?;
        limit_json = Some(serde_json::json!({"limit": limit.as_str(), "record": json}));
    }
    let text = lines.join("\n") + "\n";
    if a.json {
        idemsim::eout!("{text}");
        let invariant = r.shortest.as_ref().map(|c| match &c.outcome {
            Outcome::Violation(v) => v.invariant.to_string(),
            _ => "model-panic".to_string(),
        });
        idemsim::outln!(
            "{}",
            json_line(
                "exhaustive",
                serde_json::json!({
                    "scenario": s.name,
                    "replay": replay,
                    "verdict": verdict,
                    "invariant": invariant,
                    "max_faults": k,
                    "schedules": r.tally.schedules,
                    "events": r.tally.events,
                    "holds": r.tally.holds,
                    "violations": r.tally.violations,
                    "panics": r.tally.panics,
                    "inconclusive": r.tally.inconclusive,
                    "complete": r.complete(),
                    "by_faults": r.by_faults,
                    "faults": {
                        "lost": r.tally.faults.lost,
                        "duplicated": r.tally.faults.duplicated,
                        "partitioned": r.tally.faults.partitioned,
                        "crashed": r.tally.faults.crashed,
                    },
                    "situations": reached,
                    "hazards": HazardLine::json_in(&s.hazards, &reached),
                    "first_inconclusive": limit_json,
                    "counterexample": r.shortest.as_ref().map(|c| serde_json::json!({
                        "faults": c.faults,
                        "events": c.events,
                        "sentence": render::outcome_sentence(&c.outcome),
                        "record": record_json,
                    })),
                })
            )
        );
    } else {
        idemsim::out!("{text}");
    }
    Ok(code)
}
