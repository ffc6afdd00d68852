//! `idemsim check`: sweep a scenario's seeds (or enumerate its schedules with
//! `--exhaustive`), give the verdict, shrink the lowest failure and print it; the
//! summary line (`SweepLine`) is also what `merge` combines.

use idemsim::catalog::{self, UsageError};
use idemsim::progress::{self, Progress};
use sim::{explore, SeedRange};

mod args;
mod coverage;
mod exhaustive;
mod expect;
mod found;
mod operations;
mod portfolio;
mod protections;
mod summary;
mod text;

use super::common::{jobs, shell_word, WarningLine};
pub use args::Args;
use args::Search;
use exhaustive::run_exhaustive;
pub(crate) use found::search;
use idemsim::regressions::sweep::Recorded;
pub use portfolio::PortfolioLine;
pub use summary::{Seeds, ShardLine, SweepLine};

/// A coverage-guided search runs as one sequence, each schedule mutating what
/// the earlier ones found, so no part of it is a shard `merge` could combine.
fn unshardable(s: &models::Scenario, explicit: bool, entry: &catalog::Entry) -> UsageError {
    let by_set = s.overrides.iter().any(|o| o.key == "run.strategy");
    let why = match (explicit, by_set) {
        (true, _) => "--strategy coverage asks for a coverage-guided search".to_string(),
        (false, true) => {
            "--set run.strategy=coverage asks for a coverage-guided search".to_string()
        }
        (false, false) => format!(
            "{} sets run.strategy = \"coverage\", a coverage-guided search",
            s.file
        ),
    };
    UsageError(format!(
        "error: --shard splits a seed sweep, but {why}, which runs as one sequence and cannot be split into shards\nhelp: sweep its seeds in shards with `idemsim check {} --strategy seeds --shard I/N --json`, or leave --shard out to run the search on one machine\n",
        entry.shell_arg()
    ))
}

/// Runs `idemsim check`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let name = a.scenario.as_deref().unwrap_or(catalog::DEFAULT);
    let overrides = catalog::parse_overrides(&a.set)?;
    let s = catalog::load(name, &overrides)?;
    let jobs = jobs(a.jobs)?;
    // A scenario given by path (or found in a --scenarios folder) is replayed by
    // its path: its name alone could find another scenario of that name.
    let entry = catalog::locate(name)?;
    // The regression folder, found from the scenario's file and checked
    // before anything runs (a shard or an enumeration leaves it alone, but
    // a folder that is a file is still wrong).
    let file = match &entry.origin {
        catalog::Origin::File(p) => Some(p.as_path()),
        catalog::Origin::BuiltIn => None,
    };
    let db = a.regressions.db(file)?;
    let budget = idemsim::minimize::Budget::from_flags(a.shrink_max_runs, a.shrink_budget_ms)?;
    let sets: String = a
        .set
        .iter()
        .map(|s| format!(" --set {}", shell_word(s)))
        .collect();
    let replay = format!("idemsim replay {}{sets}", entry.shell_arg());
    progress::install_ctrl_c();
    if a.exhaustive {
        return run_exhaustive(&a, (&s, &entry), &replay, jobs);
    }
    let all = seed_range(&a, &s)?;
    let search = Search::of(a.strategy, &s);
    if search == Search::Coverage && a.shard.is_some() {
        return Err(unshardable(&s, a.strategy.is_some(), &entry));
    }
    // A shard may be empty when there are more shards than seeds; it merges as
    // nothing.
    let seeds = match a.shard {
        Some((i, n)) => all.shard(i, n),
        None => all,
    };
    // The regression database: this scenario's recorded failures run first.
    // Shards leave it alone (`idemsim merge` sees no regressions).
    let db = db.filter(|_| a.shard.is_none());
    let replayed = match &db {
        Some(db) => idemsim::regressions::sweep::replay_scenario(db, &entry, &s.overrides)?,
        None => Vec::new(),
    };
    idemsim::external::determinism_check_first(&s, seeds, a.determinism_seeds, &replay)?;
    let failing = idemsim::regressions::sweep::FailingRegression::first(&replayed, &entry);
    for r in &replayed {
        idemsim::regressions::sweep::print(r, a.json, "");
    }
    let sweep = Sweep {
        a: &a,
        s: &s,
        entry: &entry,
        db,
        replayed,
        failing,
        budget,
        replay,
        all,
        seeds,
    };
    match search {
        Search::Coverage => sweep.coverage(),
        Search::Seeds { portfolio } => sweep.seeds(jobs, portfolio),
    }
}

/// A sweep about to run, with the regressions replayed before it.
struct Sweep<'a> {
    a: &'a Args,
    s: &'a models::Scenario,
    entry: &'a catalog::Entry,
    db: Option<idemsim::regressions::Db>,
    replayed: Vec<idemsim::regressions::Replayed>,
    failing: Option<idemsim::regressions::sweep::FailingRegression>,
    budget: idemsim::minimize::Budget,
    /// The command that replays a seed of it.
    replay: String,
    /// The seeds asked for, and this shard's part of them.
    all: SeedRange,
    seeds: SeedRange,
}

impl Sweep<'_> {
    /// Records a failure the sweep found, unless it is known. Recorded
    /// before the summary prints: under --json its record must come before
    /// the summary, which stays the last line.
    fn record_new(
        &self,
        seed: Option<u64>,
        record: Option<&sim::Record>,
        outcome: &sim::Outcome,
    ) -> Result<Option<idemsim::regressions::sweep::Recorded>, UsageError> {
        let Some(db) = &self.db else {
            return Ok(None);
        };
        let recorded = idemsim::regressions::sweep::record_failure(
            db,
            self.s,
            self.entry,
            &self.a.set,
            seed,
            record,
            outcome,
        )?;
        // A failure found again that a replayed regression already shows: said once.
        Ok(recorded.filter(|r| r.new || !self.replayed.iter().any(|x| x.file == r.file)))
    }

    /// `--strategy coverage`: the coverage-guided search.
    fn coverage(&self) -> Result<u8, UsageError> {
        let a = self.a;
        let found = coverage::run(coverage::Request {
            scenario: self.s,
            entry: self.entry,
            sets: &a.set,
            seeds: self.all,
            json: a.json,
            no_shrink: a.no_shrink,
            budget: self.budget,
            repro_out: a.repro_out.as_deref(),
            replay: &self.replay,
            stop: &progress::STOP,
            record: &|record, outcome| self.record_new(None, Some(record), outcome),
            failing_regression: self.failing.as_ref(),
        })?;
        Ok(idemsim::regressions::sweep::exit_code(
            found.code,
            &self.replayed,
        ))
    }

    /// The seed sweep on `jobs` threads (then, with `portfolio`, the
    /// portfolio's searches), its first failure shrunk, the summary printed.
    fn seeds(self, jobs: usize, portfolio: bool) -> Result<u8, UsageError> {
        let (a, s, entry, seeds) = (self.a, self.s, self.entry, self.seeds);
        let bar = Progress::new(Some(seeds.len()), a.json);
        let mut sum = explore(&s.system, seeds, jobs, &progress::STOP, &|done| {
            bar.update(done)
        });
        idemsim::signals::forget_killed_runs(&mut sum);
        bar.finish();
        // A program that broke the protocol is bad input, whatever else the sweep found.
        idemsim::external::check_summary(s, &self.replay, &sum)?;
        let mut line = sweep_line(a, s, entry, self.replay.clone(), (self.all, seeds), &sum);
        line.failing_regression = self.failing.clone();
        // Shard 0 alone runs the searches, so each schedule is one shard's.
        let searches = (portfolio && a.shard.is_none_or(|(i, _)| i == 0))
            .then(|| found::search(s, &self.replay, self.all, jobs))
            .transpose()?;
        if let Some(searches) = &searches {
            line.portfolio = Some(portfolio::PortfolioLine::of(
                searches,
                idemsim::testing::portfolio::search_seed(self.all),
            ));
            line.interrupted |= progress::STOP.load(std::sync::atomic::Ordering::Relaxed);
            line.derive();
        }
        // Shrinking: the lowest failing seed (else a search's failure), cut
        // down to a locally minimal run.
        let shown = found::Shown::of(&self, &mut line, &sum, searches.as_ref())?;
        let variant = !a.set.is_empty() || a.shard.is_some();
        let judged = found::judged(&sum, searches.as_ref());
        let note = expect::ExpectNote::of(s, &judged, variant, entry, seeds);
        line.name_protections(protections::ProtectionsLine::of(
            s,
            entry,
            !a.set.is_empty(),
        ));
        if a.json {
            shown.recorded.iter().for_each(|r| r.print(true, ""));
        }
        line.print_noted(a.json, shown.text.as_deref(), note.as_ref());
        if let Some(dir) = a.html.as_deref() {
            html_report(a, (s, entry), &sum, shown.done.as_ref(), dir)?;
        }
        if !a.json {
            shown.recorded.iter().for_each(|r| r.print(false, ""));
        }
        shown.recorded.iter().for_each(Recorded::warn);
        Ok(idemsim::regressions::sweep::exit_code(
            line.exit_code(),
            &self.replayed,
        ))
    }
}

/// Whether `check` of `s` as written (no `--strategy`) runs its default
/// portfolio: the seeds, then the searches. `verify` asks, to judge a
/// file's `[expect]` by the same schedules.
pub(crate) fn runs_portfolio(s: &models::Scenario) -> bool {
    Search::of(None, s) == (Search::Seeds { portfolio: true })
}

/// The seeds `check` sweeps: `--seeds`, `--seed`, or the first `--runs` (or
/// `run.runs`); none is bad input.
fn seed_range(a: &Args, s: &models::Scenario) -> Result<SeedRange, UsageError> {
    super::common::runs("--runs", a.runs)?;
    let one = a.seed.map(|n| SeedRange::inclusive(n, n));
    let all = a.seeds.or(one).unwrap_or(SeedRange {
        start: 0,
        end: a.runs.unwrap_or(s.runs).into(),
    });
    if all.is_empty() {
        let what = if a.runs.is_some() {
            "error: --runs must be at least 1".to_string()
        } else {
            format!(
                "error: {}: run.runs is 0, so there is no seed to run",
                s.file
            )
        };
        return Err(UsageError(format!(
            "{what}\nhelp: give the number of seeds to run, e.g. --runs 1000\n"
        )));
    }
    Ok(all)
}

/// The summary of a seed sweep: `all` is the range asked for, `seeds` this
/// shard's part of it.
fn sweep_line(
    a: &Args,
    s: &models::Scenario,
    entry: &catalog::Entry,
    replay: String,
    (all, seeds): (SeedRange, SeedRange),
    sum: &sim::Summary,
) -> SweepLine {
    let mut line = SweepLine::from_summary(
        &s.name,
        replay,
        &a.set,
        seeds,
        sum,
        s.system.model.metrics(),
    );
    line.design_warnings = WarningLine::of_tally(&s.design_warnings, &sum.tally);
    line.scenario_hash = Some(idemsim::repro::hash_hex(s.hash));
    line.scenario_file = (!entry.is_built_in()).then(|| entry.arg());
    line.shard = a.shard.map(|(index, count)| ShardLine {
        index,
        count,
        of: Seeds::from(all),
    });
    line
}

/// `--html DIR`: the report of the lowest failing seed's run (shrunk unless
/// told not to), or a note that there is none.
fn html_report(
    a: &Args,
    (s, entry): (&models::Scenario, &catalog::Entry),
    sum: &sim::Summary,
    done: Option<&idemsim::minimize::Done>,
    dir: &std::path::Path,
) -> Result<(), UsageError> {
    let report = match &sum.first_failure {
        Some(f) => Some(super::report::write_failure(
            s, entry, &a.set, f.seed, done, dir, None,
        )?),
        None => None,
    };
    super::report::announce(report.as_deref(), a.json);
    Ok(())
}
