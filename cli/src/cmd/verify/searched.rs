//! `verify` judges a file's `[expect]` by the schedules `check` judges it
//! by. When `check` of the file as written would run its default portfolio,
//! and the searches can change how the file is judged, `verify` runs the
//! same two searches over the same seeds (`check::search`) and judges the
//! own strategy's summary together with what the searches reached and found
//! (`check::judged`): a file is met in both commands or in neither.
//!
//! The searches can change the judgement only when no seed failed: a
//! seed's failure is the verdict in both commands (`check::judged` keeps
//! it), and a failing verdict's judgement reads neither the situations nor
//! the load. So a file whose seeds failed as it expects runs no search; one
//! whose seeds found no failure ("holds", an inconclusive run, or a
//! violation the seeds missed) runs them, as `check` does, since only a
//! search may find its violation or reach its situations.

use crate::cmd::check::{self, PortfolioLine};
use crate::cmd::common::WarningLine;
use idemsim::catalog::UsageError;
use idemsim::testing::portfolio::{search_seed, Found, Searches};
use idemsim::testing::shown::{self, Plan};
use models::Scenario;
use sim::{SeedRange, Summary};
use std::sync::atomic::AtomicBool;

/// The file's own schedules, as `check` of it as written runs them: when
/// `check` runs its portfolio, the seeds alone, which its two searches
/// follow ([`Portfolio::if_they_count`]); for a file that states
/// `run.strategy`, that strategy: its seeds, or its coverage-guided search
/// (`shown::coverage`, as `check` runs it), whose failure comes with its
/// record so that it is shrunk and recorded as found, not searched for
/// again. Nothing else runs after the seeds (`Scenario::search`): a search
/// of `verify`'s own after seeds that miss an expected violation could
/// meet a file whose violation `check`'s searches miss
/// (tests/fixtures/expect_reach/violation-check-searches-miss.toml).
pub(super) fn own(
    s: &Scenario,
    seeds: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> (Summary, Option<Found>) {
    if Plan::of(s) == Plan::Coverage {
        return shown::coverage(s, seeds, stop);
    }
    (s.search(seeds, jobs, stop), None)
}

/// The portfolio's searches as `verify` ran them for one scenario.
pub(super) struct Portfolio {
    searches: Searches,
    /// What `check`'s summary would carry of them.
    line: PortfolioLine,
    /// Why they ran, said above their lines.
    why: Why,
}

/// Why `verify` ran `check`'s searches for a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Why {
    /// The own strategy's schedules do not meet `[expect]`.
    Unmet,
    /// They meet it without a failure, which a search may still find.
    NoFailure,
}

impl Why {
    /// Why the searches run for `s` after its own strategy's summary
    /// `own`, or `None` when they do not: `s` states no expectation, or
    /// `check` runs no portfolio for it (it states `run.strategy`), or a
    /// schedule of its own failed as `[expect]` says, which no search
    /// changes.
    pub(super) fn of(s: &Scenario, own: &Summary) -> Option<Why> {
        if s.expected_verdict().is_none() || !check::runs_portfolio(s) {
            return None;
        }
        if !s.judge(own).matched() {
            Some(Why::Unmet)
        } else if own.first_failure.is_none() {
            Some(Why::NoFailure)
        } else {
            None
        }
    }
}

impl Portfolio {
    /// Runs `check`'s searches over `seeds` (on `jobs` threads) when
    /// `check` of `s` runs the portfolio and they can change how `s`'s
    /// `[expect]` judges the own strategy's summary `own` (see
    /// [`Why::of`]); `None` otherwise. `replay` names the scenario in a
    /// message about a broken external program.
    pub(super) fn if_they_count(
        s: &Scenario,
        own: &Summary,
        seeds: SeedRange,
        jobs: usize,
        replay: &str,
    ) -> Result<Option<Portfolio>, UsageError> {
        let Some(why) = Why::of(s, own) else {
            return Ok(None);
        };
        let searches = check::search(s, replay, seeds, jobs)?;
        let mut line = PortfolioLine::of(&searches, search_seed(seeds));
        line.set_found_by(own.first_failure.is_some());
        Ok(Some(Portfolio {
            searches,
            line,
            why,
        }))
    }

    /// Whether Ctrl-C cut a search short.
    pub(super) fn interrupted(&self) -> bool {
        self.searches.exhaustive.interrupted || self.searches.coverage.interrupted
    }

    /// The own strategy's summary `own` as `check` judges the file by it:
    /// with the situations the searches reached, and their failure when
    /// no seed failed.
    pub(super) fn judged(&self, own: &Summary) -> Summary {
        self.searches.judged(own)
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

    /// The failure the searches show when no seed failed: exhaustive
    /// search's, else the coverage-guided search's.
    pub(super) fn found(&self) -> Option<&Found> {
        self.searches.first()
    }

    /// The decisions of the search's failure as shown (shrunk), carried
    /// in the JSON `portfolio` as in `check`'s summary.
    pub(super) fn set_record(&mut self, record: serde_json::Value) {
        self.line.record = Some(record);
    }

    /// Whether the searches change nothing a reader of the row needs:
    /// they found no failure, reached no situation the seeds missed
    /// (`seeds`) and hit no limit, so the judgement is the seeds' alone.
    fn added_nothing(&self, seeds: &[&str]) -> bool {
        let parts = [&self.line.exhaustive, &self.line.coverage];
        parts
            .iter()
            .all(|p| p.found.is_none() && p.inconclusive == 0)
            && self.line.searched_only(&owned(seeds)).is_empty()
    }

    /// The lines printed under the scenario's row: what each search ran
    /// and found, then the situations only they reached; one line when
    /// they added nothing to what the seeds show (the JSON keeps all).
    pub(super) fn text_lines(&self, seeds: &[&str]) -> Vec<String> {
        if self.added_nothing(seeds) {
            let (e, c) = (&self.line.exhaustive, &self.line.coverage);
            return vec![format!(
                "check's two searches found nothing the seeds missed: exhaustive to fault bound {} ({} of {} schedules), coverage-guided ({} of {})",
                e.max_faults.unwrap_or(0),
                e.schedules,
                e.budget,
                c.schedules,
                c.budget
            )];
        }
        let head = match self.why {
            Why::Unmet => "its seeds alone do not meet [expect], so check's two searches ran too:",
            Why::NoFailure => {
                "no seed failed, so check's two searches ran too, as check runs them:"
            }
        };
        let mut lines = vec![head.to_string()];
        lines.extend(self.line.part_lines().map(|l| format!("  {l}")));
        lines.extend(self.line.searched_only_line(&owned(seeds)));
        lines
    }
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_string()).collect()
}
