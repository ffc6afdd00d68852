//! `idemsim shrink`: cut a failing seed down to a locally minimal run, print
//! it in any trace format and write it as a repro file; and what `check` does
//! with its lowest failing seed ([`for_check`]). The shrinking itself is the
//! library's (`idemsim::minimize`), repro files are `idemsim::repro`'s.

use idemsim::catalog::{self, UsageError};
use idemsim::minimize::{
    body_lines, lowest_failing_seed, shrink_searched, shrink_seed_or_long, too_long_note,
    unrecorded_run, Budget, Cut, Done, SeedShrink, MAX_SHRINK_EVENTS, SEARCH_CAP,
};
use idemsim::render::formats::{self, Format};
use idemsim::repro::{note_explicit, replay_command, repro_of, write_repro};
use models::Scenario;
use sim::shrink as shr;
use sim::{Outcome, Sim};

#[derive(clap::Args)]
/// The arguments of `idemsim shrink`.
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
    /// Most candidate reruns shrinking may spend [default: 20000].
    #[arg(long, value_name = "N")]
    shrink_max_runs: Option<u32>,
    /// Most wall-clock milliseconds shrinking may take [default: 30000].
    #[arg(long, value_name = "MS")]
    shrink_budget_ms: Option<u64>,
}

/// Runs `idemsim shrink`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let budget = Budget::from_flags(a.shrink_max_runs, a.shrink_budget_ms)?;
    idemsim::progress::install_ctrl_c();
    if a.all {
        return run_all(&a, budget);
    }
    let name = a
        .scenario
        .as_deref()
        .expect("clap requires it without --all");
    let overrides = catalog::parse_overrides(&a.set)?;
    let entry = catalog::locate(name)?;
    let s = catalog::load_entry(&entry, &overrides)?;
    let coverage = s.strategy == models::scenario::Strategy::Coverage;
    let by_seed = |seed| match shrink_seed_or_long(&s, seed, budget) {
        SeedShrink::Done(d) => Ok(Some(*d)),
        SeedShrink::Holds => Ok(None),
        SeedShrink::TooLong(report) => Err((seed, Box::new(report))),
    };
    let done = match a.seed {
        Some(seed) => by_seed(seed),
        // A scenario searched coverage-guided: shrink what its search finds.
        None if coverage => Ok(shrink_searched(&s, budget)),
        None => match lowest_failing_seed(&s, SEARCH_CAP) {
            Some(seed) => by_seed(seed),
            // No seed fails, and the file leaves the search to the default:
            // shrink what the coverage-guided search after the seeds finds.
            None if s.searches_after_seeds() => Ok(shrink_searched(&s, budget)),
            None => Ok(None),
        },
    };
    let done = match done {
        Ok(done) => done,
        Err((seed, report)) => {
            idemsim::external::check_outcome(&s, &format!("seed {seed}"), &report.outcome)?;
            idemsim::outln!("{}", too_long_note(&s, seed, &report));
            if let Some(path) = &a.out {
                idemsim::outln!("no repro file written to {path}: the seed reproduces the run");
            }
            return Ok(super::common::exit_code(&report.outcome));
        }
    };
    let Some(done) = done else {
        return Ok(nothing_to_shrink(&a, &s, coverage));
    };
    print_shrunk(&a, &s, &entry, &done)
}

/// Says why there is nothing to shrink, and exits as `check` would: 0 when
/// the run holds, 3 when the given seed's run is inconclusive (it hit a
/// limit). The sentence goes to stderr under a machine format, whose stdout
/// stays empty rather than a document a reader cannot parse.
fn nothing_to_shrink(a: &Args, s: &Scenario, coverage: bool) -> u8 {
    let (what, code) = match a.seed {
        Some(seed) => {
            let outcome = idemsim::minimize::unrecorded_run(s, seed).outcome;
            let code = super::common::exit_code(&outcome);
            let how = if code == idemsim::exit::INCONCLUSIVE {
                format!(
                    "seed {seed} is {}",
                    idemsim::render::outcome_sentence(&outcome)
                )
            } else {
                format!("seed {seed} does not fail")
            };
            (how, code)
        }
        None if coverage => (
            format!(
                "its coverage-guided search of {} schedules finds no failure",
                s.runs
            ),
            idemsim::exit::HOLDS,
        ),
        None => (
            format!("no seed of {} fails", s.runs.min(SEARCH_CAP)),
            idemsim::exit::HOLDS,
        ),
    };
    let line = format!("{}: {what}, nothing to shrink", s.name);
    if a.format == Format::Text {
        idemsim::outln!("{line}");
    } else {
        idemsim::eoutln!("{line}");
    }
    code
}

/// The shrunk failure of one scenario: its repro file if asked, then the
/// trace or the `--stats` row.
fn print_shrunk(
    a: &Args,
    s: &Scenario,
    entry: &catalog::Entry,
    done: &Done,
) -> Result<u8, UsageError> {
    let seed = done.seed;
    let seed = (!done.searched).then_some(seed);
    let seed_text = match seed {
        Some(seed) => format!("seed {seed}"),
        None => format!("coverage-guided schedule #{}", done.seed + 1),
    };
    idemsim::external::check_outcome(s, &seed_text, &done.shrunk.original_report.outcome)?;
    if let Some(path) = &a.out {
        let r = repro_of(
            s,
            entry,
            &a.set,
            seed,
            &done.shrunk.record,
            &done.shrunk.report.outcome,
        );
        let explicit = write_repro(path, &r)?;
        idemsim::eoutln!(
            "wrote {path}: replay it with `{}`",
            replay_command(path, explicit.as_deref())
        );
    }
    if a.stats {
        idemsim::out!("{}", stats_header());
        idemsim::outln!("{}", stats_row(s, done));
    } else {
        idemsim::out!("{}", formats::render(a.format, &done.trace));
    }
    Ok(super::common::exit_code(&done.shrunk.report.outcome))
}

fn stats_header() -> String {
    "| scenario | seed | invariant | events before | events after | trace lines before | trace lines after | nonzero decisions before | after | reruns | time |\n\
     |---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        .to_string()
}

fn stats_row(s: &Scenario, d: &Done) -> String {
    let inv = match &d.shrunk.report.outcome {
        Outcome::Violation(v) => v.invariant.to_string(),
        other => idemsim::render::outcome_sentence(other),
    };
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} ms{} |",
        s.name,
        if d.searched {
            format!("#{}", d.seed + 1)
        } else {
            d.seed.to_string()
        },
        inv,
        d.shrunk.original_report.events,
        d.shrunk.report.events,
        d.original_lines,
        body_lines(&d.trace),
        d.shrunk.original.nonzero_count(),
        d.shrunk.record.nonzero_count(),
        d.shrunk.runs,
        d.elapsed.as_secs_f64() * 1000.0,
        match d.cut {
            None if d.shrunk.complete => "",
            None => " (bound hit)",
            Some(Cut::Runs) => " (rerun budget hit)",
            Some(Cut::Time) => " (time budget hit)",
            Some(Cut::Interrupted) => " (interrupted)",
            Some(Cut::TooLong) => " (too long to record)",
        }
    )
}

fn run_all(a: &Args, budget: Budget) -> Result<u8, UsageError> {
    let overrides = catalog::parse_overrides(&a.set)?;
    if a.stats {
        idemsim::out!("{}", stats_header());
    }
    let mut chrome = Vec::new();
    for entry in catalog::catalog()? {
        let s = catalog::load_entry(&entry, &overrides)?;
        if s.expected_verdict() != Some(models::scenario::Verdict::Violation) {
            continue;
        }
        if s.strategy == models::scenario::Strategy::Coverage {
            // No seed fails within the budget: shrink what the scenario's own search finds.
            let Some(done) = shrink_searched(&s, budget) else {
                idemsim::eoutln!(
                    "{}: expects a violation, but its coverage-guided search of {} schedules finds none",
                    s.name,
                    s.runs
                );
                continue;
            };
            print_all(a, &s, &done, &mut chrome);
            continue;
        }
        let Some(seed) = lowest_failing_seed(&s, SEARCH_CAP) else {
            if let Some(done) = s
                .searches_after_seeds()
                .then(|| shrink_searched(&s, budget))
                .flatten()
            {
                print_all(a, &s, &done, &mut chrome);
                continue;
            }
            idemsim::eoutln!(
                "{}: expects a violation, but no seed of {} fails",
                s.name,
                s.runs
            );
            continue;
        };
        let done = match shrink_seed_or_long(&s, seed, budget) {
            SeedShrink::Done(done) => done,
            SeedShrink::Holds => return Err(not_failing(&s, seed)),
            SeedShrink::TooLong(report) => {
                idemsim::eoutln!("{}", too_long_note(&s, seed, &report));
                continue;
            }
        };
        print_all(a, &s, &done, &mut chrome);
    }
    if a.format == Format::Chrome && !a.stats {
        idemsim::outln!("{}", one_chrome_document(chrome));
    }
    Ok(idemsim::exit::HOLDS)
}

/// One scenario's part of `shrink --all`: a row of `--stats`, or the trace
/// named for its scenario. Chrome traces are one JSON document each, so they
/// are gathered in `chrome` and printed as one document at the end.
fn print_all(a: &Args, s: &Scenario, done: &Done, chrome: &mut Vec<serde_json::Value>) {
    if a.stats {
        idemsim::outln!("{}", stats_row(s, done));
        return;
    }
    let text = formats::render(a.format, &done.trace);
    let name = &s.name;
    match a.format {
        // The text and JSON traces name their scenario in their first line;
        // JSON Lines take no blank line between runs.
        Format::Json => return idemsim::out!("{text}"),
        Format::Text => idemsim::out!("{text}"),
        Format::Mermaid => {
            let rest = text.strip_prefix("sequenceDiagram\n").unwrap_or(&text);
            idemsim::out!("sequenceDiagram\n    title {name}\n{rest}");
        }
        Format::Dot => {
            let rest = text
                .strip_prefix("digraph happens_before {\n")
                .unwrap_or(&text);
            let quoted = serde_json::to_string(name).expect("a string");
            idemsim::out!("digraph {quoted} {{\n    label={quoted};\n    labelloc=t;\n{rest}");
        }
        Format::Chrome => {
            chrome.push(serde_json::from_str(&text).expect("the chrome trace is JSON"));
            return;
        }
    }
    idemsim::outln!();
}

/// Several chrome traces as one document: each run's processes keep their
/// names, prefixed with the scenario's, and get pids of their own.
fn one_chrome_document(docs: Vec<serde_json::Value>) -> serde_json::Value {
    let mut events = Vec::new();
    let mut scenarios = Vec::new();
    for (i, mut doc) in docs.into_iter().enumerate() {
        let name = doc["otherData"]["scenario"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let offset = 1000 * i as u64;
        let list = doc["traceEvents"].as_array_mut().map(std::mem::take);
        for mut e in list.unwrap_or_default() {
            if let Some(pid) = e["pid"].as_u64() {
                e["pid"] = (pid + offset).into();
            }
            if e["name"] == "process_name" {
                let old = e["args"]["name"].as_str().unwrap_or("").to_string();
                e["args"]["name"] = format!("{name}: {old}").into();
            }
            events.push(e);
        }
        scenarios.push(doc["otherData"].take());
    }
    serde_json::json!({
        "displayTimeUnit": "ms",
        "otherData": {"scenarios": scenarios},
        "traceEvents": events,
    })
}

// ------------------------------------------------------------ for `check`

/// A seed that failed in a sweep does not fail when rerun: the scenario
/// changed in between, or a model is not deterministic (a bug).
fn not_failing(s: &Scenario, seed: u64) -> UsageError {
    UsageError(format!(
        "error: seed {seed} of {} failed in the sweep but not when run again\nhelp: the scenario file changed since the sweep ran (rerun it); if it did not, a model is not deterministic, which is a bug: please report it with this command line\n",
        s.file
    ))
}

/// What `check` does after its sweep: shrink the lowest failing seed (unless
/// told not to), write the repro file if asked, and return the shrunk failure.
pub fn for_check(
    s: &Scenario,
    from: &catalog::Entry,
    sets: &[String],
    failing_seed: Option<u64>,
    no_shrink: bool,
    repro_out: Option<&str>,
    budget: Budget,
) -> Result<Option<Done>, UsageError> {
    let Some(seed) = failing_seed else {
        return Ok(None);
    };
    let broken_off = || {
        let broken = idemsim::signals::reruns_break_off(s);
        if broken {
            let what = format!("seed {seed}");
            idemsim::eoutln!(
                "{}",
                idemsim::signals::not_rerun_note(&what, "not shrunk or traced")
            );
        }
        broken
    };
    // Checked again after shrinking: a signal may come while it reruns.
    if broken_off() {
        return Ok(None);
    }
    if no_shrink {
        if let Some(path) = repro_out {
            let first = unrecorded_run(s, seed);
            if first.events > MAX_SHRINK_EVENTS {
                idemsim::eoutln!(
                    "no repro file written to {path}: seed {seed}'s run has {} events, more than the {MAX_SHRINK_EVENTS} a repro file holds; the seed reproduces it",
                    first.events
                );
                return Ok(None);
            }
            // Unshrunk: the seed's own decisions, still exact.
            let mut sim = Sim::new(&s.system);
            let (record, report) = shr::record_seed(&mut sim, &s.system, seed);
            let explicit = write_repro(
                path,
                &repro_of(s, from, sets, Some(seed), &record, &report.outcome),
            )?;
            note_explicit(path, explicit.as_deref());
        }
        return Ok(None);
    }
    let done = match shrink_seed_or_long(s, seed, budget) {
        SeedShrink::Done(done) => *done,
        SeedShrink::Holds => return Err(not_failing(s, seed)),
        SeedShrink::TooLong(report) => {
            // The summary's repro line names the seed, which is exact; a
            // repro file would hold every decision of the long run.
            idemsim::eoutln!("{}", too_long_note(s, seed, &report));
            if let Some(path) = repro_out {
                idemsim::eoutln!("no repro file written to {path}: the seed reproduces the run");
            }
            return Ok(None);
        }
    };
    if broken_off() {
        return Ok(None);
    }
    if let Some(path) = repro_out {
        let r = repro_of(
            s,
            from,
            sets,
            Some(seed),
            &done.shrunk.record,
            &done.shrunk.report.outcome,
        );
        let explicit = write_repro(path, &r)?;
        note_explicit(path, explicit.as_deref());
    }
    Ok(Some(done))
}
