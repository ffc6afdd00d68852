//! What `verify` prints: a scenario's row (text) or `verify` record (JSON),
//! the line of a scenario Ctrl-C cut short, and the closing summary with the
//! exit code. The judging is in `verify.rs`; nothing here runs a schedule.

use super::{Args, Checked, Tally};
use idemsim::render::json_line;
use models::registry;
use models::scenario::{Strategy, Verdict};
use models::Scenario;
use sim::{SeedRange, Summary};

fn found_text(verdict: Verdict, invariant: Option<&str>) -> String {
    match invariant {
        Some(i) => format!("{} ({i})", verdict.as_str()),
        None => verdict.as_str().to_string(),
    }
}

pub(super) fn json_of(s: &Scenario, c: &Checked) -> serde_json::Value {
    let j = &c.judgement;
    let ablations: Vec<serde_json::Value> = c
        .ablations
        .iter()
        .map(|a| {
            serde_json::json!({
                "protection": a.protection.describe(),
                "expected_invariant": a.protection.breaks,
                "found": a.found.as_str(),
                "invariant": a.invariant,
                "lowest_failing_seed": a.lowest_failing_seed,
                "matched": a.mismatch.is_none(),
                "mismatch": a.mismatch,
            })
        })
        .collect();
    let design_warnings = crate::cmd::common::WarningLine::json_of(&c.warnings, &c.situations);
    let mut line = serde_json::json!({
        "scenario": s.name,
        "expected": s.expected_verdict().map(Verdict::as_str),
        "expected_invariant": s.expected_invariant(),
        "found": j.found.as_str(),
        "invariant": j.invariant,
        "matched": c.mismatch.is_none(),
        "mismatch": c.mismatch,
        "strategy": c.by.as_str(),
        "schedules": c.seeds,
        "seeds": crate::cmd::check::Seeds::from(c.range),
        "lowest_failing_seed": j.lowest_failing_seed,
        "situations": c.situations,
        "situations_missing": j.missing,
        "ablations": ablations,
        "hazards": design_warnings,
    });
    if let Some(p) = &c.portfolio {
        p.json_into(&c.situations, &mut line);
    }
    line
}

pub(super) fn print_text(s: &Scenario, c: &Checked, width: usize) {
    let j = &c.judgement;
    // A coverage-guided search has no seed: its failure is schedule #n of the search.
    let coverage = c.by == Strategy::Coverage;
    let lowest = j.lowest_failing_seed.map_or_else(
        || "-".to_string(),
        |n| {
            if coverage {
                format!("#{}", n + 1)
            } else {
                n.to_string()
            }
        },
    );
    idemsim::outln!(
        "{:<width$}  {:<36} {:<36} {:>7} {:>8}  {}",
        s.name,
        s.describe_expect(),
        found_text(j.found, j.invariant),
        c.seeds,
        lowest,
        if c.situations.is_empty() {
            "none".to_string()
        } else {
            c.situations.join(", ")
        }
    );
    for line in (c.portfolio.iter()).flat_map(|p| p.text_lines(&c.situations)) {
        idemsim::outln!("{:<width$}  {line}", "");
    }
    for a in &c.ablations {
        let seed = a
            .lowest_failing_seed
            .map_or_else(|| "-".to_string(), |s| format!("seed {s}"));
        let mark = if a.mismatch.is_none() {
            "ok"
        } else {
            "NOT LOAD-BEARING"
        };
        idemsim::outln!(
            "{:<width$}    without {:<48} {:<40} {:<12} {mark}",
            "",
            a.protection.describe(),
            found_text(a.found, a.invariant),
            seed
        );
    }
    let reached: &[&str] = &c.situations;
    for h in &c.warnings {
        for line in h.text_in(reached).lines() {
            idemsim::outln!("{:<width$}  {}", "", line.trim_start());
        }
    }
    if let Some(m) = &c.mismatch {
        idemsim::outln!("{:<width$}  MISMATCH: {m}", "");
    }
}

/// What an interrupted scenario shows: the seeds that ran, never judged.
pub(super) fn print_interrupted(
    s: &Scenario,
    sum: &Summary,
    range: SeedRange,
    json: bool,
    width: usize,
) {
    // Seeds start..start + schedules ran (sim::explore).
    let ran = range.first(sum.tally.schedules);
    let t = &sum.tally;
    if json {
        idemsim::outln!(
            "{}",
            json_line(
                "verify",
                serde_json::json!({
                    "scenario": s.name,
                    "expected": s.expected_verdict().map(Verdict::as_str),
                    "expected_invariant": s.expected_invariant(),
                    "found": "interrupted",
                    "invariant": sum.violation().map(|v| v.invariant),
                    "matched": false,
                    "mismatch": null,
                    "schedules": t.schedules,
                    "seeds": crate::cmd::check::Seeds::from(ran),
                    "lowest_failing_seed": sum.first_failure.as_ref().map(|f| f.seed),
                    "situations": registry::situation_names(&t.situations),
                    "situations_missing": [],
                    "ablations": [],
                })
            )
        );
    } else {
        idemsim::outln!(
            "{:<width$}  {:<36} {:<36} {:>7} {:>8}  interrupted ({}) after seeds {ran} of {range}: not judged",
            s.name,
            s.describe_expect(),
            "interrupted",
            t.schedules,
            sum.first_failure
                .as_ref()
                .map_or_else(|| "-".to_string(), |f| f.seed.to_string()),
            idemsim::signals::name(),
        );
    }
}

/// The closing line (or `verify_summary` record) and the exit code.
pub(super) fn summary(
    a: &Args,
    t: &Tally,
    total: usize,
    db: Option<&idemsim::regressions::Db>,
) -> u8 {
    let (judged, matched) = (t.judged, t.matched);
    if t.interrupted {
        let text = format!(
            "interrupted ({}): {judged} of {total} scenarios judged, {matched} match their expectation; the rest did not run",
            idemsim::signals::name()
        );
        if a.json {
            idemsim::eoutln!("{text}");
            summary_json(t, total, judged - matched, true, db);
        } else {
            idemsim::outln!("{text}");
        }
        return if matched < judged {
            idemsim::exit::VIOLATION
        } else {
            idemsim::progress::INTERRUPTED
        };
    }
    if a.json {
        summary_json(t, total, total - matched, false, db);
    } else {
        idemsim::outln!(
            "{matched} of {total} scenarios match their expectation{}; {} of {} protections are load-bearing{}",
            if matched == total {
                String::new()
            } else {
                format!(", {} do not", total - matched)
            },
            t.load_bearing,
            t.ablations,
            db.map_or_else(String::new, |db| t.counts.text(db))
        );
    }
    if matched == total {
        idemsim::exit::HOLDS
    } else {
        idemsim::exit::VIOLATION
    }
}

/// The `verify_summary` record. `mismatched` counts the scenarios that did
/// not match: of those judged when Ctrl-C cut the run short, else of all.
fn summary_json(
    t: &Tally,
    total: usize,
    mismatched: usize,
    interrupted: bool,
    db: Option<&idemsim::regressions::Db>,
) {
    idemsim::outln!(
        "{}",
        json_line(
            "verify_summary",
            serde_json::json!({
                "total": total,
                "judged": t.judged,
                "matched": t.matched,
                "mismatched": mismatched,
                "ablations": t.ablations,
                "ablations_load_bearing": t.load_bearing,
                "interrupted": interrupted,
                "regressions": t.counts.json(db),
            })
        )
    );
}
