//! The tests install nothing, and a check that cannot run says so where a
//! reader sees it (tests/it/support/tools.rs).

use crate::support::{root, scratch};
use std::process::Command;

/// The source files of the tests, but for the tidy check of this file.
fn test_sources() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root().join("tests")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable tests folder") {
            let path = entry.expect("entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() && name != "node_modules" && name != "snapshots" {
                dirs.push(path);
            } else if name.ends_with(".rs") || name.ends_with(".mjs") || name.ends_with(".py") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn no_test_installs_anything() {
    // What an install looks like in code: a package manager run, or the
    // script that runs them (which only .ci/run and a reader may call).
    const INSTALLS: &[&str] = &[
        "\"apt-get\"",
        "\"npm\"",
        "\"pip\"",
        "\"pip3\"",
        "setup.sh\")",
    ];
    let mut found = Vec::new();
    for path in test_sources() {
        if path.ends_with("tests/it/skips.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable source");
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if let Some(what) = INSTALLS.iter().find(|w| code.contains(*w)) {
                found.push(format!("{}:{}: runs {what}", path.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "tests must install nothing (.ci/run does):\n{}",
        found.join("\n")
    );
}

/// Runs one test of this very binary with `env`, without `--nocapture`.
fn run_self(test: &str, env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([test, "--exact", "--test-threads", "1"])
        .env_remove("CI");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the test binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_check_without_its_tool_prints_a_visible_skip_and_fails_in_ci() {
    let log = scratch("skips").join("skipped.txt");
    let _ = std::fs::remove_file(&log);
    let test = "html::the_run_report_works_in_a_real_browser";
    let no_browser = [
        ("IDEMSIM_CHROMIUM", "/nonexistent/chromium"),
        ("IDEMSIM_SKIP_LOG", log.to_str().unwrap()),
    ];
    let (ok, out) = run_self(test, &no_browser);
    assert!(ok, "a skip is not a failure outside CI: {out}");
    let line = "SKIPPED the_run_report_works_in_a_real_browser: Chromium is not installed; to run it: apt-get install -y chromium";
    assert!(
        out.contains(line),
        "the skip shows without --nocapture:\n{out}"
    );
    let logged = std::fs::read_to_string(&log).expect("the skip is logged");
    assert_eq!(logged.lines().count(), 1, "{logged}");

    let in_ci = [no_browser[0], no_browser[1], ("CI", "true")];
    let (ok, out) = run_self(test, &in_ci);
    assert!(!ok, "in CI a missing tool fails the check: {out}");
    assert!(out.contains("in CI every check must run"), "{out}");
}
