//! Regressions that last: keyed by the scenario's settings, not its text;
//! one file per failure whatever the order of `--set` or `--no-shrink`; the
//! folder found as git finds `.git`; a folder that cannot be written costs
//! a warning, not the verdict; what does not belong in the folder is exit 2.

use crate::support::{root, run_in, scratch};
use serde_json::Value;
use std::path::Path;

/// payment-retry-without-key without its `[expect]`: each violation is
/// one to record.
fn failing(path: &Path) {
    let text = std::fs::read_to_string(root().join("scenarios/payment-retry-without-key.toml"))
        .unwrap()
        .replace(
            "[expect]\nverdict = \"violation\"\ninvariant = \"no-duplicate-effect\"\n",
            "",
        );
    assert!(!text.contains("[expect]") && text.contains("timeout_ms = 10000"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

const SEEDS: &[&str] = &["--seeds", "0..200", "--strategy", "seeds"];

fn check<'a>(scenario: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    [&["check", scenario][..], SEEDS, more].concat()
}

#[test]
fn a_comment_or_key_order_changes_nothing_and_a_real_change_is_named() {
    let dir = scratch("regressions/meaning");
    std::fs::create_dir(dir.join(".idemsim")).unwrap();
    failing(&dir.join("s.toml"));
    run_in(&dir, &check("s.toml", &[]), &[], 1);
    let db = dir.join(".idemsim/regressions");
    let recorded = files(&db);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let shown = format!(".idemsim/regressions/{}", recorded[0]);
    // A comment, whitespace, a key moved and 10_000 for 10000: no change.
    let text = std::fs::read_to_string(dir.join("s.toml")).unwrap();
    assert!(text.contains("key = \"none\"\ntimeout_ms = 10000"));
    let edited = format!(
        "# a note\n{}",
        text.replace(
            "key = \"none\"\ntimeout_ms = 10000",
            "timeout_ms   =   10_000 # ms\nkey = \"none\""
        )
    );
    std::fs::write(dir.join("s.toml"), &edited).unwrap();
    let (out, _) = run_in(&dir, &check("s.toml", &[]), &[], 1);
    assert!(
        out.contains(&format!("regression {shown}: still fails")),
        "{out}"
    );
    assert!(!out.contains("scenario changed"), "{out}");
    assert_eq!(files(&db), recorded, "nothing new recorded");
    // The printed replay of the regression still works after the edit.
    run_in(&dir, &["replay", "s.toml", "--repro", &shown], &[], 1);
    // A real change is named, in text and JSON.
    std::fs::write(dir.join("s.toml"), edited.replace("10_000", "9000")).unwrap();
    let (out, _) = run_in(&dir, &check("s.toml", &["--json"]), &[], 1);
    let change = "`client.timeout_ms` changed from 10000 to 9000";
    let record: Value = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["type"] == "regression" && v["data"]["status"] != "recorded")
        .expect("a replayed regression");
    assert_eq!(record["data"]["scenario_changed"], true, "{out}");
    assert_eq!(record["data"]["changes"][0], change, "{out}");
    let (out, _) = run_in(&dir, &check("s.toml", &[]), &[], 1);
    assert!(
        out.contains(&format!(
            "(scenario changed since it was recorded: {change})"
        )),
        "{out}"
    );
    let (_, err) = run_in(&dir, &["replay", "s.toml", "--repro", &shown], &[], 2);
    assert!(err.contains(change), "{err}");
}

#[test]
fn the_same_failure_is_recorded_once_whatever_the_order_of_set_or_no_shrink() {
    let dir = scratch("regressions/once");
    std::fs::create_dir(dir.join(".idemsim")).unwrap();
    failing(&dir.join("s.toml"));
    let sets = [
        "--set",
        "client.timeout_ms=9000",
        "--set",
        "run.max_steps=100000",
    ];
    let swapped = [
        "--set",
        "run.max_steps=100000",
        "--set",
        "client.timeout_ms=9000",
    ];
    run_in(&dir, &check("s.toml", &sets), &[], 1);
    let db = dir.join(".idemsim/regressions");
    assert_eq!(files(&db).len(), 1);
    let (out, _) = run_in(&dir, &check("s.toml", &swapped), &[], 1);
    assert!(
        out.contains("still fails"),
        "the variant's regression replays: {out}"
    );
    run_in(
        &dir,
        &check("s.toml", &[&swapped[..], &["--no-shrink"]].concat()),
        &[],
        1,
    );
    assert_eq!(files(&db).len(), 1, "{:?}", files(&db));
    run_in(&dir, &check("s.toml", &["--no-shrink"]), &[], 1);
    run_in(&dir, &check("s.toml", &[]), &[], 1);
    assert_eq!(
        files(&db).len(),
        2,
        "one for the file as written: {:?}",
        files(&db)
    );
}

#[test]
fn the_folder_is_found_walking_up_from_the_scenario() {
    let project = scratch("regressions/walk");
    std::fs::create_dir(project.join(".idemsim")).unwrap();
    failing(&project.join("scenarios/deep/s.toml"));
    // From a subfolder of the project: its regressions, not the subfolder's.
    let sub = project.join("scenarios/deep");
    run_in(&sub, &check("s.toml", &[]), &[], 1);
    let db = project.join(".idemsim/regressions");
    assert_eq!(files(&db).len(), 1);
    assert!(!sub.join(".idemsim").exists());
    // From a scratch folder elsewhere, by path: the same folder, replayed.
    let elsewhere = scratch("regressions/walk-elsewhere");
    let path = sub.join("s.toml");
    let (out, _) = run_in(&elsewhere, &check(path.to_str().unwrap(), &[]), &[], 1);
    assert!(out.contains("still fails"), "{out}");
    assert!(!elsewhere.join(".idemsim").exists());
    assert_eq!(files(&db).len(), 1);
    // The environment variable, then the flag, override it.
    let env_db = elsewhere.join("env-db");
    let env = [("IDEMSIM_REGRESSIONS", env_db.to_str().unwrap())];
    run_in(&sub, &check("s.toml", &[]), &env, 1);
    assert_eq!(files(&env_db).len(), 1);
    run_in(
        &sub,
        &check("s.toml", &["--regressions", "flag-db"]),
        &env,
        1,
    );
    assert_eq!(files(&sub.join("flag-db")).len(), 1);
}

#[cfg(target_os = "linux")]
#[test]
fn a_folder_that_cannot_be_written_keeps_the_verdict_and_warns_after_it() {
    let dir = scratch("regressions/read-only");
    failing(&dir.join("s.toml"));
    // Under /proc nothing can be created, not even by root.
    let args = check(
        "s.toml",
        &["--regressions", "/proc/idemsim-regressions", "--json"],
    );
    let (out, err) = run_in(&dir, &args, &[], 1);
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "summary", "{out}");
    assert_eq!(last["data"]["verdict"], "violation", "{out}");
    let warning = err.lines().last().unwrap_or_default();
    assert!(
        warning.starts_with("warning: cannot write the regression /proc/idemsim-regressions/"),
        "{err}"
    );
    let args = check("s.toml", &["--regressions", "/proc/idemsim-regressions"]);
    let (out, err) = run_in(&dir, &args, &[], 1);
    assert!(out.contains("repro: idemsim replay"), "{out}");
    assert!(err.trim_end().ends_with("--no-regressions)"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn verify_warns_once_of_a_folder_that_cannot_be_written_whatever_the_scenarios() {
    let dir = scratch("regressions/read-only-verify");
    failing(&dir.join("a.toml"));
    failing(&dir.join("b.toml"));
    let args = [
        "verify",
        "a.toml",
        "b.toml",
        "--runs",
        "200",
        "--regressions",
        "/proc/idemsim-regressions",
    ];
    let (out, err) = run_in(&dir, &args, &[], 1);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("warning: cannot write the regression"))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning per command: {err}");
    assert!(
        warnings[0].contains(", nor 1 other failure (the verdicts above stand;"),
        "{err}"
    );
    // After the summary, as `check` says it.
    assert!(
        out.trim_end().lines().last().unwrap().contains("scenarios"),
        "{out}"
    );
    assert!(err.trim_end().ends_with("--no-regressions)"), "{err}");
}

/// Makes a stray entry at a path.
type Make = dyn Fn(&Path);

#[cfg(unix)]
#[test]
fn a_folder_or_a_broken_link_in_the_folder_is_exit_2_naming_it() {
    let dir = scratch("regressions/strays");
    failing(&dir.join("s.toml"));
    let db = dir.join(".idemsim/regressions");
    std::fs::create_dir_all(&db).unwrap();
    let cases: [(&str, &Make, &str); 3] = [
        ("sub", &|p| std::fs::create_dir(p).unwrap(), "a folder"),
        (
            "gone.json",
            &|p| std::os::unix::fs::symlink("nowhere.json", p).unwrap(),
            "a link to nothing",
        ),
        (
            "loop.json",
            &|p| std::os::unix::fs::symlink("loop.json", p).unwrap(),
            "a link that cannot be followed",
        ),
    ];
    for (name, make, what) in cases {
        let path = db.join(name);
        make(&path);
        let (_, err) = run_in(&dir, &check("s.toml", &[]), &[], 2);
        assert!(
            err.contains(&format!(".idemsim/regressions/{name}: {what}")),
            "{err}"
        );
        let _ = std::fs::remove_dir(&path).or_else(|_| std::fs::remove_file(&path));
    }
    run_in(&dir, &check("s.toml", &[]), &[], 1);
}

#[test]
fn a_regression_of_an_older_idemsim_gets_its_settings_with_a_note() {
    let dir = scratch("regressions/migrate");
    std::fs::create_dir(dir.join(".idemsim")).unwrap();
    failing(&dir.join("s.toml"));
    run_in(&dir, &check("s.toml", &[]), &[], 1);
    let db = dir.join(".idemsim/regressions");
    let path = db.join(&files(&db)[0]);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("settings");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (out, err) = run_in(&dir, &check("s.toml", &[]), &[], 1);
    assert!(out.contains("still fails"), "{out}");
    assert!(err.contains("its settings were added"), "{err}");
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(back["settings"]["client.timeout_ms"], 10000);
    // From now on a comment is no change.
    let text = std::fs::read_to_string(dir.join("s.toml")).unwrap();
    std::fs::write(dir.join("s.toml"), format!("# edited\n{text}")).unwrap();
    let (out, err) = run_in(&dir, &check("s.toml", &[]), &[], 1);
    assert!(
        !out.contains("scenario changed") && !err.contains("note:"),
        "{out}{err}"
    );
}

/// A regression an older idemsim wrote has no settings and a name made of
/// its overrides and decisions. Found again, the same failure is named by
/// its settings: the old file is renamed to that name as its settings are
/// added, so the failure is never recorded a second time beside it.
#[test]
fn an_older_regression_is_renamed_so_the_failure_found_again_is_not_a_second_file() {
    let dir = scratch("regressions/rename-old");
    std::fs::create_dir(dir.join(".idemsim")).unwrap();
    failing(&dir.join("s.toml"));
    run_in(&dir, &check("s.toml", &[]), &[], 1);
    let db = dir.join(".idemsim/regressions");
    let named = files(&db);
    assert_eq!(named.len(), 1, "{named:?}");
    // As an older idemsim left it: no settings, its own name.
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(db.join(&named[0])).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("settings");
    std::fs::remove_file(db.join(&named[0])).unwrap();
    let old = "s-00112233445566ff.json";
    assert_ne!(named[0], old);
    std::fs::write(db.join(old), serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (out, err) = run_in(&dir, &check("s.toml", &[]), &[], 1);
    assert_eq!(
        files(&db),
        named,
        "one file, under the name of its settings"
    );
    let renamed = format!("renamed .idemsim/regressions/{}", named[0]);
    assert!(err.contains(&renamed), "{err}");
    assert_eq!(err.matches("note:").count(), 1, "said in one line: {err}");
    assert!(out.contains("still fails"), "{out}");
    assert!(
        !out.contains("recorded regression"),
        "not recorded anew: {out}"
    );
    let back: Value =
        serde_json::from_str(&std::fs::read_to_string(db.join(&named[0])).unwrap()).unwrap();
    assert_eq!(back["settings"]["client.timeout_ms"], 10000);
    // Run again: nothing more to say, still one file.
    let (_, err) = run_in(&dir, &check("s.toml", &[]), &[], 1);
    assert!(!err.contains("note:"), "{err}");
    assert_eq!(files(&db), named);
}

#[test]
fn verify_records_a_failure_only_a_search_found_as_check_does_and_replays_it_next() {
    // The file expects to hold; its seeds do, the coverage-guided search
    // of check's portfolio loses a change: no seed replays that failure.
    let lost = root().join("tests/fixtures/expect_reach/lost-only-by-a-search.toml");
    let verify = ["verify", "lost.toml", "--no-ablations"];
    let folders: Vec<std::path::PathBuf> = ["verify", "check"]
        .iter()
        .map(|by| {
            let dir = scratch(&format!("regressions/searched-{by}"));
            std::fs::create_dir(dir.join(".idemsim")).unwrap();
            std::fs::copy(&lost, dir.join("lost.toml")).unwrap();
            dir
        })
        .collect();
    let (out, _) = run_in(&folders[0], &verify, &[], 1);
    let db = folders[0].join(".idemsim/regressions");
    let recorded = files(&db);
    assert_eq!(recorded.len(), 1, "{recorded:?}\n{out}");
    let shown = format!(".idemsim/regressions/{}", recorded[0]);
    let replay = format!("idemsim replay lost.toml --repro {shown}");
    for line in [
        "coverage-guided schedule #5:\n".to_string(),
        format!("recorded regression {shown}: it is replayed first from now on\n"),
        format!("repro: {replay}\n"),
        "regressions in .idemsim/regressions: 0 replayed (0 still fail, 0 fixed, 0 stale), 1 recorded".to_string(),
    ] {
        assert!(out.contains(&line), "{line}: {out}");
    }
    // The same file check records for it, shrunk alike.
    run_in(&folders[1], &["check", "lost.toml"], &[], 1);
    let by_check = folders[1].join(".idemsim/regressions");
    assert_eq!(files(&by_check), recorded);
    assert_eq!(
        std::fs::read_to_string(db.join(&recorded[0])).unwrap(),
        std::fs::read_to_string(by_check.join(&recorded[0])).unwrap()
    );
    // Its repro line replays the failure.
    let (trace, _) = run_in(
        &folders[0],
        &["replay", "lost.toml", "--repro", &shown],
        &[],
        1,
    );
    assert!(trace.contains("=> Violation of no-lost-effect"), "{trace}");
    // Next time it is replayed first, and not recorded again.
    let (json, _) = run_in(&folders[0], &[&verify[..], &["--json"]].concat(), &[], 1);
    let line: Value = json
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "verify")
        .unwrap_or_else(|| panic!("a verify record: {json}"));
    let statuses: Vec<&str> = (line["data"]["regressions"].as_array().unwrap().iter())
        .filter_map(|r| r["status"].as_str())
        .collect();
    assert_eq!(statuses, ["still-fails"], "{line}");
    assert!(line["data"]["portfolio"]["record"].is_object(), "{line}");
    assert_eq!(files(&db), recorded);
}
