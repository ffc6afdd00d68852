//! `idemsim bench`: schedules and events per second of a fixed seed range,
//! the bare loop's events per second measured in the same process, and peak memory.

use crate::render::json_line;
use crate::scenarios::{self, UsageError};
use sim::bench::bare_loop_parallel;
use sim::{explore, SeedRange};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

#[derive(clap::Args)]
/// The arguments of `idemsim bench`.
pub struct Args {
    /// Scenario name or path [default: payment-stable-key, the reference].
    scenario: Option<String>,
    /// Seeds 0..N to run.
    #[arg(long, default_value_t = 1_000_000)]
    runs: u64,
    /// Worker threads, for the engine and the bare loop alike [default: all cores].
    #[arg(long)]
    jobs: Option<usize>,
    /// One JSON line on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// Peak resident memory of this process in KiB (`VmHWM`), where Linux reports it.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The one wall clock in idemsim: a benchmark measures real time by definition,
/// and nothing it reads flows into a run.
#[allow(clippy::disallowed_methods)]
fn wall_clock() -> Instant {
    Instant::now()
}

/// Engine and bare loop alternate in rounds, so a burst of load from other
/// processes hits both alike and the ratio stays meaningful on a shared machine.
const ROUNDS: u64 = 4;

fn per_sec(count: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

/// Runs `idemsim bench`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let name = a.scenario.as_deref().unwrap_or(scenarios::DEFAULT);
    let s = scenarios::load(name, &[])?;
    if a.runs == 0 {
        return Err(UsageError("error: --runs must be at least 1\nhelp: give the number of seeds to run, e.g. --runs 1000\n".into()));
    }
    let jobs = super::check::jobs(a.jobs)?;
    let seeds = SeedRange {
        start: 0,
        end: a.runs,
    };
    let replay = format!("idemsim replay {name}");
    // Before the clock starts: a program that is not deterministic, or
    // breaks the protocol, has no throughput worth reporting.
    let first = crate::external::DETERMINISM_SEEDS;
    crate::external::determinism_check_first(&s, seeds, first, &replay)?;
    let stop = AtomicBool::new(false);
    let mut sum = sim::Summary::default();
    let mut engine_secs = 0.0;
    let mut bare = sim::bench::BareTotals::default();
    let mut bare_secs = 0.0;
    let mut events_per_schedule = 0;
    for round in 0..ROUNDS.min(a.runs) {
        let part = seeds.shard(round, ROUNDS.min(a.runs));
        let t0 = wall_clock();
        let s_part = explore(&s.system, part, jobs, &stop, &|_| {});
        engine_secs += t0.elapsed().as_secs_f64();
        sum.merge(s_part);
        // The bare loop does as many events per schedule as the engine did on average.
        if round == 0 {
            events_per_schedule = (sum.tally.events as f64 / sum.tally.schedules.max(1) as f64)
                .round()
                .max(1.0) as u64;
        }
        let t1 = wall_clock();
        let b = bare_loop_parallel(part, events_per_schedule, jobs);
        bare_secs += t1.elapsed().as_secs_f64();
        bare.schedules += b.schedules;
        bare.events += b.events;
        bare.checksum = bare.checksum.wrapping_add(b.checksum);
    }
    std::hint::black_box(bare.checksum);
    crate::external::check_summary(&s, &replay, &sum)?;
    let schedules_per_sec = per_sec(sum.tally.schedules, engine_secs);
    let events_per_sec = per_sec(sum.tally.events, engine_secs);
    let baseline_events_per_sec = per_sec(bare.events, bare_secs);
    let overhead_ratio = if events_per_sec > 0.0 {
        baseline_events_per_sec / events_per_sec
    } else {
        0.0
    };
    let peak = peak_rss_kib();
    let verdict = match (&sum.first_failure, sum.tally.inconclusive) {
        (Some(_), _) => "violation",
        (None, 0) => "holds",
        (None, _) => "inconclusive",
    };
    if a.json {
        crate::outln!(
            "{}",
            json_line(
                "bench",
                serde_json::json!({
                    "scenario": s.name,
                    "jobs": jobs,
                    "schedules": sum.tally.schedules,
                    "events": sum.tally.events,
                    "seconds": engine_secs,
                    "schedules_per_sec": schedules_per_sec.round(),
                    "events_per_sec": events_per_sec.round(),
                    "baseline_events": bare.events,
                    "baseline_seconds": bare_secs,
                    "baseline_events_per_sec": baseline_events_per_sec.round(),
                    "overhead_ratio": (overhead_ratio * 100.0).round() / 100.0,
                    "peak_rss_kib": peak,
                    "verdict": verdict,
                })
            )
        );
    } else {
        crate::outln!(
            "bench {}: {} schedules (seeds 0..{}) on {jobs} threads, verdict {verdict}",
            s.name,
            sum.tally.schedules,
            a.runs
        );
        crate::outln!(
            "engine:    {:.2} s, {:.0} schedules/s, {:.2} M events/s ({events_per_schedule} events per schedule)",
            engine_secs,
            schedules_per_sec,
            events_per_sec / 1e6
        );
        crate::outln!(
            "bare loop: {:.2} s, {:.2} M events/s (BinaryHeap + ChaCha8, one draw per event, same events per schedule)",
            bare_secs,
            baseline_events_per_sec / 1e6
        );
        crate::outln!("overhead:  {overhead_ratio:.2}x the bare loop");
        match peak {
            Some(k) => crate::outln!("peak memory: {:.1} MiB (VmHWM)", k as f64 / 1024.0),
            None => crate::outln!("peak memory: unknown (no /proc/self/status)"),
        }
    }
    Ok(crate::exit::HOLDS)
}
