//! `idemsim verify`: every scenario against its `[expect]`, as a table or JSON Lines.

use crate::render::json_line;
use crate::scenarios::{self, UsageError};
use models::situation;
use sim::{explore, SeedRange};
use std::sync::atomic::AtomicBool;

#[derive(clap::Args)]
pub struct Args {
    /// Scenario names or .toml paths [default: every file in scenarios/].
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
    let stop = AtomicBool::new(false);
    let mut matched = 0usize;
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
    for s in &loaded {
        let budget = match (a.runs, a.max_runs) {
            (Some(n), _) => n,
            (None, Some(m)) => s.runs.min(m),
            (None, None) => s.runs,
        };
        let sum = explore(
            &s.system,
            SeedRange {
                start: 0,
                end: budget,
            },
            jobs,
            &stop,
            &|_| {},
        );
        let j = s.expect.judge(&sum);
        if j.matched() {
            matched += 1;
        }
        let found = match j.invariant {
            Some(i) => format!("{} ({i})", j.found.as_str()),
            None => j.found.as_str().to_string(),
        };
        let reached = situation::names(sum.situations);
        if a.json {
            println!(
                "{}",
                json_line(
                    "scenario",
                    serde_json::json!({
                        "scenario": s.name,
                        "expected": s.expect.verdict.as_str(),
                        "expected_invariant": s.expect.invariant,
                        "found": j.found.as_str(),
                        "invariant": j.invariant,
                        "matched": j.matched(),
                        "mismatch": j.mismatch,
                        "seeds": sum.schedules,
                        "lowest_failing_seed": j.lowest_failing_seed,
                        "situations": reached,
                        "situations_missing": j.missing,
                    })
                )
            );
        } else {
            let lowest = j
                .lowest_failing_seed
                .map_or_else(|| "-".to_string(), |s| s.to_string());
            println!(
                "{:<width$}  {:<36} {:<36} {:>7} {:>8}  {}",
                s.name,
                s.expect.describe(),
                found,
                sum.schedules,
                lowest,
                if reached.is_empty() {
                    "none".to_string()
                } else {
                    reached.join(", ")
                }
            );
            if let Some(m) = &j.mismatch {
                println!("{:<width$}  MISMATCH: {m}", "");
            }
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
                })
            )
        );
    } else {
        println!(
            "{matched} of {total} scenarios match their expectation{}",
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
