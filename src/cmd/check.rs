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
    /// Enumerate every schedule with at most --max-faults faults instead of sampling seeds.
    #[arg(long, conflicts_with_all = ["runs", "seeds"])]
    exhaustive: bool,
    /// Most non-zero decisions (lost or duplicated messages, crashes, maximal delays) per schedule.
    #[arg(long, value_name = "K", default_value_t = 2, requires = "exhaustive")]
    max_faults: u32,
    /// Bound on the schedules exhaustive mode runs; hitting it is "inconclusive".
    #[arg(long, default_value_t = Bounds::default().max_schedules, requires = "exhaustive")]
    max_schedules: u64,
    /// Bound on the events of all exhaustive schedules together; hitting it is "inconclusive".
    #[arg(long, default_value_t = Bounds::default().max_events, requires = "exhaustive")]
    max_events: u64,
    /// How to search the runs: every seed (seeds), or coverage-guided mutation
    /// of recorded decisions, --runs schedules at most, from the seed range's
    /// start (coverage) [default: the scenario's run.strategy].
    #[arg(long, value_enum, conflicts_with_all = ["exhaustive", "shard"])]
    strategy: Option<StrategyArg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StrategyArg {
    Seeds,
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

pub fn exit_code(o: &Outcome) -> u8 {
    match o {
        Outcome::Holds => crate::exit::HOLDS,
        Outcome::Violation(_) | Outcome::Panicked(_) => crate::exit::VIOLATION,
        Outcome::Inconclusive(_) => crate::exit::INCONCLUSIVE,
    }
}

pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

// ------------------------------------------------------------------ the summary line

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    pub lost: u64,
    pub duplicated: u64,
    pub partitioned: u64,
    pub crashed: u64,
    pub dropped_at_down_actor: u64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeds {
    pub start: u64,
    pub end: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct FailureLine {
    pub seed: u64,
    pub invariant: String,
    pub sentence: String,
    pub events: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct InconclusiveLine {
    pub seed: u64,
    pub limit: String,
}

/// A sweep's verdict, as `check` reports it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SweepVerdict {
    #[default]
    Holds,
    Violation,
    Inconclusive,
    /// Stopped by Ctrl-C before every seed ran, with no violation found.
    Interrupted,
}

impl SweepVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            SweepVerdict::Holds => "holds",
            SweepVerdict::Violation => "violation",
            SweepVerdict::Inconclusive => "inconclusive",
            SweepVerdict::Interrupted => "interrupted",
        }
    }
}

/// The effect ledger's operation counts over a sweep: what clients finally knew.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Operations {
    /// Operations clients started, over all runs.
    pub started: u64,
    pub done: u64,
    pub failed: u64,
    /// Ended with an unknown outcome, in a dead letter for a person to reconcile.
    pub unknown: u64,
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

    fn add(&mut self, o: &Operations) {
        self.started += o.started;
        self.done += o.done;
        self.failed += o.failed;
        self.unknown += o.unknown;
        self.abandoned += o.abandoned;
        self.open += o.open;
        self.events += o.events;
    }
}

/// A sweep's summary as `check --json` prints it. It carries everything a
/// merge needs (counts, the seed range, the lowest failure and inconclusive
/// seed, the situations with their run counts), so N shards merge into the
/// line one machine would have printed; the derived fields are recomputed by
/// [`SweepLine::derive`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SweepLine {
    pub scenario: String,
    /// The replay command without its seed: scenario and overrides.
    pub replay: String,
    /// The --set overrides, so a merge can load the same scenario to shrink.
    pub sets: Vec<String>,
    pub seeds: Option<Seeds>,
    pub schedules: u64,
    pub events: u64,
    pub holds: u64,
    pub violations: u64,
    pub panics: u64,
    pub inconclusive: u64,
    pub faults: Faults,
    /// Runs that reached each situation, by name.
    pub situation_runs: BTreeMap<String, u64>,
    pub operations: Operations,
    pub failure: Option<FailureLine>,
    pub first_inconclusive: Option<InconclusiveLine>,
    pub interrupted: bool,
    // Derived from the fields above.
    pub verdict: SweepVerdict,
    pub invariant: Option<String>,
    pub seed: Option<u64>,
    pub situations: Vec<String>,
    /// Share of started operations that ended unknown (for a person to reconcile).
    pub unknown_rate: Option<f64>,
    pub repro: Option<String>,
    /// Events of the lowest failing run, and of its shrunk version (docs/shrinking.md).
    pub original_events: Option<u64>,
    pub shrunk_events: Option<u64>,
}

impl SweepLine {
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
        let mut line = SweepLine {
            scenario: name.to_string(),
            replay,
            sets: sets.to_vec(),
            seeds: Some(Seeds {
                start: seeds.start,
                end: seeds.end,
            }),
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

    /// Recomputes verdict, invariant, seed, situation names and repro.
    pub fn derive(&mut self) {
        self.verdict = match (&self.failure, self.interrupted, self.inconclusive) {
            (Some(_), _, _) => SweepVerdict::Violation,
            (None, true, _) => SweepVerdict::Interrupted,
            (None, false, 0) => SweepVerdict::Holds,
            (None, false, _) => SweepVerdict::Inconclusive,
        };
        self.invariant = self.failure.as_ref().map(|f| f.invariant.clone());
        self.seed = self
            .failure
            .as_ref()
            .map(|f| f.seed)
            .or(self.first_inconclusive.as_ref().map(|i| i.seed));
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
        self.repro = self
            .seed
            .map(|seed| format!("{} --seed {seed}", self.replay));
        self.original_events = self.failure.as_ref().map(|f| f.events);
    }

    /// Adds a disjoint sweep of the same scenario; the lower seed wins, as in one sweep.
    pub fn absorb(&mut self, o: &SweepLine) {
        self.schedules += o.schedules;
        self.events += o.events;
        self.holds += o.holds;
        self.violations += o.violations;
        self.panics += o.panics;
        self.inconclusive += o.inconclusive;
        self.faults.lost += o.faults.lost;
        self.faults.duplicated += o.faults.duplicated;
        self.faults.partitioned += o.faults.partitioned;
        self.faults.crashed += o.faults.crashed;
        self.faults.dropped_at_down_actor += o.faults.dropped_at_down_actor;
        for (k, v) in &o.situation_runs {
            *self.situation_runs.entry(k.clone()).or_insert(0) += v;
        }
        self.operations.add(&o.operations);
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
    }

    pub fn exit_code(&self) -> u8 {
        match self.verdict {
            SweepVerdict::Violation => crate::exit::VIOLATION,
            SweepVerdict::Holds => crate::exit::HOLDS,
            SweepVerdict::Interrupted => progress::INTERRUPTED,
            SweepVerdict::Inconclusive => crate::exit::INCONCLUSIVE,
        }
    }

    pub fn text(&self) -> String {
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
            lines.push(format!(
                "interrupted after {} schedules (Ctrl-C): the counts cover only what ran",
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
    ) -> Result<Option<String>, UsageError> {
        let shrunk = super::shrink::for_check(
            s,
            &self.sets,
            self.failure.as_ref().map(|f| f.seed),
            no_shrink,
            repro_out,
        )?;
        self.shrunk_events = shrunk.as_ref().map(|d| d.shrunk.report.events);
        Ok(shrunk.as_ref().map(|d| {
            format!(
                "\nshrunk (docs/shrinking.md):\n{}",
                crate::render::formats::text(&d.trace)
            )
        }))
    }

    /// Prints the summary as `check` does: text on stdout, or JSON on stdout and
    /// text on stderr; the shrunk trace follows the text.
    pub fn print(&self, json: bool, shrunk_text: Option<&str>) {
        let text = self.text();
        if json {
            eprint!("{text}");
            let data = serde_json::to_value(self).expect("a summary serialises");
            println!("{}", json_line("summary", data));
            if let Some(t) = shrunk_text {
                eprint!("{t}");
            }
        } else {
            print!("{text}");
            if let Some(t) = shrunk_text {
                print!("{t}");
            }
        }
    }
}

// ------------------------------------------------------------------ check

pub fn run(a: Args) -> Result<u8, UsageError> {
    let name = a.scenario.as_deref().unwrap_or(scenarios::DEFAULT);
    let overrides = scenarios::parse_overrides(&a.set)?;
    let s = scenarios::load(name, &overrides)?;
    let jobs = a.jobs.unwrap_or_else(default_jobs);
    if jobs == 0 {
        return Err(UsageError("error: --jobs must be at least 1\n".into()));
    }
    let sets: String = a.set.iter().map(|s| format!(" --set {s}")).collect();
    let replay = format!("idemsim replay {}{sets}", s.name);
    progress::install_ctrl_c();
    if a.exhaustive {
        return run_exhaustive(&a, &s, &replay, jobs);
    }
    let all = a.seeds.unwrap_or(SeedRange {
        start: 0,
        end: a.runs.unwrap_or(s.runs),
    });
    if all.is_empty() {
        return Err(UsageError("error: --runs must be at least 1\n".into()));
    }
    let strategy = a.strategy.map_or(s.strategy, Strategy::from);
    if strategy == Strategy::Coverage {
        return super::coverage::run(super::coverage::Request {
            scenario: &s,
            sets: &a.set,
            seeds: all,
            json: a.json,
            no_shrink: a.no_shrink,
            repro_out: a.repro_out.as_deref(),
            stop: &progress::STOP,
        });
    }
    // A shard may be empty when there are more shards than seeds; it merges as nothing.
    let seeds = match a.shard {
        Some((i, n)) => all.shard(i, n),
        None => all,
    };
    let bar = Progress::new(Some(seeds.len()), a.json);
    let sum = explore(&s.system, seeds, jobs, &progress::STOP, &|done| {
        bar.update(done)
    });
    bar.finish();
    let mut line = SweepLine::from_summary(&s.name, replay, &a.set, seeds, &sum);
    // Shrinking: the lowest failing seed, cut down to a locally minimal run.
    let shrunk_text = line.shrink(&s, a.no_shrink, a.repro_out.as_deref())?;
    line.print(a.json, shrunk_text.as_deref());
    Ok(line.exit_code())
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
            "error: --max-schedules and --max-events must be at least 1\n".into(),
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
        match &a.repro_out {
            Some(path) => {
                let repro = super::shrink::repro_of(s, &a.set, None, &c.record, &c.outcome);
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
        eprint!("{text}");
        let invariant = r.shortest.as_ref().map(|c| match &c.outcome {
            Outcome::Violation(v) => v.invariant.to_string(),
            _ => "model-panic".to_string(),
        });
        println!(
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
                        "outcome": render::outcome_sentence(&c.outcome),
                        "record": record_json,
                    })),
                })
            )
        );
    } else {
        print!("{text}");
    }
    Ok(code)
}
