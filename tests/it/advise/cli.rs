//! The command line: text and JSON by snapshot, the same for any `--jobs`,
//! the exit codes docs/advise.md states, and a design no setting fixes.

use crate::support::cli::{case, run_case};

/// A quick scenario whose fixes differ in their costs.
const QUICK: &str = "payment-retry-without-key";

#[test]
fn text_and_json_are_the_same_for_any_jobs() {
    let (text, _) = run_case(&case(
        "advise text",
        &["advise", QUICK, "--max-changes", "2", "--jobs", "1"],
    ));
    let (again, _) = run_case(&case(
        "advise text",
        &["advise", QUICK, "--max-changes", "2", "--jobs", "2"],
    ));
    assert_eq!(text, again);
    // Beside every other snapshot of the suite.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    let _kept = settings.bind_to_scope();
    insta::assert_snapshot!("advise_text", text);
    let (json, _) = run_case(&case(
        "advise json",
        &[
            "advise",
            QUICK,
            "--max-changes",
            "2",
            "--json",
            "--jobs",
            "2",
        ],
    ));
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON Lines");
        assert!(v["type"].as_str().is_some_and(|t| t.starts_with("advise")));
    }
    insta::assert_snapshot!("advise_json", json);
}

#[test]
fn a_fix_found_exits_0_and_its_first_fix_is_printed_first() {
    let (out, _) = run_case(
        &case(
            "advise fingerprint",
            &["advise", "payment-fingerprint-off", "--max-changes", "1"],
        )
        .out("   1  *      service.fingerprint_check=true"),
    );
    assert!(!out.contains("no setting-level fix"));
}

#[test]
fn a_design_bug_in_a_program_has_no_setting_level_fix_and_exits_1() {
    // The consumer program deduplicates in its memory: a crash forgets it,
    // and no setting of the model reaches into the program.
    let (out, _) = run_case(
        &case(
            "advise program",
            &[
                "advise",
                "examples/python/external-consumer-dedup-in-memory.toml",
                "--max-changes",
                "1",
                "--runs",
                "100",
            ],
        )
        .code(1)
        .out("no setting-level fix found within budget")
        .out("not tried: sets of more than 1 change(s) (--max-changes)"),
    );
    assert!(out.contains("violation (no-duplicate-effect"));
    // The built-in consumer's settings are named as the program's to decide,
    // not as changes that were tried and refused.
    let program_line = out
        .lines()
        .find(|l| l.starts_with("not tried, a role your program plays"))
        .unwrap_or_else(|| panic!("no line for the program's role:\n{out}"));
    assert!(
        program_line.contains("consumer.handler=inbox-same-tx"),
        "{out}"
    );
    assert!(program_line.contains("consumer.ack=after-commit"), "{out}");
    let alone = out
        .lines()
        .find(|l| l.starts_with("tried beside other changes only"))
        .unwrap_or("");
    assert!(!alone.contains("consumer."), "{out}");
}

#[test]
fn a_holding_design_needs_nothing_and_exits_0() {
    run_case(
        &case(
            "advise holds",
            &["advise", "payment-fingerprint-check", "--runs", "50"],
        )
        .out("nothing to repair"),
    );
}

#[test]
fn a_small_budget_says_what_it_did_not_try() {
    let args = [
        "advise",
        "payment-fingerprint-off",
        "--max-candidates",
        "1",
        "--runs",
        "100",
    ];
    let (out, _) = run_case(&case("advise budget", &args).code(1));
    // Two changes are already set and one is judged; the other single
    // changes, and the pairs and triples they make, are not tried.
    for line in [
        "judged 1 design(s)",
        "no setting-level fix found within budget",
        "set(s) of 1 change(s) (--max-candidates 1 reached)",
        "set(s) of 2 change(s) (--max-candidates 1 reached)",
        "set(s) of 3 change(s) (--max-candidates 1 reached)",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
}

#[test]
fn a_bad_override_is_bad_input_with_its_fix() {
    run_case(
        &case(
            "advise set",
            &["advise", QUICK, "--set", "client.kye=stable"],
        )
        .code(2)
        .err("client.kye")
        .err("did you mean `key`?"),
    );
}

#[test]
fn bad_budgets_are_bad_input() {
    run_case(
        &case(
            "advise max-changes",
            &["advise", QUICK, "--max-changes", "4"],
        )
        .code(2)
        .err("--max-changes must be 1, 2 or 3"),
    );
    run_case(
        &case("advise runs", &["advise", QUICK, "--runs", "0"])
            .code(2)
            .err("--runs must be at least 1"),
    );
}

#[test]
fn html_writes_the_cost_front_in_the_sweep_pages_look() {
    let dir = crate::support::scratch("advise_html");
    let page = dir.join("advice.html");
    let path = page.to_str().expect("a UTF-8 path");
    run_case(
        &case(
            "advise html",
            &[
                "advise",
                "payment-fingerprint-off",
                "--max-changes",
                "1",
                "--html",
                path,
            ],
        )
        .err("wrote "),
    );
    let html = std::fs::read_to_string(&page).expect("the page was written");
    assert!(html.contains("<h1>payment-fingerprint-off · advise</h1>"));
    assert!(html.contains("<h2>Repairs: the cost front</h2>"));
    assert!(html.contains("<td>(as it is)</td>"));
    assert!(html.contains("<td>1</td><td>*</td><td>service.fingerprint_check=true</td>"));
}
