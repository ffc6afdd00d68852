//! Services in any language (docs/protocol.md): a Python consumer judged by
//! the ledger, its protocol errors and its nondeterminism reported as bad
//! input with the seed, and the durable storage a restart gets back.
//! Needs `python3` on PATH (`.ci/run` installs it).

mod common;

use common::{load_path, run, scratch, summary, sweep};
use models::external::{CheckMode, Exchange};
use models::registry::NodeStorage;
use models::scenario::Verdict;
use models::{Node, Scenario};
use sim::{Sim, Source};

const IN_TX: &str = "examples/python/external-consumer-dedup-in-tx.toml";
const IN_MEMORY: &str = "examples/python/external-consumer-dedup-in-memory.toml";
const MISBEHAVE: &str = "tests/fixtures/external/misbehave.toml";

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
    let file = scratch("external-memory.repro.json");
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
    assert_eq!(common::trace_of(&s, 6), first, "a new process");
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

#[test]
fn protocol_errors_exit_2_with_the_seed_the_lines_and_a_fix() {
    for (m, what) in [
        ("not-json", "not a JSON object"),
        ("unknown-type", "did you mean \"send\""),
        (
            "no-done",
            "no {\"type\":\"done\"} within 1000 ms of wall time",
        ),
        (
            "no-newline",
            "the program wrote a line without the newline that ends it",
        ),
        ("exit", "the program exited (exit status: 3)"),
        (
            "no-newline-exit",
            "the program exited (exit status: 0) after a line it wrote without the newline",
        ),
        (
            "stderr-then-exit",
            "Traceback: something broke in the handler",
        ),
        ("bad-send", "did you mean \"broker\""),
        (
            "ack-to-producer",
            "a `send` to \"producer\" is not a message it takes: an ack goes to the broker",
        ),
        ("key-twice", "a line with the key \"op\" twice"),
        (
            "log-number",
            "`text` of a `log` line must be a string, not 1",
        ),
        ("hoard", "more than 16777216 bytes in its storage"),
    ] {
        let set = mode(m);
        let (_, err) = run(&["check", MISBEHAVE, "--set", &set], 2);
        assert!(err.contains(what), "{m}: {err}");
        // A second done is found when it is read: with its handler, or at
        // the next run's start if it came late.
        if m != "two-dones" {
            let at = ", seed 0: the program of consumer-1";
            assert!(err.contains(at), "{m}: {err}");
        }
        // The lines shown are the last ones: a hoard's are all its stores.
        if m != "hoard" {
            assert!(err.contains("→ {\"type\":\"start\""), "{m}: {err}");
        }
        assert!(err.contains("\nhelp: "), "{m}: {err}");
        assert!(err.contains("repro: idemsim replay"), "{m}: {err}");
        if m == "no-newline" || m == "no-newline-exit" {
            // The unended line is shown as what the program wrote.
            assert!(err.contains("← {\"type\": \"done\"}"), "{m}: {err}");
            assert!(err.contains("end every line with a newline"), "{m}: {err}");
        }
        if m == "two-dones" {
            continue; // in a new process, the seed may end before the stray line is read
        }
        // Replaying the seed gives the trace and the same exit code.
        let (trace, err) = run(&["replay", MISBEHAVE, "--set", &set, "--seed", "0"], 2);
        assert!(
            trace.contains("an external program broke the protocol"),
            "{m}: {trace}"
        );
        assert!(err.contains(what), "{m}: {err}");
    }
}

#[test]
fn the_time_out_ends_a_program_hung_in_a_child_that_holds_its_stdout() {
    // The script's `sleep 60` keeps the pipe open after the script is
    // killed: the time-out must not wait for it.
    let set = r#"consumer.program=["sh","hangs-in-child.sh"]"#;
    let began = models::external::process::now();
    let (_, err) = run(&["check", MISBEHAVE, "--set", set], 2);
    let took = began.elapsed();
    assert!(
        err.contains("no {\"type\":\"done\"} within 1000 ms of wall time"),
        "{err}"
    );
    assert!(
        took < std::time::Duration::from_secs(20),
        "took {took:?}: {err}"
    );
}

#[test]
fn the_time_out_holds_for_a_line_the_program_does_not_read() {
    // A line longer than the pipe holds (a restart's storage can be) waits
    // for the program to read it; one that never reads must not hold idemsim.
    let program = models::external::Program {
        argv: ["sh", "-c", "sleep 60"].map(String::from).to_vec(),
        dir: common::root().to_path_buf(),
    };
    let mut session = models::external::Session::default();
    let line = format!(
        r#"{{"type":"timer","id":"{}","now_us":0}}"#,
        "x".repeat(4 << 20)
    );
    let began = models::external::process::now();
    let e = session
        .call(&program, std::time::Duration::from_millis(500), 0, &line)
        .unwrap_err();
    let took = began.elapsed();
    assert!(
        e.what.contains("did not read the line idemsim wrote") && e.what.contains("within 500 ms"),
        "{e:?}"
    );
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
}

#[test]
fn a_program_that_does_not_behave_the_same_twice_is_flagged() {
    for (m, seed) in [("random", "seed 0"), ("keeps-memory", "seed 1")] {
        let set = mode(m);
        let (_, err) = run(&["check", MISBEHAVE, "--set", &set], 2);
        assert!(
            err.contains(&format!(
                "{seed}: the program of consumer-1 does not behave the same way"
            )),
            "{m}: {err}"
        );
        assert!(err.contains("its answer #2"), "{m}: {err}");
        assert!(
            err.contains("first run (the process kept warm"),
            "{m}: {err}"
        );
    }
    // The check can be skipped; the program still runs. What it carries
    // over from seed to seed may still make a failing seed pass when it is
    // run again (its acks name receipts the broker never gave, which ack
    // nothing): the sweep's own replay says so, not the skipped check.
    let set = mode("keeps-memory");
    let out = common::idemsim(&[
        "check",
        MISBEHAVE,
        "--set",
        &set,
        "--determinism-seeds",
        "0",
    ]);
    let err = common::text(&out.stderr);
    assert!(!err.contains("does not behave the same way"), "{err}");
    assert!(
        out.status.code() != Some(2) || err.contains("failed in the sweep but not when run again"),
        "{err}"
    );
}

#[test]
fn a_missing_program_or_a_built_in_key_beside_it_is_refused_where_it_is_written() {
    let dir = scratch("external-load");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    let write = |consumer: &str| {
        std::fs::write(
            &file,
            format!(
                "summary = \"x\"\nmodel = \"messaging\"\n[expect]\nverdict = \"holds\"\n[consumer]\n{consumer}\n"
            ),
        )
        .unwrap();
    };
    let f = file.to_str().unwrap();
    write("program = [\"python3\", \"nope.py\"]");
    let (_, err) = run(&["check", f], 2);
    assert!(
        err.contains("s.toml:6:23: nope.py does not exist in"),
        "{err}"
    );
    std::fs::create_dir_all(dir.join("a-folder")).unwrap();
    write("program = [\"./a-folder\"]");
    let (_, err) = run(&["check", f], 2);
    assert!(
        err.contains("s.toml:6:12: the program ./a-folder is a folder in"),
        "{err}"
    );
    write("program = [\"no-such-command-xyz\"]");
    let (_, err) = run(&["check", f], 2);
    assert!(
        err.contains("s.toml:6:12: no command `no-such-command-xyz` on PATH"),
        "{err}"
    );
    write("program = [\"python3\"]\nhandler = \"effect\"");
    let (_, err) = run(&["check", f], 2);
    assert!(err.contains("s.toml:7:1"), "{err}");
    assert!(err.contains("consumer.program replaces it"), "{err}");
    write("handler_timeout_ms = 5");
    let (_, err) = run(&["check", f], 2);
    assert!(err.contains("no consumer.program is given"), "{err}");
}

/// A command found on PATH only as a file that is not executable would fail
/// at the first run's start; a shell skips such a file and keeps looking,
/// and idemsim refuses it at load, where the program is written.
#[cfg(unix)]
#[test]
fn a_command_on_path_that_is_not_executable_is_refused_at_load() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("external-path");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let prog = bin.join("my-consumer-xyz");
    std::fs::write(&prog, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o644)).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        "summary = \"x\"\nmodel = \"messaging\"\n[expect]\nverdict = \"holds\"\n[consumer]\nprogram = [\"my-consumer-xyz\"]\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let f = file.to_str().unwrap();
    let (_, err) = common::run_in(&dir, &["check", f, "--runs", "1"], &[("PATH", &path)], 2);
    assert!(
        err.contains("s.toml:6:12: the command `my-consumer-xyz` on PATH")
            && err.contains("is not executable"),
        "{err}"
    );
    assert!(err.contains("chmod +x"), "{err}");
}

#[test]
fn ctrl_c_stops_the_sweep_and_not_the_program_mid_answer() {
    // The terminal's SIGINT reaches the whole foreground group; a program in
    // that group would die mid-answer and read as a protocol error (exit 2).
    let (code, out, err) = common::interrupt_group(
        &["check", IN_TX, "--runs", "1000000", "--jobs", "2"],
        std::time::Duration::from_secs(3),
    );
    assert_eq!(code, Some(130), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("interrupted"), "{out}");
}

/// `--set`s of the in-transaction example: the consumer program with `args`.
fn program(args: &str) -> String {
    format!(r#"consumer.program=["python3","consumer.py",{args}]"#)
}

#[test]
fn a_program_sees_the_redelivered_flag_and_dedup_only_on_it_misses_a_republish() {
    // Lost publish confirmations make the relay publish again: a new message,
    // whose first delivery is not flagged. No network duplicates, so every
    // second copy is a redelivery (flagged) or a republish (not flagged).
    let faults = [
        "network.duplicate_per_mille=0",
        r#"network.links=[{from="broker", to="producer", loss_per_mille=[0,300]}]"#,
    ];
    let flag_only = program(r#""--dedup=if-redelivered""#);
    let (out, _) = run(
        &[
            "check",
            IN_TX,
            "--set",
            &flag_only,
            "--set",
            faults[0],
            "--set",
            faults[1],
            "--no-shrink",
            "--jobs",
            "2",
        ],
        1,
    );
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
    let store = program(r#""--dedup=store""#);
    let (out, _) = run(
        &[
            "check", IN_TX, "--set", &store, "--set", faults[0], "--set", faults[1], "--jobs", "2",
        ],
        0,
    );
    assert!(out.contains("holds over 300 schedules"), "{out}");
    // The flag reaches the program: a redelivery after a consumer crash says so.
    let mut s = load_path(IN_TX, &[]);
    let mode = CheckMode {
        fresh_process: false,
        transcript: true,
    };
    let mut seen = (false, false);
    for ex in transcripts(&mut s, mode, 0..60) {
        if ex.input.contains(r#""type":"deliver""#) {
            seen.0 |= ex.input.contains(r#""redelivered":false"#);
            seen.1 |= ex.input.contains(r#""redelivered":true"#);
        }
    }
    assert_eq!(
        seen,
        (true, true),
        "first deliveries and redeliveries, flagged"
    );
}

#[test]
fn a_program_that_extends_its_lease_keeps_a_long_delivery_to_itself() {
    // A minute of work against a 30 s visibility timeout, two consumers, no
    // dedup, no faults: only the lease decides whether a second consumer
    // gets the message while the first still works on it.
    let calm = [
        "network.loss_per_mille=0",
        "network.duplicate_per_mille=0",
        "crashes.producer.crash_per_mille=0",
        "crashes.consumer-1.crash_per_mille=0",
        "broker.consumers=2",
    ];
    let args = |extra: &str| -> Vec<String> {
        let mut v: Vec<String> = ["check", IN_TX, "--no-shrink", "--jobs", "2", "--runs", "20"]
            .map(String::from)
            .to_vec();
        for s in calm.iter().map(|s| s.to_string()).chain([program(&format!(
            r#""--dedup=none","--processing-ms=60000"{extra}"#
        ))]) {
            v.push("--set".into());
            v.push(s);
        }
        v
    };
    let run_with = |extra: &str, code| {
        let v = args(extra);
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        run(&refs, code).0
    };
    let out = run_with("", 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
    let out = run_with(r#","--renew-ms=10000""#, 0);
    assert!(out.contains("holds over 20 schedules"), "{out}");
    assert!(out.contains("lease-renewed"), "{out}");
    assert!(!out.contains("lease-expired-redelivery"), "{out}");
}

/// Pub/Sub's exactly-once delivery with a program as the consumer: it asks
/// for its ack's result (`"result": true`), gets `ack-result` back, and
/// commits only after a counted ack. Work of 9 s against a 10 s lease and up
/// to 1.5 s of network delay each way: some acks arrive after the lease.
#[test]
fn a_program_that_checks_its_ack_under_exactly_once_delivery_needs_no_dedup() {
    let check = |eod: bool, ack: &str, code: i32| -> String {
        let sets = [
            "crashes.producer.crash_per_mille=0".to_string(),
            "crashes.consumer-1.crash_per_mille=0".to_string(),
            "network.duplicate_per_mille=0".to_string(),
            r#"network.links=[{to="producer", loss_per_mille=0}, {kinds=["ack-result"], loss_per_mille=0}]"#.to_string(),
            "broker.visibility_timeout_ms=10000".to_string(),
            "network.delay_ms_max=1500".to_string(),
            format!("broker.exactly_once_delivery={eod}"),
            program(&format!(
                r#""--dedup=none","--ack={ack}","--processing-ms=9000""#
            )),
        ];
        let mut args = vec![
            "check",
            IN_TX,
            "--no-shrink",
            "--jobs",
            "2",
            "--runs",
            "100",
        ];
        for s in &sets {
            args.push("--set");
            args.push(s);
        }
        run(&args, code).0
    };
    let out = check(true, "checked-before-commit", 0);
    assert!(out.contains("holds over 100 schedules"), "{out}");
    assert!(out.contains("stale-ack-refused"), "{out}");
    // Without the broker's promise the late ack counts; without the check
    // the program has committed before it learns anything.
    let out = check(false, "checked-before-commit", 1);
    assert!(
        out.contains("violation of no-duplicate-effect") && out.contains("late-ack"),
        "{out}"
    );
    let out = check(true, "after-commit", 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
}

/// A program in the consumer's place has a connection to the broker as a
/// built-in consumer has: a delivery the broker sent before the program's
/// restart (to the process that crashed, or to none) does not reach the
/// restarted program, and its lease hands the message out again. Before,
/// such a delivery reached the program and was handed to it as new.
#[test]
fn a_restarted_program_gets_no_delivery_sent_before_its_start() {
    use models::messaging::{self, situations as sit};
    use sim::TraceKind;
    // Deliveries that may take 20 s outlive a crash with a short restart.
    let s = load_path(
        IN_TX,
        &[
            r#"network.links=[{from="broker", delay_ms_min=1, delay_ms_max=20000}]"#,
            "crashes.consumer-1.restart_ms_min=100",
            "crashes.consumer-1.restart_ms_max=2000",
        ],
    );
    let mut late = 0;
    // One simulator, so one warm process, for every seed.
    let mut sim = Sim::new(&s.system);
    for seed in 0..100 {
        let mut rec = sim::Recorder::default();
        let source = Source::Seed {
            seed,
            record: false,
        };
        sim.run(&s.system, source, &mut rec);
        let entries = rec.entries;
        let mut sent_us: Vec<(u32, u64)> = Vec::new();
        let mut restarted_us: Vec<(u32, u64)> = Vec::new();
        let mut dropped_in: Option<u64> = None;
        for e in &entries {
            match &e.kind {
                TraceKind::Send { msg_id, .. } => sent_us.push((*msg_id, e.time_us)),
                TraceKind::Restart { actor } => restarted_us.push((*actor, e.time_us)),
                TraceKind::Deliver {
                    to,
                    msg: models::Msg::Messaging(messaging::Msg::Deliver { .. }),
                    msg_id,
                    ..
                } => {
                    let sent = sent_us
                        .iter()
                        .rev()
                        .find(|s| s.0 == *msg_id)
                        .expect("sent")
                        .1;
                    let restart = restarted_us.iter().rev().find(|r| r.0 == *to);
                    if restart.is_some_and(|r| sent < r.1) {
                        late += 1;
                        dropped_in = Some(e.step);
                    }
                }
                // The program's arrival is observed as it gets the line.
                TraceKind::Observe {
                    obs: models::Obs::Received { .. },
                    ..
                } => assert_ne!(dropped_in, Some(e.step), "seed {seed}: the program got it"),
                _ => {}
            }
        }
        if dropped_in.is_some() {
            assert!(common::reached(&entries, sit::DELIVERY_ON_OLD_CONNECTION));
        }
    }
    assert!(late > 0, "no delivery outlived the program's crash");
}

/// A network copy of a delivery is not written to the program again: over
/// the broker's connection TCP hands a frame over once, as the built-in
/// consumer takes a receipt once. Before, the program was handed every copy
/// the network made as a delivery of its own.
#[test]
fn a_program_gets_no_network_copy_of_a_delivery() {
    use models::messaging;
    use sim::TraceKind;
    let s = load_path(
        IN_TX,
        &[r#"network.links=[{from="broker", duplicate_per_mille=[500, 500]}]"#],
    );
    let mut copies = 0;
    let mut sim = Sim::new(&s.system);
    for seed in 0..50 {
        let mut rec = sim::Recorder::default();
        let source = Source::Seed {
            seed,
            record: false,
        };
        sim.run(&s.system, source, &mut rec);
        // (actor, receipt) written to the program since its latest start.
        let mut written: Vec<(u32, u32)> = Vec::new();
        let mut copy_in: Option<u64> = None;
        for e in &rec.entries {
            match &e.kind {
                TraceKind::Start { actor } | TraceKind::Restart { actor } => {
                    written.retain(|w| w.0 != *actor);
                }
                TraceKind::Deliver {
                    to,
                    msg: models::Msg::Messaging(messaging::Msg::Deliver { receipt, .. }),
                    ..
                } => {
                    if written.contains(&(*to, *receipt)) {
                        copies += 1;
                        copy_in = Some(e.step);
                    } else {
                        written.push((*to, *receipt));
                    }
                }
                TraceKind::Observe {
                    obs: models::Obs::Received { .. },
                    ..
                } => assert_ne!(copy_in, Some(e.step), "seed {seed}: the program got a copy"),
                _ => {}
            }
        }
    }
    assert!(copies > 0, "no delivery was copied by the network");
}

#[test]
fn a_program_that_writes_for_an_event_nobody_published_acts_on_a_phantom() {
    // No loss and no crash: every delivery is handled once, so the fixture's
    // missing dedup cannot show, and only what the program invents can.
    let calm = [
        "network.loss_per_mille=[0,0]",
        "crashes.consumer-1.crash_per_mille=[0,0]",
    ];
    let verdict = |m: &str| {
        let set = mode(m);
        let mut sets = calm.to_vec();
        sets.push(&set);
        let s = load_path(MISBEHAVE, &sets);
        let found = s.judge(&sweep(&s, 20));
        (found.found, found.invariant)
    };
    assert_eq!(verdict("ok"), (Verdict::Holds, None));
    assert_eq!(
        verdict("invent"),
        (Verdict::Violation, Some("no-phantom-event"))
    );
}
