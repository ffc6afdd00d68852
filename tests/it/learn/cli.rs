//! The command line of the grader: the list, its exit codes (0 right, 1
//! wrong, 2 bad input), its JSON envelope, and the Python exercise graded
//! through `--program` with the learner's starting file and the reference.

use crate::support::tools::{require, PYTHON3};
use crate::support::{run, run_in};

#[test]
fn the_list_names_every_exercise_once() {
    let (out, _) = run(&["learn"], 0);
    // The table, then how the exercises in code are answered.
    let (table, how) = out
        .split_once("\n\n")
        .expect("a blank line after the table");
    let numbered: Vec<&str> = table.lines().collect();
    assert!(
        how.contains("cargo run --example learn -- invariant"),
        "{out}"
    );
    assert_eq!(numbered.len(), idemsim::learn::EXERCISES.len(), "{out}");
    assert!(out.contains("payment-give-up-silently"), "{out}");
    let (json, _) = run(&["learn", "--json"], 0);
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["type"], "exercise", "{line}");
        assert!(v["data"]["answer_with"].is_string(), "{line}");
    }
    assert_eq!(json.lines().count(), idemsim::learn::EXERCISES.len());
}

#[test]
fn a_wrong_answer_exits_1_with_the_reason_a_trace_and_a_hint() {
    let (out, _) = run(
        &[
            "learn",
            "check",
            "13",
            "--set",
            "client.retry.dead_letter=false",
        ],
        1,
    );
    assert!(out.contains("given up silently"), "{out}");
    assert!(out.contains("shrunk from seed"), "{out}");
    assert!(out.contains("replay: idemsim replay payment-timeout-read-as-failure --set client.retry.dead_letter=false --seed"), "{out}");
    assert!(out.contains("hint: read docs/learn/08-retries.md, \"A cap without a dead letter loses the payment\""), "{out}");
    let (out, _) = run(
        &[
            "learn",
            "check",
            "1",
            "--set",
            "client.retry.max_attempts=1",
        ],
        1,
    );
    assert!(
        out.contains("this exercise lets you change: client.key, service.idempotency"),
        "{out}"
    );
}

#[test]
fn a_right_answer_exits_0_and_json_has_the_envelope() {
    let (out, _) = run(
        &[
            "learn",
            "check",
            "13",
            "--set",
            "client.timeout_means=unknown",
            "--json",
        ],
        0,
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["type"], "learn_check");
    assert_eq!(v["data"]["passed"], true);
    assert_eq!(v["data"]["exercise"], 13);
    assert!(v["data"]["faults"]["lost"].as_u64().unwrap() > 0, "{out}");
    let (out, _) = run(
        &[
            "learn",
            "check",
            "13",
            "--set",
            "client.retry.dead_letter=false",
            "--json",
        ],
        1,
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["data"]["reason"], "gave-up-silently");
    assert_eq!(v["data"]["hint"]["file"], "docs/learn/08-retries.md");
}

#[test]
fn bad_input_exits_2_with_a_fix() {
    for (args, says) in [
        (&["learn", "check", "99"][..], "no exercise 99"),
        (&["learn", "check", "1", "--set", "client.key"], "KEY=VALUE"),
        (
            &["learn", "check", "1", "--set", "client.kee=stable"],
            "did you mean `key`",
        ),
        (
            &["learn", "check", "1", "--program", "python3 x.py"],
            "not with a program",
        ),
        (&["learn", "check", "16"], "--program"),
        (
            &["learn", "check", "17"],
            "cargo run --example learn -- actor",
        ),
        (
            &["learn", "check", "18"],
            "cargo run --example learn -- invariant",
        ),
    ] {
        let (_, err) = run(args, 2);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn the_python_exercise_grades_the_learners_program() {
    if !require(
        "learn::cli::the_python_exercise_grades_the_learners_program",
        &[&PYTHON3],
    ) {
        return;
    }
    let root = crate::support::root();
    let (out, _) = run_in(
        root,
        &[
            "learn",
            "check",
            "16",
            "--program",
            "python3 examples/learn/python/solution.py",
        ],
        &[],
        0,
    );
    assert!(out.starts_with("exercise 16: right"), "{out}");
    // The starting file as shipped books a redelivered event twice.
    let (out, _) = run_in(
        root,
        &[
            "learn",
            "check",
            "16",
            "--program",
            "python3 examples/learn/python/consumer.py",
        ],
        &[],
        1,
    );
    assert!(out.contains("no-duplicate-effect on seed"), "{out}");
    assert!(out.contains("shrunk from seed"), "{out}");
    assert!(out.contains("EFFECT"), "{out}");
    assert!(out.contains("hint: read docs/learn/10-inbox.md"), "{out}");
}

/// `--program` is split into words as a shell splits it: a path with a
/// space, quoted, is one word (the solution copied into such a folder
/// grades as right), and an open quote is bad input with the fix.
#[test]
fn a_program_path_with_a_space_is_one_quoted_word() {
    if !require(
        "learn::cli::a_program_path_with_a_space_is_one_quoted_word",
        &[&PYTHON3],
    ) {
        return;
    }
    let dir = crate::support::scratch("learn/program-space");
    let folder = dir.join("my answers");
    std::fs::create_dir_all(&folder).unwrap();
    let solution = crate::support::root().join("examples/learn/python/solution.py");
    std::fs::copy(solution, folder.join("it's mine.py")).unwrap();
    for program in [
        r#"python3 "my answers/it's mine.py""#,
        r"python3 my\ answers/it\'s\ mine.py",
    ] {
        let (out, _) = run_in(
            &dir,
            &["learn", "check", "16", "--program", program],
            &[],
            0,
        );
        assert!(out.starts_with("exercise 16: right"), "{program}: {out}");
    }
    let (_, err) = run_in(
        &dir,
        &[
            "learn",
            "check",
            "16",
            "--program",
            "python3 'my answers/x.py",
        ],
        &[],
        2,
    );
    assert!(err.contains("a single quote is not closed"), "{err}");
    assert!(err.contains("help: quote as in a shell"), "{err}");
}
