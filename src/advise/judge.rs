//! One candidate judged: the scenario loaded with its changes, the same seeds
//! as the failing design, then a bounded exhaustive run. Every run goes
//! through an explicit strategy, so `check`'s default does not move advice.

use super::{Budget, Costs};
use crate::catalog::{self, Entry, UsageError};
use models::core::unused::SETTING_WITHOUT_EFFECT;
use models::core::Repair;
use models::scenario::Override;
use models::Scenario;
use sim::exhaustive::{exhaustive, Bounds};
use sim::{SeedRange, Summary};
use std::sync::atomic::AtomicBool;

/// What judging a design found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Every seed and every enumerated schedule held.
    Holds {
        /// Its costs over the seeds.
        costs: Costs,
        /// Schedules the exhaustive run ran.
        schedules: u64,
        /// Whether the exhaustive run enumerated every schedule within its bounds.
        complete: bool,
    },
    /// A seed or a schedule broke `invariant` (`model-panic` for a panic),
    /// or hit a limit (`inconclusive`).
    Fails {
        /// The invariant, `model-panic` or `inconclusive`.
        invariant: &'static str,
        /// The lowest failing seed, or `None` when only the exhaustive run failed.
        seed: Option<u64>,
    },
}

/// What the runs of one design share.
pub(super) struct Runner<'a> {
    pub entry: &'a Entry,
    pub base: &'a [Override],
    pub seeds: SeedRange,
    pub budget: &'a Budget,
    pub jobs: usize,
    pub stop: &'a AtomicBool,
    /// The `setting-without-effect` warnings the design carries before any
    /// change: a change that adds another has no effect here.
    pub unused_before: Vec<String>,
}

/// Why a set of changes was not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotRun {
    /// The loader refused it (its first line).
    Refused(String),
    /// A change it makes has no effect in this design (`setting-without-effect`).
    WithoutEffect(String),
}

/// The base overrides with `set`'s on top, a key of the set replacing the base's.
fn overrides(base: &[Override], set: &[&Repair]) -> Vec<Override> {
    let mut out: Vec<Override> = base
        .iter()
        .filter(|o| !set.iter().any(|r| r.sets.iter().any(|(k, _)| *k == o.key)))
        .cloned()
        .collect();
    for r in set {
        out.extend(r.sets.iter().map(|(k, v)| Override {
            key: (*k).to_string(),
            value: (*v).to_string(),
        }));
    }
    out
}

/// The texts of a loaded design's `setting-without-effect` warnings.
pub(super) fn unused(s: &Scenario) -> Vec<String> {
    s.design_warnings
        .iter()
        .filter(|w| w.id == SETTING_WITHOUT_EFFECT)
        .map(|w| w.text.clone())
        .collect()
}

impl Runner<'_> {
    /// Loads the design with `set` applied; `Err` if it is not worth a run.
    pub fn load(&self, set: &[&Repair]) -> Result<Scenario, NotRun> {
        let s = catalog::load_entry(self.entry, &overrides(self.base, set))
            .map_err(|UsageError(m)| NotRun::Refused(first_line(&m)))?;
        // Compared by text, not by count: a change may take one key's
        // effect away while it gives another its effect back.
        if let Some(w) = unused(&s)
            .into_iter()
            .find(|w| !self.unused_before.contains(w))
        {
            return Err(NotRun::WithoutEffect(w));
        }
        Ok(s)
    }

    /// Every seed, the same as the failing design's.
    pub fn sweep(&self, s: &Scenario) -> Summary {
        sim::explore(&s.system, self.seeds, self.jobs, self.stop, &|_| {})
    }

    /// Seeds up to the lowest failing one, then, if none failed, the
    /// bounded exhaustive run.
    pub fn judge(&self, s: &Scenario) -> (Verdict, Summary) {
        let sum = sim::find_failure(&s.system, self.seeds, self.jobs, self.stop);
        if let Some(v) = failure(&sum) {
            return (v, sum);
        }
        let v = self.exhaustive(s, Costs::of(&sum.tally));
        (v, sum)
    }

    /// The bounded exhaustive run of a design that held on every seed.
    pub fn exhaustive(&self, s: &Scenario, costs: Costs) -> Verdict {
        let b = self.budget;
        let r = exhaustive(
            &s.system,
            b.max_faults,
            Bounds {
                max_schedules: b.max_schedules,
                max_events: b.max_events,
            },
            self.jobs,
            self.stop,
            &|_| {},
        );
        if let Some(c) = &r.shortest {
            return Verdict::Fails {
                invariant: outcome_name(&c.outcome),
                seed: None,
            };
        }
        if r.tally.inconclusive > 0 {
            return Verdict::Fails {
                invariant: "inconclusive",
                seed: None,
            };
        }
        Verdict::Holds {
            costs,
            schedules: r.tally.schedules,
            complete: r.complete(),
        }
    }
}

/// The failure a sweep found, if any: a violation or panic first, then a limit.
pub(super) fn failure(sum: &Summary) -> Option<Verdict> {
    if let Some(f) = &sum.first_failure {
        return Some(Verdict::Fails {
            invariant: outcome_name(&f.outcome),
            seed: Some(f.seed),
        });
    }
    (sum.tally.inconclusive > 0).then_some(Verdict::Fails {
        invariant: "inconclusive",
        seed: None,
    })
}

fn outcome_name(o: &sim::Outcome) -> &'static str {
    match o {
        sim::Outcome::Violation(v) => v.invariant,
        sim::Outcome::Inconclusive(_) => "inconclusive",
        _ => "model-panic",
    }
}

fn first_line(m: &str) -> String {
    m.lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string()
}
