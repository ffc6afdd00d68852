//! One variant's numbers: its seeds run, and every metric column read from
//! the effect ledger's counters.

use idemsim::stats;
use models::core::hist;
use models::core::ledger::counter;
use models::core::{Layer, LoadOf, Metric};
use models::System;
use sim::{explore, SeedRange, Summary};
use std::sync::atomic::AtomicBool;

/// One variant of a sweep: its `--set` values, the scenario they make, and
/// which of the sweep's scenarios it comes from (an index into their list).
pub struct Variant {
    /// The values of the `--set` keys, in their order.
    pub overrides: Vec<models::scenario::Override>,
    /// The scenario with them applied.
    pub scenario: models::Scenario,
    /// The scenario argument it comes from.
    pub from: usize,
}

/// A variant's numbers over all its seeds: the sweep's summary, with the
/// effect ledger's counters (constant memory, merged order-independently).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantStats {
    /// The sweep's summary over the variant's seeds.
    pub summary: Summary,
}

impl VariantStats {
    /// Seeds run.
    pub fn runs(&self) -> u64 {
        self.summary.tally.schedules
    }

    fn counter(&self, name: &str) -> u64 {
        self.summary
            .tally
            .counter(name)
            .and_then(|c| c.first())
            .copied()
            .unwrap_or(0)
    }

    fn slot(&self, name: &str, i: usize) -> u64 {
        self.summary
            .tally
            .counter(name)
            .and_then(|c| c.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// The lowest failing seed and its invariant.
    pub fn first_failure(&self) -> Option<(u64, &'static str)> {
        self.summary.first_failure.as_ref().map(|f| {
            let name = match &f.outcome {
                sim::Outcome::Violation(v) => v.invariant,
                _ => "model-panic",
            };
            (f.seed, name)
        })
    }

    /// Runs that failed (violations and panics).
    pub fn failing(&self) -> u64 {
        self.summary.tally.failing()
    }

    /// Runs that hit a limit.
    pub fn inconclusive(&self) -> u64 {
        self.summary.tally.inconclusive
    }

    /// `violation`, `inconclusive` or `holds`.
    pub fn verdict(&self) -> &'static str {
        if self.failing() > 0 {
            "violation"
        } else if self.inconclusive() > 0 {
            "inconclusive"
        } else {
            "holds"
        }
    }

    fn share(&self, n: u64, of: u64) -> Option<f64> {
        (of > 0).then(|| n as f64 / of as f64)
    }

    /// The share of runs that failed.
    pub fn violation_rate(&self) -> f64 {
        self.share(self.failing(), self.runs()).unwrap_or(0.0)
    }

    /// The 95% Wilson interval of that share.
    pub fn interval(&self) -> (f64, f64) {
        stats::wilson(self.failing(), self.runs(), stats::Z95)
    }

    /// The value of one metric column; `None` when it has no meaning here.
    pub fn metric(&self, m: &Metric) -> Option<f64> {
        let runs = self.runs();
        match m {
            Metric::Duplicated => self.share(self.counter(counter::RUNS_DUPLICATED), runs),
            Metric::Lost => self.share(self.counter(counter::RUNS_LOST), runs),
            Metric::Unknown => self.share(
                self.counter(counter::UNKNOWN),
                self.counter(counter::OPERATIONS),
            ),
            Metric::AttemptsPerOperation => LoadOf::Attempts.ratio(&self.summary.tally),
            Metric::ReceivedPerOperation(layer) => LoadOf::Layer(layer).ratio(&self.summary.tally),
            Metric::PeakPerSecond(layer) => self.share(
                self.slot(counter::PEAK_PER_S, usize::from(layer.index)),
                runs,
            ),
            Metric::TimeToEffect => self.time_to_effect_us(0.5).map(|x| x as f64),
            Metric::DedupKeys => Some(self.counter(counter::PEAK_DEDUP_KEYS) as f64),
            Metric::AttemptsPerRun => self.share(self.counter(counter::ATTEMPTS), runs),
            Metric::CompletionTime => self.share(
                self.counter(counter::COMPLETION_US),
                self.counter(counter::RUNS_COMPLETED),
            ),
            Metric::ShedPerOperation(layer) => self
                .loaded(layer)
                .then(|| {
                    self.share(
                        self.slot(counter::SHED, layer.index.into()),
                        self.per_layer(layer),
                    )
                })
                .flatten(),
            Metric::Wasted(layer) => {
                let i = usize::from(layer.index);
                self.share(self.slot(counter::WASTED, i), self.slot(counter::WORK, i))
            }
            Metric::OverloadAfterFaults(layer) => self
                .loaded(layer)
                .then(|| {
                    let i = usize::from(layer.index);
                    self.share(self.slot(counter::OVERLOAD_AFTER_FAULTS, i), runs)
                })
                .flatten(),
            Metric::RetriesDenied => self.nonzero_per_operation(counter::RETRIES_DENIED),
            Metric::FastFailed => self.nonzero_per_operation(counter::FAST_FAILED),
        }
    }

    /// How many of what `layer`'s counts are per ran.
    fn per_layer(&self, layer: &Layer) -> u64 {
        self.counter(layer.per.counter())
    }

    /// Whether `layer` has a capacity that was ever busy or full: its load
    /// columns mean something.
    fn loaded(&self, layer: &Layer) -> bool {
        let i = usize::from(layer.index);
        self.slot(counter::WORK, i) + self.slot(counter::SHED, i) > 0
    }

    /// `name` per operation, or nothing when it never happened (no client
    /// has a budget or a breaker, or none was ever used).
    fn nonzero_per_operation(&self, name: &str) -> Option<f64> {
        let n = self.counter(name);
        (n > 0)
            .then(|| self.share(n, self.counter(counter::OPERATIONS)))
            .flatten()
    }

    /// The `q` quantile (0..=1) of the time from intent (or commit) to first effect.
    pub fn time_to_effect_us(&self, q: f64) -> Option<u64> {
        hist::quantile(self.summary.tally.counter(counter::TIME_TO_EFFECT)?, q)
    }
}

/// Runs `seeds` of one variant on `jobs` threads. `stop` (Ctrl-C) ends it
/// between chunks; every chunk handed out runs to its end, so the seeds
/// that ran are always the first `stats.runs()` of them.
pub(super) fn run_variant(
    system: &System,
    seeds: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> VariantStats {
    VariantStats {
        summary: explore(system, seeds, jobs, stop, &|_| {}),
    }
}

/// One row of the result: the variant's values (one per axis) and its numbers.
pub struct Row {
    /// The variant's value of each swept key, in the order of the axes.
    pub values: Vec<String>,
    /// Its numbers.
    pub stats: VariantStats,
    /// The design warnings of its settings, with the runs that reached each.
    pub design_warnings: Vec<crate::cmd::common::WarningLine>,
}
