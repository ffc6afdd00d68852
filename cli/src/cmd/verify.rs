//! `idemsim verify`: every scenario against its `[expect]`, and every
//! protection of a holding scenario removed in turn on the same seeds: each
//! removal must turn "holds" into a violation, or the "holds" is not earned.
//! A file is judged as `check` judges it: by the searches of `check`'s
//! portfolio too, whenever they can change the judgement (`searched.rs`).

mod found;
mod output;
mod searched;

use idemsim::catalog::{self, UsageError};
use idemsim::regressions::sweep::Recorded;
use idemsim::render::json_line;
use idemsim::testing::shown::Plan;
use models::registry;
use models::scenario::{Ablation, Judgement, Strategy, Verdict};
use models::Scenario;
use output::{json_of, print_interrupted, print_text, summary};
use searched::Portfolio;
use sim::SeedRange;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(clap::Args)]
/// The arguments of `idemsim verify`.
pub struct Args {
    /// Scenario names, .toml paths or folders of .toml files [default: every scenario of `idemsim list`].
    scenarios: Vec<String>,
    /// Seeds 0..N per scenario [default: each scenario's run.runs].
    #[arg(long)]
    runs: Option<u64>,
    #[command(flatten)]
    seeds: super::common::SeedFlags,
    /// At most this many seeds per scenario (a cheaper sweep that keeps each budget's shape).
    #[arg(long, conflicts_with_all = ["runs", "seeds", "seed"])]
    max_runs: Option<u64>,
    /// Worker threads [default: all cores]. The output does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// JSON Lines on stdout: one `verify` line per scenario, then a `verify_summary`.
    #[arg(long)]
    json: bool,
    /// Skip the ablations (faster; a holding verdict is then not checked for being earned).
    #[arg(long)]
    no_ablations: bool,
    #[command(flatten)]
    regressions: idemsim::regressions::Flags,
}

/// One scenario's result: its judgement and its ablations.
struct Checked {
    judgement: Judgement,
    /// The seeds asked for.
    range: SeedRange,
    seeds: u64,
    /// The search that found the failure: a coverage-guided one names a
    /// schedule of the search, not a seed.
    by: Strategy,
    /// The situations the own strategy reached.
    situations: Vec<&'static str>,
    /// `check`'s searches, when they can change the judgement.
    portfolio: Option<Portfolio>,
    /// The design warnings, each naming the searches that reached its gap.
    warnings: Vec<crate::cmd::common::WarningLine>,
    ablations: Vec<Ablation>,
    /// Why the scenario as a whole does not match, if it does not.
    mismatch: Option<String>,
}

/// The ablations of a holding scenario, on the same seeds; `None` if interrupted.
fn ablate(
    s: &Scenario,
    seeds: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> Result<Option<Vec<Ablation>>, UsageError> {
    let mut ablations = Vec::new();
    for p in s.protections() {
        let ablated = s.ablated(&s.file, p)?;
        let found = ablated.search_failure(seeds, jobs, stop);
        let sets: String = p
            .overrides
            .iter()
            .map(|o| {
                let set = format!("{}={}", o.key, o.value);
                format!(" --set {}", super::common::shell_word(&set))
            })
            .collect();
        let replay = format!(
            "idemsim replay {}{sets}",
            super::common::shell_word(&s.file)
        );
        idemsim::external::check_summary(&ablated, &replay, &found)?;
        if found.interrupted && found.first_failure.is_none() {
            return Ok(None);
        }
        ablations.push(p.judge(&found));
    }
    Ok(Some(ablations))
}

fn judge(
    s: &Scenario,
    (sum, portfolio): (&sim::Summary, Option<Portfolio>),
    range: SeedRange,
    ablations: Vec<Ablation>,
    ablate: bool,
) -> Checked {
    let judged = portfolio.as_ref().map(|p| p.judged(sum));
    let mut judgement = s.judge(judged.as_ref().unwrap_or(sum));
    // A search's failing schedule is no seed (its part names it).
    judgement.lowest_failing_seed = sum.first_failure.as_ref().map(|f| f.seed);
    let holds = s.expected_verdict() == Some(Verdict::Holds);
    let mismatch = judgement.mismatch.clone().or_else(|| {
        if ablate && holds && s.protections().is_empty() {
            return Some(
                "holds, but names no protections: list in [expect] protections the overrides that remove what makes it hold"
                    .to_string(),
            );
        }
        ablations.iter().find_map(|a| {
            a.mismatch
                .as_ref()
                .map(|m| format!("protection {}: {m}", a.protection.describe()))
        })
    });
    Checked {
        judgement,
        range,
        seeds: sum.tally.schedules,
        by: Plan::of(s).strategy(),
        situations: registry::situation_names(&sum.tally.situations),
        warnings: Portfolio::warnings(portfolio.as_ref(), s),
        portfolio,
        ablations,
        mismatch,
    }
}

/// Runs `idemsim verify`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let jobs = super::common::jobs(a.jobs)?;
    super::common::runs("--runs", a.runs)?;
    super::common::runs("--max-runs", a.max_runs)?;
    let (entries, loaded) = load_all(&a)?;
    // The regression folder, and every scenario's regressions replayed,
    // before any sweep: a file of it that is broken stops the run at once.
    let db = a
        .regressions
        .db(a.scenarios.first().map(std::path::Path::new))?;
    let mut replays = Vec::with_capacity(entries.len());
    if let Some(db) = &db {
        let stored = db.stored()?;
        for e in &entries {
            replays.push(idemsim::regressions::sweep::replay_stored(
                db,
                &stored,
                e,
                &[],
            )?);
        }
    }
    idemsim::progress::install_ctrl_c();
    let width = loaded
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    if !a.json {
        idemsim::outln!(
            "{:<width$}  {:<36} {:<36} {:>7} {:>8}  situations reached",
            "scenario",
            "expected",
            "found",
            "seeds",
            "lowest"
        );
    }
    let mut tally = Tally::default();
    let mut replays = replays.into_iter();
    let run = Run {
        a: &a,
        jobs,
        width,
        db: db.as_ref(),
    };
    for (s, entry) in loaded.iter().zip(&entries) {
        if idemsim::progress::STOP.load(Ordering::Relaxed) {
            tally.interrupted = true;
            break;
        }
        // Its recorded failures (replayed above), then the sweep.
        let replayed = replays.next().unwrap_or_default();
        if !run.one(s, entry, &replayed, &mut tally)? {
            tally.interrupted = true;
            break;
        }
    }
    // Regressions whose scenario file is gone: stale, never silently dropped.
    if let Some(db) = &db {
        for r in db.orphans(&db.stored()?) {
            tally.counts.add(&r);
            idemsim::regressions::sweep::print(&r, a.json, "");
        }
    }
    let code = summary(&a, &tally, loaded.len(), db.as_ref());
    Recorded::warn_once(&tally.unwritten);
    Ok(code)
}

/// The scenarios `verify` was given (the catalog when none), every one
/// loaded first, so a bad file stops the run before any sweep.
fn load_all(a: &Args) -> Result<(Vec<catalog::Entry>, Vec<Scenario>), UsageError> {
    let entries = if a.scenarios.is_empty() {
        catalog::catalog()?
    } else {
        let mut all = Vec::new();
        for arg in &a.scenarios {
            all.extend(catalog::locate_all(arg)?);
        }
        all
    };
    let mut loaded = Vec::with_capacity(entries.len());
    for e in &entries {
        loaded.push(catalog::load_entry(e, &[])?);
    }
    Ok((entries, loaded))
}

/// What `verify` has found so far.
#[derive(Default)]
struct Tally {
    matched: usize,
    judged: usize,
    interrupted: bool,
    ablations: usize,
    load_bearing: usize,
    counts: idemsim::regressions::sweep::Counts,
    /// The failures the regression folder could not take.
    unwritten: Vec<Recorded>,
}

/// What every scenario's verification shares.
struct Run<'a> {
    a: &'a Args,
    jobs: usize,
    /// The scenario column's width.
    width: usize,
    db: Option<&'a idemsim::regressions::Db>,
}

impl Run<'_> {
    /// Sweeps, ablates and judges one scenario, records a new unexpected
    /// failure and prints its line; `false` if Ctrl-C cut it short.
    fn one(
        &self,
        s: &Scenario,
        entry: &catalog::Entry,
        replayed: &[idemsim::regressions::Replayed],
        tally: &mut Tally,
    ) -> Result<bool, UsageError> {
        let (a, jobs, stop) = (self.a, self.jobs, &idemsim::progress::STOP);
        let budget = match (a.runs, a.max_runs) {
            (Some(n), _) => n,
            (None, Some(m)) => s.runs.min(m),
            (None, None) => s.runs,
        };
        let seeds = a.seeds.or_first(budget);
        let replay = format!("idemsim replay {}", super::common::shell_word(&s.file));
        let first = idemsim::external::DETERMINISM_SEEDS;
        idemsim::external::determinism_check_first(s, seeds, first, &replay)?;
        let (own, own_found) = searched::own(s, seeds, jobs, stop);
        let sum = &own;
        idemsim::external::check_summary(s, &replay, sum)?;
        // As `check` judges the file: its searches too, unless a seed
        // failed as the file expects.
        let portfolio = if sum.interrupted {
            None
        } else {
            Portfolio::if_they_count(s, sum, seeds, jobs, &replay)?
        };
        if sum.interrupted || portfolio.as_ref().is_some_and(Portfolio::interrupted) {
            // Seeds 0..schedules ran (sim::explore): shown, never judged.
            print_interrupted(s, sum, seeds, a.json, self.width);
            return Ok(false);
        }
        let ablate_here = !a.no_ablations && s.expected_verdict() == Some(Verdict::Holds);
        let found = if ablate_here {
            ablate(s, seeds, jobs, stop)?
        } else {
            Some(Vec::new())
        };
        let Some(found) = found else {
            print_interrupted(s, sum, seeds, a.json, self.width);
            return Ok(false);
        };
        tally.judged += 1;
        let mut c = judge(s, (&own, portfolio), seeds, found, !a.no_ablations);
        if let Some(r) = replayed.iter().find(|r| r.status.is_failure()) {
            c.mismatch.get_or_insert_with(|| r.text());
        }
        let at = found::Against {
            s,
            entry,
            seeds,
            db: self.db,
            replayed,
        };
        let (recorded, by_search) = self.record(&at, (&own, own_found.as_ref()), &mut c)?;
        replayed.iter().for_each(|r| tally.counts.add(r));
        tally.counts.recorded += usize::from(recorded.as_ref().is_some_and(|r| r.new));
        tally.matched += usize::from(c.mismatch.is_none());
        tally.ablations += c.ablations.len();
        tally.load_bearing += c.ablations.iter().filter(|x| x.mismatch.is_none()).count();
        self.print(s, &c, replayed, (recorded.as_ref(), by_search.as_ref()));
        // A folder that cannot be written is said once, after the summary.
        tally
            .unwritten
            .extend(recorded.filter(|r| r.warning.is_some()));
        Ok(true)
    }

    /// Records a new unexpected failure in the regression folder: the
    /// lowest failing seed's, else the one a search found (`check`'s
    /// searches', or the file's coverage-guided search's, `own_found`),
    /// with what shows it.
    fn record(
        &self,
        at: &found::Against<'_>,
        (sum, own_found): (&sim::Summary, Option<&idemsim::testing::portfolio::Found>),
        c: &mut Checked,
    ) -> Result<(Option<Recorded>, Option<found::SearchFailure>), UsageError> {
        let by_search = found::SearchFailure::of(at, sum, c.portfolio.as_mut(), own_found)?;
        if let Some(f) = &by_search {
            return Ok((f.recorded.clone(), by_search));
        }
        let Some(db) = self.db else {
            return Ok((None, None));
        };
        let recorded = idemsim::regressions::sweep::record_sweep_failure(db, at.s, at.entry, sum)?
            // A failure found again that a replayed regression already shows: said once.
            .filter(|r| r.new || !at.replayed.iter().any(|x| x.file == r.file));
        Ok((recorded, None))
    }

    /// One scenario's line (or `verify` record) and its regressions.
    fn print(
        &self,
        s: &Scenario,
        c: &Checked,
        replayed: &[idemsim::regressions::Replayed],
        (recorded, by_search): (Option<&Recorded>, Option<&found::SearchFailure>),
    ) {
        let width = self.width;
        if self.a.json {
            let mut line = json_of(s, c);
            let mut regressions: Vec<serde_json::Value> =
                replayed.iter().map(|r| r.json()).collect();
            regressions.extend(recorded.iter().map(|r| r.json()));
            line["regressions"] = serde_json::json!(regressions);
            idemsim::outln!("{}", json_line("verify", line));
        } else {
            print_text(s, c, width);
            for r in replayed {
                idemsim::outln!("{:<width$}    {}", "", r.text());
            }
            // A search's failure: its schedule and record, then where it
            // was recorded, then how to replay it.
            for line in by_search.iter().flat_map(|f| &f.lines) {
                idemsim::outln!("{:<width$}    {line}", "");
            }
            if let Some(r) = recorded {
                idemsim::outln!("{:<width$}    {}", "", r.text());
            }
            if let Some(line) = by_search.and_then(|f| f.repro.as_ref()) {
                idemsim::outln!("{:<width$}    {line}", "");
            }
        }
    }
}
