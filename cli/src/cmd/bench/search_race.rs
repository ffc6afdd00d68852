//! `idemsim bench --find`: for every scenario of the catalog that expects a
//! violation, how many schedules each search strategy runs before its first
//! violation — what a user actually waits for.
//!
//! The strategies:
//! - **random**: seeds 0, 1, 2, ... with one fault mix for all of them, every
//!   range of the scenario fixed at its midpoint (plain random testing);
//! - **swarm**: seeds 0, 1, 2, ... each drawing its own mix within the ranges,
//!   as `check` runs them (the count is the lowest failing seed + 1);
//! - **exhaustive**: every schedule with 0 faults, then with 1, 2, ... up to
//!   [`MAX_FAULTS`], each level in `check --exhaustive` order, each schedule
//!   counted once;
//! - **coverage**: the coverage-guided search of `check --strategy coverage`,
//!   search seed 0;
//! - **portfolio**: what plain `check` runs by default, at the scenario's
//!   own budget (`run.runs`), whatever its `run.strategy`: every seed, then
//!   exhaustive search to fault bound 3, then the coverage-guided search
//!   (`idemsim::testing::portfolio`), counted in that order.
//!
//! Each strategy stops at `--find-budget` schedules, the portfolio at its
//! own; the counts are deterministic, the seconds are this machine's.

use crate::cmd::common::wall_clock;
use idemsim::catalog::{self, UsageError};
use idemsim::render::json_line;
use idemsim::testing::portfolio::{self, Part};
use models::scenario::Verdict;
use models::Scenario;
use sim::exhaustive::schedules_to_failure;
use sim::{find_failure, CoverageConfig, PerMilleRange, SeedRange, World};
use std::sync::atomic::AtomicBool;

/// Deepest level of the exhaustive strategy.
pub const MAX_FAULTS: u32 = 4;

/// One strategy on one scenario: schedules to the first violation, if within budget.
struct Found {
    schedules: Option<u64>,
    seconds: f64,
    /// The exhaustive level of the first violation.
    faults: Option<u32>,
}

fn timed(f: impl FnOnce() -> (Option<u64>, Option<u32>)) -> Found {
    let t = wall_clock();
    let (schedules, faults) = f();
    Found {
        schedules,
        seconds: t.elapsed().as_secs_f64(),
        faults,
    }
}

/// Every range of the scenario at its midpoint: one fault mix for every seed.
fn fix_mix(world: &mut World) {
    let mid = |r: &mut PerMilleRange| {
        let m = r.lo + (r.hi - r.lo) / 2;
        *r = PerMilleRange { lo: m, hi: m };
    };
    for l in &mut world.links {
        mid(&mut l.loss_per_mille);
        mid(&mut l.duplicate_per_mille);
    }
    for c in &mut world.crashes {
        mid(&mut c.crash_per_mille);
    }
    for k in &mut world.kind_faults {
        k.loss_per_mille.iter_mut().for_each(mid);
        k.duplicate_per_mille.iter_mut().for_each(mid);
    }
    mid(&mut world.random_partition.per_mille);
}

/// A scenario's actors and oracle in another world: the same scenario with its mix fixed.
struct Refit<'a> {
    world: World,
    inner: &'a models::System,
}

impl sim::Model for Refit<'_> {
    type Node = models::Node;
    type Oracle = models::core::Ledger;
    fn world(&self) -> &World {
        &self.world
    }
    fn nodes(&self) -> &[models::Node] {
        sim::Model::nodes(self.inner)
    }
    fn new_oracle(&self) -> models::core::Ledger {
        sim::Model::new_oracle(self.inner)
    }
}

struct Row {
    scenario: String,
    invariant: Option<&'static str>,
    random: Found,
    swarm: Found,
    exhaustive: Found,
    coverage: Found,
    /// Plain `check`'s portfolio at the scenario's `run.runs`.
    portfolio: Found,
    /// The part of the portfolio that found it.
    part: Option<Part>,
}

impl Row {
    fn strategies(&self) -> [(&'static str, &Found); 4] {
        [
            ("random", &self.random),
            ("swarm", &self.swarm),
            ("exhaustive", &self.exhaustive),
            ("coverage", &self.coverage),
        ]
    }

    /// The strategy with the fewest schedules (the first listed on a tie).
    fn best(&self) -> Option<&'static str> {
        self.strategies()
            .into_iter()
            .filter_map(|(name, f)| f.schedules.map(|n| (n, name)))
            .min_by_key(|(n, _)| *n)
            .map(|(_, name)| name)
    }
}

fn measure(s: &Scenario, budget: u64, jobs: usize) -> Row {
    let stop = AtomicBool::new(false);
    let seeds = SeedRange {
        start: 0,
        end: budget.into(),
    };
    let first = |sum: sim::Summary| sum.first_failure.map(|f| f.seed + 1);
    let random = timed(|| {
        let mut fixed = Refit {
            world: s.system.world.clone(),
            inner: &s.system,
        };
        fix_mix(&mut fixed.world);
        (first(find_failure(&fixed, seeds, jobs, &stop)), None)
    });
    let swarm = timed(|| (first(find_failure(&s.system, seeds, jobs, &stop)), None));
    let exhaustive = timed(
        || match schedules_to_failure(&s.system, MAX_FAULTS, budget, &stop) {
            Some((n, k)) => (Some(n), Some(k)),
            None => (None, None),
        },
    );
    let coverage = timed(|| {
        let r = sim::coverage_search(&s.system, &CoverageConfig::new(0, budget), &stop);
        (first(r.summary), None)
    });
    let mut part = None;
    let portfolio = timed(|| {
        let own = SeedRange {
            start: 0,
            end: s.runs.into(),
        };
        let f = portfolio::first_failure(&s.system, own, jobs, &stop);
        part = f.map(|f| f.part);
        (f.map(|f| f.schedules), None)
    });
    Row {
        scenario: s.name.clone(),
        invariant: s.expected_invariant(),
        random,
        swarm,
        exhaustive,
        coverage,
        portfolio,
        part,
    }
}

/// The portfolio's cell: its schedules and the part that found the bug, or
/// the scenario's budget it stayed within.
fn portfolio_cell(row: &Row, runs: u64) -> String {
    match (row.portfolio.schedules, row.part) {
        (Some(n), Some(p)) => format!("{n} ({})", p.as_str()),
        _ => format!(">{runs}"),
    }
}

fn cell(f: &Found, budget: u64) -> String {
    match (f.schedules, f.faults) {
        (Some(n), Some(k)) => format!("{n} (K={k})"),
        (Some(n), None) => n.to_string(),
        (None, _) => format!(">{budget}"),
    }
}

/// The `find` JSON Lines record of one scenario.
fn json_row(row: &Row, budget: u64, runs: u64) -> String {
    let strategy = |f: &Found| {
        serde_json::json!({
            "schedules": f.schedules,
            "found": f.schedules.is_some(),
            "seconds": f.seconds,
        })
    };
    let mut exhaustive = strategy(&row.exhaustive);
    exhaustive["faults"] = serde_json::json!(row.exhaustive.faults);
    let mut portfolio = strategy(&row.portfolio);
    portfolio["budget"] = serde_json::json!(runs);
    portfolio["part"] = serde_json::json!(row.part.map(Part::as_str));
    json_line(
        "find",
        serde_json::json!({
            "scenario": row.scenario,
            "invariant": row.invariant,
            "budget": budget,
            "random": strategy(&row.random),
            "swarm": strategy(&row.swarm),
            "exhaustive": exhaustive,
            "coverage": strategy(&row.coverage),
            "best": row.best(),
            "portfolio": portfolio,
        }),
    )
}

/// Runs `idemsim bench --find`: the exit code, or `Err` for bad input (exit 2).
pub fn run(scenario: Option<&str>, budget: u64, jobs: usize, json: bool) -> Result<u8, UsageError> {
    if budget == 0 {
        return Err(UsageError(
            "error: --find-budget must be at least 1\n".into(),
        ));
    }
    let list: Vec<Scenario> = match scenario {
        Some(name) => vec![catalog::load(name, &[])?],
        None => catalog::catalog()?
            .iter()
            .map(|e| catalog::load_entry(e, &[]))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|s| s.expected_verdict() == Some(Verdict::Violation))
            .collect(),
    };
    let width = list.iter().map(|s| s.name.len()).max().unwrap_or(8).max(8);
    if !json {
        idemsim::outln!(
            "schedules until the first violation (budget {budget} each; exhaustive up to K={MAX_FAULTS})"
        );
        idemsim::outln!(
            "{:<width$}  {:>10}  {:>10}  {:>14}  {:>10}  {:<10}  {:>20}",
            "scenario",
            "random",
            "swarm",
            "exhaustive",
            "coverage",
            "best",
            "portfolio (run.runs)"
        );
    }
    for s in &list {
        let row = measure(s, budget, jobs);
        if json {
            idemsim::outln!("{}", json_row(&row, budget, s.runs));
        } else {
            idemsim::outln!(
                "{:<width$}  {:>10}  {:>10}  {:>14}  {:>10}  {:<10}  {:>20}",
                row.scenario,
                cell(&row.random, budget),
                cell(&row.swarm, budget),
                cell(&row.exhaustive, budget),
                cell(&row.coverage, budget),
                row.best().unwrap_or("none"),
                portfolio_cell(&row, s.runs)
            );
        }
    }
    Ok(idemsim::exit::HOLDS)
}
