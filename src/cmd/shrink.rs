//! `idemsim shrink`: cut a failing seed down to a locally minimal run, print
//! it in any trace format and write it as a repro file. Also the shared code
//! `check` and `replay` use for shrinking and traces; repro files are
//! `repro_file`'s, re-exported here.

use crate::render::formats::{self, Format};
use crate::render::items::{ShrinkInfo, Trace};
use crate::scenarios::{self, UsageError};
use models::Scenario;
use sim::shrink::{self as shr, ShrinkLimits, Shrunk};
use sim::{Outcome, Record, RunReport, SeedRange, Sim};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

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

/// Seeds searched for a failure when none is given.
pub const SEARCH_CAP: u64 = 100_000;

/// What shrinking may spend: reruns (deterministic) and wall time (enforced
/// here, since `sim` reads no clock; a result cut by it depends on the
/// machine's speed, and the trace's header says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Candidate reruns, at most.
    pub max_runs: u32,
    /// Wall-clock time, at most.
    pub time: Duration,
}

impl Budget {
    /// Reruns when `--shrink-max-runs` is not given.
    pub const DEFAULT_RUNS: u32 = 20_000;
    /// Milliseconds when `--shrink-budget-ms` is not given.
    pub const DEFAULT_MS: u64 = 30_000;

    /// From `--shrink-max-runs` and `--shrink-budget-ms`, each defaulted.
    pub fn from_flags(max_runs: Option<u32>, ms: Option<u64>) -> Result<Budget, UsageError> {
        if max_runs == Some(0) || ms == Some(0) {
            return Err(UsageError(
                "error: --shrink-max-runs and --shrink-budget-ms must be at least 1\nhelp: to skip shrinking, give --no-shrink\n".into(),
            ));
        }
        Ok(Budget {
            max_runs: max_runs.unwrap_or(Budget::DEFAULT_RUNS),
            time: Duration::from_millis(ms.unwrap_or(Budget::DEFAULT_MS)),
        })
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_runs: Budget::DEFAULT_RUNS,
            time: Duration::from_millis(Budget::DEFAULT_MS),
        }
    }
}

/// Why a shrink stopped before it was locally minimal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The rerun budget ran out.
    Runs,
    /// The time budget ran out.
    Time,
    /// Ctrl-C.
    Interrupted,
    /// The run makes more decisions than a record holds: not shrunk at all.
    TooLong,
}

impl Cut {
    /// Words for the trace's header and the JSON `run` record.
    pub fn as_str(self) -> &'static str {
        match self {
            Cut::Runs => "rerun budget hit (--shrink-max-runs)",
            Cut::Time => "time budget hit (--shrink-budget-ms)",
            Cut::Interrupted => "interrupted (Ctrl-C)",
            Cut::TooLong => "run too long to record, not shrunk",
        }
    }
}

/// A shrunk failure with everything needed to show it.
pub struct Done {
    /// The seed it came from; for a failure a search found, the schedule's
    /// index in the search (`searched`).
    pub seed: u64,
    /// Found by a coverage-guided search, not by a seed.
    pub searched: bool,
    /// The shrink: the original and the shrunk record and their runs.
    pub shrunk: Shrunk,
    /// The shrunk run's trace.
    pub trace: Trace,
    /// Lines of the original run's text trace, for before/after figures.
    pub original_lines: usize,
    /// How long shrinking took.
    pub elapsed: Duration,
    /// What stopped it early, if anything did.
    pub cut: Option<Cut>,
}

/// Runs `record` with a trace and builds the full trace, with its point of no
/// return (see [`render::run::trace_of_record`](crate::render::run::trace_of_record)).
pub fn traced(
    s: &Scenario,
    record: &Record,
    source: String,
    shrink: Option<ShrinkInfo>,
) -> (Trace, RunReport) {
    crate::render::run::trace_of_record(&s.system, &s.name, record, source, shrink)
}

pub use crate::render::run::POINT_OF_NO_RETURN_EVENTS;

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

/// After this long, a shrink says on stderr what it is doing, and again every
/// [`REPORT_EVERY`], so it never runs silently.
const QUIET_FOR: Duration = Duration::from_secs(2);
const REPORT_EVERY: Duration = Duration::from_secs(5);

/// Most events of a failing run that shrinking takes on. Shrinking keeps the
/// run's decisions (about 20 bytes an event) and replays copies of them
/// thousands of times: a run near `max_steps = 10^9` would need tens of
/// gigabytes and days. A longer failing run is reported with its seed.
pub const MAX_SHRINK_EVENTS: u64 = 10_000_000;

/// What shrinking a seed came to.
pub enum SeedShrink {
    /// The shrunk failure.
    Done(Box<Done>),
    /// The seed's run does not fail.
    Holds,
    /// The seed's run fails, but it is longer than [`MAX_SHRINK_EVENTS`]:
    /// its report, and nothing recorded.
    TooLong(RunReport),
}

/// Shrinks `seed` of `s` within `budget`. The seed runs once unrecorded
/// first, so a run that does not fail or is too long to shrink costs one run.
pub fn shrink_seed_or_long(s: &Scenario, seed: u64, budget: Budget) -> SeedShrink {
    shrink_seed_within_events(s, seed, budget, MAX_SHRINK_EVENTS)
}

/// [`shrink_seed_or_long`] with another bound than [`MAX_SHRINK_EVENTS`].
pub fn shrink_seed_within_events(
    s: &Scenario,
    seed: u64,
    budget: Budget,
    max_events: u64,
) -> SeedShrink {
    let first = unrecorded_run(s, seed);
    if shr::Signature::of(&first.outcome).is_none() {
        return SeedShrink::Holds;
    }
    if first.events > max_events {
        return SeedShrink::TooLong(first);
    }
    let what = format!("seed {seed}");
    let done = shrink_within(s, seed, false, &what, budget, |sim, limits, should_stop| {
        shr::shrink_seed_with(sim, &s.system, seed, limits, should_stop)
    });
    done.map_or(SeedShrink::Holds, |d| SeedShrink::Done(Box::new(d)))
}

/// Seed `seed` of `s` run once, nothing recorded or traced: what it comes
/// to and how long it is, in bounded memory.
pub fn unrecorded_run(s: &Scenario, seed: u64) -> RunReport {
    let mut sim = Sim::new(&s.system);
    let source = sim::Source::Seed {
        seed,
        record: false,
    };
    sim::explore::guarded(|| sim.run(&s.system, source, &mut sim::NoTrace))
        .unwrap_or_else(RunReport::panicked)
}

/// Shrinks `seed` of `s` within `budget`; `None` if the seed does not fail,
/// or fails in a run too long to shrink (said on stderr).
pub fn shrink_seed(s: &Scenario, seed: u64, budget: Budget) -> Option<Done> {
    match shrink_seed_or_long(s, seed, budget) {
        SeedShrink::Done(d) => Some(*d),
        SeedShrink::Holds => None,
        SeedShrink::TooLong(report) => {
            crate::eoutln!("{}", too_long_note(s, seed, &report));
            None
        }
    }
}

/// Why seed `seed` of `s` is not shrunk, and the command that shows its run.
pub fn too_long_note(s: &Scenario, seed: u64, report: &RunReport) -> String {
    format!(
        "{}: seed {seed} fails ({}), but its run has {} events, more than the {MAX_SHRINK_EVENTS} shrinking takes on, so it is not shrunk: `idemsim replay` with this seed shows it as it ran",
        s.name,
        crate::render::outcome_sentence(&report.outcome),
        report.events,
    )
}

/// Shrinks the failing `record` of `s` (found by a search, not by a seed),
/// named `what` in messages and in the trace ("coverage-guided schedule #7");
/// `index` stands in for the seed in [`Done::seed`].
pub fn shrink_record(
    s: &Scenario,
    record: &Record,
    index: u64,
    what: &str,
    budget: Budget,
) -> Option<Done> {
    shrink_within(s, index, true, what, budget, |sim, limits, should_stop| {
        Some(shr::shrink_with(
            sim,
            &s.system,
            record,
            limits,
            should_stop,
        ))
    })
}

type ShrinkFn<'f> = dyn FnMut(&shr::ShrinkProgress) -> bool + 'f;

/// Runs `shrink` within `budget`: progress on stderr when it takes long, a
/// note when it is cut short, and the shrunk and the original trace.
fn shrink_within(
    s: &Scenario,
    seed: u64,
    searched: bool,
    what: &str,
    budget: Budget,
    shrink: impl FnOnce(&mut Sim<models::System>, ShrinkLimits, &mut ShrinkFn<'_>) -> Option<Shrunk>,
) -> Option<Done> {
    let started = stopwatch();
    let mut sim = Sim::new(&s.system);
    let mut cut = None;
    let mut reported = Duration::ZERO;
    let mut should_stop = |p: &shr::ShrinkProgress| {
        let elapsed = started.elapsed();
        if crate::progress::STOP.load(std::sync::atomic::Ordering::Relaxed) {
            cut = Some(Cut::Interrupted);
        } else if elapsed >= budget.time {
            cut = Some(Cut::Time);
        }
        if elapsed >= QUIET_FOR && (reported.is_zero() || elapsed >= reported + REPORT_EVERY) {
            reported = elapsed;
            crate::eoutln!(
                "shrinking {} {what}: {} reruns, {} events, {} decisions so far ({:.0} s of {:.0} s, {} reruns allowed; see --shrink-budget-ms, --shrink-max-runs)",
                s.name,
                p.runs,
                p.events,
                p.nonzero,
                elapsed.as_secs_f64(),
                budget.time.as_secs_f64(),
                budget.max_runs
            );
        }
        cut.is_some()
    };
    let limits = ShrinkLimits {
        max_runs: budget.max_runs,
    };
    let shrunk = shrink(&mut sim, limits, &mut should_stop)?;
    let cut = match shrunk.stopped {
        None => None,
        Some(shr::Stopped::MaxRuns) => Some(Cut::Runs),
        Some(shr::Stopped::Caller) => cut,
        Some(shr::Stopped::TooLong) => Some(Cut::TooLong),
    };
    if let Some(c) = cut {
        crate::eoutln!(
            "shrinking {} {what} stopped after {} reruns: {}; the trace is the smallest failing run found, not a minimal one",
            s.name,
            shrunk.runs,
            c.as_str()
        );
    }
    let info = crate::render::run::shrink_info(&shrunk, cut.map(Cut::as_str));
    let (trace, _) = traced(s, &shrunk.record, format!("shrunk from {what}"), Some(info));
    let elapsed = started.elapsed();
    // Counted like the shrunk trace: the lines `replay --format text` prints.
    let (original, _) = traced(s, &shrunk.original, what.to_string(), None);
    let original_lines = body_lines(&original);
    Some(Done {
        seed,
        searched,
        shrunk,
        trace,
        original_lines,
        elapsed,
        cut,
    })
}

/// The lowest failing seed among the first `cap` seeds of the scenario's runs.
pub fn lowest_failing_seed(s: &Scenario, cap: u64) -> Option<u64> {
    let stop = AtomicBool::new(false);
    let seeds = SeedRange {
        start: 0,
        end: s.runs.min(cap),
    };
    // Stops at the first failing chunk of seeds: a scenario that fails on
    // seed 0 is not run over all its seeds first.
    let sum = sim::find_failure(&s.system, seeds, 1, &stop);
    sum.first_failure.map(|f| f.seed)
}

// Repro files live in `repro_file`; these names stay reachable from here,
// where `check`, `replay` and `report` have always found them.
use super::repro_file::note_explicit;
pub use super::repro_file::{
    hash_hex, inside, load_repro, record_lines, replay_command, repro_of, repro_text, write_repro,
    LoadedRepro, Repro,
};

/// Runs `idemsim shrink`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let budget = Budget::from_flags(a.shrink_max_runs, a.shrink_budget_ms)?;
    crate::progress::install_ctrl_c();
    if a.all {
        return run_all(&a, budget);
    }
    let name = a
        .scenario
        .as_deref()
        .expect("clap requires it without --all");
    let overrides = scenarios::parse_overrides(&a.set)?;
    let entry = scenarios::locate(name)?;
    let s = scenarios::load_entry(&entry, &overrides)?;
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
        None => lowest_failing_seed(&s, SEARCH_CAP).map_or(Ok(None), by_seed),
    };
    let done = match done {
        Ok(done) => done,
        Err((seed, report)) => {
            crate::external::check_outcome(&s, &format!("seed {seed}"), &report.outcome)?;
            crate::outln!("{}", too_long_note(&s, seed, &report));
            if let Some(path) = &a.out {
                crate::outln!("no repro file written to {path}: the seed reproduces the run");
            }
            return Ok(super::common::exit_code(&report.outcome));
        }
    };
    let Some(done) = done else {
        let what = match a.seed {
            Some(seed) => format!("seed {seed} does not fail"),
            None if coverage => format!(
                "its coverage-guided search of {} schedules finds no failure",
                s.runs
            ),
            None => format!("no seed of {} fails", s.runs.min(SEARCH_CAP)),
        };
        crate::outln!("{}: {what}, nothing to shrink", s.name);
        return Ok(crate::exit::HOLDS);
    };
    let seed = done.seed;
    let seed = (!done.searched).then_some(seed);
    let seed_text = match seed {
        Some(seed) => format!("seed {seed}"),
        None => format!("coverage-guided schedule #{}", done.seed + 1),
    };
    crate::external::check_outcome(&s, &seed_text, &done.shrunk.original_report.outcome)?;
    if let Some(path) = &a.out {
        let r = repro_of(
            &s,
            &entry,
            &a.set,
            seed,
            &done.shrunk.record,
            &done.shrunk.report.outcome,
        );
        let explicit = write_repro(path, &r)?;
        crate::eoutln!(
            "wrote {path}: replay it with `{}`",
            replay_command(path, explicit.as_deref())
        );
    }
    if a.stats {
        crate::out!("{}", stats_header());
        crate::outln!("{}", stats_row(&s, &done));
    } else {
        crate::out!("{}", formats::render(a.format, &done.trace));
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
        other => crate::render::outcome_sentence(other),
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
    let overrides = scenarios::parse_overrides(&a.set)?;
    if a.stats {
        crate::out!("{}", stats_header());
    }
    for entry in scenarios::catalog()? {
        let s = scenarios::load_entry(&entry, &overrides)?;
        if s.expected_verdict() != Some(models::scenario::Verdict::Violation) {
            continue;
        }
        if s.strategy == models::scenario::Strategy::Coverage {
            // No seed fails within the budget: shrink what the scenario's own search finds.
            let Some(done) = shrink_searched(&s, budget) else {
                crate::eoutln!(
                    "{}: expects a violation, but its coverage-guided search of {} schedules finds none",
                    s.name,
                    s.runs
                );
                continue;
            };
            print_all(a, &s, &done);
            continue;
        }
        let Some(seed) = lowest_failing_seed(&s, SEARCH_CAP) else {
            crate::eoutln!(
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
                crate::eoutln!("{}", too_long_note(&s, seed, &report));
                continue;
            }
        };
        print_all(a, &s, &done);
    }
    Ok(crate::exit::HOLDS)
}

/// One scenario's part of `shrink --all`: a row of `--stats`, or the trace.
fn print_all(a: &Args, s: &Scenario, done: &Done) {
    if a.stats {
        crate::outln!("{}", stats_row(s, done));
    } else {
        crate::out!("{}", formats::render(a.format, &done.trace));
        crate::outln!();
    }
}

/// The coverage-guided search of `s` over its `run.runs` schedules, and its
/// failure shrunk; `None` if the search finds none.
pub fn shrink_searched(s: &Scenario, budget: Budget) -> Option<Done> {
    let stop = AtomicBool::new(false);
    let seeds = SeedRange {
        start: 0,
        end: s.runs,
    };
    let r = s.coverage(seeds, &stop);
    let (record, f) = (r.failing.as_ref()?, r.summary.first_failure.as_ref()?);
    let what = format!("coverage-guided schedule #{}", f.seed + 1);
    shrink_record(s, record, f.seed, &what, budget)
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
    from: &scenarios::Entry,
    sets: &[String],
    failing_seed: Option<u64>,
    no_shrink: bool,
    repro_out: Option<&str>,
    budget: Budget,
) -> Result<Option<Done>, UsageError> {
    let Some(seed) = failing_seed else {
        return Ok(None);
    };
    if no_shrink {
        if let Some(path) = repro_out {
            let first = unrecorded_run(s, seed);
            if first.events > MAX_SHRINK_EVENTS {
                crate::eoutln!(
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
            crate::eoutln!("{}", too_long_note(s, seed, &report));
            if let Some(path) = repro_out {
                crate::eoutln!("no repro file written to {path}: the seed reproduces the run");
            }
            return Ok(None);
        }
    };
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
