//! Ctrl-C (SIGINT) and SIGTERM while an external program hangs: the program
//! is killed with its whole process group (a child it started included),
//! the summary of what ran is printed, and idemsim exits 130 or 143 at once,
//! not when the program's time-out runs out. A second Ctrl-C leaves no
//! child behind either; `replay` and `report`, which run one seed, kill a
//! hung program the same way. The signals go to a real idemsim process.
#![cfg(unix)]

use crate::support::{cli::wait_for_sigint_handler, idemsim_bin, root, scratch};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A consumer that acks like the protocol's example for `HANG_AFTER` lines,
/// then starts `sleep 600` (in its process group), writes both ids to
/// `pids`, and hangs.
const HANG: &str = r#"
import json, os, subprocess, sys, time
handled = 0
for line in sys.stdin:
    m = json.loads(line)
    handled += 1
    if handled > 20:
        child = subprocess.Popen(["sleep", "600"])
        with open("pids.tmp", "w") as f:
            f.write(f"{os.getpid()} {child.pid}\n")
        os.rename("pids.tmp", "pids")
        time.sleep(600)
    if m["type"] == "msg":
        p = m["payload"]
        out = [{"type": "effect", "op": p["event"]["id"], "payload": p["event"]["value"]},
               {"type": "send", "to": "broker",
                "payload": {"type": "ack", "id": p["event"]["id"], "receipt": p["receipt"]}}]
        for o in out:
            sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.write(json.dumps({"type": "done"}) + "\n")
    sys.stdout.flush()
"#;

/// The time-out of one answer: far longer than any wait below, so only
/// the signal can end the run in time.
const TIMEOUT: &str = "consumer.handler_timeout_ms=120000";

/// The folder of a scenario whose program hangs after a few seeds.
fn hanging(name: &str) -> PathBuf {
    hanging_after(name, 20)
}

/// The folder of a scenario whose program hangs at its line `lines + 1`.
fn hanging_after(name: &str, lines: u32) -> PathBuf {
    let dir = scratch(&format!("signals/{name}"));
    let fixture = root().join("tests/fixtures/external/misbehave.toml");
    let text = std::fs::read_to_string(fixture).unwrap().replace(
        r#"["python3", "misbehave.py", "--mode=ok"]"#,
        r#"["python3", "hang.py"]"#,
    );
    assert!(text.contains("hang.py"));
    std::fs::write(dir.join("hang.toml"), text).unwrap();
    let program = HANG.replace("handled > 20", &format!("handled > {lines}"));
    assert!(program.contains(&format!("handled > {lines}:")));
    std::fs::write(dir.join("hang.py"), program).unwrap();
    dir
}

fn start(dir: &Path) -> Child {
    spawn(
        dir,
        &[
            "check",
            "hang.toml",
            "--runs",
            "100000",
            "--jobs",
            "1",
            "--determinism-seeds",
            "0",
            "--no-regressions",
            "--json",
            "--set",
            TIMEOUT,
        ],
    )
}

fn spawn(dir: &Path, args: &[&str]) -> Child {
    Command::new(idemsim_bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("idemsim runs")
}

/// The program's id and its child's, once it hangs.
fn hung(dir: &Path, idemsim: &mut Child) -> [u32; 2] {
    let began = models::external::process::now();
    while began.elapsed() < Duration::from_secs(60) {
        if let Ok(text) = std::fs::read_to_string(dir.join("pids")) {
            let ids: Vec<u32> = text
                .split_whitespace()
                .map(|w| w.parse().unwrap())
                .collect();
            return [ids[0], ids[1]];
        }
        if let Ok(Some(status)) = idemsim.try_wait() {
            panic!("idemsim ended before its program hung: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the program did not hang within 60 s");
}

fn send(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// Whether process `pid` still runs (a zombie waiting for its parent is gone).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Waits for idemsim to end within 30 s (the program's time-out is 120 s):
/// its exit code, stdout and stderr.
fn ended(mut idemsim: Child) -> (Option<i32>, String, String) {
    let began = models::external::process::now();
    loop {
        if let Ok(Some(_)) = idemsim.try_wait() {
            break;
        }
        if began.elapsed() > Duration::from_secs(30) {
            let _ = idemsim.kill();
            let out = idemsim.wait_with_output().unwrap();
            panic!(
                "idemsim did not end within 30 s of the signal\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = idemsim.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// No process of the program's group is left, within 5 s.
fn none_left(ids: [u32; 2]) {
    let began = models::external::process::now();
    while ids.iter().any(|&p| alive(p)) {
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "a child of idemsim survives: {ids:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn interrupted_with(signal: &str, code: i32) {
    let dir = hanging(&signal[1..].to_lowercase());
    let mut idemsim = start(&dir);
    wait_for_sigint_handler(idemsim.id());
    let ids = hung(&dir, &mut idemsim);
    send(idemsim.id(), signal);
    let (got, out, err) = ended(idemsim);
    assert_eq!(got, Some(code), "stdout: {out}\nstderr: {err}");
    // The summary of what ran is the last line, and says it was stopped.
    let last = out.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(last).expect("a JSON summary");
    assert_eq!(v["type"], "summary", "{out}");
    assert_eq!(v["data"]["verdict"], "interrupted", "{out}");
    assert!(v["data"]["schedules"].as_u64().unwrap() >= 1, "{out}");
    assert!(!err.contains("error:"), "no protocol error: {err}");
    none_left(ids);
}

#[test]
fn ctrl_c_kills_a_hung_program_and_its_children_and_exits_130_with_the_summary() {
    interrupted_with("-INT", 130);
}

#[test]
fn sigterm_kills_a_hung_program_and_its_children_and_exits_143_with_the_summary() {
    interrupted_with("-TERM", 143);
}

#[test]
fn a_second_ctrl_c_quits_at_once_and_leaves_no_child() {
    let dir = hanging("twice");
    let mut idemsim = start(&dir);
    wait_for_sigint_handler(idemsim.id());
    let ids = hung(&dir, &mut idemsim);
    send(idemsim.id(), "-INT");
    send(idemsim.id(), "-INT");
    let (got, out, err) = ended(idemsim);
    assert_eq!(got, Some(130), "stdout: {out}\nstderr: {err}");
    none_left(ids);
}

/// `replay` and `report` run one seed and poll nothing: a signal while the
/// program hangs still kills its group, says so, and exits 130 or 143 with
/// no trace or page, at once rather than after the 120 s time-out.
fn one_run_interrupted(args: &[&str], signal: &str, code: i32) {
    // Seed 0 hands the program two lines: its start, then one delivery.
    let dir = hanging_after(&format!("{}-{}", args[0], &signal[1..]), 1);
    let mut idemsim = spawn(&dir, args);
    wait_for_sigint_handler(idemsim.id());
    let ids = hung(&dir, &mut idemsim);
    send(idemsim.id(), signal);
    let (got, out, err) = ended(idemsim);
    assert_eq!(got, Some(code), "stdout: {out}\nstderr: {err}");
    assert!(out.is_empty(), "no trace of a broken-off run: {out}");
    let name = if signal == "-TERM" {
        "SIGTERM"
    } else {
        "Ctrl-C"
    };
    assert!(
        err.contains(&format!("interrupted ({name}): the external program idemsim waited for was killed with its process group")),
        "{err}"
    );
    assert!(!err.contains("error:"), "no protocol error: {err}");
    assert!(!dir.join("r.html").exists(), "no page of a broken-off run");
    none_left(ids);
}

const REPLAY: &[&str] = &["replay", "hang.toml", "--seed", "0", "--set", TIMEOUT];
const REPORT: &[&str] = &[
    "report",
    "hang.toml",
    "--seed",
    "0",
    "--set",
    TIMEOUT,
    "-o",
    "r.html",
];

#[test]
fn sigterm_during_replay_kills_the_hung_program_and_exits_143() {
    one_run_interrupted(REPLAY, "-TERM", 143);
}

#[test]
fn ctrl_c_during_replay_kills_the_hung_program_and_exits_130() {
    one_run_interrupted(REPLAY, "-INT", 130);
}

#[test]
fn sigterm_during_report_kills_the_hung_program_and_exits_143() {
    one_run_interrupted(REPORT, "-TERM", 143);
}

#[test]
fn ctrl_c_during_report_kills_the_hung_program_and_exits_130() {
    one_run_interrupted(REPORT, "-INT", 130);
}

/// `check --json` with `search` of a program that hangs at line `lines + 1`,
/// sent SIGTERM once it hangs: its exit code, stdout, stderr and the
/// program's process ids.
fn terminated(name: &str, lines: u32, search: &[&str]) -> (Option<i32>, String, String, [u32; 2]) {
    terminated_in(&hanging_after(name, lines), search)
}

/// [`terminated`], of the scenario in `dir`.
fn terminated_in(dir: &Path, search: &[&str]) -> (Option<i32>, String, String, [u32; 2]) {
    let args = [
        &[
            "check",
            "hang.toml",
            "--jobs",
            "1",
            "--determinism-seeds",
            "0",
        ][..],
        &["--no-regressions", "--json", "--set", TIMEOUT],
        search,
    ]
    .concat();
    let mut idemsim = spawn(dir, &args);
    wait_for_sigint_handler(idemsim.id());
    let ids = hung(dir, &mut idemsim);
    send(idemsim.id(), "-TERM");
    let (got, out, err) = ended(idemsim);
    (got, out, err, ids)
}

/// A search that is not a seed sweep (`--strategy coverage`, `--exhaustive`)
/// stopped by SIGTERM while
/// the program hangs: the run broken off by killing the program is no
/// failure, so the verdict is `interrupted` (exit 143), not a violation.
fn search_interrupted(name: &str, lines: u32, search: &[&str]) {
    let (got, out, err, ids) = terminated(name, lines, search);
    assert_eq!(got, Some(143), "stdout: {out}\nstderr: {err}");
    let last = out.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(last).expect("a JSON summary");
    let kind = if search[0] == "--exhaustive" {
        "exhaustive"
    } else {
        "summary"
    };
    assert_eq!(v["type"], kind, "{out}");
    assert_eq!(v["data"]["verdict"], "interrupted", "{out}");
    assert_eq!(v["data"]["panics"].as_u64().unwrap_or(0), 0, "{out}");
    // The killed run is no result: neither an error nor its panic shows.
    assert!(
        !err.lines().any(|l| l.starts_with("error:")),
        "no protocol error: {err}"
    );
    assert!(!err.contains("panicked"), "no panic message: {err}");
    none_left(ids);
}

#[test]
fn sigterm_during_a_coverage_search_counts_no_killed_run() {
    search_interrupted(
        "coverage",
        20,
        &["--strategy", "coverage", "--runs", "100000"],
    );
}

/// The program hangs at its 13th line, before the enumeration meets a
/// violation (by its 17th it has met one, and the stop keeps it:
/// `sigterm_after_an_exhaustive_search_found_a_violation_keeps_the_counterexample`).
#[test]
fn sigterm_during_an_exhaustive_search_counts_no_killed_run() {
    search_interrupted("exhaustive", 12, &["--exhaustive", "--max-faults", "3"]);
}

/// What a run stopped after its violation shows whatever the search: exit
/// 1, the violation of `no-duplicate-effect` in the last JSON line (which
/// it returns), no panic and no trace broken off by the killed program.
fn violation_kept((got, out, err): (Option<i32>, &str, &str)) -> serde_json::Value {
    assert_eq!(
        got,
        Some(1),
        "a violation outranks the stop\nstdout: {out}\nstderr: {err}"
    );
    let last = out.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(last).expect("a JSON summary");
    assert_eq!(v["data"]["verdict"], "violation", "{out}");
    assert_eq!(v["data"]["invariant"], "no-duplicate-effect", "{out}");
    assert!(!err.contains("panicked"), "no panic: {err}");
    assert!(
        !out.contains("broke the protocol") && !err.contains("broke the protocol"),
        "no broken-off trace: {out}{err}"
    );
    v
}

/// A search stopped by SIGTERM after it found a violation, its program
/// hanging at its 401st line (a violation comes within the first hundred):
/// the violation found before the stop is not lost. The exit is 1, the
/// verdict `violation` with `interrupted` true, the failure keeps its seed
/// or its record, and since every rerun would kill the program again it is
/// neither shrunk nor traced, which stderr says, naming the signal. Before
/// this was fixed, `--exhaustive` replayed its counterexample for the
/// trace, met the killed program and ended with a panic (exit 101), and a
/// sweep printed a broken-off rerun as the "shrunk" trace.
fn stopped_after_a_violation(name: &str, search: &[&str]) -> (serde_json::Value, String) {
    let (got, out, err, ids) = terminated(name, 400, search);
    let v = violation_kept((got, &out, &err));
    assert_eq!(v["data"]["interrupted"], true, "{out}");
    assert!(err.contains("(SIGTERM)"), "the stop is said: {err}");
    assert!(
        err.contains(": not shrunk or traced, since SIGTERM stopped idemsim")
            || err.contains(": not traced, since SIGTERM stopped idemsim"),
        "{err}"
    );
    none_left(ids);
    (v, err)
}

#[test]
fn sigterm_after_an_exhaustive_search_found_a_violation_keeps_the_counterexample() {
    let (v, err) =
        stopped_after_a_violation("exhaustive-found", &["--exhaustive", "--max-faults", "3"]);
    assert_eq!(v["type"], "exhaustive");
    assert_eq!(v["data"]["complete"], false);
    let c = &v["data"]["counterexample"];
    assert!(c["faults"].as_u64().unwrap() >= 1, "{v}");
    assert!(c["record"].is_object(), "its decisions replay it: {v}");
    assert!(err.contains("shortest counterexample: "), "{err}");
    assert!(err.contains("record: {"), "{err}");
    assert!(
        !err.contains("# trace"),
        "no trace of a killed rerun: {err}"
    );
}

#[test]
fn sigterm_after_a_sweep_found_a_failing_seed_reports_that_seed() {
    let (v, err) = stopped_after_a_violation("seeds-found", &["--runs", "100000"]);
    assert_eq!(v["type"], "summary");
    let seed = v["data"]["lowest_failing_seed"]
        .as_u64()
        .expect("a failing seed");
    assert!(seed < v["data"]["schedules"].as_u64().unwrap(), "{v}");
    let repro = v["data"]["repro"].as_str().unwrap();
    assert!(repro.ends_with(&format!("--seed {seed}")), "{repro}");
    assert!(
        err.contains(&format!("seed {seed}: not shrunk or traced")),
        "{err}"
    );
    assert!(!err.contains("shrunk (docs/shrinking.md)"), "{err}");
}

/// [`HANG`], hanging at the first line of the `ordinal`-th process of its
/// folder rather than at a count of lines: each simulator starts its own
/// process, so a seed sweep, each search part and a shrink after them have
/// one each, which a count of lines cannot tell apart.
fn hang_in_process(ordinal: u32) -> String {
    let which = r#"n = 1
while True:
    try:
        os.close(os.open(f"process-{n}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        break
    except FileExistsError:
        n += 1
handled = 0
"#;
    let program = HANG
        .replace("handled = 0\n", which)
        .replace("handled > 20", &format!("n >= {ordinal}"));
    assert!(program.contains("process-{n}") && program.contains(&format!("n >= {ordinal}:")));
    program
}

/// `check ARGS` of [`hanging`]'s scenario, its program [`hang_in_process`]
/// (`ordinal`), sent SIGTERM once that process hangs: exit code, stdout,
/// stderr, and the hung program's ids.
fn terminated_in_process(
    name: &str,
    ordinal: u32,
    args: &[&str],
) -> (Option<i32>, String, String, [u32; 2]) {
    let dir = hanging(name);
    std::fs::write(dir.join("hang.py"), hang_in_process(ordinal)).unwrap();
    terminated_in(&dir, args)
}

/// What every search stopped after its violation shows: exit 1, the
/// violation in the JSON summary with the record that replays it (at
/// `record`, a JSON pointer), the failure named as `found` (which search's
/// schedule), the signal named, no claim of a shrink or a trace of a
/// killed rerun.
fn kept_after_the_stop(
    (got, out, err): (Option<i32>, &str, &str),
    record: &str,
    found: &str,
) -> serde_json::Value {
    let v = violation_kept((got, out, err));
    assert_eq!(v["type"], "summary", "{out}");
    assert!(err.contains("record: {"), "its decisions replay it: {err}");
    assert!(
        err.contains(": not shrunk or traced, since SIGTERM stopped idemsim"),
        "the stop is said, naming the signal: {err}"
    );
    assert!(!err.contains("shrunk (docs/shrinking.md)"), "{err}");
    assert!(
        !err.contains("the trace is the smallest failing run found"),
        "no trace is shown, so none is claimed: {err}"
    );
    assert!(
        !err.contains("# trace"),
        "no trace of a killed rerun: {err}"
    );
    assert!(
        v.pointer(record).is_some_and(serde_json::Value::is_object),
        "its decisions replay it, at {record}: {v}"
    );
    assert!(err.contains(found), "the failure is named {found:?}: {err}");
    v
}

/// `--strategy coverage` ends at its first failure (schedule 11 here, all
/// in the program's first process) and shrinks it; the shrink's reruns
/// start a second process, which hangs, and SIGTERM comes then. The
/// violation the search found is shown with its record, not shrunk.
#[test]
fn sigterm_after_a_coverage_search_found_a_violation_keeps_it() {
    let (got, out, err, ids) = terminated_in_process(
        "coverage-found",
        2,
        &["--strategy", "coverage", "--runs", "100000"],
    );
    let v = kept_after_the_stop(
        (got, &out, &err),
        "/data/record",
        "coverage-guided schedule #",
    );
    assert_eq!(v["data"]["strategy"], "coverage", "{v}");
    // The search ended at its failure; the signal stopped the shrink.
    assert_eq!(v["data"]["interrupted"], false, "{v}");
    assert!(v["data"]["seed"].is_null(), "no seed replays it: {v}");
    none_left(ids);
}

/// The default portfolio: 40 seeds that hold (loss and crashes at one per
/// mille), then exhaustive search, which finds a lost ack at fault bound 1
/// within its 10 schedules, then the coverage-guided search, whose program
/// (the third process: seeds, exhaustive search, coverage) hangs at once.
/// SIGTERM there keeps exhaustive search's violation, unshrunk.
#[test]
fn sigterm_during_the_portfolio_after_a_search_found_a_violation_keeps_it() {
    let rare = [
        "--runs",
        "40",
        "--set",
        "network.loss_per_mille=1",
        "--set",
        "crashes.consumer-1.crash_per_mille=1",
    ];
    let (got, out, err, ids) = terminated_in_process("portfolio-found", 3, &rare);
    let v = kept_after_the_stop(
        (got, &out, &err),
        "/data/portfolio/record",
        "exhaustive schedule with at most 1 fault: not shrunk or traced",
    );
    let d = &v["data"];
    assert_eq!(d["interrupted"], true, "{v}");
    assert!(d["lowest_failing_seed"].is_null(), "every seed held: {v}");
    let p = &d["portfolio"];
    assert_eq!(p["found_by"], "exhaustive", "{v}");
    assert_eq!(
        p["exhaustive"]["found"]["invariant"], "no-duplicate-effect",
        "{v}"
    );
    assert!(
        p["coverage"]["found"].is_null(),
        "the killed run is no failure: {v}"
    );
    none_left(ids);
}

/// `replay --repro` first replays the file's decisions to check that each
/// one is in range, and that run waits on the program as well: a signal
/// there kills the program's group and ends the command with 130, and the
/// broken-off check judges nothing of the file.
#[test]
fn ctrl_c_while_a_repro_is_checked_kills_the_hung_program_and_exits_130() {
    // A program that never hangs makes the repro; then the same file name
    // hangs at its second line, inside the check's run.
    let dir = hanging_after("repro-check", 1_000_000);
    let toml = dir.join("hang.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("handler_timeout_ms = 10000", "handler_timeout_ms = 120000");
    assert!(text.contains("handler_timeout_ms = 120000"));
    std::fs::write(&toml, text).unwrap();
    let made = Command::new(idemsim_bin())
        .args(["shrink", "hang.toml", "--out", "r.json"])
        .current_dir(&dir)
        .output()
        .expect("idemsim runs");
    assert_eq!(made.status.code(), Some(1), "{made:?}");
    assert!(dir.join("r.json").exists());
    std::fs::write(
        dir.join("hang.py"),
        HANG.replace("handled > 20", "handled > 1"),
    )
    .unwrap();
    let mut idemsim = spawn(&dir, &["replay", "--repro", "r.json"]);
    wait_for_sigint_handler(idemsim.id());
    let ids = hung(&dir, &mut idemsim);
    send(idemsim.id(), "-INT");
    let (got, out, err) = ended(idemsim);
    assert_eq!(got, Some(130), "stdout: {out}\nstderr: {err}");
    assert!(out.is_empty(), "no trace of a broken-off run: {out}");
    assert!(err.contains("interrupted (Ctrl-C)"), "{err}");
    assert!(!err.contains("error:"), "the file is not judged: {err}");
    none_left(ids);
}
