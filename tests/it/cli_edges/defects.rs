//! Defects found by trying the command line as a user would (issue 44):
//! each test failed before its fix.

use super::helpers::shards;
use crate::support::{case, idemsim_bin, root, run_case as check, scratch};
use std::io::Write;
use std::process::{Command, Stdio};

/// D8: a shard that names its scenario by an absolute path inside the
/// current folder merges (it was refused as "not a path inside").
#[test]
fn merge_takes_an_absolute_scenario_path_inside_the_current_folder() {
    let dir = scratch("cli_edges/merge-absolute");
    let scenario = dir.join("mine.toml");
    let source = root().join("scenarios/payment-retry-without-key.toml");
    std::fs::copy(source, &scenario).expect("copy a scenario");
    let absolute = scenario.canonicalize().unwrap();
    let [a, b] = shards(&dir, absolute.to_str().unwrap());
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let merged = case("absolute path inside", &["merge", a, b])
        .code(1)
        .out("violation over 400 schedules (seeds 0..400)")
        .cwd(&dir);
    check(&merged);
    // Outside the current folder it is still refused: a shard is data.
    let elsewhere = scratch("cli_edges/merge-absolute-elsewhere");
    let refused = case("absolute path outside", &["merge", a, b])
        .code(2)
        .err("leads out of the current folder")
        .cwd(&elsewhere);
    check(&refused);
}

/// D9: `report -o -` writes the page to stdout, not to a file named `-`.
#[test]
fn report_to_a_dash_writes_the_page_to_stdout() {
    let dir = scratch("cli_edges/report-dash");
    let args = [
        "report",
        "payment-retry-without-key",
        "--seed",
        "2",
        "-o",
        "-",
    ];
    let (out, _) = check(&case("report to stdout", &args).code(1).cwd(&dir));
    assert!(
        out.starts_with("<!DOCTYPE html>"),
        "{}",
        &out[..out.len().min(200)]
    );
    assert!(out.trim_end().ends_with("</html>"));
    assert!(!dir.join("-").exists(), "no file named -");
}

/// N4: `merge -` reads at most 64 MiB from a pipe and says why it stops.
#[test]
fn merge_from_stdin_stops_at_its_limit() {
    let mut child = Command::new(idemsim_bin())
        .args(["merge", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("idemsim runs");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let block = vec![b' '; 1 << 20];
        // Past the limit; the reader may stop early, so a broken pipe is fine.
        for _ in 0..80 {
            if stdin.write_all(&block).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().expect("idemsim ends");
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("stdin holds more than 64 MiB"), "{err}");
}

/// D6: with nothing to shrink, a machine format's stdout stays empty (the
/// sentence goes to stderr), and an inconclusive seed exits 3, not 0.
#[test]
fn shrink_with_nothing_to_shrink_keeps_machine_output_clean_and_exits_as_check() {
    let dir = scratch("cli_edges/shrink-nothing");
    let passing = [
        "shrink",
        "payment-stable-key",
        "--seed",
        "1",
        "--format",
        "json",
    ];
    let (out, err) = check(&case("a passing seed in JSON", &passing).code(0).cwd(&dir));
    assert_eq!(out, "", "no prose on a JSON stdout");
    assert!(
        err.contains("seed 1 does not fail, nothing to shrink"),
        "{err}"
    );
    let limited = [
        "shrink",
        "payment-stable-key",
        "--seed",
        "1",
        "--set",
        "run.max_steps=20",
    ];
    let (out, _) = check(&case("an inconclusive seed", &limited).code(3).cwd(&dir));
    assert!(
        out.contains("seed 1 is inconclusive: the run hit its"),
        "{out}"
    );
}

/// N5: a repro file whose decision is out of range for its run is refused,
/// naming the decision (it was clamped and replayed as another run).
#[test]
fn replay_refuses_a_repro_decision_the_run_does_not_offer() {
    let dir = scratch("cli_edges/repro-out-of-range");
    let shrink = ["shrink", "payment-retry-without-key", "--out", "r.json"];
    check(&case("a repro", &shrink).code(1).cwd(&dir));
    let mut repro: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    repro["choices"]["link:service->client"] = serde_json::json!([7]);
    std::fs::write(dir.join("bad.json"), repro.to_string()).unwrap();
    let refused = case("an edited decision", &["replay", "--repro", "bad.json"])
        .code(2)
        .err("decision 0 of stream link:service->client is 7, but the run offers only 2 alternatives there")
        .cwd(&dir);
    check(&refused);
    let intact = case("the file as written", &["replay", "--repro", "r.json"])
        .code(1)
        .cwd(&dir);
    check(&intact);
}
