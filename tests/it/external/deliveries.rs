//! What a program sees of the messaging model's deliveries: the redelivered
//! flag, lease extensions, checked acks under exactly-once delivery, a
//! restart's fresh start, no network copies, and phantom events.

use super::*;

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
            assert!(support::reached(&entries, sit::DELIVERY_ON_OLD_CONNECTION));
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
