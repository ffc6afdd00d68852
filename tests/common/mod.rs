//! The one shared harness of the integration tests: loading scenarios, running
//! seed ranges through the library, running the binary, and reading traces.
//! Each test file includes it with `mod common;` and uses what it needs.
#![allow(dead_code)]

use models::scenario::{Override, Verdict};
use models::{Msg, NodeTimer, Obs, Scenario};
use sim::{Outcome, Recorder, SeedRange, Sim, SituationId, Source, Summary, TraceEntry};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;

/// Threads for sweeps in tests: the output never depends on it.
pub const JOBS: usize = 2;

/// Seeds per scenario in the test profile: enough for every expectation,
/// small enough to keep the whole catalog well under a minute.
pub const TEST_BUDGET: u64 = 300;

pub type Entry = TraceEntry<Msg, Obs, NodeTimer>;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn scenario_dir() -> PathBuf {
    root().join("scenarios")
}

/// Every scenario file of the catalog, sorted.
pub fn scenario_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

pub fn name_of(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// A catalog scenario with `sets` applied (`key.path=value`).
#[track_caller]
pub fn load(name: &str, sets: &[&str]) -> Scenario {
    let path = scenario_dir().join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).expect("scenario file exists");
    load_text(&path.to_string_lossy(), &text, sets)
}

/// A scenario from its text (a case written in a test), with `sets` applied.
#[track_caller]
pub fn load_text(file: &str, text: &str, sets: &[&str]) -> Scenario {
    let overrides: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse(s).expect("well-formed override"))
        .collect();
    Scenario::load_with(file, text, &overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// Seeds `0..seeds` of `s`, or as many schedules of its coverage-guided
/// search when the scenario asks for one (`run.strategy`).
pub fn sweep(s: &Scenario, seeds: u64) -> Summary {
    let stop = AtomicBool::new(false);
    s.search(
        SeedRange {
            start: 0,
            end: seeds,
        },
        JOBS,
        &stop,
    )
}

/// The one data-driven check: a scenario (with overrides) gives `verdict`
/// (and `invariant`, for a violation) within `seeds`.
#[track_caller]
pub fn check(name: &str, sets: &[&str], seeds: u64, verdict: Verdict, invariant: Option<&str>) {
    check_scenario(
        &load(name, sets),
        seeds,
        verdict,
        invariant,
        &format!("{name} {sets:?}"),
    );
}

#[track_caller]
pub fn check_scenario(
    s: &Scenario,
    seeds: u64,
    verdict: Verdict,
    invariant: Option<&str>,
    what: &str,
) {
    let sum = sweep(s, seeds);
    assert_eq!(
        sum.tally.panics, 0,
        "{what}: a model panicked: {:?}",
        sum.first_failure
    );
    let found = s.expect.judge(&sum);
    assert_eq!(
        (found.found, found.invariant),
        (verdict, invariant),
        "{what} over {seeds} seeds: {:?}",
        sum.first_failure.map(|f| f.outcome)
    );
}

/// The trace and outcome of one seed of `s`.
pub fn trace_of(s: &Scenario, seed: u64) -> (Vec<Entry>, Outcome) {
    let mut sim = Sim::new(&s.system);
    let mut rec = Recorder::default();
    let r = sim.run(
        &s.system,
        Source::Seed {
            seed,
            record: false,
        },
        &mut rec,
    );
    (rec.entries, r.outcome)
}

/// The trace of the lowest failing seed of a catalog scenario.
#[track_caller]
pub fn failing_trace(name: &str) -> (Vec<Entry>, Outcome) {
    let s = load(name, &[]);
    assert_eq!(
        s.strategy,
        models::scenario::Strategy::Seeds,
        "{name}: a coverage-guided failure has no seed"
    );
    let sum = sweep(&s, TEST_BUDGET);
    let seed = sum.first_failure.expect("the scenario fails").seed;
    trace_of(&s, seed)
}

/// Whether the trace reports `situation`.
pub fn reached(entries: &[Entry], situation: SituationId) -> bool {
    entries
        .iter()
        .any(|e| matches!(e.kind, sim::TraceKind::Reached { situation: s, .. } if s == situation))
}

/// Runs the binary in the checkout.
pub fn idemsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_idemsim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the binary and checks its exit code; returns stdout and stderr.
#[track_caller]
pub fn run(args: &[&str], code: i32) -> (String, String) {
    let out = idemsim(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(code),
        "idemsim {args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}

/// The `data` of the last `summary` line of JSON Lines output.
#[track_caller]
pub fn summary(jsonl: &str) -> serde_json::Value {
    let line = jsonl
        .lines()
        .rev()
        .find(|l| l.contains("\"type\":\"summary\""))
        .unwrap_or_else(|| panic!("a summary line in {jsonl}"));
    let v: serde_json::Value = serde_json::from_str(line).expect("valid JSON");
    v["data"].clone()
}

/// A scratch file path under the target directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}
