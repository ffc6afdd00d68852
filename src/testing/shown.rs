//! The failure `check` of a scenario file shows, for the commands that show
//! or shrink one without `check`'s summary (`shrink`): the same seeds, then
//! the same searches, so that `shrink FILE` cuts down the very failure
//! `check FILE` reported, named in its words, and not one a search of its
//! own found (or none, where `check`'s searches found one).

use super::portfolio::{self, Found, Part, Searches};
use crate::catalog::UsageError;
use crate::minimize::Done;
use models::scenario::Strategy;
use models::Scenario;
use sim::SeedRange;
use std::sync::atomic::AtomicBool;

/// How `check` of a file as written (no `--strategy`) searches its runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Every seed, nothing after (the file states `run.strategy = "seeds"`).
    Seeds,
    /// Every seed, then the portfolio's two searches (it states none).
    Portfolio,
    /// The coverage-guided search (`run.strategy = "coverage"`).
    Coverage,
}

impl Plan {
    /// What `check` of `s` runs when no `--strategy` is given: what the
    /// file states, else the default portfolio, which finds rare bugs too.
    pub fn of(s: &Scenario) -> Plan {
        match (s.strategy_stated, s.strategy) {
            (false, _) => Plan::Portfolio,
            (true, Strategy::Seeds) => Plan::Seeds,
            (true, Strategy::Coverage) => Plan::Coverage,
        }
    }

    /// The strategy of the file's own search, which `verify` names: its
    /// seeds, unless it asks for the coverage-guided search.
    pub fn strategy(self) -> Strategy {
        match self {
            Plan::Seeds | Plan::Portfolio => Strategy::Seeds,
            Plan::Coverage => Strategy::Coverage,
        }
    }
}

/// Runs the portfolio's two searches over `range` as `check` runs them
/// (until `stop`); a program that broke the protocol in the failure they
/// show is bad input, as in a sweep (`replay` names the scenario then).
pub fn searches(
    s: &Scenario,
    replay: &str,
    range: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> Result<Searches, UsageError> {
    let mut r = portfolio::searches(&s.system, range, jobs, stop);
    r.forget_killed();
    if let Some(f) = r.first() {
        let what = format!("the portfolio's {} search ({replay})", f.part.as_str());
        crate::external::check_outcome(s, &what, &f.outcome)?;
    }
    Ok(r)
}

/// The summary `check` of `s` as written judges its `[expect]` by, over
/// `range`: the file's own search ([`Scenario::search`]: its seeds, or its
/// stated coverage-guided search) and, when `check` runs its portfolio
/// and no seed failed, the portfolio's two searches as
/// [`Searches::judged`](portfolio::Searches::judged) counts them (their
/// failure, the situations they reached). A seed's failure is the verdict
/// whatever they find, so they do not run then (as in `verify`).
/// Deterministic for any `jobs`.
pub fn judged(
    s: &Scenario,
    replay: &str,
    range: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> Result<sim::Summary, UsageError> {
    let own = s.search(range, jobs, stop);
    crate::external::check_summary(s, replay, &own)?;
    if Plan::of(s) != Plan::Portfolio || own.first_failure.is_some() || own.interrupted {
        return Ok(own);
    }
    Ok(searches(s, replay, range, jobs, stop)?.judged(&own))
}

/// The failure `check` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckFailure {
    /// The lowest failing seed.
    Seed(u64),
    /// No seed failed (or the file asks for the coverage-guided search):
    /// the failure a search found, which no seed replays.
    Search(Found),
}

/// The failure `check` of `s` as written shows for the seeds `range`: its
/// lowest failing seed; else, when it runs the portfolio, the failure of
/// its searches (exhaustive search's, else the coverage-guided search's);
/// or, for a file that asks for the coverage-guided search, that search's.
/// `None` when `check` shows none. Deterministic for any `jobs`.
pub fn check_failure(
    s: &Scenario,
    replay: &str,
    range: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> Result<Option<CheckFailure>, UsageError> {
    let plan = Plan::of(s);
    if plan == Plan::Coverage {
        let (mut sum, found) = coverage(s, range, stop);
        crate::signals::forget_killed_schedules(&mut sum);
        crate::external::check_summary(s, replay, &sum)?;
        let found = found.filter(|_| sum.first_failure.is_some());
        return Ok(found.map(CheckFailure::Search));
    }
    let mut sum = sim::find_failure(&s.system, range, jobs, stop);
    crate::signals::forget_killed_runs(&mut sum);
    crate::external::check_summary(s, replay, &sum)?;
    if let Some(f) = &sum.first_failure {
        return Ok(Some(CheckFailure::Seed(f.seed)));
    }
    if plan == Plan::Seeds || sum.interrupted {
        return Ok(None);
    }
    let r = searches(s, replay, range, jobs, stop)?;
    Ok(r.first().cloned().map(CheckFailure::Search))
}

/// The coverage-guided search of `s` over `range`, as `check` runs it for
/// a file that asks for it: its summary, and its failure as a search's
/// (the record `None` when the run was too long to record).
pub fn coverage(
    s: &Scenario,
    range: SeedRange,
    stop: &AtomicBool,
) -> (sim::Summary, Option<Found>) {
    let sim::CoverageReport {
        summary, failing, ..
    } = s.coverage(range, stop);
    let found = summary.first_failure.as_ref().map(|f| Found {
        part: Part::Coverage,
        after: f.seed + 1,
        record: failing,
        outcome: f.outcome.clone(),
        events: f.events,
    });
    (summary, found)
}

impl Found {
    /// The failing schedule as `check` names it: `coverage-guided schedule
    /// #5`, `exhaustive schedule with at most 2 faults`.
    pub fn what(&self) -> String {
        match self.part {
            Part::Exhaustive(k) => format!(
                "exhaustive schedule with at most {k} {}",
                if k == 1 { "fault" } else { "faults" }
            ),
            _ => format!("coverage-guided schedule #{}", self.after),
        }
    }

    /// Its index in its search (0-based), which stands in for a seed in a
    /// shrunk failure (`minimize::Done::seed`).
    pub fn index(&self) -> u64 {
        self.after - 1
    }

    /// What every command says of a search's failure whose run made more
    /// decisions than a record holds (its `record` is `None`): it counts,
    /// but nothing replays it, so it is not shrunk, traced or recorded;
    /// and what to do. `arg` names the scenario in the command it suggests.
    pub fn unrecorded_note(&self, arg: &str) -> String {
        format!(
            "{} fails ({}), but its run makes more decisions than a record holds ({} values), so nothing replays it (no seed does: a search's schedule is its decisions): it is not shrunk, traced, written to a repro file or recorded\nhelp: a failing seed replays without a record: sweep more seeds with `idemsim check {arg} --strategy seeds --runs N`, or lower run.max_steps if runs this long are not what the scenario means",
            self.what(),
            crate::render::outcome_sentence(&self.outcome),
            sim::MAX_RECORDED_VALUES,
        )
    }
}

/// A failure a search of the portfolio found, shrunk from its record (no
/// seed replays it): what `check` shows under its summary, what `verify`
/// shows under a scenario's row and records, and what `shrink` prints,
/// alike.
pub struct SearchedFailure<'a> {
    /// The failing schedule as people name it: `coverage-guided schedule
    /// #5`, `exhaustive schedule with at most 2 faults`.
    pub what: String,
    /// Shrunk, unless not asked to or a signal broke the reruns off.
    pub done: Option<Done>,
    /// As the search found it.
    found: &'a Found,
    record: &'a sim::Record,
}

impl<'a> SearchedFailure<'a> {
    /// Shrinks `found` within `budget` (unless `no_shrink`); `None` when
    /// its run was too long to record, so nothing replays it.
    pub fn shrink(
        s: &models::Scenario,
        found: &'a Found,
        budget: crate::minimize::Budget,
        no_shrink: bool,
    ) -> Option<SearchedFailure<'a>> {
        let record = found.record.as_ref()?;
        let what = found.what();
        let done =
            crate::minimize::shrink_found(s, record, found.index(), &what, budget, no_shrink);
        Some(SearchedFailure {
            what,
            done,
            found,
            record,
        })
    }

    /// The run to show and record: shrunk, else as found; and its outcome.
    pub fn shown(&self) -> (&sim::Record, &sim::Outcome) {
        match &self.done {
            Some(d) => (&d.shrunk.record, &d.shrunk.report.outcome),
            None => (self.record, &self.found.outcome),
        }
    }
}
