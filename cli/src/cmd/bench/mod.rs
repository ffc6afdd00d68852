//! `idemsim bench`: schedules and events per second of a fixed seed range,
//! the bare loop's events per second measured in the same process, allocations
//! per run in steady state, and peak memory; `--all` does it for the reference
//! scenario of every model, `--find` measures how soon each search strategy
//! finds each catalog bug (see [`search_race`]).

// In `common` so that `find` reads the clock without importing `bench`,
// which runs `find`; re-exported so the path stays.
pub use super::common::wall_clock;

mod search_race;

use crate::alloc_count;
use idemsim::catalog::{self, UsageError};
use idemsim::render::json_line;
use models::registry;
use models::scenario::Verdict;
use models::Scenario;
use sim::bench::bare_loop_parallel;
use sim::{explore, SeedRange, Sim};
use std::sync::atomic::AtomicBool;

#[derive(clap::Args)]
/// The arguments of `idemsim bench`.
pub struct Args {
    /// Scenario name or path [default: payment-stable-key, the reference].
    #[arg(conflicts_with = "all")]
    scenario: Option<String>,
    /// The reference scenario of every model, one after the other.
    #[arg(long)]
    all: bool,
    /// Seeds 0..N to run, 1 to 10^12 [default: 1000000].
    #[arg(long)]
    runs: Option<u64>,
    /// Worker threads, for the engine and the bare loop alike [default: all cores].
    #[arg(long)]
    jobs: Option<usize>,
    /// Engine and bare loop alternate this many times over shares of the
    /// seeds, 1 to --runs [default: 4, or --runs when that is fewer].
    #[arg(long)]
    rounds: Option<u64>,
    /// Schedules run on one warm simulator while allocations are counted,
    /// 0 (not counted) to 10^7 [default: 10000].
    #[arg(long)]
    alloc_runs: Option<u64>,
    /// Instead of speed: the schedules each search strategy (random, swarm,
    /// exhaustive, coverage) needs to find each catalog bug (or SCENARIO's).
    #[arg(long, conflicts_with = "all")]
    find: bool,
    /// With --find: the most schedules a strategy may run.
    #[arg(long, default_value_t = 100_000, requires = "find")]
    find_budget: u64,
    /// One JSON line per scenario on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// Peak resident memory of this process in KiB (`VmHWM`), where Linux reports it.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets the peak that [`peak_rss_kib`] reads to the current resident size
/// (Linux 4.0 and later), so each scenario of `--all` reports its own peak.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// CPU time this process has used so far, all threads, user and system, in
/// seconds; `None` where `getrusage` is not available.
#[cfg(unix)]
pub fn cpu_seconds() -> Option<f64> {
    // SAFETY: getrusage writes into the struct it is given and reads nothing else.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut ru) != 0 {
            return None;
        }
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(ru.ru_utime) + secs(ru.ru_stime))
}

#[cfg(not(unix))]
pub fn cpu_seconds() -> Option<f64> {
    None
}

fn per_sec(count: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

/// Warm-up schedules before allocations are counted: enough for the queue, the
/// command buffer, the ledger's tables and the actors' buffers to reach the
/// sizes the scenario needs.
const ALLOC_WARMUP: u64 = 2_000;

/// One scenario's measurement.
pub struct Row {
    /// The scenario's name.
    pub scenario: String,
    /// Its model.
    pub model: &'static str,
    /// Worker threads.
    pub jobs: usize,
    /// Schedules run by the engine.
    pub schedules: u64,
    /// Engine events over all of them.
    pub events: u64,
    /// Wall-clock seconds of the engine.
    pub seconds: f64,
    /// Events per schedule, which the bare loop repeats.
    pub events_per_schedule: u64,
    /// Events of the bare loop.
    pub baseline_events: u64,
    /// Wall-clock seconds of the bare loop.
    pub baseline_seconds: f64,
    /// CPU time of the engine and of the bare loop, all threads: on a machine
    /// other processes keep busy, their ratio is steadier than the wall-clock one.
    pub cpu_seconds: Option<f64>,
    /// CPU seconds of the bare loop.
    pub baseline_cpu_seconds: Option<f64>,
    /// Allocations per schedule on a warm simulator; `None` without the
    /// counting allocator (the library called from a test).
    pub allocs_per_run: Option<f64>,
    /// Schedules over which allocations were counted.
    pub alloc_runs: u64,
    /// Allocations during the timed sweep, threads and per-chunk tallies included.
    pub sweep_allocs: Option<u64>,
    /// Peak resident memory (VmHWM), where Linux reports it.
    pub peak_rss_kib: Option<u64>,
    /// holds, violation or inconclusive.
    pub verdict: &'static str,
}

impl Row {
    /// Schedules per wall-clock second.
    pub fn schedules_per_sec(&self) -> f64 {
        per_sec(self.schedules, self.seconds)
    }

    /// Engine events per wall-clock second.
    pub fn events_per_sec(&self) -> f64 {
        per_sec(self.events, self.seconds)
    }

    /// Bare-loop events per wall-clock second.
    pub fn baseline_events_per_sec(&self) -> f64 {
        per_sec(self.baseline_events, self.baseline_seconds)
    }

    /// How many times slower than the bare loop, per event.
    pub fn overhead_ratio(&self) -> f64 {
        let e = self.events_per_sec();
        if e > 0.0 {
            self.baseline_events_per_sec() / e
        } else {
            0.0
        }
    }

    /// The overhead from CPU time: engine CPU per event over bare-loop CPU per event.
    pub fn overhead_ratio_cpu(&self) -> Option<f64> {
        let (e, b) = (self.cpu_seconds?, self.baseline_cpu_seconds?);
        (e > 0.0 && b > 0.0 && self.events > 0 && self.baseline_events > 0)
            .then(|| (e / self.events as f64) / (b / self.baseline_events as f64))
    }

    fn json(&self) -> serde_json::Value {
        let round2 = |x: f64| (x * 100.0).round() / 100.0;
        serde_json::json!({
            "scenario": self.scenario,
            "model": self.model,
            "jobs": self.jobs,
            "schedules": self.schedules,
            "events": self.events,
            "events_per_schedule": self.events_per_schedule,
            "seconds": self.seconds,
            "schedules_per_sec": self.schedules_per_sec().round(),
            "events_per_sec": self.events_per_sec().round(),
            "baseline_events": self.baseline_events,
            "baseline_seconds": self.baseline_seconds,
            "baseline_events_per_sec": self.baseline_events_per_sec().round(),
            "overhead_ratio": round2(self.overhead_ratio()),
            "overhead_ratio_cpu": self.overhead_ratio_cpu().map(round2),
            "cpu_seconds": self.cpu_seconds,
            "baseline_cpu_seconds": self.baseline_cpu_seconds,
            "allocs_per_run": self.allocs_per_run,
            "alloc_runs": self.alloc_runs,
            "sweep_allocs": self.sweep_allocs,
            "peak_rss_kib": self.peak_rss_kib,
            "verdict": self.verdict,
        })
    }

    fn text(&self) -> String {
        let mut out = format!(
            "bench {} ({}): {} schedules (seeds 0..{}) on {} threads, verdict {}\n",
            self.scenario, self.model, self.schedules, self.schedules, self.jobs, self.verdict
        );
        out += &format!(
            "engine:    {:.2} s, {:.0} schedules/s, {:.2} M events/s ({} events per schedule)\n",
            self.seconds,
            self.schedules_per_sec(),
            self.events_per_sec() / 1e6,
            self.events_per_schedule
        );
        out += &format!(
            "bare loop: {:.2} s, {:.2} M events/s (BinaryHeap + ChaCha8, one draw per event, same events per schedule)\n",
            self.baseline_seconds,
            self.baseline_events_per_sec() / 1e6
        );
        out += &format!("overhead:  {:.2}x the bare loop", self.overhead_ratio());
        out += &match self.overhead_ratio_cpu() {
            Some(r) => format!(" ({r:.2}x in CPU time)\n"),
            None => "\n".to_string(),
        };
        out += &match self.allocs_per_run {
            Some(a) => format!(
                "allocations: {a:.4} per run ({} runs on a warm simulator)\n",
                self.alloc_runs
            ),
            None if self.alloc_runs == 0 => {
                "allocations: not counted (--alloc-runs 0)\n".to_string()
            }
            None => "allocations: not counted (no counting allocator)\n".to_string(),
        };
        out += &match self.peak_rss_kib {
            Some(k) => format!("peak memory: {:.1} MiB (VmHWM)\n", k as f64 / 1024.0),
            None => "peak memory: unknown (no /proc/self/status)\n".to_string(),
        };
        out
    }
}

/// Allocations per schedule of `s` on one simulator, after a warm-up.
fn allocs_per_run(s: &Scenario, runs: u64) -> Option<f64> {
    if runs == 0 {
        return None;
    }
    let model = &s.system;
    let mut sim = Sim::new(model);
    let mut tally = sim::Tally::for_oracle(sim.oracle());
    for seed in 0..ALLOC_WARMUP {
        let r = sim::run_guarded(&mut sim, model, seed);
        tally.add_counted(&r, sim.oracle());
    }
    let seeds = ALLOC_WARMUP..ALLOC_WARMUP + runs;
    let ((), n) = alloc_count::count(|| {
        for seed in seeds {
            let r = sim::run_guarded(&mut sim, model, seed);
            tally.add_counted(&r, sim.oracle());
        }
    });
    std::hint::black_box(&tally);
    n.map(|n| n as f64 / runs as f64)
}

/// Measures `s` over seeds `0..runs`: engine and bare loop alternate in
/// `rounds` (1 to `runs`), so a burst of load from other processes hits both
/// alike and the ratio stays meaningful on a shared machine; allocations are
/// counted over `alloc_runs` schedules (at most [`MAX_ALLOC_RUNS`]).
pub fn measure(
    s: &Scenario,
    runs: u64,
    jobs: usize,
    rounds: u64,
    alloc_runs: u64,
) -> Result<Row, UsageError> {
    reset_peak_rss();
    let seeds = SeedRange {
        start: 0,
        end: runs.into(),
    };
    let replay = format!("idemsim replay {}", super::common::shell_word(&s.file));
    // Before the clock starts: a program that is not deterministic, or
    // breaks the protocol, has no throughput worth reporting.
    let first = idemsim::external::DETERMINISM_SEEDS;
    idemsim::external::determinism_check_first(s, seeds, first, &replay)?;
    let stop = AtomicBool::new(false);
    let mut sum = sim::Summary::default();
    let mut engine_secs = 0.0;
    let mut bare = sim::bench::BareTotals::default();
    let mut bare_secs = 0.0;
    let mut events_per_schedule = 0;
    let mut sweep_allocs = Some(0);
    let (mut cpu, mut bare_cpu) = (Some(0.0), Some(0.0));
    let cpu_delta = |since: Option<f64>| Some(cpu_seconds()? - since?);
    let rounds = rounds.clamp(1, runs);
    // The command line refuses more; a library caller gets the bound.
    let alloc_runs = alloc_runs.min(MAX_ALLOC_RUNS);
    for round in 0..rounds {
        let part = seeds.shard(round, rounds);
        let (t0, c0) = (wall_clock(), cpu_seconds());
        let (s_part, n) = alloc_count::count(|| explore(&s.system, part, jobs, &stop, &|_| {}));
        engine_secs += t0.elapsed().as_secs_f64();
        cpu = cpu.zip(cpu_delta(c0)).map(|(a, b)| a + b);
        sweep_allocs = sweep_allocs.zip(n).map(|(a, b)| a + b);
        sum.merge(s_part);
        // The bare loop does as many events per schedule as the engine did on average.
        if round == 0 {
            events_per_schedule = (sum.tally.events as f64 / sum.tally.schedules.max(1) as f64)
                .round()
                .max(1.0) as u64;
        }
        let (t1, c1) = (wall_clock(), cpu_seconds());
        let b = bare_loop_parallel(part, events_per_schedule, jobs);
        bare_secs += t1.elapsed().as_secs_f64();
        bare_cpu = bare_cpu.zip(cpu_delta(c1)).map(|(a, b)| a + b);
        bare.schedules += b.schedules;
        bare.events += b.events;
        bare.checksum = bare.checksum.wrapping_add(b.checksum);
    }
    std::hint::black_box(bare.checksum);
    idemsim::external::check_summary(s, &replay, &sum)?;
    let allocs = allocs_per_run(s, alloc_runs);
    let verdict = match (&sum.first_failure, sum.tally.inconclusive) {
        (Some(_), _) => "violation",
        (None, 0) => "holds",
        (None, _) => "inconclusive",
    };
    Ok(Row {
        scenario: s.name.clone(),
        model: s.system.model.name(),
        jobs,
        schedules: sum.tally.schedules,
        events: sum.tally.events,
        seconds: engine_secs,
        events_per_schedule,
        baseline_events: bare.events,
        baseline_seconds: bare_secs,
        cpu_seconds: cpu,
        baseline_cpu_seconds: bare_cpu,
        allocs_per_run: allocs,
        alloc_runs,
        sweep_allocs,
        peak_rss_kib: peak_rss_kib(),
        verdict,
    })
}

/// The reference scenario of every model, in registry order: the one the model
/// names, else its first holding scenario in the catalog.
pub fn reference_scenarios() -> Result<Vec<String>, UsageError> {
    let mut out = Vec::new();
    for m in registry::MODELS {
        let name = match m.reference_scenario() {
            Some(n) => n.to_string(),
            None => first_holding(m.name())?.ok_or_else(|| {
                UsageError(format!(
                    "error: model `{}` has no reference scenario and no holding scenario in the catalog\n",
                    m.name()
                ))
            })?,
        };
        out.push(name);
    }
    Ok(out)
}

fn first_holding(model: &str) -> Result<Option<String>, UsageError> {
    for e in catalog::catalog()? {
        let s = catalog::load_entry(&e, &[])?;
        if s.system.model.name() == model && s.expected_verdict() == Some(Verdict::Holds) {
            return Ok(Some(s.name));
        }
    }
    Ok(None)
}

/// Seeds `bench` runs without `--runs`.
pub const DEFAULT_RUNS: u64 = 1_000_000;

/// Rounds of engine and bare loop without `--rounds`.
pub const DEFAULT_ROUNDS: u64 = 4;

/// Schedules whose allocations are counted without `--alloc-runs`.
pub const DEFAULT_ALLOC_RUNS: u64 = 10_000;

/// The most schedules `--alloc-runs` counts, on one thread: half a minute
/// for payment-stable-key, about four for chain-outbox-inbox; the count per
/// run is steady long before. (Past it, the warm-up plus the count wrapped.)
pub const MAX_ALLOC_RUNS: u64 = 10_000_000;

/// `--runs`, `--rounds` and `--alloc-runs`, checked: (runs, rounds, alloc runs).
fn sizes(a: &Args) -> Result<(u64, u64, u64), UsageError> {
    super::common::runs("--runs", a.runs)?;
    let runs = a.runs.unwrap_or(DEFAULT_RUNS);
    let rounds = match a.rounds {
        None => DEFAULT_ROUNDS.min(runs),
        Some(0) => return Err(UsageError(format!(
            "error: --rounds must be at least 1\nhelp: engine and bare loop alternate this many times, 1 to --runs ({runs}); the default is {DEFAULT_ROUNDS}\n"
        ))),
        Some(n) if n > runs => return Err(UsageError(format!(
            "error: --rounds {n} is more than --runs {runs}: each round runs a share of the seeds, at least one\nhelp: give --rounds 1 to {runs}, or more --runs\n"
        ))),
        Some(n) => n,
    };
    let alloc_runs = a.alloc_runs.unwrap_or(DEFAULT_ALLOC_RUNS);
    if alloc_runs > MAX_ALLOC_RUNS {
        return Err(UsageError(format!(
            "error: --alloc-runs {alloc_runs} is more than {MAX_ALLOC_RUNS}\nhelp: give 0 (do not count allocations) to {MAX_ALLOC_RUNS}; the default is {DEFAULT_ALLOC_RUNS}, and the count per run is steady long before the bound\n"
        )));
    }
    Ok((runs, rounds, alloc_runs))
}

/// Runs `idemsim bench`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let jobs = super::common::jobs(a.jobs)?;
    if a.find {
        // The search strategies run to their first violation: these measure speed.
        let given = [
            ("--runs", a.runs.is_some()),
            ("--rounds", a.rounds.is_some()),
            ("--alloc-runs", a.alloc_runs.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return Err(UsageError(format!(
                "error: {flag} does not apply to bench --find: each strategy runs until its first violation, at most --find-budget schedules\nhelp: leave {flag} out; give --find-budget N to bound the search\n"
            )));
        }
        if a.find_budget == 0 || a.find_budget > super::common::MAX_RUNS {
            return Err(UsageError(format!(
                "error: --find-budget {} is outside 1 to {}\nhelp: give the most schedules each strategy may run, e.g. --find-budget 100000 (the default)\n",
                a.find_budget,
                super::common::MAX_RUNS
            )));
        }
        return search_race::run(a.scenario.as_deref(), a.find_budget, jobs, a.json);
    }
    let (runs, rounds, alloc_runs) = sizes(&a)?;
    let names = if a.all {
        reference_scenarios()?
    } else {
        vec![a.scenario.clone().unwrap_or(catalog::DEFAULT.to_string())]
    };
    // Load all first: a bad name fails before minutes of measuring.
    let loaded: Vec<Scenario> = names
        .iter()
        .map(|n| catalog::load(n, &[]))
        .collect::<Result<_, _>>()?;
    for (i, s) in loaded.iter().enumerate() {
        let row = measure(s, runs, jobs, rounds, alloc_runs)?;
        if a.json {
            idemsim::outln!("{}", json_line("bench", row.json()));
        } else {
            if i > 0 {
                idemsim::outln!();
            }
            idemsim::outln!("{}", row.text().trim_end());
        }
    }
    Ok(idemsim::exit::HOLDS)
}
