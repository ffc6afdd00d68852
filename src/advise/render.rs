//! Advice as people and programs read it: a text table of the fixes, best
//! first, and JSON Lines (`advise`, one `advise_fix` per fix, then
//! `advise_summary`; docs/json-output.md).

use super::{Advice, Costs, Fix, Verdict, ALREADY, PLAYED_BY_PROGRAM};
use crate::render::html::sweep::human_us;
use crate::render::json_line;
use serde_json::{json, Value};
use std::fmt::Write;

/// The verdict as one phrase: `violation (no-duplicate-effect, lowest failing seed 3)`.
pub fn verdict_text(v: &Verdict) -> String {
    match v {
        Verdict::Holds {
            schedules,
            complete,
            ..
        } => format!(
            "holds (and {schedules} exhaustive schedules{})",
            if *complete { "" } else { ", bounded" }
        ),
        Verdict::Fails {
            invariant: "inconclusive",
            ..
        } => "inconclusive (a run hit a limit)".into(),
        Verdict::Fails {
            invariant,
            seed: Some(s),
        } => format!("violation ({invariant}, lowest failing seed {s})"),
        Verdict::Fails {
            invariant,
            seed: None,
        } => format!("violation ({invariant}, in the exhaustive run)"),
    }
}

fn latency(c: &Costs) -> String {
    c.p99_latency_us
        .map_or_else(|| "-".into(), |us| human_us(us as f64))
}

/// The text output: the verdict, the fixes' table, what was skipped and what
/// the budget left untried.
pub fn text(a: &Advice) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "{}: {} on seeds {}",
        a.scenario,
        verdict_text(&a.baseline),
        a.seeds
    );
    if !a.fails() {
        let _ = writeln!(
            b,
            "nothing to repair: it holds on these seeds and in a bounded exhaustive run"
        );
        return b;
    }
    let bud = &a.budget;
    let _ = writeln!(
        b,
        "judged {} design(s): a fix holds on the same seeds and in an exhaustive run of at most {} fault(s) per schedule (at most {} schedules), and no smaller set of its changes does",
        a.judged, bud.max_faults, bud.max_schedules
    );
    if a.fixes.is_empty() {
        let _ = writeln!(b, "no setting-level fix found within budget");
    } else {
        table(a, &mut b);
    }
    let list = |kind: Skip| {
        a.skipped
            .iter()
            .filter(|s| Skip::of(&s.why) == kind)
            .map(|s| s.change.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (set, alone) = (list(Skip::Already), list(Skip::Alone));
    if !set.is_empty() {
        let _ = writeln!(b, "already set: {set}");
    }
    let programs = list(Skip::Program);
    if !programs.is_empty() {
        let _ = writeln!(
            b,
            "not tried, a role your program plays (its built-in settings do not reach the program; a fix there is in the program, docs/protocol.md): {programs}"
        );
    }
    if !alone.is_empty() {
        let _ = writeln!(b, "tried beside other changes only (refused or without effect alone, --json says why): {alone}");
    }
    untried(a, &mut b);
    b
}

/// How the text output groups a skipped change.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Skip {
    Already,
    Program,
    Alone,
}

impl Skip {
    fn of(why: &str) -> Self {
        if why == ALREADY {
            Skip::Already
        } else if why.starts_with(PLAYED_BY_PROGRAM) {
            Skip::Program
        } else {
            Skip::Alone
        }
    }
}

fn table(a: &Advice, b: &mut String) {
    let width = a
        .fixes
        .iter()
        .map(|f| f.describe().len())
        .max()
        .unwrap_or(0)
        .max(7);
    let _ = writeln!(
        b,
        "{:>4}  {:<5}  {:<width$}  {:>12}  {:>11}  {:>10}  {:>10}",
        "rank", "front", "changes", "extra req/op", "p99 latency", "dedup keys", "unknown/op"
    );
    let row = |b: &mut String, rank: &str, front: &str, what: &str, c: &Costs| {
        let _ = writeln!(
            b,
            "{rank:>4}  {front:<5}  {what:<width$}  {:>12.2}  {:>11}  {:>10}  {:>10.3}",
            c.extra_requests_per_op,
            latency(c),
            c.dedup_store_keys,
            c.unknown_per_op
        );
    };
    row(b, "-", "", "(as it is)", &a.baseline_costs);
    for (i, f) in a.fixes.iter().enumerate() {
        let front = if f.front { "*" } else { "" };
        row(b, &(i + 1).to_string(), front, &f.describe(), &f.costs);
    }
}

fn untried(a: &Advice, b: &mut String) {
    if a.interrupted {
        let _ = writeln!(
            b,
            "interrupted ({}): the fixes above are those found so far",
            crate::signals::name()
        );
    }
    for u in a.untried.iter().filter(|u| u.sets > 0) {
        let _ = writeln!(
            b,
            "not tried: {} set(s) of {} change(s) (--max-candidates {} reached)",
            u.sets, u.size, a.budget.max_candidates
        );
    }
    if a.budget.max_changes < 3 {
        let _ = writeln!(
            b,
            "not tried: sets of more than {} change(s) (--max-changes)",
            a.budget.max_changes
        );
    }
}

/// A share or ratio to 6 decimals: the sum of many runs' shares carries
/// float noise no reader wants (`0.18599999999999994`).
fn rounded(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn costs_json(c: &Costs) -> Value {
    json!({
        "extra_requests_per_op": rounded(c.extra_requests_per_op),
        "p99_latency_us": c.p99_latency_us,
        "dedup_store_keys": c.dedup_store_keys,
        "unknown_per_op": rounded(c.unknown_per_op),
    })
}

fn verdict_json(v: &Verdict) -> Value {
    match v {
        Verdict::Holds { .. } => {
            json!({"found": "holds", "invariant": null, "lowest_failing_seed": null})
        }
        Verdict::Fails {
            invariant: "inconclusive",
            ..
        } => {
            json!({"found": "inconclusive", "invariant": null, "lowest_failing_seed": null})
        }
        Verdict::Fails { invariant, seed } => {
            json!({"found": "violation", "invariant": invariant, "lowest_failing_seed": seed})
        }
    }
}

/// One fix's data, as its `advise_fix` record and the HTML page carry it.
pub fn fix_json(rank: usize, f: &Fix) -> Value {
    let sets: Vec<String> = f
        .changes
        .iter()
        .flat_map(|r| r.sets.iter().map(|(k, v)| format!("{k}={v}")))
        .collect();
    json!({
        "rank": rank,
        "changes": f.changes.iter().map(|r| json!({"set": r.describe(), "protects": r.protects})).collect::<Vec<_>>(),
        "sets": sets,
        "front": f.front,
        "costs": costs_json(&f.costs),
        "exhaustive_schedules": f.schedules,
        "exhaustive_complete": f.complete,
    })
}

/// The JSON Lines output: `advise`, one `advise_fix` per fix, best first, and `advise_summary`.
pub fn json_lines(a: &Advice) -> String {
    let bud = &a.budget;
    let mut head = json!({
        "scenario": a.scenario,
        "model": a.model,
        "seeds": {"start": a.seeds.start, "end": a.seeds.end_u64()},
        "costs": costs_json(&a.baseline_costs),
        "budget": {
            "max_changes": bud.max_changes,
            "max_candidates": bud.max_candidates,
            "max_faults": bud.max_faults,
            "max_schedules": bud.max_schedules,
            "max_events": bud.max_events,
        },
    });
    if let (Value::Object(h), Value::Object(v)) = (&mut head, verdict_json(&a.baseline)) {
        h.extend(v);
    }
    let mut out = json_line("advise", head) + "\n";
    for (i, f) in a.fixes.iter().enumerate() {
        out += &(json_line("advise_fix", fix_json(i + 1, f)) + "\n");
    }
    let skipped: Vec<Value> = a
        .skipped
        .iter()
        .map(|s| json!({"change": s.change, "why": s.why}))
        .collect();
    let untried: Vec<Value> = a
        .untried
        .iter()
        .filter(|u| u.sets > 0)
        .map(|u| json!({"changes": u.size, "sets": u.sets}))
        .collect();
    let summary = json!({
        "fixes": a.fixes.len(),
        "judged": a.judged,
        "complete": a.complete(),
        "interrupted": a.interrupted,
        "skipped": skipped,
        "untried": untried,
    });
    out + &json_line("advise_summary", summary) + "\n"
}

/// The data of the HTML page (`render::html::sweep::advice_page`): the
/// verdict, the design's costs, the fixes as their `advise_fix` records,
/// and the text output's notes on what was skipped and not tried.
pub fn html_data(a: &Advice) -> Value {
    let fixes: Vec<Value> = a
        .fixes
        .iter()
        .enumerate()
        .map(|(i, f)| fix_json(i + 1, f))
        .collect();
    let text = text(a);
    let notes: Vec<&str> = text
        .lines()
        .filter(|l| {
            [
                "already set",
                "tried beside",
                "not tried",
                "interrupted",
                "nothing to repair",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .collect();
    json!({
        "scenario": a.scenario,
        "verdict": verdict_text(&a.baseline),
        "seeds": {"start": a.seeds.start, "end": a.seeds.end_u64()},
        "costs": costs_json(&a.baseline_costs),
        "fixes": fixes,
        "notes": notes,
    })
}

/// The HTML page of the advice: the sweep page's look, one section with the cost front.
pub fn html(a: &Advice) -> String {
    crate::render::html::sweep::advice_page(&html_data(a))
}
