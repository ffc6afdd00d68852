//! `check` judges `[expect] situations` and the design warnings' gaps by
//! every schedule its default portfolio ran: a situation only a search
//! reached counts as reached, and the summary says which search went
//! there. The fixture's 20 seeds lose no confirmation, exhaustive search
//! loses one on purpose (tests/fixtures/expect_reach/reached-by-a-search.toml).

use crate::support::{run, scratch, summary};
use serde_json::Value;

const FIXTURE: &str = "tests/fixtures/expect_reach/reached-by-a-search.toml";
const WARNING: &str = "idempotence-off-above-five-in-flight";

/// The fixture's text with its `[expect] situations` line replaced by
/// `line`, written into a scratch folder of its own.
fn variant(name: &str, line: &str) -> String {
    let text = std::fs::read_to_string(crate::support::root().join(FIXTURE)).expect("fixture");
    let old = r#"situations = ["duplicate-publish", "inbox-hit"]"#;
    assert!(text.contains(old), "the fixture's [expect] changed");
    let path = scratch(&format!("expect_reach/{name}")).join(format!("{name}.toml"));
    std::fs::write(&path, text.replace(old, line)).expect("write the variant");
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
