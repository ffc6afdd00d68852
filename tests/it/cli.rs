//! The command line as a user meets it: exit codes, messages, JSON, determinism.

use crate::support;

use std::path::Path;
use support::{idemsim, run as check, summary, text};

#[test]
fn a_holding_scenario_exits_0() {
    let (out, _) = check(&["check", "payment-stable-key", "--runs", "300"], 0);
    assert!(out.contains("holds over 300 schedules"), "{out}");
    assert!(out.contains("situations reached: "), "{out}");
}

#[test]
fn check_without_a_scenario_runs_the_default() {
    let (out, _) = check(&["check", "--runs", "50"], 0);
    assert!(out.starts_with("payment-stable-key: holds"), "{out}");
}

#[test]
fn a_violation_exits_1_with_the_lowest_failing_seed_and_a_repro_line() {
    let (out, _) = check(&["check", "payment-retry-without-key", "--runs", "200"], 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
    let repro = out
        .lines()
        .find_map(|l| l.strip_prefix("repro: "))
        .expect("a repro line");
    let args: Vec<&str> = repro.split_whitespace().skip(1).collect();
    let (trace, _) = check(&args, 1);
    assert!(trace.contains("transfer #2 for claim 4711"), "{trace}");
}

/// A silent give-up is a violation whether or not the payment went out: the
/// design of payment-timeout-read-as-failure without dead letters leaves 51
/// paid claims open in the claims system, with no person told, and the next
/// payment by hand is the duplicate. Before no-untold-effect it held.
#[test]
fn a_silent_give_up_whose_payment_landed_is_a_violation() {
    let s = "payment-timeout-read-as-failure";
    let silent = ["--set", "client.retry.dead_letter=false"];
    let (out, _) = check(&[&["check", s, "--no-shrink"][..], &silent].concat(), 1);
    assert!(
        out.contains(
            "lowest failing seed 10: violation of no-untold-effect: claim 4711 was given up without a dead-letter record, but its transfer of 1200 EUR landed"
        ),
        "{out}"
    );
    assert!(out.contains("failing seeds: 51 of 300"), "{out}");
    assert!(
        out.contains("0 failed, 0 unknown (0.0%, for a person to reconcile), 51 given up silently"),
        "{out}"
    );
    // Reading the timeout right does not save a client that writes nothing down.
    let unknown = ["--set", "client.timeout_means=unknown"];
    let (out, _) = check(
        &[&["check", s, "--no-shrink"][..], &unknown, &silent].concat(),
        1,
    );
    assert!(out.contains("violation of no-untold-effect"), "{out}");
    // With its dead letters, the scenario is the false "failed" it ships as...
    let (out, _) = check(&["check", s, "--no-shrink"], 1);
    assert!(
        out.contains("lowest failing seed 10: violation of no-false-failure"),
        "{out}"
    );
    // ...and with honest ones it holds: 51 open questions for a person.
    let (out, _) = check(&[&["check", s, "--no-shrink"][..], &unknown].concat(), 0);
    assert!(out.contains("holds over 300 schedules"), "{out}");
    assert!(
        out.contains("51 unknown (17.0%, for a person to reconcile), 0 given up silently"),
        "{out}"
    );
}

#[test]
fn hitting_a_limit_exits_3() {
    let (out, _) = check(
        &[
            "check",
            "payment-stable-key",
            "--runs",
            "20",
            "--set",
            "run.max_steps=3",
        ],
        3,
    );
    assert!(out.contains("inconclusive"), "{out}");
}

#[test]
fn the_lowest_failing_seed_is_the_lowest_not_the_first_found() {
    let (all, _) = check(
        &[
            "check",
            "payment-retry-without-key",
            "--seeds",
            "0..400",
            "--json",
            "--jobs",
            "2",
        ],
        1,
    );
    let lowest = summary(&all)["lowest_failing_seed"]
        .as_u64()
        .expect("a failing seed");
    // No seed below it fails (the seeds alone: the default portfolio's
    // searches would find the bug on any range).
    if lowest > 0 {
        let below = format!("0..{lowest}");
        let seeds = ["--strategy", "seeds"];
        check(
            &[
                &["check", "payment-retry-without-key", "--seeds", &below][..],
                &seeds,
            ]
            .concat(),
            0,
        );
    }
}

#[test]
fn json_summary_has_the_promised_fields() {
    let (out, err) = check(
        &[
            "check",
            "payment-retry-without-key",
            "--runs",
            "100",
            "--json",
        ],
        1,
    );
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("every stdout line is JSON");
        assert!(v["type"].is_string() && v.get("data").is_some(), "{line}");
    }
    let s = summary(&out);
    assert_eq!(s["scenario"], "payment-retry-without-key");
    assert_eq!(s["verdict"], "violation");
    assert_eq!(s["invariant"], "no-duplicate-effect");
    assert!(s["lowest_failing_seed"].is_u64());
    assert_eq!(s["schedules"], 100);
    assert!(s["events"].as_u64().unwrap() > 100);
    assert!(
        err.contains("violation"),
        "human text goes to stderr: {err}"
    );
}

#[test]
fn jobs_1_and_jobs_2_print_byte_identical_json() {
    for scenario in ["payment-retry-without-key", "payment-stable-key"] {
        let runs = "1500";
        let one = idemsim(&["check", scenario, "--runs", runs, "--json", "--jobs", "1"]);
        let two = idemsim(&["check", scenario, "--runs", runs, "--json", "--jobs", "2"]);
        assert!(!one.stdout.is_empty());
        assert_eq!(text(&one.stdout), text(&two.stdout), "{scenario}");
        assert_eq!(one.status.code(), two.status.code());
    }
}

#[test]
fn replay_of_payment_retry_without_key_at_its_lowest_failing_seed() {
    let (out, _) = check(&["check", "payment-retry-without-key", "--json"], 1);
    let seed = summary(&out)["lowest_failing_seed"]
        .as_u64()
        .unwrap()
        .to_string();
    let (trace, _) = check(&["replay", "payment-retry-without-key", "--seed", &seed], 1);
    insta::assert_snapshot!("replay_payment_retry_without_key_lowest_seed", trace);
}

#[test]
fn list_shows_every_scenario_with_its_expected_verdict() {
    let (out, _) = check(&["list"], 0);
    let files = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "toml")
        })
        .count();
    assert_eq!(out.lines().count(), files, "{out}");
    assert!(out.contains("payment-retry-without-key"));
    assert!(out.contains("violation (no-duplicate-effect)"));
}

#[test]
fn bad_scenario_files_exit_2_with_file_line_and_fix() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(names.len() >= 8);
    for path in names {
        let rel = format!(
            "tests/fixtures/bad/{}",
            path.file_name().unwrap().to_string_lossy()
        );
        let (out, err) = check(&["check", &rel, "--runs", "1"], 2);
        assert!(out.is_empty(), "{rel}: {out}");
        assert!(err.starts_with(&format!("error: {rel}:")), "{rel}: {err}");
        assert!(!err.contains("panicked"), "{rel}: {err}");
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        insta::assert_snapshot!(format!("bad_{name}"), err);
    }
}

#[test]
fn bad_usage_exits_2() {
    let (_, err) = check(&["check", "no-such-scenario"], 2);
    assert!(
        err.contains("no scenario named `no-such-scenario`"),
        "{err}"
    );
    check(&["check", "payment-stable-key", "--seeds", "9..3"], 2);
    check(&["frobnicate"], 2);
    let (_, err) = check(
        &[
            "check",
            "payment-stable-key",
            "--set",
            "client.retry.max_atempts=3",
        ],
        2,
    );
    assert!(err.contains("did you mean `max_attempts`"), "{err}");
}

#[test]
fn a_path_that_is_no_scenario_file_says_what_it_is() {
    let (_, err) = check(&["check", "tests/no-such-file.toml"], 2);
    assert!(
        err.contains("`tests/no-such-file.toml` does not exist"),
        "{err}"
    );
    let (_, err) = check(&["check", "scenarios/"], 2);
    assert!(err.contains("is a folder, not a scenario file"), "{err}");
    assert!(err.contains("idemsim verify"), "{err}");
    if Path::new("/dev/null").exists() {
        let (_, err) = check(&["check", "/dev/null"], 2);
        assert!(err.contains("`/dev/null` is not a regular file"), "{err}");
    }
}

#[test]
fn a_mistake_in_a_set_is_the_arguments_and_the_files_lines_stay_the_users() {
    let (_, err) = check(
        &[
            "check",
            "payment-stable-key",
            "--set",
            "client.retry.bse_ms=3",
        ],
        2,
    );
    assert!(
        err.starts_with("error: --set client.retry.bse_ms=3: unknown field `bse_ms`"),
        "{err}"
    );
    assert!(err.contains("did you mean `base_ms`?"), "{err}");
    assert!(!err.contains(" | "), "no line of the file is shown: {err}");

    // Digits past TOML's 64-bit range are a number too large, not a word
    // of the wrong type; one within it is judged by the key's own range.
    let (_, err) = check(
        &[
            "check",
            "payment-stable-key",
            "--set",
            "service.max_keys=18446744073709551615",
        ],
        2,
    );
    assert!(
        err.contains("the number 18446744073709551615 is past the largest whole number"),
        "{err}"
    );
    assert!(!err.contains("string"), "{err}");
    let (_, err) = check(
        &[
            "check",
            "payment-stable-key",
            "--set",
            "client.retry.max_attempts=9223372036854775807",
        ],
        2,
    );
    assert!(err.contains("the range is 0 to 10000"), "{err}");

    // An override that adds a line near the top of the file must not move
    // the line a mistake further down is reported at.
    for bad in ["unknown-key", "min-above-max", "wrong-type"] {
        let file = format!("tests/fixtures/bad/{bad}.toml");
        let (_, alone) = check(&["check", &file, "--runs", "1"], 2);
        let (_, with_set) = check(
            &[
                "check",
                &file,
                "--runs",
                "1",
                "--set",
                "expect.situations=[]",
            ],
            2,
        );
        assert_eq!(
            alone.lines().next(),
            with_set.lines().next(),
            "{bad}: {alone}\n---\n{with_set}"
        );
    }
}

/// Kafka refuses to start a producer whose `enable.idempotence = true` is
/// written beside more than five requests in flight (ConfigException: "Must
/// set max.in.flight.requests.per.connection to at most 5 to use the
/// idempotent producer"); Kafka 3.0.1 to 3.9 turn idempotence left at its
/// default off with a logged warning, 4.0 refuses that too. Written in the
/// file or by `--set`, it is bad input, at the `max_in_flight` line.
#[test]
fn explicit_idempotence_above_five_in_flight_is_refused_like_kafka() {
    let file = "tests/fixtures/bad/idempotence-above-five-in-flight.toml";
    let (_, err) = check(&["check", file, "--runs", "1"], 2);
    assert!(err.starts_with(&format!("error: {file}:7:17: ")), "{err}");
    assert!(err.contains("max_in_flight = 6"), "{err}");
    assert!(err.contains("at most 5"), "{err}");
    assert!(err.contains("max_in_flight = 5 or less"), "{err}");
    assert!(err.contains("\"kafka-default\""), "{err}");

    let (_, err) = check(
        &[
            "check",
            "messaging-max-in-flight-above-five",
            "--set",
            "producer.idempotence=true",
        ],
        2,
    );
    // At the line to change, naming the `--set` that made the combination.
    assert!(
        err.starts_with("error: scenarios/messaging-max-in-flight-above-five.toml:35:17: ")
            && err.contains("--set producer.idempotence=true made this combination"),
        "{err}"
    );
    assert!(err.contains("at most 5"), "{err}");

    // Left at Kafka's default, it still runs: idempotence is silently off,
    // and the design warning says so.
    let (out, _) = check(
        &[
            "check",
            "messaging-max-in-flight-above-five",
            "--runs",
            "20",
            "--no-shrink",
        ],
        1,
    );
    assert!(
        out.contains("design warning (idempotence-off-above-five-in-flight)"),
        "{out}"
    );
}
