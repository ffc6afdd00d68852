//! `idemsim check`: sweep a scenario's seeds (or enumerate its schedules with
//! `--exhaustive`), give the verdict, shrink the lowest failure and print it; the
//! summary line (`SweepLine`) is also what `merge` combines.

use crate::progress::{self, Progress};
use crate::render::{self, json_line};
use crate::scenarios::{self, UsageError};
use models::core::ledger::counter;
use models::registry;
use models::scenario::Strategy;
use serde::{Deserialize, Serialize};
use sim::exhaustive::{exhaustive, Bounds, ExhaustiveReport};
use sim::{explore, Outcome, Record, Recorder, SeedRange, Sim, Source, StreamLayout};
use std::collections::BTreeMap;

#[derive(clap::Args)]
/// The arguments of `idemsim check`.
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file [default: payment-stable-key].
    scenario: Option<String>,
    /// Number of seeds to run, from 0 [default: the scenario's run.runs].
    #[arg(long, conflicts_with = "seeds")]
    runs: Option<u64>,
    /// Seed range A..B (B exclusive).
    #[arg(long, value_parser = parse_seeds)]
    seeds: Option<SeedRange>,
    /// Run only shard I of N (0-based) of the seed range; `idemsim merge` combines the shards' --json output.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, conflicts_with = "exhaustive")]
    shard: Option<(u64, u64)>,
    /// Worker threads [default: all cores]. The output does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// JSON Lines on stdout; human text goes to stderr.
    #[arg(long)]
    json: bool,
    /// Override a scenario key before validation, e.g. client.retry.max_attempts=3.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Do not shrink the lowest failing seed (see docs/shrinking.md).
    #[arg(long)]
    no_shrink: bool,
    /// Write the lowest failing run (shrunk unless --no-shrink) as a repro file.
    #[arg(long, value_name = "FILE")]
    repro_out: Option<String>,
    /// Most candidate reruns shrinking may spend [default: 20000].
    #[arg(long, value_name = "N")]
    shrink_max_runs: Option<u32>,
    /// Most wall-clock milliseconds shrinking may take [default: 30000].
    #[arg(long, value_name = "MS")]
    shrink_budget_ms: Option<u64>,
    /// Write the HTML report of the lowest failing run (shrunk unless --no-shrink) into DIR
    /// (see docs/report.md).
    #[arg(long, value_name = "DIR")]
    html: Option<std::path::PathBuf>,
    /// Enumerate every schedule with at most --max-faults faults instead of sampling seeds.
    #[arg(long, conflicts_with_all = ["runs", "seeds"])]
    exhaustive: bool,
    #[command(flatten)]
    regressions: crate::regressions::Flags,
    /// Most non-zero decisions (lost or duplicated messages, crashes, maximal delays) per schedule.
    #[arg(long, value_name = "K", default_value_t = 2, requires = "exhaustive")]
    max_faults: u32,
    /// Bound on the schedules exhaustive mode runs; hitting it is "inconclusive".
    #[arg(long, default_value_t = Bounds::default().max_schedules, requires = "exhaustive")]
    max_schedules: u64,
    /// Bound on the events of all exhaustive schedules together; hitting it is "inconclusive".
    #[arg(long, default_value_t = Bounds::default().max_events, requires = "exhaustive")]
    max_events: u64,
    /// With an external program (docs/protocol.md): run this many first seeds
    /// twice before the sweep and stop if the program answers differently (0 skips).
    #[arg(long, value_name = "N", default_value_t = crate::external::DETERMINISM_SEEDS)]
    determinism_seeds: u64,
    /// How to search the runs: every seed (seeds), or coverage-guided mutation
    /// of recorded decisions, --runs schedules at most, from the seed range's
    /// start (coverage) [default: the scenario's run.strategy].
    #[arg(long, value_enum, conflicts_with_all = ["exhaustive", "shard"])]
    strategy: Option<StrategyArg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
/// The `--strategy` values.
pub enum StrategyArg {
    /// Every seed of the range.
    Seeds,
    /// Coverage-guided mutation of recorded decisions.
    Coverage,
}

impl From<StrategyArg> for Strategy {
    fn from(a: StrategyArg) -> Strategy {
        match a {
            StrategyArg::Seeds => Strategy::Seeds,
            StrategyArg::Coverage => Strategy::Coverage,
        }
    }
}

/// Parses `--seeds A..B` (B exclusive, above A).
pub fn parse_seeds(s: &str) -> Result<SeedRange, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("`{s}` is not a range A..B, e.g. 0..1000"))?;
    let start: u64 = a
        .trim()
        .parse()
        .map_err(|_| format!("`{a}` is not a seed"))?;
    let end: u64 = b
        .trim()
        .parse()
        .map_err(|_| format!("`{b}` is not a seed"))?;
    if end <= start {
        return Err(format!(
            "empty seed range {start}..{end}: the end is exclusive and must be above the start"
        ));
    }
    Ok(SeedRange { start, end })
}

/// Parses `--shard I/N` (0-based, I below N).
pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not I/N, e.g. 0/4 for the first of four shards"))?;
    let index: u64 = a
        .trim()
        .parse()
        .map_err(|_| format!("`{a}` is not a shard index"))?;
    let count: u64 = b
        .trim()
        .parse()
        .map_err(|_| format!("`{b}` is not a shard count"))?;
    if count == 0 || index >= count {
        return Err(format!(
            "shard {index}/{count} does not exist: shards are numbered 0 to N-1 (e.g. JOB_COMPLETION_INDEX)"
        ));
    }
    Ok((index, count))
}

/// The exit code of one run's outcome.
pub fn exit_code(o: &Outcome) -> u8 {
    match o {
        Outcome::Holds => crate::exit::HOLDS,
        Outcome::Violation(_) | Outcome::Panicked(_) => crate::exit::VIOLATION,
        Outcome::Inconclusive(_) => crate::exit::INCONCLUSIVE,
    }
}

/// `word` as a shell reads it back: as is when it is plain, else in single
/// quotes (`--set 'consumer.program=["python3", "c.py"]'`), so a repro line
/// can be pasted.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,=/:+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// One worker thread per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most worker threads `--jobs` accepts: far above any core count that
/// helps, far below what would exhaust the process's threads or memory.
pub const MAX_JOBS: usize = 1024;

/// `--jobs` as given, checked, or one per core.
pub fn jobs(given: Option<usize>) -> Result<usize, UsageError> {
    match given {
        None => Ok(default_jobs()),
        Some(0) => Err(UsageError(
            "error: --jobs must be at least 1\nhelp: leave it out to use one worker per core\n"
                .into(),
        )),
        Some(n) if n > MAX_JOBS => Err(UsageError(format!(
            "error: --jobs {n} is more than {MAX_JOBS} worker threads\nhelp: give at most {MAX_JOBS}; more threads than cores ({}) do not make a sweep faster\n",
            default_jobs()
        ))),
        Some(n) => Ok(n),
    }
}

// ------------------------------------------------------------------ the summary line

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
/// Faults fired over a sweep, as the JSON summary writes them.
pub struct Faults {
    /// Messages lost.
    pub lost: u64,
    /// Messages duplicated.
    pub duplicated: u64,
    /// Messages a partition dropped.
    pub partitioned: u64,
    /// Crashes.
    pub crashed: u64,
    /// Messages dropped because their receiver was down.
    pub dropped_at_down_actor: u64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
/// A seed range, end exclusive.
pub struct Seeds {
    /// The first seed.
    pub start: u64,
    /// One past the last.
    pub end: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
/// The lowest failing seed and what it gave.
pub struct FailureLine {
    /// The seed.
    pub seed: u64,
    /// The invariant it broke (`model-panic` for a panic).
    pub invariant: String,
    /// The outcome in one sentence.
    pub sentence: String,
    /// Engine events of its run.
    pub events: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
/// The lowest seed that hit a limit.
pub struct InconclusiveLine {
    /// The seed.
    pub seed: u64,
    /// The limit (`max_steps`, `max_time`, `max_queue`).
    pub limit: String,
}

/// Which shard of which range a summary is, so a merge can tell a missing shard.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardLine {
    /// This shard's index, from 0.
    pub index: u64,
    /// How many shards.
    pub count: u64,
    /// The whole range the shards split.
    pub of: Seeds,
}

/// A sweep's verdict, as `check` reports it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SweepVerdict {
    #[default]
    /// No run failed or hit a limit.
    Holds,
    /// Some run broke an invariant (or a model panicked).
    Violation,
    /// No violation, but some run hit a limit.
    Inconclusive,
    /// Stopped by Ctrl-C before every seed ran, with no violation found.
    Interrupted,
    /// A shard that no seed fell to (more shards than seeds).
    NoSeeds,
}

impl SweepVerdict {
    /// The JSON and text spelling: `holds`, `violation`, `inconclusive`, `interrupted`, `no-seeds`.
    pub fn as_str(self) -> &'static str {
        match self {
            SweepVerdict::Holds => "holds",
            SweepVerdict::Violation => "violation",
            SweepVerdict::Inconclusive => "inconclusive",
            SweepVerdict::Interrupted => "interrupted",
            SweepVerdict::NoSeeds => "no-seeds",
        }
    }
}

/// The effect ledger's operation counts over a sweep: what clients finally knew.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Operations {
    /// Operations clients started, over all runs.
    pub started: u64,
    /// Told done.
    pub done: u64,
    /// Known failed, in a dead letter.
    pub failed: u64,
    /// Ended with an unknown outcome, in a dead letter for a person to reconcile.
    pub unknown: u64,
    /// Given up silently.
    pub abandoned: u64,
    /// Still open when their run stopped (a violation or a limit came first).
    pub open: u64,
    /// Events owed by committed state changes.
    pub events: u64,
}

impl Operations {
    fn from_tally(t: &sim::Tally) -> Operations {
        let c = |name| {
            t.counter(name)
                .and_then(|v| v.first())
                .copied()
                .unwrap_or(0)
        };
        Operations {
            started: c(counter::OPERATIONS),
            done: c(counter::DONE),
            failed: c(counter::FAILED),
            unknown: c(counter::UNKNOWN),
            abandoned: c(counter::ABANDONED),
            open: c(counter::OPEN),
            events: c(counter::EVENTS),
        }
    }

    fn absorb(&mut self, o: &Operations) -> Result<(), String> {
        for (a, b) in [
            (&mut self.started, o.started),
            (&mut self.done, o.done),
            (&mut self.failed, o.failed),
            (&mut self.unknown, o.unknown),
            (&mut self.abandoned, o.abandoned),
            (&mut self.open, o.open),
            (&mut self.events, o.events),
        ] {
            *a = a
                .checked_add(b)
                .ok_or("the operation counts add up past 2^64")?;
        }
        Ok(())
    }
}

/// A sweep's summary as `check --json` prints it (docs/json-output.md). It
/// carries everything a merge needs (counts, the seed range, the shard, the
/// lowest failure and inconclusive seed, the situations reached), so N shards
/// merge into the line one machine would have printed; the derived fields are
/// recomputed by [`SweepLine::derive`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SweepLine {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario's file, when it was given by path rather than by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_file: Option<String>,
    /// The replay command without its seed: scenario and overrides.
    pub replay: String,
    /// The --set overrides, so a merge can load the same scenario to shrink.
    pub sets: Vec<String>,
    /// FNV-1a of the scenario's effective text, as in repro files: a merge
    /// refuses shards of different texts and a scenario changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_hash: Option<String>,
    /// The seeds the counts cover: the range asked for, or on an interrupt
    /// the part of it that ran (always its beginning).
    pub seeds: Option<Seeds>,
    /// The range asked for, when an interrupt left part of it unrun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<Seeds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Which shard of which range this is, for `--shard`.
    pub shard: Option<ShardLine>,
    /// Runs counted.
    pub schedules: u64,
    /// Engine events over all runs.
    pub events: u64,
    /// Runs that held.
    pub holds: u64,
    /// Runs that broke an invariant.
    pub violations: u64,
    /// Runs in which a model panicked.
    pub panics: u64,
    /// Runs that hit a limit.
    pub inconclusive: u64,
    /// Faults fired over all runs.
    pub faults: Faults,
    /// Runs that reached each situation, by name; `situations` lists the names.
    pub situation_runs: BTreeMap<String, u64>,
    /// What the clients finally knew, over all runs (the effect ledger's counts).
    #[serde(default)]
    pub operations: Operations,
    /// The lowest failing seed, if any.
    pub failure: Option<FailureLine>,
    /// The lowest seed that hit a limit, if any.
    pub first_inconclusive: Option<InconclusiveLine>,
    /// Ctrl-C stopped the sweep before every seed ran.
    pub interrupted: bool,
    // Derived from the fields above.
    /// The verdict.
    pub verdict: SweepVerdict,
    /// The lowest failure's invariant.
    pub invariant: Option<String>,
    /// The lowest failing seed.
    pub lowest_failing_seed: Option<u64>,
    #[serde(default)]
    /// Names of the situations reached, in id order.
    pub situations: Vec<String>,
    /// Share of started operations that ended unknown (for a person to reconcile).
    #[serde(default)]
    pub unknown_rate: Option<f64>,
    /// The command that replays the lowest failing (else inconclusive) seed.
    pub repro: Option<String>,
    /// Events of the lowest failing run and of its shrunk version, only when
    /// it was shrunk (docs/shrinking.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_events: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Events of the shrunk run, when shrunk.
    pub shrunk_events: Option<u64>,
}

impl SweepLine {
    /// The summary line of a sweep of scenario `name` over `seeds`.
    pub fn from_summary(
        name: &str,
        replay: String,
        sets: &[String],
        seeds: SeedRange,
        sum: &sim::Summary,
    ) -> Self {
        let t = &sum.tally;
        let failure = sum.first_failure.as_ref().map(|f| FailureLine {
            seed: f.seed,
            invariant: match &f.outcome {
                Outcome::Violation(v) => v.invariant.to_string(),
                _ => "model-panic".to_string(),
            },
            sentence: render::outcome_sentence(&f.outcome),
            events: f.events,
        });
        let situation_runs = t
            .situation_runs
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| (registry::situation_name(i as u16).to_string(), *n))
            .collect();
        // Every chunk of seeds handed out runs to its end, so what ran of an
        // interrupted sweep is the beginning of its range (sim::explore).
        let ran = Seeds {
            start: seeds.start,
            end: seeds.start + t.schedules.min(seeds.len()),
        };
        let asked = Seeds {
            start: seeds.start,
            end: seeds.end,
        };
        let mut line = SweepLine {
            scenario: name.to_string(),
            replay,
            sets: sets.to_vec(),
            seeds: Some(ran),
            requested: (ran != asked).then_some(asked),
            schedules: t.schedules,
            events: t.events,
            holds: t.holds,
            violations: t.violations,
            panics: t.panics,
            inconclusive: t.inconclusive,
            faults: Faults {
                lost: t.faults.lost,
                duplicated: t.faults.duplicated,
                partitioned: t.faults.partitioned,
                crashed: t.faults.crashed,
                dropped_at_down_actor: t.faults.dropped_at_down_actor,
            },
            situation_runs,
            operations: Operations::from_tally(t),
            failure,
            first_inconclusive: sum.first_inconclusive.map(|(seed, l)| InconclusiveLine {
                seed,
                limit: l.as_str().to_string(),
            }),
            interrupted: sum.interrupted,
            ..SweepLine::default()
        };
        line.derive();
        line
    }

    /// Recomputes verdict, invariant, lowest failing seed, situation names and repro.
    pub fn derive(&mut self) {
        self.verdict = match (&self.failure, self.interrupted, self.inconclusive) {
            (Some(_), _, _) => SweepVerdict::Violation,
            (None, true, _) => SweepVerdict::Interrupted,
            (None, false, _) if self.schedules == 0 => SweepVerdict::NoSeeds,
            (None, false, 0) => SweepVerdict::Holds,
            (None, false, _) => SweepVerdict::Inconclusive,
        };
        self.invariant = self.failure.as_ref().map(|f| f.invariant.clone());
        self.lowest_failing_seed = self.failure.as_ref().map(|f| f.seed);
        // In id order, as the models declare them.
        let mut names: Vec<(u16, String)> = self
            .situation_runs
            .keys()
            .map(|n| {
                let id = registry::situations()
                    .into_iter()
                    .find(|s| s.name == n)
                    .map_or(u16::MAX, |s| s.id);
                (id, n.clone())
            })
            .collect();
        names.sort();
        self.situations = names.into_iter().map(|(_, n)| n).collect();
        let ops = &self.operations;
        self.unknown_rate = (ops.started > 0).then(|| ops.unknown as f64 / ops.started as f64);
        // The run to replay: the lowest failing seed, else the lowest inconclusive one.
        self.repro = self
            .lowest_failing_seed
            .or(self.first_inconclusive.as_ref().map(|i| i.seed))
            .map(|seed| format!("{} --seed {seed}", self.replay));
    }

    /// What to load the scenario by: its file when it was given by path, else its name.
    pub fn scenario_arg(&self) -> String {
        self.scenario_file
            .clone()
            .unwrap_or_else(|| self.scenario.clone())
    }

    /// Checks that every situation a JSON line names is one some model declares.
    pub fn check_situation_names(&self) -> Result<(), String> {
        let known = registry::situations();
        for name in self.situations.iter().chain(self.situation_runs.keys()) {
            if !known.iter().any(|s| s.name == name) {
                return Err(format!("unknown situation `{name}`"));
            }
        }
        Ok(())
    }

    /// Adds a disjoint sweep of the same scenario; the lower seed wins, as in
    /// one sweep. A count that would overflow is an error (a corrupt file).
    pub fn absorb(&mut self, o: &SweepLine) -> Result<(), String> {
        let add = |a: &mut u64, b: u64, what: &str| {
            *a = a
                .checked_add(b)
                .ok_or_else(|| format!("the {what} add up past 2^64"))?;
            Ok::<(), String>(())
        };
        add(&mut self.schedules, o.schedules, "schedules")?;
        add(&mut self.events, o.events, "events")?;
        add(&mut self.holds, o.holds, "holds")?;
        add(&mut self.violations, o.violations, "violations")?;
        add(&mut self.panics, o.panics, "panics")?;
        add(
            &mut self.inconclusive,
            o.inconclusive,
            "inconclusive counts",
        )?;
        add(&mut self.faults.lost, o.faults.lost, "fault counts")?;
        add(
            &mut self.faults.duplicated,
            o.faults.duplicated,
            "fault counts",
        )?;
        add(
            &mut self.faults.partitioned,
            o.faults.partitioned,
            "fault counts",
        )?;
        add(&mut self.faults.crashed, o.faults.crashed, "fault counts")?;
        add(
            &mut self.faults.dropped_at_down_actor,
            o.faults.dropped_at_down_actor,
            "fault counts",
        )?;
        self.operations.absorb(&o.operations)?;
        for (k, v) in &o.situation_runs {
            add(
                self.situation_runs.entry(k.clone()).or_insert(0),
                *v,
                "situation counts",
            )?;
        }
        if let Some(f) = &o.failure {
            if self.failure.as_ref().is_none_or(|m| f.seed < m.seed) {
                self.failure = Some(f.clone());
            }
        }
        if let Some(i) = &o.first_inconclusive {
            if self
                .first_inconclusive
                .as_ref()
                .is_none_or(|m| i.seed < m.seed)
            {
                self.first_inconclusive = Some(i.clone());
            }
        }
        self.interrupted |= o.interrupted;
        Ok(())
    }

    /// The exit code of this summary's verdict.
    pub fn exit_code(&self) -> u8 {
        match self.verdict {
            SweepVerdict::Violation => crate::exit::VIOLATION,
            SweepVerdict::Holds | SweepVerdict::NoSeeds => crate::exit::HOLDS,
            SweepVerdict::Interrupted => progress::INTERRUPTED,
            SweepVerdict::Inconclusive => crate::exit::INCONCLUSIVE,
        }
    }

    /// The summary for people, as `check` prints it.
    pub fn text(&self) -> String {
        if self.verdict == SweepVerdict::NoSeeds {
            let which = match (&self.shard, self.seeds) {
                (Some(sh), _) => format!(
                    "shard {}/{} of seeds {}..{} is empty (more shards than seeds)",
                    sh.index, sh.count, sh.of.start, sh.of.end
                ),
                (None, Some(r)) => format!("the seed range {}..{} is empty", r.start, r.end),
                (None, None) => "the seed range is empty".to_string(),
            };
            return format!(
                "{}: no seeds ran: {which}; nothing was checked, and `idemsim merge` counts this shard as nothing\n",
                self.scenario
            );
        }
        let range = self
            .seeds
            .map(|s| format!(" (seeds {}..{})", s.start, s.end))
            .unwrap_or_default();
        let mut lines = vec![format!(
            "{}: {} over {} schedules{range}, {} events",
            self.scenario,
            self.verdict.as_str(),
            self.schedules,
            self.events
        )];
        if self.interrupted {
            let ran = match (self.seeds, self.requested) {
                (Some(r), Some(q)) => format!(
                    ": seeds {}..{} ran, {}..{} did not",
                    r.start, r.end, r.end, q.end
                ),
                _ => String::new(),
            };
            lines.push(format!(
                "interrupted after {} schedules (Ctrl-C){ran}; the counts cover only what ran",
                self.schedules
            ));
        }
        if let Some(f) = &self.failure {
            lines.push(format!("lowest failing seed {}: {}", f.seed, f.sentence));
            lines.push(format!(
                "failing seeds: {} of {} ({} violations, {} panics)",
                self.violations + self.panics,
                self.schedules,
                self.violations,
                self.panics
            ));
            if self.panics > 0 {
                lines.push(
                    "a model panicked: that is a bug in idemsim, not a finding about the design; please report it with this command line"
                        .to_string(),
                );
            }
        } else if let Some(i) = &self.first_inconclusive {
            lines.push(format!(
                "{} runs hit a limit; lowest seed {} hit {}",
                self.inconclusive, i.seed, i.limit
            ));
        }
        lines.push(format!(
            "faults fired: {} lost, {} duplicated, {} partitioned, {} crashes",
            self.faults.lost, self.faults.duplicated, self.faults.partitioned, self.faults.crashed
        ));
        let ops = &self.operations;
        if ops.started > 0 {
            lines.push(format!(
                "operations: {} started; {} done, {} failed, {} unknown ({:.1}%, for a person to reconcile), {} given up silently, {} still open",
                ops.started,
                ops.done,
                ops.failed,
                ops.unknown,
                self.unknown_rate.unwrap_or(0.0) * 100.0,
                ops.abandoned,
                ops.open
            ));
        }
        lines.push(format!(
            "situations reached: {}",
            if self.situations.is_empty() {
                "none".to_string()
            } else {
                self.situations.join(", ")
            }
        ));
        if let Some(r) = &self.repro {
            lines.push(format!("repro: {r}"));
        }
        lines.join("\n") + "\n"
    }

    /// Shrinks the lowest failing seed (unless `no_shrink`), writes the repro
    /// file if asked, and returns the shrunk trace's text.
    pub fn shrink(
        &mut self,
        s: &models::Scenario,
        no_shrink: bool,
        repro_out: Option<&str>,
        budget: super::shrink::Budget,
    ) -> Result<Option<String>, UsageError> {
        let done = self.shrink_done(s, no_shrink, repro_out, budget)?;
        Ok(done.as_ref().map(shrunk_text))
    }

    /// [`shrink`](SweepLine::shrink), returning the shrunk failure itself.
    pub fn shrink_done(
        &mut self,
        s: &models::Scenario,
        no_shrink: bool,
        repro_out: Option<&str>,
        budget: super::shrink::Budget,
    ) -> Result<Option<super::shrink::Done>, UsageError> {
        let from = crate::scenarios::locate(&self.scenario_arg())?;
        let seed = self.failure.as_ref().map(|f| f.seed);
        let shrunk =
            super::shrink::for_check(s, &from, &self.sets, seed, no_shrink, repro_out, budget)?;
        self.original_events = shrunk.as_ref().map(|d| d.shrunk.original_report.events);
        self.shrunk_events = shrunk.as_ref().map(|d| d.shrunk.report.events);
        Ok(shrunk)
    }

    /// Prints the summary as `check` does: text on stdout, or JSON on stdout and
    /// text on stderr; the shrunk trace follows the text.
    pub fn print(&self, json: bool, shrunk_text: Option<&str>) {
        let text = self.text();
        if json {
            crate::eout!("{text}");
            let data = serde_json::to_value(self).expect("a summary serialises");
            crate::outln!("{}", json_line("summary", data));
            if let Some(t) = shrunk_text {
                crate::eout!("{t}");
            }
        } else {
            crate::out!("{text}");
            if let Some(t) = shrunk_text {
                crate::out!("{t}");
            }
        }
    }
}

/// The shrunk trace as `check` prints it after its summary.
fn shrunk_text(d: &super::shrink::Done) -> String {
    format!(
        "\nshrunk (docs/shrinking.md):\n{}",
        crate::render::formats::text(&d.trace)
    )
}

// ------------------------------------------------------------------ check

/// Runs `idemsim check`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let name = a.scenario.as_deref().unwrap_or(scenarios::DEFAULT);
    let overrides = scenarios::parse_overrides(&a.set)?;
    let s = scenarios::load(name, &overrides)?;
    let jobs = jobs(a.jobs)?;
    let budget = super::shrink::Budget::from_flags(a.shrink_max_runs, a.shrink_budget_ms)?;
    let sets: String = a
        .set
        .iter()
        .map(|s| format!(" --set {}", shell_word(s)))
        .collect();
    // A scenario given by path (or found in a --scenarios folder) is replayed by
    // its path: its name alone could find another scenario of that name.
    let entry = scenarios::locate(name)?;
    let replay = format!("idemsim replay {}{sets}", entry.arg());
    progress::install_ctrl_c();
    if a.exhaustive {
        return run_exhaustive(&a, &s, &replay, jobs);
    }
    let all = a.seeds.unwrap_or(SeedRange {
        start: 0,
        end: a.runs.unwrap_or(s.runs),
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
    let strategy = a.strategy.map_or(s.strategy, Strategy::from);
    if strategy == Strategy::Coverage {
        crate::external::determinism_check_first(&s, all, a.determinism_seeds, &replay)?;
        return super::coverage::run(super::coverage::Request {
            scenario: &s,
            entry: &entry,
            sets: &a.set,
            seeds: all,
            json: a.json,
            no_shrink: a.no_shrink,
            budget,
            repro_out: a.repro_out.as_deref(),
            replay: &replay,
            stop: &progress::STOP,
        });
    }
    // A shard may be empty when there are more shards than seeds; it merges as nothing.
    let seeds = match a.shard {
        Some((i, n)) => all.shard(i, n),
        None => all,
    };
    crate::external::determinism_check_first(&s, seeds, a.determinism_seeds, &replay)?;
    // The regression database: this scenario's recorded failures run first.
    // Shards leave it alone (`idemsim merge` sees no regressions).
    let db = a.shard.is_none().then(|| a.regressions.db()).flatten();
    let replayed = match &db {
        Some(db) => crate::regressions::cli::replay_scenario(db, &entry),
        None => Vec::new(),
    };
    for r in &replayed {
        crate::regressions::cli::print(r, a.json, "");
    }
    let bar = Progress::new(Some(seeds.len()), a.json);
    let sum = explore(&s.system, seeds, jobs, &progress::STOP, &|done| {
        bar.update(done)
    });
    bar.finish();
    // A program that broke the protocol is bad input, whatever else the sweep found.
    crate::external::check_summary(&s, &replay, &sum)?;
    let mut line = SweepLine::from_summary(&s.name, replay, &a.set, seeds, &sum);
    line.scenario_hash = Some(super::shrink::hash_hex(s.hash));
    line.scenario_file = (!entry.is_built_in()).then(|| entry.arg());
    line.shard = a.shard.map(|(index, count)| ShardLine {
        index,
        count,
        of: Seeds {
            start: all.start,
            end: all.end,
        },
    });
    // Shrinking: the lowest failing seed, cut down to a locally minimal run.
    let done = line.shrink_done(&s, a.no_shrink, a.repro_out.as_deref(), budget)?;
    line.print(a.json, done.as_ref().map(shrunk_text).as_deref());
    if let Some(dir) = a.html.as_deref() {
        let report = match &sum.first_failure {
            Some(f) => Some(super::report::write_failure(
                &s,
                &entry,
                &a.set,
                f.seed,
                done.as_ref(),
                dir,
                None,
            )?),
            None => None,
        };
        super::report::announce(report.as_deref(), a.json);
    }
    if let (Some(db), Some(f)) = (&db, &sum.first_failure) {
        let record = done.as_ref().map(|d| &d.shrunk.record);
        let outcome = done
            .as_ref()
            .map_or(&f.outcome, |d| &d.shrunk.report.outcome);
        let recorded = crate::regressions::cli::record_failure(
            db, &s, &entry, &a.set, f.seed, record, outcome,
        )?;
        // A failure found again that a replayed regression already shows: said once.
        if let Some(r) = recorded.filter(|r| r.new || !replayed.iter().any(|x| x.file == r.file)) {
            r.print(a.json, "");
        }
    }
    Ok(crate::regressions::cli::exit_code(
        line.exit_code(),
        &replayed,
    ))
}

/// The non-zero decisions of a record outside the swarm mix, named as in repro files.
fn describe_record(world: &sim::World, record: &Record) -> Vec<String> {
    let mut out = Vec::new();
    for (stream, values) in record.streams.iter().enumerate() {
        let stream = stream as u32;
        if stream == StreamLayout::SWARM {
            continue;
        }
        for (i, v) in values.iter().enumerate() {
            if *v != 0 {
                out.push(format!(
                    "{} decision #{i} = {v}",
                    sim::shrink::stream_name(world, stream)
                ));
            }
        }
    }
    out
}

/// A record as the `choices` of a repro file: stream name to decision values.
pub fn record_choices(world: &sim::World, record: &Record) -> serde_json::Value {
    let map: BTreeMap<String, &Vec<u64>> = record
        .streams
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(i, v)| (sim::shrink::stream_name(world, i as u32), v))
        .collect();
    serde_json::json!(map)
}

fn run_exhaustive(
    a: &Args,
    s: &models::Scenario,
    replay: &str,
    jobs: usize,
) -> Result<u8, UsageError> {
    if a.max_schedules == 0 || a.max_events == 0 {
        return Err(UsageError(
            "error: --max-schedules and --max-events must be at least 1\nhelp: leave them out for the defaults\n".into(),
        ));
    }
    let bar = Progress::new(None, a.json);
    let r: ExhaustiveReport = exhaustive(
        &s.system,
        a.max_faults,
        Bounds {
            max_schedules: a.max_schedules,
            max_events: a.max_events,
        },
        jobs,
        &progress::STOP,
        &|done| bar.update(done),
    );
    bar.finish();
    if let Some(c) = &r.shortest {
        crate::external::check_outcome(s, "the shortest counterexample", &c.outcome)?;
    }
    let k = a.max_faults;
    let plural = |n: u32| if n == 1 { "fault" } else { "faults" };
    let (verdict, code) = match (
        &r.shortest,
        r.interrupted,
        r.truncated,
        r.tally.inconclusive,
    ) {
        (Some(c), _, _, _) => ("violation", exit_code(&c.outcome)),
        (None, true, _, _) => ("interrupted", progress::INTERRUPTED),
        (None, false, true, _) | (None, false, false, 1..) => {
            ("inconclusive", crate::exit::INCONCLUSIVE)
        }
        (None, false, false, 0) => ("holds", crate::exit::HOLDS),
    };
    let mut lines = Vec::new();
    match verdict {
        "holds" => lines.push(format!(
            "{}: holds for every schedule with at most {k} {} ({} schedules, {} events)",
            s.name,
            plural(k),
            r.tally.schedules,
            r.tally.events
        )),
        "violation" => lines.push(format!(
            "{}: violation among {} schedules with at most {k} {} ({} events)",
            s.name,
            r.tally.schedules,
            plural(k),
            r.tally.events
        )),
        _ => lines.push(format!(
            "{}: {verdict} after {} schedules with at most {k} {} ({} events)",
            s.name,
            r.tally.schedules,
            plural(k),
            r.tally.events
        )),
    }
    if r.interrupted {
        lines.push(format!(
            "interrupted after {} schedules (Ctrl-C): the enumeration is incomplete",
            r.tally.schedules
        ));
    }
    if r.truncated {
        let (flag, value) = if r.tally.schedules >= a.max_schedules {
            ("--max-schedules", a.max_schedules)
        } else {
            ("--max-events", a.max_events)
        };
        lines.push(format!(
            "stopped at {flag} {value}: the enumeration is incomplete"
        ));
    }
    lines.push(format!(
        "enumerated: {} schedules ({})",
        r.tally.schedules,
        r.by_faults
            .iter()
            .enumerate()
            .map(|(k, n)| format!("{n} with {k} {}", plural(k as u32)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if r.tally.inconclusive > 0 {
        lines.push(format!("{} schedules hit a limit", r.tally.inconclusive));
    }
    lines.push(format!(
        "faults fired: {} lost, {} duplicated, {} partitioned, {} crashes",
        r.tally.faults.lost,
        r.tally.faults.duplicated,
        r.tally.faults.partitioned,
        r.tally.faults.crashed
    ));
    let reached = registry::situation_names(&r.tally.situations);
    lines.push(format!(
        "situations reached: {}",
        if reached.is_empty() {
            "none".to_string()
        } else {
            reached.join(", ")
        }
    ));
    let mut record_json = None;
    if let Some(c) = &r.shortest {
        lines.push(format!(
            "shortest counterexample: {} {}, {} events: {}",
            c.faults,
            plural(c.faults),
            c.events,
            render::outcome_sentence(&c.outcome)
        ));
        for d in describe_record(&s.system.world, &c.record) {
            lines.push(format!("  {d}"));
        }
        let json = record_choices(&s.system.world, &c.record);
        lines.push(format!("record: {json}"));
        record_json = Some(json);
        if let Some(dir) = &a.html {
            let from = scenarios::locate(a.scenario.as_deref().unwrap_or(scenarios::DEFAULT))?;
            let path = super::report::write_counterexample(s, &from, &a.set, &c.record, k, dir)?;
            lines.push(format!("report: {}", path.display()));
        }
        match &a.repro_out {
            Some(path) => {
                let from = scenarios::locate(a.scenario.as_deref().unwrap_or(scenarios::DEFAULT))?;
                let repro = super::shrink::repro_of(s, &from, &a.set, None, &c.record, &c.outcome);
                super::shrink::write_repro(path, &repro)?;
                lines.push(format!("repro: idemsim replay --repro {path}"));
            }
            None => lines.push(
                "repro: add --repro-out FILE to write it, then idemsim replay --repro FILE"
                    .to_string(),
            ),
        }
        // The trace of the counterexample, re-derived by replaying its record.
        let mut sim = Sim::new(&s.system);
        let mut rec = Recorder::default();
        let report = sim.run(
            &s.system,
            Source::Replay {
                record: &c.record,
                log_points: false,
            },
            &mut rec,
        );
        debug_assert_eq!(report.outcome, c.outcome, "a record replays its run");
        lines.push(format!("# trace · {} events", report.events));
        lines.push(
            render::text(&s.system.world, &rec.entries)
                .trim_end()
                .to_string(),
        );
        lines.push(format!("=> {}", render::outcome_sentence(&report.outcome)));
    }
    let text = lines.join("\n") + "\n";
    if a.json {
        crate::eout!("{text}");
        let invariant = r.shortest.as_ref().map(|c| match &c.outcome {
            Outcome::Violation(v) => v.invariant.to_string(),
            _ => "model-panic".to_string(),
        });
        crate::outln!(
            "{}",
            json_line(
                "exhaustive",
                serde_json::json!({
                    "scenario": s.name,
                    "replay": replay,
                    "verdict": verdict,
                    "invariant": invariant,
                    "max_faults": k,
                    "schedules": r.tally.schedules,
                    "events": r.tally.events,
                    "holds": r.tally.holds,
                    "violations": r.tally.violations,
                    "panics": r.tally.panics,
                    "inconclusive": r.tally.inconclusive,
                    "complete": r.complete(),
                    "by_faults": r.by_faults,
                    "faults": {
                        "lost": r.tally.faults.lost,
                        "duplicated": r.tally.faults.duplicated,
                        "partitioned": r.tally.faults.partitioned,
                        "crashed": r.tally.faults.crashed,
                    },
                    "situations": reached,
                    "counterexample": r.shortest.as_ref().map(|c| serde_json::json!({
                        "faults": c.faults,
                        "events": c.events,
                        "sentence": render::outcome_sentence(&c.outcome),
                        "record": record_json,
                    })),
                })
            )
        );
    } else {
        crate::out!("{text}");
    }
    Ok(code)
}
