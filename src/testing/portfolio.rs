//! The portfolio `check` runs by default: the seed sweep, then an
//! exhaustive search to a small fault bound and a coverage-guided search,
//! each within a quarter of the sweep's budget.
//!
//! Seeds find a bug that a sizeable share of runs reaches; a bug that needs
//! three rare faults at once (`payment-give-up-silently-low-loss`: one seed
//! in 50,000) is a few dozen schedules for exhaustive search at fault bound 3
//! or for the coverage-guided search. A user's own scenario does not say
//! which kind of bug it hides, so the default runs all three.
//!
//! The seed sweep keeps every seed of the range, so what seeds find (the
//! lowest failing seed, the counts, `--shard` slices and `idemsim merge`)
//! is what it was; the search parts run on top of it, each a pure function
//! of the model and the range: exhaustive search deepens from fault bound 1
//! to [`MAX_FAULTS`] while within its budget (its report is the same for
//! any thread count), and the coverage-guided search is seeded by the
//! range's end, so its warm-up seeds are seeds the sweep did not run. A
//! sharded check runs the search parts in shard 0 only, so every schedule
//! belongs to exactly one shard.

use sim::exhaustive::{exhaustive, Bounds, Counterexample};
use sim::{coverage_search, CoverageConfig, Model, Outcome, Record, SeedRange, Summary, Tally};
use std::sync::atomic::AtomicBool;

/// The deepest fault bound of the exhaustive part.
pub const MAX_FAULTS: u32 = 3;

/// The share of the sweep's budget each search part may run: a quarter.
pub const SEARCH_SHARE: u64 = 4;

/// Which part of the portfolio found a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The seed sweep.
    Seeds,
    /// Exhaustive search, at this fault bound.
    Exhaustive(u32),
    /// The coverage-guided search.
    Coverage,
}

impl Part {
    /// Its name in the JSON summary: `seeds`, `exhaustive`, `coverage`.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Seeds => "seeds",
            Part::Exhaustive(_) => "exhaustive",
            Part::Coverage => "coverage",
        }
    }
}

/// A failure a search part found: no seed replays it, its record does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The part.
    pub part: Part,
    /// Schedules the part ran up to and including the one that failed (for
    /// exhaustive search, every schedule up to the end of the fault bound
    /// that failed: an upper bound).
    pub after: u64,
    /// The failing schedule's decisions; `None` when the run made more
    /// decisions than a record holds (the failure still counts).
    pub record: Option<Record>,
    /// How it ended.
    pub outcome: Outcome,
    /// Its engine events.
    pub events: u64,
}

/// What one search part ran and found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartReport {
    /// Every schedule it ran (an exhaustive level re-runs the shallower
    /// schedules it needs, and those count again: this is work done).
    pub tally: Tally,
    /// Its budget.
    pub budget: u64,
    /// Its first failure.
    pub found: Option<Found>,
    /// Exhaustive: the deepest fault bound it ran.
    pub max_faults: u32,
    /// Exhaustive: the deepest bound ran to its end.
    pub complete: bool,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
}

/// The two search parts of a portfolio over one seed range.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Searches {
    /// Exhaustive search from fault bound 1 up to [`MAX_FAULTS`].
    pub exhaustive: PartReport,
    /// The coverage-guided search, seeded by the range's end.
    pub coverage: PartReport,
}

impl Searches {
    /// After Ctrl-C or SIGTERM killed a program: a failure that is a killed
    /// program's broken-off run is none, and the part that found it was
    /// interrupted (as `signals::forget_killed_runs` does for the seeds).
    pub fn forget_killed(&mut self) {
        if !crate::signals::killed_a_program() {
            return;
        }
        for part in [&mut self.exhaustive, &mut self.coverage] {
            if part
                .found
                .as_ref()
                .is_some_and(|f| crate::signals::killed_run(&f.outcome))
            {
                part.found = None;
                part.interrupted = true;
            }
        }
    }

    /// The failure to show when seeds found none: exhaustive search's (its
    /// shortest counterexample, fewest faults first), else coverage's.
    pub fn first(&self) -> Option<&Found> {
        self.exhaustive
            .found
            .as_ref()
            .or(self.coverage.found.as_ref())
    }

    /// Schedules both parts ran.
    pub fn schedules(&self) -> u64 {
        self.exhaustive.tally.schedules + self.coverage.tally.schedules
    }

    /// The seed sweep's summary `seeds` as a file's `[expect]` judges it,
    /// in `check` and in `verify` alike: a search's failure counts when no
    /// seed failed (its `seed` is then its index in the search, which
    /// nothing judged reads), and a situation a search reached counts as
    /// reached. Only the set of situations is added: the counts (and the
    /// load bounds judged by them) stay the seeds'. So when a seed failed,
    /// the verdict is the seeds' whatever the searches found.
    pub fn judged(&self, seeds: &Summary) -> Summary {
        let mut judged = seeds.clone();
        for part in [&self.exhaustive, &self.coverage] {
            judged.tally.situations.union(&part.tally.situations);
        }
        if judged.first_failure.is_none() {
            judged.first_failure = self.first().map(|f| sim::Failure {
                seed: f.after - 1,
                outcome: f.outcome.clone(),
                events: f.events,
            });
        }
        judged
    }
}

/// A search part's budget for a sweep of `range`: a quarter, at least one.
pub fn search_budget(range: SeedRange) -> u64 {
    (range.len() / SEARCH_SHARE).max(1)
}

/// The coverage-guided search's seed for a sweep of `range`: the range's
/// end, so its warm-up runs seeds the sweep did not. A range that holds the
/// last seed ends at 2^64, which wraps to seed 0, below the range.
pub fn search_seed(range: SeedRange) -> u64 {
    range.end_u64().unwrap_or(0)
}

/// Runs the search parts of the portfolio over `range` (exhaustive on
/// `jobs` threads, coverage on one); deterministic for any `jobs`.
pub fn searches<M: Model + Sync>(
    model: &M,
    range: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> Searches {
    let budget = search_budget(range);
    Searches {
        exhaustive: deepen(model, budget, jobs, stop),
        coverage: coverage(model, search_seed(range), budget, stop),
    }
}

/// Exhaustive search at fault bound 1, 2, ... [`MAX_FAULTS`], each bound
/// within what is left of `budget`, until one fails or the budget is spent.
fn deepen<M: Model + Sync>(model: &M, budget: u64, jobs: usize, stop: &AtomicBool) -> PartReport {
    let mut part = PartReport {
        budget,
        ..PartReport::default()
    };
    for k in 1..=MAX_FAULTS {
        let left = budget - part.tally.schedules.min(budget);
        if left == 0 {
            break;
        }
        let bounds = Bounds {
            max_schedules: left,
            ..Bounds::default()
        };
        let r = exhaustive(model, k, bounds, jobs, stop, &|_| {});
        part.tally.merge(&r.tally);
        part.max_faults = k;
        part.complete = r.complete();
        part.interrupted = r.interrupted;
        if let Some(c) = r.shortest {
            part.found = Some(found_exhaustive(c, k, part.tally.schedules));
            break;
        }
        if !r.complete() {
            break;
        }
    }
    part
}

fn found_exhaustive(c: Counterexample, k: u32, after: u64) -> Found {
    Found {
        part: Part::Exhaustive(k),
        after,
        record: Some(c.record),
        outcome: c.outcome,
        events: c.events,
    }
}

/// The coverage-guided search of `budget` schedules seeded by `seed`.
fn coverage<M: Model>(model: &M, seed: u64, budget: u64, stop: &AtomicBool) -> PartReport {
    let r = coverage_search(model, &CoverageConfig::new(seed, budget), stop);
    let Summary {
        tally,
        first_failure,
        interrupted,
        ..
    } = r.summary;
    PartReport {
        budget,
        found: first_failure.map(|f| Found {
            part: Part::Coverage,
            after: f.seed + 1,
            record: r.failing,
            outcome: f.outcome,
            events: f.events,
        }),
        complete: true,
        interrupted,
        tally,
        max_faults: 0,
    }
}

/// Where the portfolio first fails, in the order it runs: the seeds, then
/// exhaustive search, then the coverage-guided search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstFailure {
    /// The part that found it.
    pub part: Part,
    /// Schedules the portfolio ran before and including it.
    pub schedules: u64,
}

/// The portfolio over `range`, stopping at its first failure: which part
/// found it and after how many schedules (`bench --find` and the catalog
/// test). `None` when it holds within its budget.
pub fn first_failure<M: Model + Sync>(
    model: &M,
    range: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> Option<FirstFailure> {
    if let Some(f) = sim::find_failure(model, range, jobs, stop).first_failure {
        return Some(FirstFailure {
            part: Part::Seeds,
            schedules: f.seed - range.start + 1,
        });
    }
    let budget = search_budget(range);
    let e = deepen(model, budget, jobs, stop);
    if let Some(f) = &e.found {
        return Some(FirstFailure {
            part: f.part,
            schedules: range.len() + f.after,
        });
    }
    let c = coverage(model, search_seed(range), budget, stop);
    c.found.map(|f| FirstFailure {
        part: f.part,
        schedules: range.len() + e.tally.schedules + f.after,
    })
}
