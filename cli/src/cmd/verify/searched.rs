//! `verify` judges a file's `[expect]` by the schedules `check` judges it
//! by. When the scenario's own strategy (its seeds) does not meet the
//! expectation, and `check` of the file as written would run its default
//! portfolio, `verify` runs the same two searches over the same seeds
//! (`check::search`) and judges the seeds' summary together with what the
//! searches reached and found (`check::judged`): a file is met in both
//! commands or in neither. A file its seeds meet runs no search, so what
//! `verify` costs and prints for it stays what it was.

use crate::cmd::check::{self, PortfolioLine};
use crate::cmd::common::WarningLine;
use idemsim::catalog::UsageError;
use idemsim::testing::portfolio::{search_seed, Searches};
use models::Scenario;
use sim::{SeedRange, Summary};

/// The portfolio's searches as `verify` ran them for one scenario.
pub(super) struct Portfolio {
    searches: Searches,
    /// What `check`'s summary would carry of them.
    line: PortfolioLine,
}

impl Portfolio {
    /// Runs `check`'s searches over `seeds` (on `jobs` threads) when the
    /// own strategy's summary `own` does not meet `s`'s `[expect]` and
    /// `check` of `s` runs the portfolio; `None` otherwise. `replay`
    /// names the scenario in a message about a broken external program.
    pub(super) fn if_unmet(
        s: &Scenario,
        own: &Summary,
        seeds: SeedRange,
        jobs: usize,
        replay: &str,
    ) -> Result<Option<Portfolio>, UsageError> {
        if s.expected_verdict().is_none() || !check::runs_portfolio(s) || s.judge(own).matched() {
            return Ok(None);
        }
        let searches = check::search(s, replay, seeds, jobs)?;
        let mut line = PortfolioLine::of(&searches, search_seed(seeds));
        line.set_found_by(own.first_failure.is_some());
        Ok(Some(Portfolio { searches, line }))
    }

    /// Whether Ctrl-C cut a search short.
    pub(super) fn interrupted(&self) -> bool {
        self.searches.exhaustive.interrupted || self.searches.coverage.interrupted
    }

    /// The own strategy's summary `own` as `check` judges the file by it:
    /// with the situations the searches reached, and their failure when
    /// no seed failed.
    pub(super) fn judged(&self, own: &Summary) -> Summary {
        check::judged(own, Some(&self.searches))
    }

    /// The scenario's design warnings, each naming the searches that
    /// reached its gap, as `check`'s summary names them.
    pub(super) fn warnings(portfolio: Option<&Portfolio>, s: &Scenario) -> Vec<WarningLine> {
        let mut lines = WarningLine::of(&s.design_warnings);
        for h in &mut lines {
            h.reached_by_searches = match (&h.situation, portfolio) {
                (Some(sit), Some(p)) => p.line.reached_by(sit),
                _ => Vec::new(),
            };
        }
        lines
    }

    /// The fields a `verify` line gains: `portfolio`, as in `check`'s
    /// summary, and `situations_by_searches`, the situations no seed
    /// (`seeds` names those they reached) but a search reached.
    pub(super) fn json_into(&self, seeds: &[&str], line: &mut serde_json::Value) {
        let only: Vec<serde_json::Value> = self
            .line
            .searched_only(&owned(seeds))
            .into_iter()
            .map(|(situation, searches)| {
                serde_json::json!({"situation": situation, "searches": searches})
            })
            .collect();
        line["portfolio"] = serde_json::json!(self.line);
        line["situations_by_searches"] = serde_json::json!(only);
    }

    /// The lines printed under the scenario's row: what each search ran
    /// and found, then the situations only they reached.
    pub(super) fn text_lines(&self, seeds: &[&str]) -> Vec<String> {
        let mut lines = vec![
            "its seeds alone do not meet [expect], so check's two searches ran too:".to_string(),
        ];
        lines.extend(self.line.part_lines().map(|l| format!("  {l}")));
        lines.extend(self.line.searched_only_line(&owned(seeds)));
        lines
    }
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_string()).collect()
}
