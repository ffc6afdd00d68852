//! Services in any language (docs/protocol.md): a Python consumer judged by
//! the ledger, its protocol errors and its nondeterminism reported as bad
//! input with the seed, and the durable storage a restart gets back.
//! Needs `python3` on PATH (`.ci/run` installs it).

use crate::support;

use models::external::{CheckMode, Exchange};
use models::registry::NodeStorage;
use models::scenario::Verdict;
use models::{Node, Scenario};
use sim::{Sim, Source};
use support::{load_path, run, scratch, summary, sweep};

mod bad_programs;
mod deliveries;
mod draws;
mod resources;
mod roles;
mod schema;
mod services;
mod sqlite;

/// Whether `python3` is on PATH: in CI it must be (the test fails), and
/// elsewhere a test without it says so on one line and passes.
fn python_available() -> bool {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "python3 is not installed: in CI the external program tests must run (.ci/run installs it)"
        );
        eprintln!("skipping an external program test: python3 is not installed (Debian: apt-get install -y python3)");
    }
    found
}

const IN_TX: &str = "examples/python/external-consumer-dedup-in-tx.toml";

const IN_MEMORY: &str = "examples/python/external-consumer-dedup-in-memory.toml";

const MISBEHAVE: &str = "tests/fixtures/external/misbehave.toml";
/// The `--set` of the tests of the handler time-out: MISBEHAVE's own is
/// long enough for a slow start.
const SHORT_TIMEOUT: &str = "consumer.handler_timeout_ms=1000";

/// `--set` choosing how the fixture program misbehaves.
fn mode(m: &str) -> String {
    format!(r#"consumer.program=["python3","misbehave.py","--mode={m}"]"#)
}

#[test]
fn dedup_in_the_effects_step_holds_and_every_protection_is_load_bearing() {
    let (out, _) = run(&["check", IN_TX, "--jobs", "2"], 0);
    assert!(out.contains("holds over 300 schedules"), "{out}");
    assert!(out.contains("program-effect-redelivered"), "{out}");
    let (out, _) = run(&["verify", IN_TX, "--jobs", "2"], 0);
    assert!(out.contains("3 of 3 protections are load-bearing"), "{out}");
}

#[test]
fn dedup_in_memory_is_a_shrunk_violation_whose_repro_line_replays_it() {
    let (out, _) = run(&["check", IN_MEMORY, "--jobs", "2"], 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
    assert!(out.contains("shrunk (docs/shrinking.md)"), "{out}");
    // The crash between the commit and the ack is what the shrunk run keeps.
    let shrunk = &out[out.find("shrunk (docs").unwrap()..];
    assert!(shrunk.contains("consumer-1  CRASH"), "{shrunk}");
    let repro = out
        .lines()
        .find_map(|l| l.strip_prefix("repro: "))
        .expect("a repro line");
    let args: Vec<&str> = repro.split_whitespace().skip(1).collect();
    let (trace, _) = run(&args, 1);
    assert!(
        trace.contains("=> Violation of no-duplicate-effect"),
        "{trace}"
    );
    // And the shrunk run as a repro file replays to the same violation.
    let file = scratch("external/memory").join("external-memory.repro.json");
    let file = file.to_str().unwrap();
    run(&["check", IN_MEMORY, "--repro-out", file, "--jobs", "2"], 1);
    // The scenario is not in the repro's folder, so the repro cannot name it.
    let (trace, _) = run(&["replay", IN_MEMORY, "--repro", file], 1);
    assert!(trace.contains("consumer write #2"), "{trace}");
}

#[test]
fn the_ledger_judges_the_programs_effects_like_a_built_in_consumers() {
    let s = load_path(IN_TX, &[]);
    let found = s.judge(&sweep(&s, 60));
    assert_eq!(found.found, Verdict::Holds, "{found:?}");
    let s = load_path(IN_MEMORY, &[]);
    let found = s.judge(&sweep(&s, 300));
    assert_eq!(
        (found.found, found.invariant),
        (Verdict::Violation, Some("no-duplicate-effect"))
    );
}

#[test]
fn the_same_seed_gives_the_same_trace_from_a_new_or_a_warm_process() {
    let s = load_path(IN_MEMORY, &[]);
    let mut sim = Sim::new(&s.system);
    let mut trace = |seed| {
        let mut rec = sim::Recorder::default();
        let r = sim.run(
            &s.system,
            Source::Seed {
                seed,
                record: false,
            },
            &mut rec,
        );
        (rec.entries, r.outcome)
    };
    let first = trace(6);
    trace(7);
    assert_eq!(trace(6), first, "the process ran seed 7 in between");
    assert_eq!(support::trace_of(&s, 6), first, "a new process");
}

#[test]
fn the_summary_does_not_depend_on_the_jobs() {
    let one = run(
        &["check", IN_MEMORY, "--json", "--jobs", "1", "--no-shrink"],
        1,
    )
    .0;
    let two = run(
        &["check", IN_MEMORY, "--json", "--jobs", "2", "--no-shrink"],
        1,
    )
    .0;
    assert_eq!(summary(&one), summary(&two));
}

/// The transcript of every external actor of one run of `seed`, run with
/// its program in `mode`.
fn transcripts(s: &mut Scenario, mode: CheckMode, seeds: std::ops::Range<u64>) -> Vec<Exchange> {
    for n in &mut s.system.nodes {
        if let Node::External(e) = n {
            e.mode = mode;
        }
    }
    let mut sim = Sim::new(&s.system);
    let mut all = Vec::new();
    for seed in seeds {
        sim.run(
            &s.system,
            Source::Seed {
                seed,
                record: false,
            },
            &mut sim::NoTrace,
        );
        for actor in 0..s.system.nodes.len() as u32 {
            if let Some(NodeStorage::External(st)) = sim.storage(actor) {
                all.extend(st.session.transcript.clone().unwrap_or_default());
            }
        }
    }
    all
}

#[test]
fn a_restart_gets_back_exactly_what_the_program_stored() {
    let mut s = load_path(IN_TX, &[]);
    let mode = CheckMode {
        fresh_process: false,
        transcript: true,
    };
    let lines = transcripts(&mut s, mode, 0..40);
    let parsed: Vec<serde_json::Value> = lines
        .iter()
        .map(|e| serde_json::from_str(&e.input).unwrap())
        .collect();
    // Every processed id the program stored before a crash is in the storage
    // of its restart, and nothing else is.
    let mut stored = serde_json::Map::new();
    let mut restarts_with_storage = 0;
    for (e, input) in lines.iter().zip(&parsed) {
        if input["type"] == "start" {
            if input["restarted"] == true {
                assert_eq!(input["storage"], serde_json::Value::Object(stored.clone()));
                restarts_with_storage += usize::from(!stored.is_empty());
            } else {
                assert_eq!(
                    input["storage"],
                    serde_json::json!({}),
                    "a new run starts empty"
                );
                stored.clear();
            }
        }
        for out in &e.output {
            let v: serde_json::Value = serde_json::from_str(out).unwrap();
            if v["type"] == "store" {
                stored.insert(v["key"].as_str().unwrap().into(), v["value"].clone());
            }
        }
    }
    assert!(
        restarts_with_storage > 0,
        "some seed crashes the consumer after it stored an id"
    );
}

#[test]
fn one_process_serves_every_seed_of_a_simulator() {
    let s = load_path(IN_TX, &[]);
    let mut sim = Sim::new(&s.system);
    for seed in 0..20 {
        sim.run_seed(&s.system, seed);
    }
    let Some(NodeStorage::External(st)) = sim.storage(2) else {
        panic!("consumer-1 is actor 2 and runs a program");
    };
    assert_eq!(st.session.spawns, 1, "seeds and crashes reuse the process");
}

#[test]
fn replay_shows_the_transcript_line_by_line() {
    let (text, _) = run(&["replay", IN_TX, "--seed", "5", "--transcript"], 0);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("→ {\"type\":\"start\""), "{text}");
    // Every line idemsim wrote is answered, and every answer ends with done.
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with('→') {
            assert!(i > 0 || lines[1].starts_with('←'), "{text}");
            if i > 0 {
                assert_eq!(lines[i - 1], "← {\"type\":\"done\"}", "{text}");
            }
        }
    }
    assert_eq!(lines.last(), Some(&"← {\"type\":\"done\"}"));
    let (_, err) = run(
        &[
            "replay",
            "payment-stable-key",
            "--seed",
            "1",
            "--transcript",
        ],
        2,
    );
    assert!(err.contains("runs no external program"), "{err}");
}
