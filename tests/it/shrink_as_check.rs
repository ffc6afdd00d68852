//! `shrink FILE` shrinks the failure `check FILE` shows, found by the same
//! seeds and searches (`idemsim::testing::shown`): the same trace, the same
//! record, named in `check`'s words; `verify` records a file's own
//! coverage-guided failure from that search's record; and a search's
//! failure whose run is too long to record is said, never dropped.

use crate::support::{idemsim, root, run_in, scratch};
use idemsim::testing::portfolio::Part;
use idemsim::testing::shown::{check_failure, CheckFailure};
use serde_json::Value;
use sim::{Outcome, SeedRange};
use std::sync::atomic::AtomicBool;

/// Seeds miss; the coverage-guided search of check's portfolio finds it.
const BY_COVERAGE: &str = "tests/fixtures/expect_reach/lost-only-by-a-search.toml";
/// Seeds miss; exhaustive search at fault bound 3 finds it (check's
/// choice), the coverage-guided search too.
const BY_EXHAUSTIVE: &str = "payment-give-up-silently-low-loss";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The repro file's decisions, without what names where it was written.
fn decisions(path: &std::path::Path) -> Value {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(v["seed"].is_null(), "a search's failure has no seed: {v}");
    v["choices"].clone()
}

#[test]
fn shrink_gives_the_trace_and_record_check_shows_for_a_failure_only_a_search_found() {
    for (scenario, what) in [
        (BY_COVERAGE, "coverage-guided schedule #5"),
        (BY_EXHAUSTIVE, "exhaustive schedule with at most 3 faults"),
    ] {
        let dir = scratch(&format!(
            "shrink_as_check/{}",
            what.replace([' ', '#'], "-")
        ));
        let (by_check, by_shrink) = (dir.join("check.json"), dir.join("shrink.json"));
        let check = idemsim(&[
            "check",
            scenario,
            "--no-regressions",
            "--repro-out",
            by_check.to_str().unwrap(),
        ]);
        assert_eq!(check.status.code(), Some(1), "{}", text(&check.stdout));
        let check_out = text(&check.stdout);
        assert!(check_out.contains(&format!("\n{what}:\n")), "{check_out}");
        let shown = check_out
            .split("shrunk (docs/shrinking.md):\n")
            .nth(1)
            .expect("check shows the failure shrunk");
        let shrink = idemsim(&["shrink", scenario, "--out", by_shrink.to_str().unwrap()]);
        assert_eq!(shrink.status.code(), Some(1), "{}", text(&shrink.stderr));
        assert_eq!(
            text(&shrink.stdout),
            shown,
            "{scenario}: the trace check shows"
        );
        assert_eq!(
            decisions(&by_shrink),
            decisions(&by_check),
            "{scenario}: the record check writes"
        );
        let err = text(&shrink.stderr);
        assert!(
            err.contains(&format!("as in `idemsim check`: {what}")),
            "{err}"
        );
    }
}

/// Where check's seeds and searches find nothing, neither does shrink (a
/// search of its own found this file's violation in its 56th schedule).
#[test]
fn shrink_finds_nothing_where_check_finds_nothing() {
    let file = "tests/fixtures/expect_reach/violation-check-searches-miss.toml";
    let out = idemsim(&["shrink", file]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(
        text(&out.stdout),
        "violation-check-searches-miss: neither its 56 seeds nor check's two searches after them find a failure, nothing to shrink\n"
    );
}

/// `verify` of a file that asks for the coverage-guided search records
/// that search's failure from its own record, and names it as `check`
/// over the same seeds does. It used to search again over the file's
/// `run.runs` (20 schedules here, which find nothing) and record nothing.
#[test]
fn verify_records_the_coverage_failure_it_found_not_another_search() {
    let dir = scratch("shrink_as_check/verify-coverage");
    std::fs::create_dir(dir.join(".idemsim")).unwrap();
    // The fixture with an [expect] its violation breaks: one to record.
    let fixture = root().join("tests/fixtures/strategy/coverage-low-loss.toml");
    let text = std::fs::read_to_string(fixture)
        .unwrap()
        .replace(
            "verdict = \"violation\"\ninvariant = \"no-lost-effect\"",
            "verdict = \"holds\"",
        )
        .replace("runs = 2000", "runs = 20");
    assert!(text.contains("verdict = \"holds\"") && text.contains("runs = 20\n"));
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let seeds = ["--seeds", "7..407"];
    let verify = [&["verify", "s.toml", "--no-ablations"][..], &seeds].concat();
    let (out, _) = run_in(&dir, &verify, &[], 1);
    let db = dir.join(".idemsim/regressions");
    let recorded: Vec<_> = std::fs::read_dir(&db)
        .map(|rd| rd.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert_eq!(recorded.len(), 1, "one regression recorded: {out}");
    let check = [
        &[
            "check",
            "s.toml",
            "--no-regressions",
            "--repro-out",
            "c.json",
        ][..],
        &seeds,
    ];
    let (shown, _) = run_in(&dir, &check.concat(), &[], 1);
    let what = shown
        .split(" · shrunk from ")
        .nth(1)
        .and_then(|rest| rest.split(" · ").next())
        .unwrap_or_else(|| panic!("check names the schedule: {shown}"));
    assert!(what.starts_with("coverage-guided schedule #"), "{what}");
    assert!(out.contains(&format!("    {what}:\n")), "{what}\n{out}");
    assert_eq!(decisions(&recorded[0]), decisions(&dir.join("c.json")));
}

/// A search's failing run that makes more decisions than a record holds
/// (a bound of 10 values here, `sim::with_record_bound`): it is still
/// `check`'s failure, with no record, and the note every command prints
/// for it says what happened and what to do.
#[test]
fn a_search_failure_too_long_to_record_is_named_with_what_to_do() {
    let path = root().join(BY_COVERAGE);
    let entry = idemsim::catalog::locate(path.to_str().unwrap()).unwrap();
    let s = idemsim::catalog::load_entry(&entry, &[]).unwrap();
    let stop = AtomicBool::new(false);
    let seeds = SeedRange { start: 0, end: 20 };
    let shown = |bound| {
        let found = sim::with_record_bound(bound, || {
            check_failure(&s, "idemsim replay s.toml", seeds, 1, &stop).unwrap()
        });
        match found {
            Some(CheckFailure::Search(f)) => f,
            other => panic!("check shows a search's failure: {other:?}"),
        }
    };
    let whole = shown(sim::MAX_RECORDED_VALUES);
    assert!(whole.record.is_some());
    let cut = shown(10);
    assert_eq!((cut.part, cut.after), (Part::Coverage, whole.after));
    assert_eq!(
        cut.record, None,
        "a record cut at its bound replays another run"
    );
    assert!(matches!(&cut.outcome, Outcome::Violation(v) if v.invariant == "no-lost-effect"));
    let note = cut.unrecorded_note("s.toml");
    for part in [
        "coverage-guided schedule #5 fails (violation of no-lost-effect",
        "more decisions than a record holds (67108864 values), so nothing replays it",
        "not shrunk, traced, written to a repro file or recorded",
        "\nhelp: a failing seed replays without a record: sweep more seeds with `idemsim check s.toml --strategy seeds --runs N`",
    ] {
        assert!(note.contains(part), "{part}\n{note}");
    }
}
