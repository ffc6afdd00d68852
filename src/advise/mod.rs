//! `idemsim advise`: from a failing design, the smallest sets of changes
//! that make it hold, ranked by what they cost. The inverse of `verify`,
//! which removes a holding design's protections one by one: advise adds
//! the protections its model knows (`ModelSpec::repairs`), one change at a
//! time, then two, then three, and keeps the sets that hold on the failing
//! design's seeds and in a bounded exhaustive run, and of which no smaller
//! set holds (docs/advise.md).

mod costs;
mod judge;
pub mod render;
mod search;

pub use costs::Costs;
pub use judge::Verdict;

use crate::catalog::{self, Entry, UsageError};
use judge::{failure, NotRun, Runner};
use models::core::Repair;
use models::scenario::Override;
use models::Scenario;
use sim::SeedRange;
use std::sync::atomic::{AtomicBool, Ordering};

/// How much advise may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Seeds 0..runs for every design [default: the scenario's `run.runs`].
    pub runs: Option<u64>,
    /// These seeds for every design instead of `0..runs` (`--seeds`, `--seed`).
    pub seeds: Option<SeedRange>,
    /// The most changes in one set (1 to 3).
    pub max_changes: usize,
    /// The most designs judged, single changes included; the rest is listed as not tried.
    pub max_candidates: usize,
    /// The exhaustive run's bound on faults per schedule.
    pub max_faults: u32,
    /// The exhaustive run's bound on schedules.
    pub max_schedules: u64,
    /// The exhaustive run's bound on engine events over all its schedules.
    pub max_events: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            runs: None,
            seeds: None,
            max_changes: 3,
            max_candidates: 150,
            max_faults: 1,
            max_schedules: 2_000,
            max_events: 2_000_000,
        }
    }
}

/// A set of changes that makes the design hold, and what it costs.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    /// Its changes, in the model's order.
    pub changes: Vec<Repair>,
    /// Its costs over the seeds.
    pub costs: Costs,
    /// On the Pareto front of the fixes' costs: no other fix is cheaper in one
    /// cost and no dearer in the others.
    pub front: bool,
    /// Schedules its exhaustive run ran.
    pub schedules: u64,
    /// Whether that run enumerated every schedule within its bounds.
    pub complete: bool,
}

impl Fix {
    /// As `--set` flags would write it: `a=1 + b=2`.
    pub fn describe(&self) -> String {
        describe(&self.changes)
    }
}

fn describe(changes: &[Repair]) -> String {
    changes
        .iter()
        .map(Repair::describe)
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Why a change was not tried: the design has it.
pub(crate) const ALREADY: &str = "already set";

/// The start of the reason for a change to a role that the user's program
/// plays: the built-in actor's settings do not reach the program.
pub(crate) const PLAYED_BY_PROGRAM: &str = "played by your program";

/// A change of the model's that advise did not run, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The change, as `--set` writes it.
    pub change: String,
    /// `already set`; `played by your program: ...` (a setting of a role a
    /// program plays, never tried); or alone `refused: ...` or `without
    /// effect: ...` (then it was tried in sets of several changes only).
    pub why: String,
}

/// Sets of one size the budget left unjudged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Untried {
    /// Changes per set.
    pub size: usize,
    /// Sets of that size not judged (minimal ones only: never a superset of a fix).
    pub sets: usize,
}

/// What advise found.
#[derive(Clone, Debug, PartialEq)]
pub struct Advice {
    /// The scenario's name.
    pub scenario: String,
    /// Its model.
    pub model: &'static str,
    /// The seeds every design ran.
    pub seeds: SeedRange,
    /// The budget it ran within.
    pub budget: Budget,
    /// The design as it is.
    pub baseline: Verdict,
    /// Its costs over the seeds.
    pub baseline_costs: Costs,
    /// The fixes, best first: the Pareto front, then by fewer changes and costs.
    pub fixes: Vec<Fix>,
    /// Designs judged (each one set of changes).
    pub judged: usize,
    /// The model's changes not run, and why.
    pub skipped: Vec<Skipped>,
    /// What the budget left unjudged.
    pub untried: Vec<Untried>,
    /// Ctrl-C stopped it.
    pub interrupted: bool,
}

impl Advice {
    /// Whether the design failed before any change.
    pub fn fails(&self) -> bool {
        matches!(self.baseline, Verdict::Fails { .. })
    }

    /// Whether the search judged every minimal set within `max_changes`.
    pub fn complete(&self) -> bool {
        !self.interrupted && self.untried.iter().all(|u| u.sets == 0)
    }
}

/// Advises on the scenario `entry` with the `--set` overrides `base`, on
/// `jobs` threads; `stop` (Ctrl-C) ends it between designs. The result does
/// not depend on `jobs`.
pub fn advise(
    entry: &Entry,
    base: &[Override],
    budget: Budget,
    jobs: usize,
    stop: &AtomicBool,
) -> Result<Advice, UsageError> {
    let s = catalog::load_entry(entry, base)?;
    let seeds = budget.seeds.unwrap_or(SeedRange {
        start: 0,
        end: budget.runs.unwrap_or(s.runs).into(),
    });
    let runner = Runner {
        entry,
        base,
        seeds,
        budget: &budget,
        jobs,
        stop,
        unused_before: judge::unused(&s),
    };
    let sum = runner.sweep(&s);
    let baseline_costs = Costs::of(&sum.tally);
    let baseline = failure(&sum).unwrap_or_else(|| runner.exhaustive(&s, baseline_costs));
    let mut advice = Advice {
        scenario: s.name.clone(),
        model: s.system.model.name(),
        seeds,
        budget,
        baseline,
        baseline_costs,
        fixes: Vec::new(),
        judged: 0,
        skipped: Vec::new(),
        untried: Vec::new(),
        interrupted: sum.interrupted,
    };
    if advice.fails() && !advice.interrupted {
        let mut search = Search {
            runner: &runner,
            repairs: s.system.model.repairs(),
            baseline: &sum.tally,
            found: Vec::new(),
            advice: &mut advice,
        };
        search.run(&s, base);
    }
    rank(&mut advice.fixes);
    Ok(advice)
}

/// One `--set`: a dotted key and its value.
type Setting = (&'static str, &'static str);

/// The search's state: the fixes found so far, by the indices of their changes.
struct Search<'a> {
    runner: &'a Runner<'a>,
    repairs: &'static [Repair],
    baseline: &'a sim::Tally,
    found: Vec<Vec<Setting>>,
    advice: &'a mut Advice,
}

impl Search<'_> {
    fn run(&mut self, s: &Scenario, base: &[Override]) {
        let n = self.repairs.len();
        let mut seen = vec![false; n];
        let mut usable = Vec::new();
        for i in 0..n {
            if self.stopped() {
                return;
            }
            // Out of budget (`None`), a change still counts in the sets
            // reported as not tried.
            if self.single(s, base, i, &mut seen).unwrap_or(true) {
                usable.push(i);
            }
        }
        let repairs = self.repairs;
        let conflicts = |a: usize, b: usize| repairs[a].conflicts(&repairs[b]);
        for size in 2..=self.runner.budget.max_changes {
            let mut left = 0;
            for set in search::sets_of(size, &usable, &seen, &conflicts) {
                let settings = self.settings(&set);
                if self.found.iter().any(|f| search::contains(&settings, f)) {
                    continue;
                }
                if self.stopped() {
                    return;
                }
                if self.advice.judged >= self.runner.budget.max_candidates {
                    left += 1;
                    continue;
                }
                self.combination(&set);
            }
            self.advice.untried.push(Untried { size, sets: left });
        }
    }

    /// Ctrl-C, noted once.
    fn stopped(&mut self) -> bool {
        let stop = self.runner.stop.load(Ordering::Relaxed);
        self.advice.interrupted |= stop;
        stop
    }

    /// Change `i` alone: `None` when out of budget, `Some(usable)` otherwise;
    /// notes whether it changed the runs at all.
    fn single(
        &mut self,
        s: &Scenario,
        base: &[Override],
        i: usize,
        seen: &mut [bool],
    ) -> Option<bool> {
        let r = &self.repairs[i];
        if already_set(s, base, r) {
            self.skip(r, ALREADY.into());
            return Some(false);
        }
        // No set with it could load: the program replaces the actor whose
        // setting it is, and the fix, if there is one, is in the program.
        if let Some(role) = played_by_program(s, r) {
            let why = format!(
                "{PLAYED_BY_PROGRAM}: {role}.program replaces the built-in {role}, whose settings do not reach it; a fix for what it does is in the program"
            );
            self.skip(r, why);
            return Some(false);
        }
        if self.advice.judged >= self.runner.budget.max_candidates {
            self.advice.untried_single();
            return None;
        }
        // Refused or without effect alone, it may still count beside
        // another change (a retention beside the key table it needs): it
        // stays in the sets, never proposed alone.
        let design = match self.runner.load(&[r]) {
            Ok(d) => d,
            Err(e) => {
                self.skip(r, not_run(e));
                return Some(true);
            }
        };
        self.advice.judged += 1;
        let sum = self.runner.sweep(&design);
        seen[i] = sum.tally != *self.baseline;
        if failure(&sum).is_none() && !sum.interrupted {
            let v = self.runner.exhaustive(&design, Costs::of(&sum.tally));
            self.keep(&[i], &v);
        }
        Some(true)
    }

    /// A set of several changes, judged; kept if it holds.
    fn combination(&mut self, set: &[usize]) {
        let changes: Vec<&Repair> = set.iter().map(|&i| &self.repairs[i]).collect();
        // Together two changes may leave one without effect: not a fix then.
        let Ok(design) = self.runner.load(&changes) else {
            return;
        };
        self.advice.judged += 1;
        let (v, _) = self.runner.judge(&design);
        self.keep(set, &v);
    }

    fn keep(&mut self, set: &[usize], v: &Verdict) {
        if let Verdict::Holds {
            costs,
            schedules,
            complete,
        } = *v
        {
            let settings = self.settings(set);
            self.found.push(settings);
            self.advice.fixes.push(Fix {
                changes: set.iter().map(|&i| self.repairs[i]).collect(),
                costs,
                front: false,
                schedules,
                complete,
            });
        }
    }

    /// Every setting the changes `set` make.
    fn settings(&self, set: &[usize]) -> Vec<Setting> {
        set.iter()
            .flat_map(|&i| self.repairs[i].sets.iter().copied())
            .collect()
    }

    fn skip(&mut self, r: &Repair, why: String) {
        self.advice.skipped.push(Skipped {
            change: r.describe(),
            why,
        });
    }
}

impl Advice {
    /// One single change the budget did not reach.
    fn untried_single(&mut self) {
        match self.untried.iter_mut().find(|u| u.size == 1) {
            Some(u) => u.sets += 1,
            None => self.untried.push(Untried { size: 1, sets: 1 }),
        }
    }
}

fn not_run(e: NotRun) -> String {
    match e {
        NotRun::Refused(m) => format!("refused: {m}"),
        NotRun::WithoutEffect(m) => format!("without effect: {m}"),
    }
}

/// The role, if any, whose setting `r` changes while the user's program
/// plays it (`consumer.program` given: `consumer.handler` cannot apply).
fn played_by_program(s: &Scenario, r: &Repair) -> Option<&'static str> {
    let settings = crate::meaning::settings(s);
    r.sets.iter().find_map(|(key, _)| {
        let role = key.split_once('.')?.0;
        settings
            .contains_key(&format!("{role}.program"))
            .then_some(role)
    })
}

/// Whether the design already has every setting `r` makes: written in
/// its file or by a `--set`, with the same value.
fn already_set(s: &Scenario, base: &[Override], r: &Repair) -> bool {
    let Ok(doc) = s.text.parse::<toml_edit::DocumentMut>() else {
        return false;
    };
    r.sets.iter().all(|(key, value)| {
        let want = normal(value);
        if let Some(o) = base.iter().rfind(|o| o.key == *key) {
            return normal(&o.value) == want;
        }
        let mut at: Option<&toml_edit::Item> = Some(doc.as_item());
        for part in key.split('.') {
            at = at.and_then(|t| t.get(part));
        }
        let written = at
            .and_then(toml_edit::Item::as_value)
            .map(|v| v.clone().decorated("", "").to_string());
        written.is_some() && written == want
    })
}

/// A TOML value without its spacing and comments, to compare two spellings.
/// A bare word is a string, as `--set` reads it.
fn normal(v: &str) -> Option<String> {
    let v = v
        .parse::<toml_edit::Value>()
        .unwrap_or_else(|_| toml_edit::Value::from(v));
    Some(v.decorated("", "").to_string())
}

/// Best first: the Pareto front of the costs, then fewer changes, then the
/// costs in order, then the changes' text, so the order is total.
fn rank(fixes: &mut [Fix]) {
    let all: Vec<Costs> = fixes.iter().map(|f| f.costs).collect();
    let layer = costs::layers(&all);
    for (f, l) in fixes.iter_mut().zip(&layer) {
        f.front = *l == 0;
    }
    let mut order: Vec<usize> = (0..fixes.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&fixes[a], &fixes[b]);
        layer[a]
            .cmp(&layer[b])
            .then(x.changes.len().cmp(&y.changes.len()))
            .then(x.costs.order(&y.costs))
            .then(x.describe().cmp(&y.describe()))
    });
    let sorted: Vec<Fix> = order.iter().map(|&i| fixes[i].clone()).collect();
    fixes.clone_from_slice(&sorted);
}
