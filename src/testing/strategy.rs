//! A proptest `Strategy` over a model's schedules whose shrinking is
//! idemsim's: proptest draws a seed per case, and when a case fails, the
//! value tree's one simplification is the seed's run shrunk by
//! [`sim::shrink`] (fewest faults, shortest delays, locally minimal).
//! proptest's own shrinking could only try other seeds, which are other runs
//! altogether, not smaller ones.

use super::{Details, Failure};
use crate::render::run::LedgerModel;
use proptest::strategy::{NewTree, Strategy, ValueTree};
use proptest::test_runner::{TestCaseError, TestRunner};
use sim::shrink::{self as shr, ShrinkLimits};
use sim::{Record, RunReport, Sim};
use std::fmt;
use std::sync::Arc;

/// Schedules of `model`, for `proptest!`:
///
/// ```
/// use idemsim::testing::schedules;
/// use proptest::prelude::*;
/// use std::sync::Arc;
///
/// let s = idemsim::catalog::load("payment-stable-key", &[]).unwrap();
/// let model = Arc::new(s.system);
/// let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(20));
/// runner
///     .run(&schedules(model.clone()), |schedule| {
///         schedule.check(&*model)?;
///         Ok(())
///     })
///     .unwrap();
/// ```
pub fn schedules<M: LedgerModel>(model: Arc<M>) -> Schedules<M> {
    Schedules { model }
}

/// The strategy [`schedules`] returns.
pub struct Schedules<M> {
    model: Arc<M>,
}

impl<M> Clone for Schedules<M> {
    fn clone(&self) -> Self {
        Schedules {
            model: self.model.clone(),
        }
    }
}

impl<M> fmt::Debug for Schedules<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("idemsim schedules")
    }
}

/// One schedule: a seed, and once shrunk, the smaller record that replaces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The seed proptest drew.
    pub seed: u64,
    /// The seed's run shrunk by idemsim, once proptest asked to simplify.
    pub shrunk: Option<Record>,
}

impl Schedule {
    /// Runs this schedule of `model`: the seed, or the shrunk record.
    pub fn run<M: LedgerModel>(&self, model: &M) -> RunReport {
        let mut sim = Sim::new(model);
        match &self.shrunk {
            None => sim::run_guarded(&mut sim, model, self.seed),
            Some(record) => shr::replay(&mut sim, model, record, false, &mut sim::NoTrace),
        }
    }

    /// Runs it and fails the case when an invariant breaks: the message is
    /// the trace of the run (the shrunk one, once shrunk) and a repro line.
    pub fn check<M: LedgerModel>(&self, model: &M) -> Result<RunReport, TestCaseError> {
        let report = self.run(model);
        if !report.outcome.is_failure() {
            return Ok(report);
        }
        let failure = match &self.shrunk {
            None => super::Check::new("schedule", model)
                .jobs(1)
                .replay(self.seed)
                .expect_err("the run failed"),
            Some(record) => {
                let (trace, report) = crate::render::run::trace_of_record(
                    model,
                    "schedule",
                    record,
                    format!("shrunk from seed {}", self.seed),
                    None,
                );
                let line = format!("repro: idemsim::testing::replay(&model, {})", self.seed);
                Failure::new(Details {
                    name: "schedule".into(),
                    seed: self.seed,
                    seeds: self.seed..self.seed.saturating_add(1),
                    failing: 1,
                    repro: crate::repro::Repro::new(
                        "schedule",
                        0,
                        model.world(),
                        Some(self.seed),
                        record,
                        &report.outcome,
                    ),
                    outcome: report.outcome,
                    record: record.clone(),
                    trace: crate::render::formats::text(&trace),
                    mermaid: crate::render::formats::mermaid(&trace),
                    repro_line: line,
                })
            }
        };
        Err(failure.into())
    }
}

/// The value tree of one drawn seed: its one simplification is the shrunk run.
pub struct ScheduleTree<M> {
    model: Arc<M>,
    seed: u64,
    shrunk: Option<Record>,
    /// Whether `current` is the shrunk run (else the seed's own).
    at_shrunk: bool,
    /// Shrinking was tried (it happens once).
    tried: bool,
}

impl<M: LedgerModel> Strategy for Schedules<M> {
    type Tree = ScheduleTree<M>;
    type Value = Schedule;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let seed = proptest::num::u64::ANY.new_tree(runner)?.current();
        Ok(ScheduleTree {
            model: self.model.clone(),
            seed,
            shrunk: None,
            at_shrunk: false,
            tried: false,
        })
    }
}

impl<M: LedgerModel> ValueTree for ScheduleTree<M> {
    type Value = Schedule;

    fn current(&self) -> Schedule {
        Schedule {
            seed: self.seed,
            shrunk: if self.at_shrunk {
                self.shrunk.clone()
            } else {
                None
            },
        }
    }

    /// The first call shrinks the seed's run with idemsim's shrinker (when
    /// the model's oracle says it fails) and moves to it; there is nothing
    /// simpler after that: the shrunk run is locally minimal.
    fn simplify(&mut self) -> bool {
        if self.tried {
            return false;
        }
        self.tried = true;
        let mut sim = Sim::new(&*self.model);
        self.shrunk = shr::shrink_seed(&mut sim, &*self.model, self.seed, ShrinkLimits::default())
            .map(|s| s.record);
        self.at_shrunk = self.shrunk.is_some();
        self.at_shrunk
    }

    /// Back to the seed's own run, when the shrunk one passed the test (the
    /// test failed for a reason the model's oracle does not see).
    fn complicate(&mut self) -> bool {
        if self.at_shrunk {
            self.at_shrunk = false;
            true
        } else {
            false
        }
    }
}
