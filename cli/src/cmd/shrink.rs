//! `idemsim shrink`: cut a failing run down to a locally minimal one, print
//! it in any trace format and write it as a repro file; and what `check` does
//! with its lowest failing seed ([`for_check`]). Without `--seed` it shrinks
//! the failure `check` shows, found by the same seeds and searches
//! (`idemsim::testing::shown`) and shrunk the same way. The shrinking itself is the
//! library's (`idemsim::minimize`), repro files are `idemsim::repro`'s.

use idemsim::catalog::{self, UsageError};
use idemsim::minimize::{
    body_lines, shrink_seed_or_long, too_long_note, unrecorded_run, Budget, Cut, Done, SeedShrink,
    MAX_SHRINK_EVENTS,
};
use idemsim::render::formats::{self, Format};
use idemsim::repro::{note_explicit, replay_command, repro_of, write_repro};
use idemsim::testing::portfolio::{Found, Part};
use idemsim::testing::shown::{self, CheckFailure, Plan, SearchedFailure};
use models::Scenario;
use sim::shrink as shr;
use sim::{Outcome, SeedRange, Sim};
use std::sync::atomic::AtomicBool;

#[derive(clap::Args)]
/// The arguments of `idemsim shrink`.
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file.
    #[arg(required_unless_present = "all")]
    scenario: Option<String>,
    /// The failing seed [default: the failure `idemsim check` of the file shows:
    /// its lowest failing seed, else the failure of the searches it runs after
    /// the seeds].
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
    /// Shrink the failure `check` shows of every scenario that expects a violation.
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
    let shown = match a.seed {
        Some(seed) => Some(CheckFailure::Seed(seed)),
        None => failure_check_shows(&s, &entry, &a.set)?,
    };
    match shown {
        None => Ok(nothing_to_shrink(&a, &s)),
        Some(CheckFailure::Seed(seed)) => shrink_one_seed(&a, &s, &entry, seed, budget),
        Some(CheckFailure::Search(found)) => {
            idemsim::eoutln!("{}", found_note(&s, &found));
            let Some(done) = shrink_search(&s, &entry, &found, budget, |note| {
                if let Some(path) = &a.out {
                    idemsim::eoutln!("no repro file written to {path}: nothing replays the run");
                }
                say(&a, note);
            })?
            else {
                return Ok(super::common::exit_code(&found.outcome));
            };
            print_shrunk(&a, &s, &entry, &done, &search_label(&found))
        }
    }
}

/// The failure `check` of `s` as written shows, for `shrink` without
/// `--seed`: the same seeds and searches (`idemsim::testing::shown`).
fn failure_check_shows(
    s: &Scenario,
    entry: &catalog::Entry,
    sets: &[String],
) -> Result<Option<CheckFailure>, UsageError> {
    let sets: String = sets
        .iter()
        .map(|x| format!(" --set {}", super::common::shell_word(x)))
        .collect();
    let replay = format!("idemsim replay {}{sets}", entry.shell_arg());
    let seeds = SeedRange {
        start: 0,
        end: s.runs.into(),
    };
    // Ctrl-C cuts the shrink short (its trace says so), not the search
    // for what to shrink, which would then find nothing.
    let stop = AtomicBool::new(false);
    shown::check_failure(s, &replay, seeds, super::common::jobs(None)?, &stop)
}

/// Stderr's line before a search's failure: which of `check`'s searches
/// found it, in `check`'s words, so the trace is known for the one
/// `check` shows.
fn found_note(s: &Scenario, found: &Found) -> String {
    let part = found.part.as_str();
    let why = match Plan::of(s) {
        Plan::Coverage => "its coverage-guided search (run.strategy)".to_string(),
        _ => format!("no seed of {} fails", s.runs),
    };
    format!(
        "{}: {why}; failure shown found by {part}, as in `idemsim check`: {}",
        s.name,
        found.what()
    )
}

/// A search's failure shrunk as `check` shrinks it (`SearchedFailure`);
/// `None` when its run was too long to record (`unrecorded` is given the
/// sentence) or a signal broke the reruns off (said on stderr).
fn shrink_search(
    s: &Scenario,
    entry: &catalog::Entry,
    found: &Found,
    budget: Budget,
    unrecorded: impl FnOnce(&str),
) -> Result<Option<Done>, UsageError> {
    idemsim::external::check_outcome(s, &found.what(), &found.outcome)?;
    match SearchedFailure::shrink(s, found, budget, false) {
        Some(f) => Ok(f.done),
        None => {
            unrecorded(&found.unrecorded_note(&entry.shell_arg()));
            Ok(None)
        }
    }
}

/// The `--stats` seed column of a search's failure: `#5` for a schedule
/// of the coverage-guided search, `exhaustive ≤ 3 faults`.
fn search_label(found: &Found) -> String {
    match found.part {
        Part::Exhaustive(k) => format!("exhaustive ≤ {k} faults"),
        _ => format!("#{}", found.after),
    }
}

/// A sentence about the scenario instead of a trace: on stdout under the
/// text format, on stderr under a machine format, whose stdout stays empty
/// rather than a document a reader cannot parse.
fn say(a: &Args, line: &str) {
    if a.format == Format::Text {
        idemsim::outln!("{line}");
    } else {
        idemsim::eoutln!("{line}");
    }
}

/// Shrinks seed `seed` (given, or `check`'s lowest failing seed) and prints it.
fn shrink_one_seed(
    a: &Args,
    s: &Scenario,
    entry: &catalog::Entry,
    seed: u64,
    budget: Budget,
) -> Result<u8, UsageError> {
    match shrink_seed_or_long(s, seed, budget) {
        SeedShrink::Done(done) => print_shrunk(a, s, entry, &done, &seed.to_string()),
        SeedShrink::Holds if a.seed.is_some() => Ok(nothing_to_shrink(a, s)),
        SeedShrink::Holds => Err(not_failing(s, seed)),
        SeedShrink::TooLong(report) => {
            idemsim::external::check_outcome(s, &format!("seed {seed}"), &report.outcome)?;
            idemsim::outln!("{}", too_long_note(s, seed, &report));
            if let Some(path) = &a.out {
                idemsim::outln!("no repro file written to {path}: the seed reproduces the run");
            }
            Ok(super::common::exit_code(&report.outcome))
        }
    }
}

/// Says why there is nothing to shrink, and exits as `check` would: 0 when
/// the run holds, 3 when the given seed's run is inconclusive (it hit a
/// limit).
fn nothing_to_shrink(a: &Args, s: &Scenario) -> u8 {
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
        None => (none_found(s), idemsim::exit::HOLDS),
    };
    say(a, &format!("{}: {what}, nothing to shrink", s.name));
    code
}

/// What `check` of `s` ran and found no failure in.
fn none_found(s: &Scenario) -> String {
    match Plan::of(s) {
        Plan::Coverage => format!(
            "its coverage-guided search of {} schedules finds no failure",
            s.runs
        ),
        Plan::Seeds => format!("no seed of {} fails", s.runs),
        Plan::Portfolio => format!(
            "neither its {} seeds nor check's two searches after them find a failure",
            s.runs
        ),
    }
}

/// The shrunk failure of one scenario: its repro file if asked, then the
/// trace or the `--stats` row (`label` in its seed column).
fn print_shrunk(
    a: &Args,
    s: &Scenario,
    entry: &catalog::Entry,
    done: &Done,
    label: &str,
) -> Result<u8, UsageError> {
    let seed = (!done.searched).then_some(done.seed);
    if let Some(seed) = seed {
        let what = format!("seed {seed}");
        idemsim::external::check_outcome(s, &what, &done.shrunk.original_report.outcome)?;
    }
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
        idemsim::outln!("{}", stats_row(s, done, label));
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

fn stats_row(s: &Scenario, d: &Done, label: &str) -> String {
    let inv = match &d.shrunk.report.outcome {
        Outcome::Violation(v) => v.invariant.to_string(),
        other => idemsim::render::outcome_sentence(other),
    };
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} ms{} |",
        s.name,
        label,
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
        // What `check` of it shows, shrunk as `check` shrinks it.
        let (done, label) = match failure_check_shows(&s, &entry, &a.set)? {
            None => {
                let none = none_found(&s);
                idemsim::eoutln!("{}: expects a violation, but {none}", s.name);
                continue;
            }
            Some(CheckFailure::Search(found)) => {
                let unrecorded = |note: &str| idemsim::eoutln!("{}: {note}", s.name);
                match shrink_search(&s, &entry, &found, budget, unrecorded)? {
                    Some(done) => (done, search_label(&found)),
                    None => continue,
                }
            }
            Some(CheckFailure::Seed(seed)) => match shrink_seed_or_long(&s, seed, budget) {
                SeedShrink::Done(done) => (*done, seed.to_string()),
                SeedShrink::Holds => return Err(not_failing(&s, seed)),
                SeedShrink::TooLong(report) => {
                    idemsim::eoutln!("{}", too_long_note(&s, seed, &report));
                    continue;
                }
            },
        };
        print_all(a, &s, &done, &label, &mut chrome);
    }
    if a.format == Format::Chrome && !a.stats {
        idemsim::outln!("{}", one_chrome_document(chrome));
    }
    Ok(idemsim::exit::HOLDS)
}

/// One scenario's part of `shrink --all`: a row of `--stats`, or the trace
/// named for its scenario. Chrome traces are one JSON document each, so they
/// are gathered in `chrome` and printed as one document at the end.
fn print_all(
    a: &Args,
    s: &Scenario,
    done: &Done,
    label: &str,
    chrome: &mut Vec<serde_json::Value>,
) {
    if a.stats {
        idemsim::outln!("{}", stats_row(s, done, label));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `check`'s failure is a search's whose run makes more decisions than
    /// a record holds (a bound of 10 values here): `shrink` gives the note
    /// that says so, with what to do, and shrinks nothing; with the real
    /// bound it shrinks that same failure.
    #[test]
    fn a_search_failure_too_long_to_record_is_said_not_shrunk() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/expect_reach/lost-only-by-a-search.toml"
        );
        let entry = catalog::locate(path).unwrap();
        let s = catalog::load_entry(&entry, &[]).unwrap();
        let shrink = |bound| {
            sim::with_record_bound(bound, || {
                let Some(CheckFailure::Search(found)) =
                    failure_check_shows(&s, &entry, &[]).unwrap()
                else {
                    panic!("no seed fails: check shows a search's failure");
                };
                let mut said = None;
                let note = |n: &str| said = Some(n.to_string());
                let done = shrink_search(&s, &entry, &found, Budget::default(), note).unwrap();
                (found.what(), done.map(|d| d.shrunk.report.events), said)
            })
        };
        let (what, events, said) = shrink(sim::MAX_RECORDED_VALUES);
        assert_eq!(what, "coverage-guided schedule #5");
        assert_eq!((events, said), (Some(27), None));
        let (what, events, said) = shrink(10);
        assert_eq!(
            (what.as_str(), events),
            ("coverage-guided schedule #5", None)
        );
        let said = said.expect("the failure is said, not dropped");
        assert!(
            said.starts_with("coverage-guided schedule #5 fails (violation of no-lost-effect"),
            "{said}"
        );
        assert!(said.contains("so nothing replays it"), "{said}");
        assert!(
            said.contains("\nhelp: a failing seed replays without a record"),
            "{said}"
        );
    }
}
