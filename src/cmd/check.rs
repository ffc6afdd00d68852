use crate::render::{self, json_line};
use crate::scenarios::{self, UsageError};
use models::situation;
use sim::{explore, Outcome, SeedRange};
use std::sync::atomic::AtomicBool;

#[derive(clap::Args)]
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file [default: payment-stable-key].
    scenario: Option<String>,
    /// Number of seeds to run, from 0 [default: the scenario's run.runs].
    #[arg(long, conflicts_with = "seeds")]
    runs: Option<u64>,
    /// Seed range A..B (B exclusive).
    #[arg(long, value_parser = parse_seeds)]
    seeds: Option<SeedRange>,
    /// Worker threads [default: all cores]. The output does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// JSON Lines on stdout; human text goes to stderr.
    #[arg(long)]
    json: bool,
    /// Override a scenario key before validation, e.g. client.retry.max_attempts=3.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Do not shrink the lowest failing seed (see docs/shrinking.md).
    #[arg(long)]
    no_shrink: bool,
    /// Write the lowest failing run (shrunk unless --no-shrink) as a repro file.
    #[arg(long, value_name = "FILE")]
    repro_out: Option<String>,
}

pub fn parse_seeds(s: &str) -> Result<SeedRange, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("`{s}` is not a range A..B, e.g. 0..1000"))?;
    let start: u64 = a
        .trim()
        .parse()
        .map_err(|_| format!("`{a}` is not a seed"))?;
    let end: u64 = b
        .trim()
        .parse()
        .map_err(|_| format!("`{b}` is not a seed"))?;
    if end <= start {
        return Err(format!(
            "empty seed range {start}..{end}: the end is exclusive and must be above the start"
        ));
    }
    Ok(SeedRange { start, end })
}

pub fn exit_code(o: &Outcome) -> u8 {
    match o {
        Outcome::Holds => crate::exit::HOLDS,
        Outcome::Violation(_) | Outcome::Panicked(_) => crate::exit::VIOLATION,
        Outcome::Inconclusive(_) => crate::exit::INCONCLUSIVE,
    }
}

pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub fn run(a: Args) -> Result<u8, UsageError> {
    let name = a.scenario.as_deref().unwrap_or(scenarios::DEFAULT);
    let overrides = scenarios::parse_overrides(&a.set)?;
    let s = scenarios::load(name, &overrides)?;
    let seeds = a.seeds.unwrap_or(SeedRange {
        start: 0,
        end: a.runs.unwrap_or(s.runs),
    });
    if seeds.is_empty() {
        return Err(UsageError("error: --runs must be at least 1\n".into()));
    }
    let jobs = a.jobs.unwrap_or_else(default_jobs);
    if jobs == 0 {
        return Err(UsageError("error: --jobs must be at least 1\n".into()));
    }
    let stop = AtomicBool::new(false);
    let sum = explore(&s.system, seeds, jobs, &stop, &|_| {});
    let (verdict, code) = match (&sum.first_failure, sum.inconclusive) {
        (Some(_), _) => ("violation", crate::exit::VIOLATION),
        (None, 0) => ("holds", crate::exit::HOLDS),
        (None, _) => ("inconclusive", crate::exit::INCONCLUSIVE),
    };
    let invariant = match &sum.first_failure {
        Some(f) => match &f.outcome {
            Outcome::Violation(v) => Some(v.invariant.to_string()),
            Outcome::Panicked(_) => Some("model-panic".to_string()),
            _ => None,
        },
        None => None,
    };
    let seed = sum
        .first_failure
        .as_ref()
        .map(|f| f.seed)
        .or(sum.first_inconclusive.map(|i| i.0));
    let sets: String = a.set.iter().map(|s| format!(" --set {s}")).collect();
    let repro = seed.map(|seed| format!("idemsim replay {}{sets} --seed {seed}", s.name));
    let reached = situation::names(sum.situations);
    let mut lines = Vec::new();
    lines.push(format!(
        "{}: {verdict} over {} schedules (seeds {}..{}), {} events",
        s.name, sum.schedules, seeds.start, seeds.end, sum.events
    ));
    if let Some(f) = &sum.first_failure {
        lines.push(format!(
            "lowest failing seed {}: {}",
            f.seed,
            render::outcome_sentence(&f.outcome)
        ));
        lines.push(format!(
            "failing seeds: {} of {} ({} violations, {} panics)",
            sum.violations + sum.panics,
            sum.schedules,
            sum.violations,
            sum.panics
        ));
    } else if let Some((seed, limit)) = sum.first_inconclusive {
        lines.push(format!(
            "{} runs hit a limit; lowest seed {seed} hit {}",
            sum.inconclusive,
            limit.as_str()
        ));
    }
    lines.push(format!(
        "faults fired: {} lost, {} duplicated, {} partitioned, {} crashes",
        sum.faults.lost, sum.faults.duplicated, sum.faults.partitioned, sum.faults.crashed
    ));
    lines.push(format!(
        "situations reached: {}",
        if reached.is_empty() {
            "none".to_string()
        } else {
            reached.join(", ")
        }
    ));
    if let Some(r) = &repro {
        lines.push(format!("repro: {r}"));
    }
    let text = lines.join("\n") + "\n";
    // Shrinking: the lowest failing seed, cut down to a locally minimal run.
    let shrunk = super::shrink::for_check(
        &s,
        &a.set,
        sum.first_failure.as_ref().map(|f| f.seed),
        a.no_shrink,
        a.repro_out.as_deref(),
    )?;
    let shrunk_text = shrunk.as_ref().map(|d| {
        format!(
            "\nshrunk (docs/shrinking.md):\n{}",
            crate::render::formats::text(&d.trace)
        )
    });
    let original_events = sum.first_failure.as_ref().map(|f| f.events);
    let shrunk_events = shrunk.as_ref().map(|d| d.shrunk.report.events);
    if a.json {
        eprint!("{text}");
        println!(
            "{}",
            json_line(
                "summary",
                serde_json::json!({
                    "scenario": s.name,
                    "verdict": verdict,
                    "invariant": invariant,
                    "seed": seed,
                    "schedules": sum.schedules,
                    "events": sum.events,
                    "violations": sum.violations,
                    "panics": sum.panics,
                    "inconclusive": sum.inconclusive,
                    "faults": {
                        "lost": sum.faults.lost,
                        "duplicated": sum.faults.duplicated,
                        "partitioned": sum.faults.partitioned,
                        "crashed": sum.faults.crashed,
                    },
                    "situations": reached,
                    "repro": repro,
                    "original_events": original_events,
                    "shrunk_events": shrunk_events,
                })
            )
        );
        if let Some(t) = &shrunk_text {
            eprint!("{t}");
        }
    } else {
        print!("{text}");
        if let Some(t) = &shrunk_text {
            print!("{t}");
        }
    }
    Ok(code)
}
