//! The search parts of `check`'s default portfolio in its summary
//! (`idemsim::testing::portfolio`): what exhaustive search and the
//! coverage-guided search ran and found beside the seed sweep, merged across
//! shards like the rest of a `SweepLine`.

use crate::cmd::common::{searches_phrase, WarningLine};
use idemsim::render;
use idemsim::testing::portfolio::{Found, Part, PartReport, Searches};
use models::registry;
use serde::{Deserialize, Serialize};
use sim::Outcome;
use std::collections::BTreeMap;

/// What one search part ran and the first failure it found.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PartLine {
    /// The schedules it may run (a quarter of the seed range).
    pub budget: u64,
    /// Schedules it ran.
    pub schedules: u64,
    /// Engine events over them.
    pub events: u64,
    /// Runs that hit a limit.
    pub inconclusive: u64,
    /// Exhaustive search: the deepest fault bound it ran (0 for coverage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_faults: Option<u32>,
    /// Its first failure, if any.
    pub found: Option<FoundLine>,
    /// The situations its schedules reached, in id order: they count for
    /// `[expect] situations` and the design warnings as the seeds' do.
    #[serde(default)]
    pub situations: Vec<String>,
}

/// A failure a search part found: no seed replays it, its record does.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FoundLine {
    /// Schedules the part ran up to and including it (exhaustive search:
    /// up to the end of the fault bound that failed).
    pub after: u64,
    /// The invariant it broke (`model-panic` for a panic).
    pub invariant: String,
    /// The outcome in one sentence.
    pub sentence: String,
    /// Engine events of its run.
    pub events: u64,
}

/// The portfolio's search parts, in a sweep's summary (absent for an
/// explicit strategy, and in every shard but shard 0, which runs them).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PortfolioLine {
    /// Exhaustive search from fault bound 1 up to 3.
    pub exhaustive: PartLine,
    /// The coverage-guided search, seeded by the seed range's end.
    pub coverage: PartLine,
    /// Its search seed.
    pub search_seed: u64,
    /// The part whose failure the summary shows: `seeds` when a seed
    /// failed, else `exhaustive`, else `coverage`; derived.
    #[serde(default)]
    pub found_by: Option<String>,
    /// The failing schedule's decisions (shrunk unless --no-shrink) when a
    /// search part's failure is the one shown; replay it with a repro file.
    #[serde(default)]
    pub record: Option<serde_json::Value>,
}

fn invariant_of(o: &Outcome) -> String {
    match o {
        Outcome::Violation(v) => v.invariant.to_string(),
        _ => "model-panic".to_string(),
    }
}

impl PartLine {
    fn of(p: &PartReport, exhaustive: bool) -> PartLine {
        PartLine {
            budget: p.budget,
            schedules: p.tally.schedules,
            events: p.tally.events,
            inconclusive: p.tally.inconclusive,
            max_faults: exhaustive.then_some(p.max_faults),
            found: p.found.as_ref().map(|f: &Found| FoundLine {
                after: f.after,
                invariant: invariant_of(&f.outcome),
                sentence: render::outcome_sentence(&f.outcome),
                events: f.events,
            }),
            situations: registry::situation_names(&p.tally.situations)
                .into_iter()
                .map(String::from)
                .collect(),
        }
    }

    /// `exhaustive search to fault bound 2: 96 of 250 schedules, none failed`.
    fn text(&self, name: &str) -> String {
        let bound = self
            .max_faults
            .map(|k| format!(" to fault bound {k}"))
            .unwrap_or_default();
        let limit = if self.inconclusive > 0 {
            format!(", {} hit a limit", self.inconclusive)
        } else {
            String::new()
        };
        match &self.found {
            Some(f) => format!(
                "{name}{bound}: violation within {} {} of {}{limit}: {}",
                f.after,
                if f.after == 1 {
                    "schedule"
                } else {
                    "schedules"
                },
                self.budget,
                f.sentence
            ),
            None => format!(
                "{name}{bound}: {} of {} schedules, none failed{limit}",
                self.schedules, self.budget
            ),
        }
    }
}

impl PortfolioLine {
    /// The summary of the search parts of `s`.
    pub fn of(s: &Searches, search_seed: u64) -> PortfolioLine {
        PortfolioLine {
            exhaustive: PartLine::of(&s.exhaustive, true),
            coverage: PartLine::of(&s.coverage, false),
            search_seed,
            found_by: None,
            record: None,
        }
    }

    /// The first failure of the search parts: exhaustive search's, else coverage's.
    pub fn found(&self) -> Option<(Part, &FoundLine)> {
        let e = self.exhaustive.found.as_ref().map(|f| {
            let k = self.exhaustive.max_faults.unwrap_or(0);
            (Part::Exhaustive(k), f)
        });
        e.or(self.coverage.found.as_ref().map(|f| (Part::Coverage, f)))
    }

    /// The search parts whose schedules reached `situation`, by their JSON
    /// names (`exhaustive`, `coverage`).
    pub fn reached_by(&self, situation: &str) -> Vec<String> {
        [
            ("exhaustive", &self.exhaustive),
            ("coverage", &self.coverage),
        ]
        .into_iter()
        .filter(|(_, p)| p.situations.iter().any(|s| s == situation))
        .map(|(name, _)| name.to_string())
        .collect()
    }

    /// The situations a search reached and no seed did (`seeds`), in id
    /// order, each with the searches that reached it (`exhaustive`,
    /// `coverage`).
    pub fn searched_only(&self, seeds: &[String]) -> Vec<(String, Vec<String>)> {
        let mut names: Vec<&String> = (self.exhaustive.situations.iter())
            .chain(&self.coverage.situations)
            .filter(|n| !seeds.contains(n))
            .collect();
        names.sort_by_key(|n| (id_of(n), *n));
        names.dedup();
        names
            .into_iter()
            .map(|n| (n.clone(), self.reached_by(n)))
            .collect()
    }

    /// `situations reached by the searches alone: x (exhaustive search)`:
    /// [`searched_only`](PortfolioLine::searched_only) for people; none, no line.
    pub fn searched_only_line(&self, seeds: &[String]) -> Option<String> {
        let only = self.searched_only(seeds);
        if only.is_empty() {
            return None;
        }
        let each: Vec<String> = only
            .iter()
            .map(|(n, by)| {
                let by = searches_phrase(by);
                format!("{n} ({})", by.trim_start_matches("the "))
            })
            .collect();
        Some(format!(
            "situations reached by the searches alone: {}",
            each.join(", ")
        ))
    }

    /// Names the part whose failure counts: `seeds` when a seed failed
    /// (`seed_failed`), else the search that found one, else none.
    pub fn set_found_by(&mut self, seed_failed: bool) {
        let searched = self.found().map(|(part, _)| part.as_str().to_string());
        self.found_by = if seed_failed {
            Some("seeds".to_string())
        } else {
            searched
        };
    }

    /// The two search parts' lines (`exhaustive search to fault bound 1:
    /// ...`), as `check` prints them under its portfolio line.
    pub fn part_lines(&self) -> [String; 2] {
        [
            self.exhaustive.text("exhaustive search"),
            format!(
                "{} (search seed {})",
                self.coverage.text("coverage-guided search"),
                self.search_seed
            ),
        ]
    }

    /// The lines `check` prints under the seeds' summary.
    pub fn text_lines(&self) -> Vec<String> {
        let by = match self.found_by.as_deref() {
            Some(part) => format!(", failure shown found by {part}"),
            None => String::new(),
        };
        let [exhaustive, coverage] = self.part_lines();
        vec![
            format!("portfolio: the seeds above, then two searches{by}"),
            format!("  {exhaustive}"),
            format!("  {coverage}"),
        ]
    }
}

/// A situation's id, for ordering names as the models declare them.
fn id_of(name: &str) -> u16 {
    registry::situations()
        .into_iter()
        .find(|s| s.name == name)
        .map_or(u16::MAX, |s| s.id)
}

/// Where each design warning's gap was reached: `reached_runs` counts the
/// seeds that reached its situation (`runs`, by name), and
/// `reached_by_searches` names the search parts of `portfolio` that did.
pub(super) fn reach(
    warnings: &mut [WarningLine],
    runs: &BTreeMap<String, u64>,
    portfolio: Option<&PortfolioLine>,
) {
    for h in warnings {
        h.reached_runs = (h.situation.as_ref()).map(|s| runs.get(s).copied().unwrap_or(0));
        h.reached_by_searches = match (&h.situation, portfolio) {
            (Some(s), Some(p)) => p.reached_by(s),
            _ => Vec::new(),
        };
    }
}
