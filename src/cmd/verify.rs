//! `idemsim verify`: every scenario against its `[expect]`, and every
//! protection of a holding scenario removed in turn on the same seeds: each
//! removal must turn "holds" into a violation, or the "holds" is not earned.

use crate::render::json_line;
use crate::scenarios::{self, UsageError};
use models::registry;
use models::scenario::{Ablation, Judgement, Verdict};
use models::Scenario;
use sim::SeedRange;
use std::sync::atomic::AtomicBool;

#[derive(clap::Args)]
pub struct Args {
    /// Scenario names or .toml paths [default: every scenario in the catalog].
    scenarios: Vec<String>,
    /// Seeds per scenario [default: each scenario's run.runs].
    #[arg(long)]
    runs: Option<u64>,
    /// At most this many seeds per scenario (a cheaper sweep that keeps each budget's shape).
    #[arg(long, conflicts_with = "runs")]
    max_runs: Option<u64>,
    /// Worker threads [default: all cores]. The output does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// JSON Lines on stdout: one `scenario` line each, then a `summary`.
    #[arg(long)]
    json: bool,
    /// Skip the ablations (faster; a holding verdict is then not checked for being earned).
    #[arg(long)]
    no_ablations: bool,
}

/// One scenario's result: its judgement and its ablations.
struct Checked {
    judgement: Judgement,
    seeds: u64,
    situations: Vec<&'static str>,
    ablations: Vec<Ablation>,
    /// Why the scenario as a whole does not match, if it does not.
    mismatch: Option<String>,
}

fn check(s: &Scenario, budget: u64, jobs: usize, ablate: bool) -> Result<Checked, UsageError> {
    let stop = AtomicBool::new(false);
    let seeds = SeedRange {
        start: 0,
        end: budget,
    };
    // The scenario's own search: seeds, or coverage-guided within the same budget.
    let sum = s.search(seeds, jobs, &stop);
    let judgement = s.expect.judge(&sum);
    let mut ablations = Vec::new();
    if ablate && s.expect.verdict == Verdict::Holds {
        for p in &s.expect.protections {
            let ablated = s.ablated(&s.file, p)?;
            let found = ablated.search_failure(seeds, jobs, &stop);
            ablations.push(p.judge(&found));
        }
    }
    let mismatch = judgement.mismatch.clone().or_else(|| {
        if ablate && s.expect.verdict == Verdict::Holds && s.expect.protections.is_empty() {
            return Some(
                "holds, but names no protections: list in [expect] protections the overrides that remove what makes it hold"
                    .to_string(),
            );
        }
        ablations.iter().find_map(|a| {
            a.mismatch
                .as_ref()
                .map(|m| format!("protection {}: {m}", a.protection.describe()))
        })
    });
    Ok(Checked {
        judgement,
        seeds: sum.tally.schedules,
        situations: registry::situation_names(&sum.tally.situations),
        ablations,
        mismatch,
    })
}

fn found_text(verdict: Verdict, invariant: Option<&str>) -> String {
    match invariant {
        Some(i) => format!("{} ({i})", verdict.as_str()),
        None => verdict.as_str().to_string(),
    }
}

fn json_of(s: &Scenario, c: &Checked) -> serde_json::Value {
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
    serde_json::json!({
        "scenario": s.name,
        "expected": s.expect.verdict.as_str(),
        "expected_invariant": s.expect.invariant,
        "found": j.found.as_str(),
        "invariant": j.invariant,
        "matched": c.mismatch.is_none(),
        "mismatch": c.mismatch,
        "strategy": s.strategy.as_str(),
        "seeds": c.seeds,
        "lowest_failing_seed": j.lowest_failing_seed,
        "situations": c.situations,
        "situations_missing": j.missing,
        "ablations": ablations,
    })
}

fn print_text(s: &Scenario, c: &Checked, width: usize) {
    let j = &c.judgement;
    // A coverage-guided search has no seed: its failure is schedule #n of the search.
    let coverage = s.strategy == models::scenario::Strategy::Coverage;
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
    println!(
        "{:<width$}  {:<36} {:<36} {:>7} {:>8}  {}",
        s.name,
        s.expect.describe(),
        found_text(j.found, j.invariant),
        c.seeds,
        lowest,
        if c.situations.is_empty() {
            "none".to_string()
        } else {
            c.situations.join(", ")
        }
    );
    for a in &c.ablations {
        let seed = a
            .lowest_failing_seed
            .map_or_else(|| "-".to_string(), |s| format!("seed {s}"));
        let mark = if a.mismatch.is_none() {
            "ok"
        } else {
            "NOT LOAD-BEARING"
        };
        println!(
            "{:<width$}    without {:<48} {:<40} {:<12} {mark}",
            "",
            a.protection.describe(),
            found_text(a.found, a.invariant),
            seed
        );
    }
    if let Some(m) = &c.mismatch {
        println!("{:<width$}  MISMATCH: {m}", "");
    }
}

pub fn run(a: Args) -> Result<u8, UsageError> {
    let jobs = a.jobs.unwrap_or_else(super::check::default_jobs);
    if jobs == 0 {
        return Err(UsageError("error: --jobs must be at least 1\n".into()));
    }
    if a.runs == Some(0) || a.max_runs == Some(0) {
        return Err(UsageError("error: --runs must be at least 1\n".into()));
    }
    let names: Vec<String> = if a.scenarios.is_empty() {
        scenarios::all()
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    } else {
        a.scenarios.clone()
    };
    if names.is_empty() {
        return Err(UsageError(format!(
            "error: no scenario files in {}\n",
            scenarios::dir().display()
        )));
    }
    // Load every file first, so a bad one stops the run before any sweep.
    let mut loaded = Vec::with_capacity(names.len());
    for n in &names {
        loaded.push(scenarios::load(n, &[])?);
    }
    let width = loaded
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    if !a.json {
        println!(
            "{:<width$}  {:<36} {:<36} {:>7} {:>8}  situations reached",
            "scenario", "expected", "found", "seeds", "lowest"
        );
    }
    let (mut matched, mut ablations, mut ablations_matched) = (0usize, 0usize, 0usize);
    for s in &loaded {
        let budget = match (a.runs, a.max_runs) {
            (Some(n), _) => n,
            (None, Some(m)) => s.runs.min(m),
            (None, None) => s.runs,
        };
        let c = check(s, budget, jobs, !a.no_ablations)?;
        matched += usize::from(c.mismatch.is_none());
        ablations += c.ablations.len();
        ablations_matched += c.ablations.iter().filter(|x| x.mismatch.is_none()).count();
        if a.json {
            println!("{}", json_line("scenario", json_of(s, &c)));
        } else {
            print_text(s, &c, width);
        }
    }
    let total = loaded.len();
    if a.json {
        println!(
            "{}",
            json_line(
                "summary",
                serde_json::json!({
                    "total": total,
                    "matched": matched,
                    "mismatched": total - matched,
                    "ablations": ablations,
                    "ablations_load_bearing": ablations_matched,
                })
            )
        );
    } else {
        println!(
            "{matched} of {total} scenarios match their expectation{}; {ablations_matched} of {ablations} protections are load-bearing",
            if matched == total {
                String::new()
            } else {
                format!(", {} do not", total - matched)
            }
        );
    }
    Ok(if matched == total {
        crate::exit::HOLDS
    } else {
        crate::exit::VIOLATION
    })
}
