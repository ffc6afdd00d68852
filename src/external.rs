//! External programs (docs/protocol.md) as the command line sees them: the
//! determinism check that runs before a sweep, and a program's protocol
//! errors reported as bad input (exit 2) with the seed and a replay line.
//!
//! The process I/O itself lives in `models::external`; this module only
//! runs seeds and compares what the program answered.

use crate::catalog::UsageError;
use models::external::{first_difference, protocol_error, CheckMode, Difference, Exchange};
use models::registry::NodeStorage;
use models::{Node, Scenario};
use sim::{guarded, NoTrace, Outcome, Record, RunReport, SeedRange, Sim, Source, Summary};

/// Seeds the determinism check runs twice before a sweep, from its first.
pub const DETERMINISM_SEEDS: u64 = 3;

/// Whether a scenario runs an external program.
pub(crate) fn has_programs(s: &Scenario) -> bool {
    s.system.nodes.iter().any(Node::runs_program)
}

fn protocol_failure(s: &Scenario, seed: u64, report: &str, replay: &str) -> UsageError {
    UsageError(format!(
        "error: {}, seed {seed}: {report}\nrepro: {replay} --seed {seed}\n",
        s.file
    ))
}

/// A protocol error in any run of a sweep, reported with its lowest seed
/// (even when a lower seed is a violation: the program must be fixed first).
pub fn check_summary(s: &Scenario, replay: &str, sum: &Summary) -> Result<(), UsageError> {
    // A program killed on Ctrl-C or SIGTERM broke off its run: no error of its.
    if crate::signals::killed_a_program() {
        return Ok(());
    }
    match &sum.first_panic {
        Some((seed, m)) => match protocol_error(m) {
            Some(report) => Err(protocol_failure(s, *seed, report, replay)),
            None => Ok(()),
        },
        None => Ok(()),
    }
}

/// A protocol error in one run (`seed` if it has one, else "a recorded run").
pub fn check_outcome(s: &Scenario, what: &str, outcome: &Outcome) -> Result<(), UsageError> {
    if crate::signals::killed_a_program() {
        return Ok(());
    }
    match outcome {
        Outcome::Panicked(m) => match protocol_error(m) {
            Some(report) => Err(UsageError(format!("error: {}, {what}: {report}\n", s.file))),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// The scenario loaded anew, its programs run in `mode`.
fn with_mode(s: &Scenario, mode: CheckMode) -> Result<Scenario, UsageError> {
    let none = models::scenario::Protection {
        overrides: Vec::new(),
        breaks: None,
    };
    let mut again = s.ablated(&s.name, &none)?;
    for m in again.system.nodes.iter_mut().filter_map(Node::program_mode) {
        *m = mode;
    }
    Ok(again)
}

fn transcript(sim: &Sim<models::System>, actor: u32) -> &[Exchange] {
    match sim.storage(actor).and_then(NodeStorage::program) {
        Some(s) => s.session.transcript.as_deref().unwrap_or(&[]),
        None => &[],
    }
}

fn shown(e: &Option<Exchange>) -> String {
    match e {
        None => "    (no such answer: the run had ended)\n".to_string(),
        Some(e) if e.output.is_empty() => "    (nothing before its done)\n".to_string(),
        Some(e) => e.output.iter().map(|l| format!("    {l}\n")).collect(),
    }
}

fn nondeterminism(s: &Scenario, seed: u64, d: &Difference, replay: &str) -> UsageError {
    let input = |e: &Option<Exchange>| e.as_ref().map(|e| e.input.clone());
    let got = match (input(&d.first), input(&d.second)) {
        (Some(a), Some(b)) if a == b => format!("  the line it got, both times: {a}\n"),
        (a, b) => format!(
            "  the line it got in the first run: {}\n  in the second run: {}\n",
            a.unwrap_or_else(|| "none".into()),
            b.unwrap_or_else(|| "none".into())
        ),
    };
    UsageError(format!(
        "error: {}, seed {seed}: the program of {} does not behave the same way when the seed runs twice: its answer #{} (at {}) differs\n{got}  first run (the process kept warm across seeds and crashes):\n{}  second run (a new process at every start):\n{}help: a program's answers must follow from the lines it got since its last start and the storage given there: no clock, no random numbers, no iteration in hash order (Python: a set of strings), no memory kept across a start\nrepro: {replay} --seed {seed}\n",
        s.file,
        d.actor,
        d.handler + 1,
        crate::render::time(d.now_us),
        shown(&d.first),
        shown(&d.second),
    ))
}

/// Runs each of `seeds` twice, once in a warm process (the one that ran the
/// seeds before, kept across crashes) and once with a new process at every
/// `start`, and compares every answer the programs gave. A program that
/// keeps memory across a `start`, reads a clock or draws random numbers
/// answers differently, and is reported at the first answer that differs.
pub(crate) fn determinism_check(
    s: &Scenario,
    seeds: SeedRange,
    replay: &str,
) -> Result<(), UsageError> {
    if !has_programs(s) || seeds.is_empty() {
        return Ok(());
    }
    let warm = with_mode(
        s,
        CheckMode {
            fresh_process: false,
            transcript: true,
        },
    )?;
    let fresh = with_mode(
        s,
        CheckMode {
            fresh_process: true,
            transcript: true,
        },
    )?;
    let mut sim_a = Sim::new(&warm.system);
    let mut sim_b = Sim::new(&fresh.system);
    let externals: Vec<u32> = (0..s.system.nodes.len() as u32)
        .filter(|&i| s.system.nodes[i as usize].runs_program())
        .collect();
    for seed in seeds.iter() {
        // Ctrl-C or SIGTERM: the sweep that follows stops at once and says so.
        if crate::progress::STOP.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let a = guarded(|| sim_a.run_seed(&warm.system, seed)).unwrap_or_else(RunReport::panicked);
        check_outcome(s, &format!("seed {seed}"), &a.outcome)
            .map_err(|e| UsageError(format!("{}repro: {replay} --seed {seed}\n", e.0)))?;
        let b = guarded(|| sim_b.run_seed(&fresh.system, seed)).unwrap_or_else(RunReport::panicked);
        if crate::signals::killed_a_program() {
            break;
        }
        let first = externals
            .iter()
            .filter_map(|&i| {
                let name = &s.system.world.actor_names[i as usize];
                first_difference(name, transcript(&sim_a, i), transcript(&sim_b, i))
            })
            .min_by_key(|d| d.now_us);
        if let Some(d) = first {
            return Err(nondeterminism(s, seed, &d, replay));
        }
        check_outcome(s, &format!("seed {seed}"), &b.outcome)
            .map_err(|e| UsageError(format!("{}repro: {replay} --seed {seed}\n", e.0)))?;
        debug_assert_eq!(a, b, "the same answers make the same run");
    }
    Ok(())
}

/// The determinism check on the first `count` seeds of `seeds`.
pub fn determinism_check_first(
    s: &Scenario,
    seeds: SeedRange,
    count: u64,
    replay: &str,
) -> Result<(), UsageError> {
    determinism_check(s, seeds.first(count), replay)
}

/// What every program of a run got and answered, in order: `→` a line
/// idemsim wrote, `←` a line the program wrote (`replay --transcript`).
/// Lines of several programs are prefixed with the actor's name.
pub fn transcript_text(s: &Scenario, record: &Record) -> Result<(String, RunReport), UsageError> {
    if !has_programs(s) {
        return Err(UsageError(format!(
            "error: {} runs no external program, so it has no transcript\nhelp: --transcript shows what a program of [consumer] program = [...] got and answered (docs/protocol.md); leave it out for the trace\n",
            s.file
        )));
    }
    let t = with_mode(
        s,
        CheckMode {
            fresh_process: false,
            transcript: true,
        },
    )?;
    let mut sim = Sim::new(&t.system);
    // The transcript is all it needs: what the run read is not kept.
    sim.choices.set_record_replays(false);
    let source = Source::Replay {
        record,
        log_points: false,
    };
    let report =
        guarded(|| sim.run(&t.system, source, &mut NoTrace)).unwrap_or_else(RunReport::panicked);
    let externals: Vec<u32> = (0..t.system.nodes.len() as u32)
        .filter(|&i| t.system.nodes[i as usize].runs_program())
        .collect();
    // (time, actor, index in its transcript): a stable order across actors.
    let mut order: Vec<(u64, u32, usize)> = Vec::new();
    for &a in &externals {
        for (i, e) in transcript(&sim, a).iter().enumerate() {
            order.push((e.now_us, a, i));
        }
    }
    order.sort();
    let mut out = String::new();
    for (_, a, i) in order {
        let e = &transcript(&sim, a)[i];
        let who = if externals.len() > 1 {
            format!("{} ", t.system.world.actor_names[a as usize])
        } else {
            String::new()
        };
        out.push_str(&format!("{who}→ {}\n", e.input));
        for l in &e.written {
            out.push_str(&format!("{who}{l}\n"));
        }
    }
    Ok((out, report))
}
