//! `idemsim verify`: every scenario against its `[expect]`, as a table or JSON Lines.

use crate::render::json_line;
use crate::scenarios::{self, UsageError};
use models::situation;
use sim::{explore, SeedRange};
use std::sync::atomic::Ordering;

#[derive(clap::Args)]
pub struct Args {
    /// Scenario names or .toml paths [default: every scenario of `idemsim list`].
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
    /// JSON Lines on stdout: one `verify` line per scenario, then a `verify_summary`.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<u8, UsageError> {
    let jobs = super::check::jobs(a.jobs)?;
    if a.runs == Some(0) || a.max_runs == Some(0) {
        return Err(UsageError("error: --runs must be at least 1\nhelp: give the number of seeds to run, e.g. --runs 1000\n".into()));
    }
    let entries = if a.scenarios.is_empty() {
        scenarios::catalog()?
    } else {
        a.scenarios
            .iter()
            .map(|n| scenarios::locate(n))
            .collect::<Result<Vec<_>, _>>()?
    };
    // Load every file first, so a bad one stops the run before any sweep.
    let mut loaded = Vec::with_capacity(entries.len());
    for e in &entries {
        loaded.push(scenarios::load_entry(e, &[])?);
    }
    crate::progress::install_ctrl_c();
    let stop = &crate::progress::STOP;
    let mut matched = 0usize;
    let mut judged = 0usize;
    let mut interrupted = false;
    let width = loaded
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    if !a.json {
        crate::outln!(
            "{:<width$}  {:<36} {:<36} {:>7} {:>8}  situations reached",
            "scenario",
            "expected",
            "found",
            "seeds",
            "lowest"
        );
    }
    for s in &loaded {
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
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
            stop,
            &|_| {},
        );
        if sum.interrupted {
            // Seeds 0..schedules ran (sim::explore): shown, never judged.
            interrupted = true;
            let reached = situation::names(sum.situations);
            if a.json {
                crate::outln!(
                    "{}",
                    json_line(
                        "verify",
                        serde_json::json!({
                            "scenario": s.name,
                            "expected": s.expect.verdict.as_str(),
                            "expected_invariant": s.expect.invariant,
                            "found": "interrupted",
                            "invariant": sum.violation().map(|v| v.invariant),
                            "matched": false,
                            "mismatch": null,
                            "schedules": sum.schedules,
                            "seeds": {"start": 0, "end": sum.schedules},
                            "lowest_failing_seed": sum.first_failure.as_ref().map(|f| f.seed),
                            "situations": reached,
                            "situations_missing": [],
                        })
                    )
                );
            } else {
                crate::outln!(
                    "{:<width$}  {:<36} {:<36} {:>7} {:>8}  interrupted (Ctrl-C) after seeds 0..{} of 0..{budget}: not judged",
                    s.name,
                    s.expect.describe(),
                    "interrupted",
                    sum.schedules,
                    sum.first_failure.as_ref().map_or_else(|| "-".to_string(), |f| f.seed.to_string()),
                    sum.schedules,
                );
            }
            break;
        }
        judged += 1;
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
            crate::outln!(
                "{}",
                json_line(
                    "verify",
                    serde_json::json!({
                        "scenario": s.name,
                        "expected": s.expect.verdict.as_str(),
                        "expected_invariant": s.expect.invariant,
                        "found": j.found.as_str(),
                        "invariant": j.invariant,
                        "matched": j.matched(),
                        "mismatch": j.mismatch,
                        "schedules": sum.schedules,
                        "seeds": {"start": 0, "end": budget},
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
            crate::outln!(
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
                crate::outln!("{:<width$}  MISMATCH: {m}", "");
            }
        }
    }
    let total = loaded.len();
    if interrupted {
        let text = format!(
            "interrupted (Ctrl-C): {judged} of {total} scenarios judged, {matched} match their expectation; the rest did not run"
        );
        if a.json {
            crate::eoutln!("{text}");
            crate::outln!(
                "{}",
                json_line(
                    "verify_summary",
                    serde_json::json!({
                        "total": total,
                        "judged": judged,
                        "matched": matched,
                        "mismatched": judged - matched,
                        "interrupted": true,
                    })
                )
            );
        } else {
            crate::outln!("{text}");
        }
        return Ok(if matched < judged {
            crate::exit::VIOLATION
        } else {
            crate::progress::INTERRUPTED
        });
    }
    if a.json {
        crate::outln!(
            "{}",
            json_line(
                "verify_summary",
                serde_json::json!({
                    "total": total,
                    "judged": judged,
                    "matched": matched,
                    "mismatched": total - matched,
                    "interrupted": false,
                })
            )
        );
    } else {
        crate::outln!(
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
