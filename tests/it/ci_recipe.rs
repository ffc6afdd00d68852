//! The CI recipe of docs/ci.md, run against the example user folder
//! `examples/ci/` copied into a scratch folder that stands for the user's
//! repository: `idemsim verify scenarios` over the folder, and the regression
//! database `.idemsim/regressions/` it keeps: the first failing run records
//! the failure, the next replays it first, a fixed design reports it fixed, a
//! regression that no longer means the same run is stale, and none is
//! silently dropped.

use crate::support;

use std::path::{Path, PathBuf};
use support::{root, run_in, scratch};

const HOLDING: &str = "scenarios/order-events.toml";

/// A copy of examples/ci/scenarios in a fresh folder: the user's repository.
fn user_repo(name: &str) -> PathBuf {
    let repo = scratch(&format!("ci_recipe/{name}"));
    let from = root().join("examples/ci/scenarios");
    std::fs::create_dir_all(repo.join("scenarios")).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, repo.join("scenarios").join(p.file_name().unwrap())).unwrap();
    }
    repo
}

/// The design of order-events with its inbox row moved out of the effect's
/// transaction (`broken`), or back in.
fn set_broken(repo: &Path, broken: bool) {
    let path = repo.join(HOLDING);
    let text = std::fs::read_to_string(&path).unwrap();
    let (from, to) = if broken {
        (
            r#"handler = "inbox-same-tx""#,
            r#"handler = "inbox-separate-tx""#,
        )
    } else {
        (
            r#"handler = "inbox-separate-tx""#,
            r#"handler = "inbox-same-tx""#,
        )
    };
    assert!(text.contains(from));
    std::fs::write(&path, text.replace(from, to)).unwrap();
}

/// Whether the output opens with the replay of regression `shown`, still failing.
fn still_fails_first(out: &str, shown: &str) -> bool {
    out.lines()
        .next()
        .is_some_and(|l| l.starts_with(&format!("regression {shown}: still fails")))
}

fn regressions(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn verify_a_folder_records_replays_first_and_reports_fixed() {
    let repo = user_repo("lifecycle");
    let db = repo.join(".idemsim/regressions");
    // The folder as shipped: one design holds with load-bearing protections,
    // one known-broken design breaks as expected; nothing is recorded.
    let (out, _) = run_in(&repo, &["verify", "scenarios"], &[], 0);
    assert!(
        out.contains(
            "3 of 3 scenarios match their expectation; 7 of 7 protections are load-bearing"
        ),
        "{out}"
    );
    assert!(
        regressions(&db).is_empty(),
        "an expected violation is no regression"
    );

    // Someone "simplifies" the consumer: the first run records the failure.
    set_broken(&repo, true);
    let (out, _) = run_in(&repo, &["verify", "scenarios"], &[], 1);
    let files = regressions(&db);
    assert_eq!(files.len(), 1, "{out}");
    assert!(files[0].starts_with("order-events-") && files[0].ends_with(".json"));
    let shown = format!(".idemsim/regressions/{}", files[0]);
    assert!(
        out.contains(&format!(
            "recorded regression {shown}: it is replayed first from now on"
        )),
        "{out}"
    );
    assert!(
        out.contains("MISMATCH: expected holds, found violation"),
        "{out}"
    );
    assert!(
        out.contains("0 replayed (0 still fail, 0 fixed, 0 stale), 1 recorded"),
        "{out}"
    );

    // The second run replays it before its sweep: still fails, nothing new written.
    let (out, _) = run_in(&repo, &["verify", "scenarios"], &[], 1);
    assert!(
        out.contains(&format!("regression {shown}: still fails: violation of")),
        "{out}"
    );
    assert!(
        out.contains("1 replayed (1 still fail, 0 fixed, 0 stale), 0 recorded"),
        "{out}"
    );
    assert_eq!(regressions(&db), files, "deduplicated");

    // `check` of the scenario replays it first too, before its own summary.
    let (out, _) = run_in(&repo, &["check", HOLDING, "--runs", "50"], &[], 1);
    assert!(still_fails_first(&out, &shown), "{out}");

    // The design is fixed: the regression replays against the new text and holds.
    set_broken(&repo, false);
    let (out, _) = run_in(&repo, &["verify", "scenarios"], &[], 0);
    assert!(
        out.contains(&format!(
            "regression {shown}: fixed: it holds now (scenario changed since it was recorded: `consumer.handler` changed from \"inbox-separate-tx\" to \"inbox-same-tx\")"
        )),
        "{out}"
    );
    assert!(
        out.contains("1 replayed (0 still fail, 1 fixed, 0 stale), 0 recorded"),
        "{out}"
    );
    // Kept: it goes on guarding against the failure's return.
    assert_eq!(regressions(&db), files);
}

#[test]
fn a_regression_that_can_no_longer_mean_its_run_is_stale_and_reported() {
    let repo = user_repo("stale");
    let db = repo.join(".idemsim/regressions");
    set_broken(&repo, true);
    run_in(&repo, &["check", HOLDING, "--runs", "100"], &[], 1);
    let files = regressions(&db);
    assert_eq!(files.len(), 1);
    let path = db.join(&files[0]);
    let shown = format!(".idemsim/regressions/{}", files[0]);

    // Written by another idemsim version: its decisions may mean another run.
    let text = std::fs::read_to_string(&path).unwrap();
    let old = text.replace(
        &format!("\"idemsim\": \"{}\"", env!("CARGO_PKG_VERSION")),
        "\"idemsim\": \"0.0.1\"",
    );
    assert_ne!(old, text);
    std::fs::write(&path, old).unwrap();
    let (out, _) = run_in(&repo, &["check", HOLDING, "--runs", "100"], &[], 1);
    assert!(
        out.starts_with(&format!(
            "regression {shown}: stale: written by idemsim 0.0.1"
        )),
        "{out}"
    );
    // The sweep finds the same failure again and records it anew, by this version.
    assert!(
        out.contains(&format!("recorded regression {shown}")),
        "{out}"
    );
    assert_eq!(regressions(&db), files);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    // Its scenario file is gone: verify reports it, exits as the scenarios do.
    std::fs::write(&path, text).unwrap();
    std::fs::remove_file(repo.join(HOLDING)).unwrap();
    let (out, _) = run_in(&repo, &["verify", "scenarios", "--no-ablations"], &[], 0);
    assert!(
        out.contains(&format!(
            "regression {shown}: stale: its scenario file {HOLDING} is gone; delete it"
        )),
        "{out}"
    );
    assert!(
        out.contains("1 replayed (0 still fail, 0 fixed, 1 stale)"),
        "{out}"
    );
    // Not a JSON file of ours: stale too, never a crash.
    std::fs::write(db.join("notes.json"), "{ not json").unwrap();
    let (out, _) = run_in(
        &repo,
        &["verify", "scenarios", "--no-ablations", "--json"],
        &[],
        0,
    );
    let summary = out.lines().last().unwrap();
    let v: serde_json::Value = serde_json::from_str(summary).unwrap();
    assert_eq!(v["type"], "verify_summary");
    assert_eq!(v["data"]["regressions"]["stale"], 2, "{summary}");
    assert!(out.contains(r#""status":"stale""#));
}

#[test]
fn the_folder_is_configurable_and_can_be_turned_off() {
    let repo = user_repo("flags");
    set_broken(&repo, true);
    let default = repo.join(".idemsim/regressions");
    run_in(
        &repo,
        &["verify", HOLDING, "--no-regressions", "--no-ablations"],
        &[],
        1,
    );
    assert!(!default.exists(), "--no-regressions writes nothing");
    run_in(
        &repo,
        &[
            "verify",
            HOLDING,
            "--regressions",
            "ci/db",
            "--no-ablations",
        ],
        &[],
        1,
    );
    assert_eq!(regressions(&repo.join("ci/db")).len(), 1);
    run_in(
        &repo,
        &["check", HOLDING, "--runs", "100"],
        &[("IDEMSIM_REGRESSIONS", "env-db")],
        1,
    );
    assert_eq!(regressions(&repo.join("env-db")).len(), 1);
    assert!(!default.exists());
    // JSON: a `regression` record per replayed file, before the summary.
    let (out, _) = run_in(
        &repo,
        &[
            "check",
            HOLDING,
            "--runs",
            "10",
            "--json",
            "--regressions",
            "ci/db",
        ],
        &[],
        1,
    );
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "regression");
    assert_eq!(first["data"]["status"], "still-fails");
    assert_eq!(first["data"]["scenario"], "order-events");
    // Built-in scenarios are idemsim's own: never recorded.
    run_in(
        &repo,
        &["check", "payment-retry-without-key", "--runs", "50"],
        &[],
        1,
    );
    assert!(!default.exists());
}

#[test]
fn inside_idemsims_own_checkout_nothing_is_recorded_by_default() {
    let repo = user_repo("checkout");
    set_broken(&repo, true);
    let scenario = repo.join(HOLDING);
    let before = regressions(&root().join(".idemsim/regressions"));
    // Run from the checkout's root, as idemsim's tests and developers do.
    run_in(
        root(),
        &["check", &scenario.to_string_lossy(), "--runs", "100"],
        &[],
        1,
    );
    assert_eq!(regressions(&root().join(".idemsim/regressions")), before);
}

#[test]
fn verify_takes_folders_and_refuses_an_empty_one() {
    let repo = user_repo("folders");
    let (out, _) = run_in(
        &repo,
        &[
            "verify",
            "scenarios",
            "payment-stable-key",
            "--max-runs",
            "20",
            "--no-ablations",
        ],
        &[],
        0,
    );
    assert!(out.contains("4 of 4 scenarios match"), "{out}");
    std::fs::create_dir_all(repo.join("empty")).unwrap();
    let (_, err) = run_in(&repo, &["verify", "empty"], &[], 2);
    assert!(
        err.contains("error: the folder `empty` holds no scenario .toml files"),
        "{err}"
    );
    assert!(err.contains("help: "), "{err}");
}

/// A design searched coverage-guided (`run.strategy = "coverage"`) has no
/// failing seed to store: its regression is the failing schedule's decisions,
/// recorded by `check` and `verify` alike and replayed first from then on.
#[test]
fn a_coverage_guided_failure_is_recorded_by_its_decisions_and_replayed() {
    let repo = scratch("ci_recipe/coverage");
    let db = repo.join(".idemsim/regressions");
    std::fs::create_dir_all(repo.join("scenarios")).unwrap();
    let text =
        std::fs::read_to_string(root().join("tests/fixtures/strategy/coverage-low-loss.toml"))
            .unwrap();
    // Someone believes the silent give-up is safe at this loss rate.
    let believed = text.replace(
        "verdict = \"violation\"\ninvariant = \"no-lost-effect\"",
        "verdict = \"holds\"",
    );
    assert_ne!(believed, text);
    let file = "scenarios/low-loss.toml";
    std::fs::write(repo.join(file), believed).unwrap();

    let (out, _) = run_in(&repo, &["check", file], &[], 1);
    assert!(
        out.contains("violation found by coverage-guided search"),
        "{out}"
    );
    let files = regressions(&db);
    assert_eq!(files.len(), 1, "{out}");
    let shown = format!(".idemsim/regressions/{}", files[0]);
    assert!(
        out.contains(&format!("recorded regression {shown}")),
        "{out}"
    );
    let repro: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(db.join(&files[0])).unwrap()).unwrap();
    assert!(repro["seed"].is_null(), "no seed replays it: {repro}");

    // The next run replays it first; verify finds it again and writes nothing new.
    let (out, _) = run_in(&repo, &["check", file], &[], 1);
    assert!(still_fails_first(&out, &shown), "{out}");
    let (out, _) = run_in(&repo, &["verify", "scenarios", "--no-ablations"], &[], 1);
    assert!(
        out.contains(&format!("regression {shown}: still fails")),
        "{out}"
    );
    assert_eq!(regressions(&db), files, "deduplicated");
}

#[test]
fn a_variants_failure_is_replayed_for_that_variant_not_for_the_file() {
    // Exploring with --set breaks the design (here by the very ablation its
    // [expect] names): recorded for that variant, replayed when the same
    // variant is checked again, and no reason to call the file a mismatch.
    let repo = user_repo("variant");
    let db = repo.join(".idemsim/regressions");
    let variant = ["check", HOLDING, "--set", "consumer.handler=effect"];
    let (out, _) = run_in(&repo, &[&variant[..], &["--runs", "200"]].concat(), &[], 1);
    let files = regressions(&db);
    assert_eq!(files.len(), 1, "{out}");
    let shown = format!(".idemsim/regressions/{}", files[0]);

    let (out, _) = run_in(&repo, &["verify", "scenarios", "--no-ablations"], &[], 0);
    assert!(
        out.contains("3 of 3 scenarios match their expectation"),
        "{out}"
    );
    assert!(!out.contains(&shown), "{out}");
    let (out, _) = run_in(&repo, &["check", HOLDING, "--runs", "50"], &[], 0);
    assert!(!out.contains(&shown), "{out}");

    let (out, _) = run_in(&repo, &[&variant[..], &["--runs", "50"]].concat(), &[], 1);
    assert!(still_fails_first(&out, &shown), "{out}");
}

#[test]
fn a_design_being_explored_needs_no_expect_until_verify() {
    let repo = user_repo("explore");
    let text = std::fs::read_to_string(repo.join(HOLDING)).unwrap();
    let start = text.find("[expect]").unwrap();
    let end = start + text[start..].find("\n]\n").unwrap() + 3;
    let explored = format!("{}{}", &text[..start], &text[end..]);
    assert!(!explored.contains("expect"), "{explored}");
    let path = repo.join("scenarios/explored.toml");
    std::fs::write(&path, &explored).unwrap();
    let file = "scenarios/explored.toml";

    // Every command that runs a design takes it as it is.
    run_in(&repo, &["check", file, "--runs", "100"], &[], 0);
    run_in(&repo, &["replay", file, "--seed", "3"], &[], 0);
    run_in(&repo, &["shrink", file, "--seed", "3"], &[], 0);
    let (out, _) = run_in(
        &repo,
        &["list", "--scenarios", "scenarios", "--json"],
        &[],
        0,
    );
    let line = out.lines().find(|l| l.contains("\"explored\"")).unwrap();
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert!(v["data"]["expected"].is_null(), "{line}");

    // verify holds a file to its [expect]: none is a mismatch that says
    // what the sweep found and what to write.
    let (out, _) = run_in(&repo, &["verify", file, "--runs", "100"], &[], 1);
    assert!(out.contains("no [expect]"), "{out}");
    assert!(
        out.contains("MISMATCH: the file states no [expect]; to hold it to what this sweep found, add an [expect] table with verdict = \"holds\""),
        "{out}"
    );

    // A violation of a design with no stated expectation is no known
    // failure: it is recorded and replayed first.
    let broken = explored.replace(
        r#"handler = "inbox-same-tx""#,
        r#"handler = "inbox-separate-tx""#,
    );
    assert_ne!(broken, explored);
    std::fs::write(&path, broken).unwrap();
    let (out, _) = run_in(&repo, &["verify", file, "--runs", "200"], &[], 1);
    assert!(
        out.contains("add an [expect] table with verdict = \"violation\" and invariant = \""),
        "{out}"
    );
    assert!(
        out.contains("recorded regression .idemsim/regressions/explored-"),
        "{out}"
    );
}
