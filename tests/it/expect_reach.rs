//! `check` judges `[expect] situations` and the design warnings' gaps by
//! every schedule its default portfolio ran: a situation only a search
//! reached counts as reached, and the summary says which search went
//! there. `verify` judges the file the same way: unless a seed failed as
//! the file expects, it runs the same searches. The fixture's 20 seeds lose
//! no confirmation, exhaustive search loses one on purpose
//! (tests/fixtures/expect_reach/reached-by-a-search.toml); in the second
//! fixture, the seeds hold and only the coverage-guided search loses a
//! change (lost-only-by-a-search.toml); in the third, a violation the file
//! expects is missed by its seeds and by both searches, in both commands
//! (violation-check-searches-miss.toml).

use crate::support::{run, scratch, summary};
use serde_json::Value;

const FIXTURE: &str = "tests/fixtures/expect_reach/reached-by-a-search.toml";
const WARNING: &str = "idempotence-off-above-five-in-flight";

/// The fixture's text with its `[expect] situations` line replaced by
/// `line`, written into a scratch folder of its own.
fn variant(name: &str, line: &str) -> String {
    rewritten(
        name,
        r#"situations = ["duplicate-publish", "inbox-hit"]"#,
        line,
    )
}

/// The fixture's text with `old` replaced by `new`, in a scratch folder.
fn rewritten(name: &str, old: &str, new: &str) -> String {
    let text = std::fs::read_to_string(crate::support::root().join(FIXTURE)).expect("fixture");
    assert!(text.contains(old), "the fixture changed: no {old}");
    let path = scratch(&format!("expect_reach/{name}")).join(format!("{name}.toml"));
    std::fs::write(&path, text.replace(old, new)).expect("write the variant");
    path.to_string_lossy().into_owned()
}

/// The `expect` record of a `check --json`, if it printed one.
fn expect_record(jsonl: &str) -> Option<Value> {
    jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "expect")
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .expect("a list of names")
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

#[test]
fn a_situation_only_a_search_reached_meets_the_expectation_and_the_summary_says_where() {
    let args = ["check", FIXTURE, "--no-regressions"];
    let (json, _) = run(&[&args[..], &["--json"]].concat(), 0);
    let s = summary(&json);
    assert_eq!(s["verdict"], "holds", "{s}");
    // The premise: no seed went there, exhaustive search did.
    assert!(
        !names(&s["situations"]).contains(&"duplicate-publish"),
        "{s}"
    );
    let exhaustive = names(&s["portfolio"]["exhaustive"]["situations"]);
    for sit in ["publish-retried", "duplicate-publish", "inbox-hit"] {
        assert!(exhaustive.contains(&sit), "{sit}: {s}");
    }
    assert_eq!(expect_record(&json), None, "the [expect] holds: {json}");
    let h = s["hazards"]
        .as_array()
        .and_then(|l| l.iter().find(|h| h["id"] == WARNING))
        .unwrap_or_else(|| panic!("the warning {WARNING}: {s}"));
    assert_eq!(h["reached_runs"], 0, "{h}");
    assert_eq!(h["reached_by_searches"], serde_json::json!(["exhaustive"]));
    let (text, _) = run(&args, 0);
    assert!(
        text.contains("situations reached: none\nsituations reached by the searches alone: publish-retried (exhaustive search), duplicate-publish (exhaustive search), inbox-hit (exhaustive search)\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "reached by no seed but by exhaustive search (duplicate-publish): the verdict covers it"
        ),
        "{text}"
    );
    assert!(!text.contains("[expect] not met"), "{text}");
    // The seeds alone, as before the searches counted, miss both.
    let (seeds, _) = run(&[&args[..], &["--strategy", "seeds"]].concat(), 0);
    assert!(
        seeds.contains("[expect] not met: situations not reached: duplicate-publish, inbox-hit"),
        "{seeds}"
    );
}

#[test]
fn a_warnings_gap_only_a_search_reached_counts_as_reached() {
    // Without `situations`, the warning is what [expect] judges by reach.
    let file = variant("warning-only", "");
    let args = ["check", file.as_str(), "--no-regressions"];
    let (json, _) = run(&[&args[..], &["--json"]].concat(), 0);
    assert_eq!(expect_record(&json), None, "{json}");
    let (seeds, _) = run(&[&args[..], &["--strategy", "seeds"]].concat(), 0);
    assert!(
        seeds.contains(&format!(
            "[expect] not met: holds, but no run reached the gap of design warning {WARNING} (duplicate-publish: 0 runs)"
        )),
        "{seeds}"
    );
}

#[test]
fn a_situation_no_seed_and_no_search_reached_still_fails_the_expectation() {
    let file = variant(
        "reached-by-none",
        r#"situations = ["duplicate-publish", "redelivered-after-inbox-cleanup"]"#,
    );
    let args = ["check", file.as_str(), "--no-regressions"];
    let (json, _) = run(&[&args[..], &["--json"]].concat(), 0);
    let e = expect_record(&json).unwrap_or_else(|| panic!("an expect record: {json}"));
    assert_eq!(
        e["data"]["mismatch"], "situations not reached: redelivered-after-inbox-cleanup",
        "{e}"
    );
    let s = summary(&json);
    for part in ["exhaustive", "coverage"] {
        let reached = names(&s["portfolio"][part]["situations"]);
        assert!(!reached.contains(&"redelivered-after-inbox-cleanup"), "{s}");
    }
    let (text, _) = run(&args, 0);
    assert!(
        text.contains("[expect] not met: situations not reached: redelivered-after-inbox-cleanup"),
        "{text}"
    );
}

#[test]
fn what_the_searches_reached_is_the_same_for_any_jobs() {
    let out = |jobs: &str| {
        run(
            &[
                "check",
                FIXTURE,
                "--no-regressions",
                "--json",
                "--jobs",
                jobs,
            ],
            0,
        )
        .0
    };
    assert_eq!(out("1"), out("2"));
}

/// `verify FILE` without ablations (`check` judges no protections, and the
/// fixture names none), with `more` flags: its JSON `verify` record and its
/// text, with the exit code `code`.
fn verify_with(file: &str, more: &[&str], code: i32) -> (Value, String) {
    let args = [
        &["verify", file, "--no-regressions", "--no-ablations"],
        more,
    ]
    .concat();
    let (json, _) = run(&[&args[..], &["--json"]].concat(), code);
    let record = (json.lines())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "verify")
        .unwrap_or_else(|| panic!("a verify record: {json}"));
    (record["data"].clone(), run(&args, code).0)
}

fn verify(file: &str, code: i32) -> (Value, String) {
    verify_with(file, &[], code)
}

#[test]
fn verify_meets_a_situation_only_a_search_reached_as_check_does() {
    // check: met (the first test here); verify: met too, by the same searches.
    let (v, text) = verify(FIXTURE, 0);
    assert_eq!(v["matched"], true, "{v}");
    assert_eq!(v["found"], "holds", "{v}");
    // The premise: no seed went there.
    assert_eq!(names(&v["situations"]), Vec::<&str>::new(), "{v}");
    assert_eq!(names(&v["situations_missing"]), Vec::<&str>::new(), "{v}");
    let by_search: Vec<(&str, Vec<&str>)> = (v["situations_by_searches"].as_array())
        .unwrap_or_else(|| panic!("situations_by_searches: {v}"))
        .iter()
        .map(|e| (e["situation"].as_str().unwrap_or(""), names(&e["searches"])))
        .collect();
    for sit in ["publish-retried", "duplicate-publish", "inbox-hit"] {
        assert!(by_search.contains(&(sit, vec!["exhaustive"])), "{sit}: {v}");
    }
    assert_eq!(v["portfolio"]["exhaustive"]["max_faults"], 1, "{v}");
    let h = &v["hazards"][0];
    assert_eq!(h["id"], WARNING, "{v}");
    assert_eq!(h["reached"], true, "{h}");
    assert_eq!(h["reached_by_searches"], serde_json::json!(["exhaustive"]));
    // The text says it in check's words.
    for line in [
        "situations reached by the searches alone: publish-retried (exhaustive search), duplicate-publish (exhaustive search), inbox-hit (exhaustive search)\n",
        "reached by no seed but by exhaustive search (duplicate-publish): the verdict covers it\n",
        "exhaustive search to fault bound 1: 5 of 5 schedules, none failed\n",
        "1 of 1 scenarios match their expectation",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // The warning alone, too, as check meets it (the second test here).
    let (w, _) = verify(&variant("verify-warning-only", ""), 0);
    assert_eq!(w["matched"], true, "{w}");
}

#[test]
fn a_situation_nothing_reached_is_a_mismatch_in_verify_and_check_in_the_same_words() {
    let file = variant(
        "verify-reached-by-none",
        r#"situations = ["duplicate-publish", "redelivered-after-inbox-cleanup"]"#,
    );
    let (json, _) = run(&["check", &file, "--no-regressions", "--json"], 0);
    let e = expect_record(&json).unwrap_or_else(|| panic!("an expect record: {json}"));
    let (v, text) = verify(&file, 1);
    assert_eq!(v["matched"], false, "{v}");
    // Only the situation no search reached is missing, in check's words.
    assert_eq!(v["mismatch"], e["data"]["mismatch"], "{v}\n{e}");
    assert_eq!(
        v["mismatch"], "situations not reached: redelivered-after-inbox-cleanup",
        "{v}"
    );
    assert_eq!(
        names(&v["situations_missing"]),
        ["redelivered-after-inbox-cleanup"]
    );
    assert!(
        text.contains("MISMATCH: situations not reached: redelivered-after-inbox-cleanup\n"),
        "{text}"
    );
}

#[test]
fn a_file_that_states_its_strategy_is_judged_by_its_seeds_in_both() {
    // `run.strategy = "seeds"`: check runs no portfolio, so neither does verify.
    let file = rewritten(
        "verify-seeds-only",
        "runs = 20\n",
        "runs = 20\nstrategy = \"seeds\"\n",
    );
    let want = "situations not reached: duplicate-publish, inbox-hit";
    let (json, _) = run(&["check", &file, "--no-regressions", "--json"], 0);
    let e = expect_record(&json).unwrap_or_else(|| panic!("an expect record: {json}"));
    assert_eq!(e["data"]["mismatch"], want, "{e}");
    let (v, text) = verify(&file, 1);
    assert_eq!(v["mismatch"], want, "{v}");
    assert_eq!(v.get("portfolio"), None, "{v}");
    assert!(!text.contains("searches ran too"), "{text}");
}

#[test]
fn a_file_whose_seeds_fail_as_it_expects_runs_no_search_in_verify() {
    // A seed's failure is the verdict in both commands, whatever a search
    // finds: no search, no new field, the cost it was.
    let (v, _) = verify_with("payment-new-key-per-retry", &["--max-runs", "300"], 0);
    assert_eq!(v["matched"], true, "{v}");
    assert_eq!(v["found"], "violation", "{v}");
    assert!(v["lowest_failing_seed"].is_u64(), "{v}");
    assert_eq!(v.get("portfolio"), None, "{v}");
    assert_eq!(v.get("situations_by_searches"), None, "{v}");
}

#[test]
fn a_holding_file_its_seeds_meet_runs_the_searches_in_verify_too() {
    // No seed failed, so a search may: verify runs them, as check does.
    let (v, text) = verify_with("payment-stable-key", &["--max-runs", "300"], 0);
    assert_eq!(v["matched"], true, "{v}");
    assert_eq!(v["portfolio"]["found_by"], Value::Null, "{v}");
    assert_eq!(v["portfolio"]["exhaustive"]["found"], Value::Null, "{v}");
    assert_eq!(v["portfolio"]["coverage"]["schedules"], 75, "{v}");
    // They found nothing and reached nothing the seeds did not: one line
    // says so, where the JSON above keeps every part.
    assert!(
        text.contains(
            "check's two searches found nothing the seeds missed: exhaustive to fault bound 2 (75 of 75 schedules), coverage-guided (75 of 75)\n"
        ),
        "{text}"
    );
    assert!(!text.contains("searches ran too"), "{text}");
    assert!(!text.contains("exhaustive search to fault bound"), "{text}");
}

/// A file that expects to hold, whose 20 seeds hold and meet its
/// `[expect]`, and whose violation only the coverage-guided search finds.
const LOST: &str = "tests/fixtures/expect_reach/lost-only-by-a-search.toml";

#[test]
fn a_violation_only_a_search_finds_in_a_file_its_seeds_meet_fails_verify_as_check() {
    let want = "expected holds, found violation of no-lost-effect";
    // The premise: the seeds alone meet the file.
    let seeds = ["check", LOST, "--no-regressions", "--strategy", "seeds"];
    let (json, _) = run(&[&seeds[..], &["--json"]].concat(), 0);
    assert_eq!(expect_record(&json), None, "{json}");
    // check, with its searches, does not, and exits 1.
    let (json, _) = run(&["check", LOST, "--no-regressions", "--json"], 1);
    let e = expect_record(&json).unwrap_or_else(|| panic!("an expect record: {json}"));
    assert_eq!(e["data"]["mismatch"], want, "{e}");
    assert_eq!(summary(&json)["portfolio"]["found_by"], "coverage");
    // verify: the same reason, the same exit code, no seed named.
    let (v, text) = verify(LOST, 1);
    assert_eq!(v["matched"], false, "{v}");
    assert_eq!(v["mismatch"], e["data"]["mismatch"], "{v}\n{e}");
    assert_eq!(v["found"], "violation", "{v}");
    assert_eq!(v["invariant"], "no-lost-effect", "{v}");
    assert_eq!(v["lowest_failing_seed"], Value::Null, "{v}");
    assert_eq!(v["portfolio"]["found_by"], "coverage", "{v}");
    for line in [
        "no seed failed, so check's two searches ran too, as check runs them:\n",
        "coverage-guided search: violation within 5 schedules of 5: violation of no-lost-effect",
        &format!("MISMATCH: {want}\n"),
        "0 of 1 scenarios match their expectation, 1 do not",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // No seed replays it: its schedule and record are shown, as check shows
    // them, and without a regression folder the check that shows it shrunk.
    let record = &v["portfolio"]["record"];
    assert!(record.is_object(), "{v}");
    for line in [
        "    coverage-guided schedule #5:\n".to_string(),
        format!("    record: {record}\n"),
        format!("    repro: `idemsim check {LOST}` runs the same searches and shows it shrunk; add --repro-out FILE to write it\n"),
    ] {
        assert!(text.contains(&line), "{line}: {text}");
    }
    assert_eq!(summary(&json)["portfolio"]["record"], *record);
}

/// [`verify_with`] of `file` with `--jobs 1`, which `--jobs 2` must equal:
/// the verify record and the text.
fn verify_same_for_any_jobs(file: &str, code: i32) -> (Value, String) {
    let one = verify_with(file, &["--jobs", "1"], code);
    assert_eq!(one, verify_with(file, &["--jobs", "2"], code));
    one
}

#[test]
fn what_verify_searched_in_a_file_its_seeds_meet_is_the_same_for_any_jobs() {
    let (v, text) = verify_same_for_any_jobs(LOST, 1);
    assert_eq!(v["portfolio"]["found_by"], "coverage", "{v}");
    assert!(text.contains("MISMATCH"), "{text}");
}

#[test]
fn what_verify_searched_is_the_same_for_any_jobs() {
    let (v, text) = verify_same_for_any_jobs(FIXTURE, 0);
    assert!(v["situations_by_searches"].is_array(), "{v}");
    assert!(text.contains("searches ran too"), "{text}");
}

#[test]
fn a_failure_only_a_search_found_is_the_verdict_in_both_and_names_no_seed() {
    // No inbox: the duplicate publish exhaustive search makes takes effect twice.
    let file = rewritten(
        "verify-no-inbox",
        r#"handler = "inbox-same-tx""#,
        r#"handler = "effect""#,
    );
    let want = "expected holds, found violation of no-duplicate-effect";
    let (json, _) = run(&["check", &file, "--no-regressions", "--json"], 1);
    let e = expect_record(&json).unwrap_or_else(|| panic!("an expect record: {json}"));
    assert_eq!(e["data"]["mismatch"], want, "{e}");
    let (v, text) = verify(&file, 1);
    assert_eq!(v["mismatch"], want, "{v}");
    assert_eq!(v["found"], "violation", "{v}");
    assert_eq!(v["invariant"], "no-duplicate-effect", "{v}");
    // The failing schedule is exhaustive search's, not a seed.
    assert_eq!(v["lowest_failing_seed"], Value::Null, "{v}");
    assert_eq!(v["portfolio"]["found_by"], "exhaustive", "{v}");
    assert!(
        text.contains("exhaustive search to fault bound 1: violation within"),
        "{text}"
    );
}

/// A file that expects a violation no seed and neither of `check`'s
/// searches finds, while a coverage-guided search of the whole range from
/// seed 0 (what `verify` ran after the seeds before) does.
const MISSED: &str = "tests/fixtures/expect_reach/violation-check-searches-miss.toml";

#[test]
fn a_violation_the_seeds_and_checks_searches_miss_is_unmet_in_verify_as_in_check() {
    let want = "expected violation, found holds";
    let (json, _) = run(&["check", MISSED, "--no-regressions", "--json"], 0);
    let e = expect_record(&json).unwrap_or_else(|| panic!("an expect record: {json}"));
    assert_eq!(e["data"]["mismatch"], want, "{e}");
    let s = summary(&json);
    assert_eq!(s["portfolio"]["found_by"], Value::Null, "{s}");
    // verify judges it by the same schedules: not met, for the same reason.
    let (v, text) = verify(MISSED, 1);
    assert_eq!(v["matched"], false, "{v}");
    assert_eq!(v["mismatch"], e["data"]["mismatch"], "{v}\n{e}");
    assert_eq!(v["strategy"], "seeds", "{v}");
    assert_eq!(v["schedules"], 56, "{v}");
    assert_eq!(v["portfolio"], s["portfolio"], "{v}\n{s}");
    assert!(text.contains(&format!("MISMATCH: {want}\n")), "{text}");
}

#[test]
fn the_check_a_search_failure_names_runs_the_same_searches_on_the_same_seeds() {
    // Another range than the file's: the check named must sweep it too.
    let (v, text) = verify_with(LOST, &["--runs", "24"], 1);
    let line = format!(
        "repro: `idemsim check {LOST} --seeds 0..24` runs the same searches and shows it shrunk"
    );
    assert!(text.contains(&line), "{line}: {text}");
    let (json, _) = run(
        &[
            "check",
            LOST,
            "--seeds",
            "0..24",
            "--no-regressions",
            "--json",
        ],
        1,
    );
    let s = summary(&json);
    assert_eq!(
        s["portfolio"]["found_by"], v["portfolio"]["found_by"],
        "{s}"
    );
    assert_eq!(
        s["portfolio"]["record"], v["portfolio"]["record"],
        "{s}\n{v}"
    );
}
