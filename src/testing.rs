//! idemsim in a user's tests: sweep a model's seeds, shrink the lowest
//! failure with idemsim's shrinker, and fail with the shrunk trace and one
//! repro line.
//!
//! [`check_model`] is the whole API for most tests; [`Check`] sets the name,
//! the threads and the shrink budget. A [`Failure`] converts into proptest's
//! `TestCaseError`, so `check_model(&model, 0..200)?` works inside
//! `proptest!`: proptest shrinks the design parameters, idemsim the schedule,
//! and the final message carries both. [`schedules`] is a proptest
//! `Strategy` over seeds whose shrinking is idemsim's record shrinker.
//!
//! ```
//! use idemsim::testing::check_model;
//! let holds = idemsim::catalog::load("payment-stable-key", &[]).unwrap();
//! assert!(check_model(&holds.system, 0..50).is_ok());
//!
//! let broken = idemsim::catalog::load("payment-retry-without-key", &[]).unwrap();
//! let failure = check_model(&broken.system, 0..50).unwrap_err();
//! assert_eq!(failure.invariant(), Some("no-duplicate-effect"));
//! let message = failure.to_string();
//! assert!(message.contains("EFFECT"), "the shrunk trace: {message}");
//! assert!(message.lines().last().unwrap().starts_with("repro: "));
//! ```

use crate::render::formats;
use crate::render::run::{self, LedgerModel};
use crate::repro::Repro;
use sim::shrink::{self as shr, ShrinkLimits};
use sim::{Outcome, Record, SeedRange, Sim, Summary};
use std::fmt;
use std::ops::Range;
use std::sync::atomic::AtomicBool;

pub mod portfolio;
pub mod shown;
#[cfg(feature = "proptest")]
mod strategy;
#[cfg(feature = "proptest")]
pub use strategy::{schedules, Schedule, ScheduleTree, Schedules};

/// Why seed `seed`, which failed, gave nothing to shrink.
fn unshrinkable(seed: u64, overflowed: bool) -> ! {
    if overflowed {
        panic!(
            "seed {seed} fails, but its run makes more decisions than a record holds ({} values): a record cut there would replay another run, so it is neither shrunk nor traced; the seed itself reproduces it (a model allowed fewer steps per run can be shrunk)",
            sim::MAX_RECORDED_VALUES
        );
    }
    panic!(
        "seed {seed} failed, and the same seed run again did not (it held, or stopped at a limit): the model is not deterministic; look for what a run reads besides the simulator's choices (HashMap iteration order, the wall clock, a random number of its own, state kept between runs)"
    );
}

/// Sweeps seeds `seeds` of `model` on every core. `Ok` with the sweep's
/// summary when no run fails (a run that hits a limit is not a failure; look
/// at `summary.tally.inconclusive`); otherwise the lowest failing seed,
/// shrunk, as a [`Failure`]. The same seeds give the same answer on any
/// machine and with any number of threads.
pub fn check_model<M: LedgerModel + Sync>(
    model: &M,
    seeds: Range<u64>,
) -> Result<Summary, Failure> {
    Check::new("model", model).seeds(seeds).run()
}

/// Reruns seed `seed` of `model` and, when it fails, shrinks it: the same
/// [`Failure`] (the same shrunk trace) that [`check_model`] reported for it,
/// since shrinking is deterministic. What a failure's repro line calls.
pub fn replay<M: LedgerModel>(model: &M, seed: u64) -> Result<(), Failure> {
    Check::new("model", model)
        .seeds(seed..seed.saturating_add(1))
        .jobs(1)
        .replay(seed)
}

/// How to check a model: its name in traces, the seeds, threads and the
/// shrink budget, and the repro line a failure ends with.
pub struct Check<'m, M> {
    name: String,
    model: &'m M,
    seeds: Range<u64>,
    jobs: usize,
    limits: ShrinkLimits,
    /// The repro line, with `{seed}` where the seed goes.
    repro: String,
}

impl<'m, M: LedgerModel> Check<'m, M> {
    /// A check of `model`, shown as `name`, over seeds `0..1000` on every core.
    pub fn new(name: &str, model: &'m M) -> Self {
        Check {
            name: name.to_string(),
            model,
            seeds: 0..1000,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            limits: ShrinkLimits::default(),
            repro: "idemsim::testing::replay(&model, {seed})".to_string(),
        }
    }

    /// The seeds to run (end exclusive).
    pub fn seeds(mut self, seeds: Range<u64>) -> Self {
        self.seeds = seeds;
        self
    }

    /// Worker threads; the result does not depend on them.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }

    /// Most candidate reruns shrinking may spend (default 20,000).
    pub fn shrink_max_runs(mut self, runs: u32) -> Self {
        self.limits.max_runs = runs;
        self
    }

    /// How a failure's last line says to rerun it, with `{seed}` where the
    /// failing seed goes; by default the Rust call [`replay`]
    /// (`idemsim::testing::replay(&model, {seed})`). For a scenario file, the
    /// command `idemsim replay PATH --seed {seed}`.
    pub fn repro_line(mut self, template: &str) -> Self {
        self.repro = template.to_string();
        self
    }

    /// Sweeps the seeds; the lowest failing one, shrunk, is the error.
    pub fn run(&self) -> Result<Summary, Failure>
    where
        M: Sync,
    {
        let range = SeedRange {
            start: self.seeds.start,
            end: self.seeds.end.into(),
        };
        let summary = sim::explore(
            self.model,
            range,
            self.jobs,
            &AtomicBool::new(false),
            &|_| {},
        );
        match &summary.first_failure {
            None => Ok(summary),
            Some(f) => {
                let mut failure = self.failure(f.seed);
                failure.0.failing = summary.tally.failing();
                failure.0.seeds = self.seeds.clone();
                Err(failure)
            }
        }
    }

    /// Runs seed `seed` alone; when it fails, shrinks it into a [`Failure`].
    pub fn replay(&self, seed: u64) -> Result<(), Failure> {
        let mut sim = Sim::new(self.model);
        let report = sim::run_guarded(&mut sim, self.model, seed);
        if report.outcome.is_failure() {
            Err(self.failure(seed))
        } else {
            Ok(())
        }
    }

    fn failure(&self, seed: u64) -> Failure {
        let mut sim = Sim::new(self.model);
        let Some(shrunk) = shr::shrink_seed(&mut sim, self.model, seed, self.limits) else {
            unshrinkable(seed, sim.choices.recorded_overflowed())
        };
        let info = run::shrink_info(&shrunk, None);
        let (trace, report) = run::trace_of_record(
            self.model,
            &self.name,
            &shrunk.record,
            format!("shrunk from seed {seed}"),
            Some(info),
        );
        let repro = Repro::new(
            &self.name,
            0,
            self.model.world(),
            Some(seed),
            &shrunk.record,
            &report.outcome,
        );
        Failure::new(Details {
            name: self.name.clone(),
            seed,
            seeds: seed..seed.saturating_add(1),
            failing: 1,
            outcome: report.outcome,
            record: shrunk.record,
            trace: formats::text(&trace),
            mermaid: formats::mermaid(&trace),
            repro,
            repro_line: format!("repro: {}", self.repro.replace("{seed}", &seed.to_string())),
        })
    }
}

/// A failing run, shrunk: what [`check_model`] returns when a seed fails.
/// Its `Display` is the shrunk trace followed by one repro line; its
/// [`Details`] are its fields (`failure.seed`, `failure.trace`), boxed so that
/// a `Result<_, Failure>` stays small.
#[derive(Clone, Debug)]
pub struct Failure(Box<Details>);

/// What a [`Failure`] knows: the seed, the shrunk run, its trace and repro.
#[derive(Clone, Debug)]
pub struct Details {
    /// The name the check was given.
    pub name: String,
    /// The lowest failing seed.
    pub seed: u64,
    /// The seeds that ran.
    pub seeds: Range<u64>,
    /// How many of them failed.
    pub failing: u64,
    /// What the shrunk run gives: a violation (or a model's panic).
    pub outcome: Outcome,
    /// The shrunk run's decisions; [`Repro`] writes them to a file.
    pub record: Record,
    /// The shrunk run as the text trace.
    pub trace: String,
    /// The shrunk run as a Mermaid sequence diagram.
    pub mermaid: String,
    /// The shrunk run as a repro file (`repro.write(path)`).
    pub repro: Repro,
    /// `repro: ...`: how to run it again.
    pub repro_line: String,
}

impl Failure {
    /// The failure of `details`.
    pub fn new(details: Details) -> Failure {
        Failure(Box::new(details))
    }

    /// Its details, owned.
    pub fn into_details(self) -> Details {
        *self.0
    }

    /// The violated invariant's name, or `None` for a model's panic.
    pub fn invariant(&self) -> Option<&'static str> {
        match &self.outcome {
            Outcome::Violation(v) => Some(v.invariant),
            _ => None,
        }
    }
}

impl std::ops::Deref for Failure {
    type Target = Details;

    fn deref(&self) -> &Details {
        &self.0
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} (lowest failing seed {}; {} of {} seeds in {}..{} fail)",
            self.name,
            crate::render::outcome_sentence(&self.outcome),
            self.seed,
            self.failing,
            self.seeds.end - self.seeds.start,
            self.seeds.start,
            self.seeds.end
        )?;
        f.write_str(&self.trace)?;
        f.write_str(&self.repro_line)
    }
}

/// An error, so `?` turns it into proptest's `TestCaseError` (whose message
/// is the `Display`: the shrunk trace and the repro line).
impl std::error::Error for Failure {}

/// Checks a scenario the way `idemsim check` would, from a test: its seeds
/// (`run.runs`, or `seeds`), the lowest failure shrunk, and a repro line that
/// is the `idemsim replay` command. `arg` is how the command line names it
/// (a path or a catalog name).
pub fn check_scenario(
    s: &models::Scenario,
    arg: &str,
    seeds: Option<Range<u64>>,
) -> Result<Summary, Failure> {
    Check::new(&s.name, &s.system)
        .seeds(seeds.unwrap_or(0..s.runs))
        .repro_line(&format!(
            "idemsim replay {} --seed {{seed}}",
            crate::shell::shell_word(arg)
        ))
        .run()
}
