//! Minimizing a failing run: shrink a failing seed (or a schedule a
//! coverage-guided search found) to a locally minimal run within a
//! [`Budget`] of reruns and wall time, with its trace. `idemsim shrink`,
//! `check`, `sweep --html` and the regression database all shrink through here.

use crate::catalog::UsageError;
use crate::render::formats;
use crate::render::items::{ShrinkInfo, Trace};
use models::Scenario;
use sim::shrink::{self as shr, ShrinkLimits, Shrunk};
use sim::{Record, RunReport, Sim};
use std::time::{Duration, Instant};

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
            Cut::Interrupted if crate::signals::name() == "SIGTERM" => "interrupted (SIGTERM)",
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
    let (mut t, report) =
        crate::render::run::trace_of_record(&s.system, &s.name, record, source, shrink);
    t.header.sets = set_words(s);
    (t, report)
}

/// The trace of seed `seed` of `s`, its `--set` overrides named in its header.
pub fn traced_seed(s: &Scenario, seed: u64) -> (Trace, RunReport) {
    let (mut t, report) = crate::render::run::trace_of_seed(&s.system, &s.name, seed);
    t.header.sets = set_words(s);
    (t, report)
}

/// The overrides `s` was loaded with, as `key=value`.
pub fn set_words(s: &Scenario) -> Vec<String> {
    s.overrides
        .iter()
        .map(|o| format!("{}={}", o.key, o.value))
        .collect()
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

/// The note for a shrink cut short. After a signal that killed an external
/// program, the caller shows no trace (its reruns broke off) and says so
/// itself, so the note claims none.
fn say_cut(s: &Scenario, what: &str, runs: u32, c: Cut) {
    let shown = if crate::signals::reruns_break_off(s) {
        ""
    } else {
        "; the trace is the smallest failing run found, not a minimal one"
    };
    crate::eoutln!(
        "shrinking {} {what} stopped after {runs} reruns: {}{shown}",
        s.name,
        c.as_str()
    );
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
        say_cut(s, what, shrunk.runs, c);
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

/// A search's failing `record` (schedule `index`, called `what`), shrunk
/// unless `no_shrink`. After a signal every rerun breaks off (its program
/// is killed), so the record is shown as found, and a note says why: a
/// signal that comes while it shrinks throws the broken result away too.
pub fn shrink_found(
    s: &models::Scenario,
    record: &sim::Record,
    index: u64,
    what: &str,
    budget: Budget,
    no_shrink: bool,
) -> Option<Done> {
    let broken_off = || {
        let broken = crate::signals::reruns_break_off(s);
        if broken {
            crate::eoutln!(
                "{}",
                crate::signals::not_rerun_note(what, "not shrunk or traced")
            );
        }
        broken
    };
    if no_shrink || broken_off() {
        return None;
    }
    let done = shrink_record(s, record, index, what, budget);
    done.filter(|_| !broken_off())
}
