//! `idemsim shrink`: cut a failing seed down to a locally minimal run, print
//! it in any trace format and write it as a repro file. Also the shared code
//! `check` and `replay` use for shrinking, traces and repro files.

use crate::render::formats::{self, Format};
use crate::render::items::{self, Header, ShrinkInfo, Trace};
use crate::scenarios::{self, UsageError};
use models::Scenario;
use sim::shrink::{self as shr, ShrinkLimits, Shrunk};
use sim::{explore, Outcome, Record, Recorder, RunReport, SeedRange, Sim};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file.
    #[arg(required_unless_present = "all")]
    scenario: Option<String>,
    /// The failing seed [default: the lowest failing seed of the scenario's runs].
    #[arg(long)]
    seed: Option<u64>,
    /// Trace format of the shrunk run.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the shrunk run as a repro file (JSON) for `idemsim replay --repro`.
    #[arg(long, value_name = "FILE")]
    out: Option<String>,
    /// Override a scenario key before validation, e.g. client.key=stable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Shrink the lowest failing seed of every scenario that expects a violation.
    #[arg(long, conflicts_with_all = ["scenario", "seed", "out"])]
    all: bool,
    /// Print a table of events before and after shrinking and the time it took,
    /// instead of traces (the numbers in docs/shrinking.md come from `--all --stats`).
    #[arg(long)]
    stats: bool,
}

/// Seeds searched for a failure when none is given.
pub const SEARCH_CAP: u64 = 100_000;

/// A shrunk failure with everything needed to show it.
pub struct Done {
    pub seed: u64,
    pub shrunk: Shrunk,
    pub trace: Trace,
    pub original_lines: usize,
    pub elapsed: Duration,
}

/// Runs `record` with a trace and builds the full trace, with its point of no return.
pub fn traced(
    s: &Scenario,
    record: &Record,
    source: String,
    shrink: Option<ShrinkInfo>,
) -> (Trace, RunReport) {
    let mut sim = Sim::new(&s.system);
    let turn = shr::point_of_no_return(&mut sim, &s.system, record);
    let mut rec = Recorder::default();
    let report = shr::replay(&mut sim, &s.system, record, false, &mut rec);
    let header = Header {
        scenario: s.name.clone(),
        source,
        events: report.events,
        actors: s.system.world.actor_names.clone(),
        shrink,
    };
    let t = items::trace(
        &s.system.world,
        header,
        &rec.entries,
        &report,
        turn.as_ref(),
    );
    (t, report)
}

/// Lines of the text trace between its header and its last line.
pub fn body_lines(t: &Trace) -> usize {
    formats::text(t).lines().count().saturating_sub(2)
}

/// Wall-clock time, only to report how long shrinking took: it never reaches
/// a run, which sees virtual time alone.
#[allow(clippy::disallowed_methods)]
fn stopwatch() -> Instant {
    Instant::now()
}

/// Shrinks `seed` of `s`; `None` if the seed does not fail.
pub fn shrink_seed(s: &Scenario, seed: u64) -> Option<Done> {
    let started = stopwatch();
    let mut sim = Sim::new(&s.system);
    let shrunk = shr::shrink_seed(&mut sim, &s.system, seed, ShrinkLimits::default())?;
    let info = ShrinkInfo {
        original_events: shrunk.original_report.events,
        shrunk_events: shrunk.report.events,
        original_decisions: shrunk.original.nonzero_count(),
        shrunk_decisions: shrunk.record.nonzero_count(),
        runs: shrunk.runs,
        complete: shrunk.complete,
    };
    let (trace, _) = traced(
        s,
        &shrunk.record,
        format!("shrunk from seed {seed}"),
        Some(info),
    );
    let elapsed = started.elapsed();
    // Counted like the shrunk trace: the lines `replay --format text` prints.
    let (original, _) = traced(s, &shrunk.original, format!("seed {seed}"), None);
    let original_lines = body_lines(&original);
    Some(Done {
        seed,
        shrunk,
        trace,
        original_lines,
        elapsed,
    })
}

/// The lowest failing seed among the first `cap` seeds of the scenario's runs.
pub fn lowest_failing_seed(s: &Scenario, cap: u64) -> Option<u64> {
    let stop = AtomicBool::new(false);
    let seeds = SeedRange {
        start: 0,
        end: s.runs.min(cap),
    };
    let sum = explore(&s.system, seeds, 1, &stop, &|_| {});
    sum.first_failure.map(|f| f.seed)
}

// ------------------------------------------------------------ repro files

/// A shrunk run on disk: small, and tied to the exact scenario text it came from.
#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq, Eq)]
pub struct Repro {
    /// The idemsim version that wrote it.
    pub idemsim: String,
    pub scenario: String,
    /// The scenario file it was made from, as shown in messages.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    /// FNV-1a of the scenario's effective text (after `--set`), in hex.
    pub scenario_hash: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<u64>,
    /// Decision values per stream, by stream name; streams not listed are all zeros.
    pub choices: BTreeMap<String, Vec<u64>>,
}

pub fn hash_hex(h: u64) -> String {
    format!("{h:016x}")
}

pub fn repro_of(
    s: &Scenario,
    sets: &[String],
    seed: Option<u64>,
    record: &Record,
    outcome: &Outcome,
) -> Repro {
    let world = &s.system.world;
    let choices = record
        .streams
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(i, v)| (shr::stream_name(world, i as sim::StreamId), v.clone()))
        .collect();
    let (invariant, operation) = match outcome {
        Outcome::Violation(v) => (Some(v.invariant.to_string()), Some(v.operation)),
        _ => (None, None),
    };
    Repro {
        idemsim: env!("CARGO_PKG_VERSION").to_string(),
        scenario: s.name.clone(),
        file: s.file.clone(),
        scenario_hash: hash_hex(s.hash),
        sets: sets.to_vec(),
        seed,
        invariant,
        operation,
        choices,
    }
}

/// Puts each list of decision values on one line, so a repro stays short to read.
fn one_line_arrays(pretty: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in pretty.lines() {
        let t = line.trim();
        match &mut open {
            Some((head, items)) if t.starts_with(']') => {
                out.push(format!("{head}{}{t}", items.join(", ")));
                open = None;
            }
            Some((_, items)) if t.trim_end_matches(',').parse::<u64>().is_ok() => {
                items.push(t.trim_end_matches(',').to_string());
            }
            Some((head, items)) => {
                // Not a list of numbers after all: keep it as it was.
                out.push(head.clone());
                out.append(items);
                out.push(line.to_string());
                open = None;
            }
            None if t.ends_with('[') => open = Some((line.to_string(), Vec::new())),
            None => out.push(line.to_string()),
        }
    }
    out.join("\n")
}

pub fn write_repro(path: &str, r: &Repro) -> Result<(), UsageError> {
    let text =
        one_line_arrays(&serde_json::to_string_pretty(r).expect("a repro serializes")) + "\n";
    std::fs::write(path, text)
        .map_err(|e| UsageError(format!("error: cannot write repro file {path}: {e}\n")))
}

/// Reads a repro file and loads its scenario (by name, or `scenario` if given),
/// refusing one whose scenario text has changed since.
pub fn load_repro(
    path: &str,
    scenario: Option<&str>,
) -> Result<(Repro, Scenario, Record), UsageError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("error: cannot read repro file {path}: {e}\n")))?;
    let r: Repro = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "error: {path}:{}:{}: not a repro file: {e}\nhelp: write one with `idemsim shrink SCENARIO --seed S --out {path}`\n",
            e.line(),
            e.column()
        ))
    })?;
    let overrides = scenarios::parse_overrides(&r.sets)?;
    // An explicit scenario, else the file it was made from, else its name in scenarios/.
    let from_file =
        (!r.file.is_empty() && std::path::Path::new(&r.file).is_file()).then_some(r.file.as_str());
    let s = scenarios::load(scenario.or(from_file).unwrap_or(&r.scenario), &overrides)?;
    if hash_hex(s.hash) != r.scenario_hash {
        return Err(UsageError(format!(
            "error: {path}: the repro was recorded against scenario `{}` with hash {}, but {} now hashes to {}\n\
             help: the scenario changed since, so these choices would make a different run; \
             restore that version of the scenario, or make a new repro with `idemsim shrink {}{} --seed {} --out {path}`\n",
            r.scenario,
            r.scenario_hash,
            s.file,
            hash_hex(s.hash),
            r.scenario,
            r.sets.iter().map(|x| format!(" --set {x}")).collect::<String>(),
            r.seed.map_or("S".to_string(), |x| x.to_string()),
        )));
    }
    let world = &s.system.world;
    let mut record = Record::with_streams(
        sim::StreamLayout {
            actors: world.actor_count(),
        }
        .count(),
    );
    for (name, values) in &r.choices {
        let id = shr::stream_by_name(world, name).ok_or_else(|| {
            UsageError(format!(
                "error: {path}: no decision stream `{name}` in scenario `{}`\nhelp: streams are named swarm, link:A->B, crash:A, actor:A after the scenario's actors\n",
                s.name
            ))
        })?;
        record.streams[id as usize] = values.clone();
    }
    Ok((r, s, record))
}

// ------------------------------------------------------------ the command

pub fn run(a: Args) -> Result<u8, UsageError> {
    if a.all {
        return run_all(&a);
    }
    let name = a
        .scenario
        .as_deref()
        .expect("clap requires it without --all");
    let overrides = scenarios::parse_overrides(&a.set)?;
    let s = scenarios::load(name, &overrides)?;
    let seed = match a.seed {
        Some(seed) => seed,
        None => match lowest_failing_seed(&s, SEARCH_CAP) {
            Some(seed) => seed,
            None => {
                println!(
                    "{}: no seed of {} fails, nothing to shrink",
                    s.name,
                    s.runs.min(SEARCH_CAP)
                );
                if s.strategy == models::scenario::Strategy::Coverage {
                    println!(
                        "help: this scenario is searched coverage-guided: `idemsim check {}` finds and shrinks its failure",
                        s.name
                    );
                }
                return Ok(crate::exit::HOLDS);
            }
        },
    };
    let Some(done) = shrink_seed(&s, seed) else {
        println!("{}: seed {seed} does not fail, nothing to shrink", s.name);
        return Ok(crate::exit::HOLDS);
    };
    if let Some(path) = &a.out {
        let r = repro_of(
            &s,
            &a.set,
            Some(seed),
            &done.shrunk.record,
            &done.shrunk.report.outcome,
        );
        write_repro(path, &r)?;
        eprintln!("wrote {path}: replay it with `idemsim replay --repro {path}`");
    }
    if a.stats {
        print!("{}", stats_header());
        println!("{}", stats_row(&s, &done));
    } else {
        print!("{}", formats::render(a.format, &done.trace));
    }
    Ok(super::check::exit_code(&done.shrunk.report.outcome))
}

fn stats_header() -> String {
    "| scenario | seed | invariant | events before | events after | trace lines before | trace lines after | nonzero decisions before | after | reruns | time |\n\
     |---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        .to_string()
}

fn stats_row(s: &Scenario, d: &Done) -> String {
    let inv = match &d.shrunk.report.outcome {
        Outcome::Violation(v) => v.invariant.to_string(),
        other => crate::render::outcome_sentence(other),
    };
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} ms{} |",
        s.name,
        d.seed,
        inv,
        d.shrunk.original_report.events,
        d.shrunk.report.events,
        d.original_lines,
        body_lines(&d.trace),
        d.shrunk.original.nonzero_count(),
        d.shrunk.record.nonzero_count(),
        d.shrunk.runs,
        d.elapsed.as_secs_f64() * 1000.0,
        if d.shrunk.complete {
            ""
        } else {
            " (bound hit)"
        }
    )
}

fn run_all(a: &Args) -> Result<u8, UsageError> {
    let overrides = scenarios::parse_overrides(&a.set)?;
    if a.stats {
        print!("{}", stats_header());
    }
    for path in scenarios::all() {
        let s = scenarios::load(&path.to_string_lossy(), &overrides)?;
        if s.expect.verdict != models::scenario::Verdict::Violation {
            continue;
        }
        if s.strategy == models::scenario::Strategy::Coverage {
            eprintln!(
                "{}: searched coverage-guided, no failing seed to shrink; `idemsim check {}` shrinks what its search finds",
                s.name, s.name
            );
            continue;
        }
        let Some(seed) = lowest_failing_seed(&s, SEARCH_CAP) else {
            eprintln!(
                "{}: expects a violation, but no seed of {} fails",
                s.name, s.runs
            );
            continue;
        };
        let done = shrink_seed(&s, seed).expect("the seed failed in the sweep");
        if a.stats {
            println!("{}", stats_row(&s, &done));
        } else {
            print!("{}", formats::render(a.format, &done.trace));
            println!();
        }
    }
    Ok(crate::exit::HOLDS)
}

// ------------------------------------------------------------ for `check`

/// What `check` does after its sweep: shrink the lowest failing seed (unless
/// told not to), write the repro file if asked, and return the text trace.
pub fn for_check(
    s: &Scenario,
    sets: &[String],
    failing_seed: Option<u64>,
    no_shrink: bool,
    repro_out: Option<&str>,
) -> Result<Option<Done>, UsageError> {
    let Some(seed) = failing_seed else {
        return Ok(None);
    };
    if no_shrink {
        if let Some(path) = repro_out {
            // Unshrunk: the seed's own decisions, still exact.
            let mut sim = Sim::new(&s.system);
            let (record, report) = shr::record_seed(&mut sim, &s.system, seed);
            write_repro(
                path,
                &repro_of(s, sets, Some(seed), &record, &report.outcome),
            )?;
        }
        return Ok(None);
    }
    let done = shrink_seed(s, seed).expect("the sweep's failing seed fails when rerun");
    if let Some(path) = repro_out {
        let r = repro_of(
            s,
            sets,
            Some(seed),
            &done.shrunk.record,
            &done.shrunk.report.outcome,
        );
        write_repro(path, &r)?;
    }
    Ok(Some(done))
}
