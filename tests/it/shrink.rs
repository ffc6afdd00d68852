//! Shrinking, repro files and trace formats, on every scenario that expects a
//! violation: the folder is read at test time, so scenarios added later are
//! covered without touching this file.

use crate::support::{self, root, scenario_files};
use idemsim::testing::shown::Plan;

use models::scenario::Verdict;
use models::Scenario;
use proptest::prelude::*;
use sim::shrink::{self, ShrinkLimits, Signature};
use sim::{explore, NoTrace, Outcome, Record, Recorder, SeedRange, Sim};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Seeds searched for the lowest failure, at most.
const SEED_CAP: u64 = 2000;

fn load(path: &Path) -> Scenario {
    let text = std::fs::read_to_string(path).expect("readable scenario");
    let shown = format!("scenarios/{}", path.file_name().unwrap().to_string_lossy());
    Scenario::load(&shown, &text).expect("valid scenario")
}

/// Every scenario that expects a violation, with its lowest failing seed.
fn violating() -> Vec<(PathBuf, Scenario, u64)> {
    let mut out = Vec::new();
    for path in scenario_files() {
        let s = load(&path);
        // A scenario searched coverage-guided has no failing seed to start
        // from (`perf_cli` shrinks its coverage-found record).
        if s.expected_verdict() != Some(Verdict::Violation)
            || s.strategy != models::scenario::Strategy::Seeds
        {
            continue;
        }
        let stop = AtomicBool::new(false);
        let seeds = SeedRange {
            start: 0,
            end: s.runs.min(SEED_CAP).into(),
        };
        let sum = explore(&s.system, seeds, 1, &stop, &|_| {});
        // Nor does a rare bug only `check`'s searches after the seeds find
        // (`shrink_as_check` and `perf_cli` shrink their failure).
        if sum.first_failure.is_none() && Plan::of(&s) == Plan::Portfolio {
            continue;
        }
        let seed = sum
            .first_failure
            .unwrap_or_else(|| panic!("{} expects a violation within {SEED_CAP} seeds", s.name))
            .seed;
        out.push((path, s, seed));
    }
    assert!(!out.is_empty(), "at least one scenario expects a violation");
    out
}

fn signature(sim: &mut Sim<models::System>, s: &Scenario, r: &Record) -> Option<Signature> {
    let report = shrink::replay(sim, &s.system, r, false, &mut NoTrace);
    Signature::of(&report.outcome)
}

#[test]
fn shrinking_keeps_the_signature_is_locally_minimal_and_deterministic() {
    for (_, s, seed) in violating() {
        let mut sim = Sim::new(&s.system);
        let report = sim.run_seed(&s.system, seed);
        let original = Signature::of(&report.outcome).expect("the seed fails");
        let shrunk = shrink::shrink_seed(&mut sim, &s.system, seed, ShrinkLimits::default())
            .expect("the seed fails");
        assert!(
            shrunk.complete,
            "{}: the rerun bound stopped shrinking",
            s.name
        );
        assert_eq!(shrunk.signature, original, "{}", s.name);
        assert_eq!(
            signature(&mut sim, &s, &shrunk.record).as_ref(),
            Some(&original),
            "{}: the shrunk record replays to the same failure",
            s.name
        );
        if let Outcome::Violation(v) = &shrunk.report.outcome {
            assert_eq!(Some(v.invariant), s.expected_invariant(), "{}", s.name);
        }
        // A shrunk trace is never more than twice as long as the one it came
        // from, and never has more faults.
        let bound = shrink::max_shrunk_events(shrunk.original_report.events);
        let mut original_sim = Sim::new(&s.system);
        let (original_record, _) = shrink::record_seed(&mut original_sim, &s.system, seed);
        assert!(
            shrunk.record.nonzero_count() <= original_record.nonzero_count(),
            "{}: shrunk to {} nonzero decisions from {}",
            s.name,
            shrunk.record.nonzero_count(),
            original_record.nonzero_count()
        );
        assert!(
            shrunk.report.events <= bound,
            "{}: shrunk to {} events from {}",
            s.name,
            shrunk.report.events,
            shrunk.original_report.events
        );
        // Local minimality: zeroing any one remaining decision loses the
        // failure, or makes the run more than twice as long as the original.
        for (stream, values) in shrunk.record.streams.iter().enumerate() {
            for (i, &v) in values.iter().enumerate() {
                if v == 0 {
                    continue;
                }
                let mut c = shrunk.record.clone();
                c.streams[stream][i] = 0;
                let report = shrink::replay(&mut sim, &s.system, &c, false, &mut NoTrace);
                let still = Signature::of(&report.outcome).as_ref() == Some(&original)
                    && report.events <= bound;
                assert!(
                    !still,
                    "{}: stream {} ({}) decision {i} = {v} can be zero and it still fails",
                    s.name,
                    stream,
                    shrink::stream_name(&s.system.world, stream as u32)
                );
            }
        }
        // Determinism: the same failure shrinks to the same record, also in a fresh simulator.
        let mut fresh = Sim::new(&s.system);
        let again = shrink::shrink_seed(&mut fresh, &s.system, seed, ShrinkLimits::default())
            .expect("the seed fails");
        assert_eq!(again.record, shrunk.record, "{}", s.name);
        assert_eq!(again.runs, shrunk.runs, "{}", s.name);
    }
}

#[test]
fn payment_retry_without_key_shrinks_to_at_most_20_events() {
    let path = root().join("scenarios/payment-retry-without-key.toml");
    let s = load(&path);
    let (_, _, seed) = violating()
        .into_iter()
        .find(|(p, _, _)| *p == path)
        .expect("the scenario expects a violation");
    let mut sim = Sim::new(&s.system);
    let shrunk = shrink::shrink_seed(&mut sim, &s.system, seed, ShrinkLimits::default()).unwrap();
    assert!(
        shrunk.report.events <= 20,
        "{} events",
        shrunk.report.events
    );
    // One lost reply is the only fault left (plus the swarm's loss rate that makes it possible).
    assert_eq!(shrunk.report.faults.lost, 1);
    assert_eq!(shrunk.report.faults.total(), 1);
}

#[test]
fn the_point_of_no_return_is_the_last_step_a_single_change_still_avoids() {
    for (_, s, seed) in violating() {
        let mut sim = Sim::new(&s.system);
        let shrunk =
            shrink::shrink_seed(&mut sim, &s.system, seed, ShrinkLimits::default()).unwrap();
        // A failure the configuration alone causes (no fault needed) may have
        // no decision that avoids it; the trace then says so.
        let Some(turn) = shrink::point_of_no_return(&mut sim, &s.system, &shrunk.record) else {
            continue;
        };
        // The named alternative does avoid it.
        let mut c = shrunk.record.clone();
        c.set(turn.stream, turn.index as usize, turn.alternative);
        assert_ne!(signature(&mut sim, &s, &c), Some(shrunk.signature.clone()));
        assert!(turn.step <= shrunk.report.events, "{}", s.name);
        let mut rec = Recorder::default();
        shrink::replay(&mut sim, &s.system, &shrunk.record, false, &mut rec);
        assert_eq!(rec.entries[turn.entry].step, turn.step, "{}", s.name);
    }
}

fn idemsim(args: &[&str]) -> (i32, String, String) {
    let out = support::idemsim(args);
    (
        out.status.code().unwrap_or(-1),
        support::text(&out.stdout),
        support::text(&out.stderr),
    )
}

/// Snapshots longer than this are kept by their first and last lines: a run
/// under load is thousands of steps long even shrunk, and a snapshot is
/// there to be reviewed. The whole trace stays covered by the determinism
/// and repro tests, which compare it in full.
const SNAPSHOT_LINES: usize = 300;

fn reviewable(out: &str) -> String {
    let lines: Vec<&str> = out.lines().collect();
    if lines.len() <= SNAPSHOT_LINES {
        return out.to_string();
    }
    let (head, tail) = (SNAPSHOT_LINES * 2 / 3, SNAPSHOT_LINES / 3);
    let left_out = lines.len() - head - tail;
    let mut kept: Vec<String> = lines[..head].iter().map(|l| l.to_string()).collect();
    kept.push(format!("[… {left_out} lines left out of this snapshot …]"));
    kept.extend(lines[lines.len() - tail..].iter().map(|l| l.to_string()));
    kept.join("\n") + "\n"
}

#[test]
fn shrunk_traces_snapshot() {
    for (path, s, seed) in violating() {
        let p = path.to_string_lossy().into_owned();
        let seed = seed.to_string();
        for format in ["text", "mermaid"] {
            let (code, out, err) = idemsim(&["shrink", &p, "--seed", &seed, "--format", format]);
            assert_eq!(code, 1, "{}: {err}", s.name);
            insta::assert_snapshot!(format!("{}.{format}", s.name), reviewable(&out));
        }
    }
}

#[test]
fn a_long_trace_is_snapshotted_by_its_ends() {
    let short = "a\nb\n";
    assert_eq!(reviewable(short), short);
    let long: String = (0..1000).map(|i| format!("line {i}\n")).collect();
    let r = reviewable(&long);
    assert_eq!(r.lines().count(), SNAPSHOT_LINES + 1);
    assert!(r.starts_with("line 0\n") && r.ends_with("line 999\n"));
    assert!(r.contains("[… 700 lines left out of this snapshot …]"));
}

/// The diagram must show the moment the text trace marks as decisive, even
/// when that moment is an entry the diagram otherwise leaves out.
#[test]
fn the_mermaid_diagram_marks_the_point_of_no_return_where_the_text_does() {
    const MARK: &str = "◀ point of no return";
    for (path, s, seed) in violating() {
        let p = path.to_string_lossy().into_owned();
        let seed = seed.to_string();
        let (_, text, _) = idemsim(&["shrink", &p, "--seed", &seed, "--format", "text"]);
        let (_, mermaid, _) = idemsim(&["shrink", &p, "--seed", &seed, "--format", "mermaid"]);
        assert_eq!(
            text.matches(MARK).count(),
            mermaid.matches(MARK).count(),
            "{}: the diagram and the text disagree on the point of no return",
            s.name
        );
    }
}

#[test]
fn every_format_renders_and_json_lines_parse() {
    let (path, s, seed) = violating().remove(0);
    let p = path.to_string_lossy().into_owned();
    let seed = seed.to_string();
    let (_, json, _) = idemsim(&["shrink", &p, "--seed", &seed, "--format", "json"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines[0]["type"], "run");
    assert_eq!(lines.last().unwrap()["type"], "end");
    assert!(lines
        .iter()
        .all(|l| l["type"].is_string() && l["data"].is_object()));
    let (_, mermaid, _) = idemsim(&["shrink", &p, "--seed", &seed, "--format", "mermaid"]);
    assert!(mermaid.starts_with("sequenceDiagram\n"));
    assert!(!mermaid.contains(';') || mermaid.contains("#35;"));
    let (_, dot, _) = idemsim(&["shrink", &p, "--seed", &seed, "--format", "dot"]);
    assert!(dot.starts_with("digraph happens_before {") && dot.trim_end().ends_with('}'));
    assert!(dot.contains("style=dashed"), "send → receive edges");
    let (_, chrome, _) = idemsim(&["shrink", &p, "--seed", &seed, "--format", "chrome"]);
    let doc: serde_json::Value = serde_json::from_str(&chrome).expect("chrome trace is JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    for a in &s.system.world.actor_names {
        assert!(
            events
                .iter()
                .any(|e| e["ph"] == "M" && e["args"]["name"] == a.as_str()),
            "a track for {a}"
        );
    }
}

#[test]
fn a_repro_file_replays_the_identical_trace() {
    for (path, s, seed) in violating() {
        let p = path.to_string_lossy().into_owned();
        let seed = seed.to_string();
        let dir = support::scratch(&format!("shrink/repro-{}", s.name));
        let file = dir.join("repro.json");
        let f = file.to_string_lossy().into_owned();
        let (code, shrunk, _) = idemsim(&[
            "shrink", &p, "--seed", &seed, "--format", "json", "--out", &f,
        ]);
        assert_eq!(code, 1);
        let (code, replayed, err) = idemsim(&["replay", "--repro", &f, "--format", "json"]);
        assert_eq!(code, 1, "{err}");
        // Everything but the header (which names the source) is identical.
        let body = |t: &str| t.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
        assert_eq!(body(&shrunk), body(&replayed), "{}", s.name);
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn a_repro_of_a_changed_scenario_is_refused() {
    let (path, s, seed) = violating().remove(0);
    let dir = support::scratch("shrink/changed");
    let copy = dir.join(format!("{}.toml", s.name));
    std::fs::copy(&path, &copy).unwrap();
    let c = copy.to_string_lossy().into_owned();
    let file = dir.join("repro.json").to_string_lossy().into_owned();
    let (code, _, _) = idemsim(&["shrink", &c, "--seed", &seed.to_string(), "--out", &file]);
    assert_eq!(code, 1);
    let (code, _, _) = idemsim(&["replay", "--repro", &file, &c]);
    assert_eq!(code, 1, "the unchanged scenario replays");
    // A comment changes no setting: it still replays.
    let text = std::fs::read_to_string(&copy).unwrap() + "\n# edited\n";
    std::fs::write(&copy, &text).unwrap();
    let (code, _, _) = idemsim(&["replay", "--repro", &file, &c]);
    assert_eq!(code, 1, "a comment is no change");
    // A changed setting is refused, and named.
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
    doc["run"]["max_steps"] = toml_edit::value(999_999);
    std::fs::write(&copy, doc.to_string()).unwrap();
    let (code, out, err) = idemsim(&["replay", "--repro", &file, &c]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "no run is printed: {out}");
    assert!(err.contains("changed since"), "{err}");
    assert!(err.contains("`run.max_steps`"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any list of numbers is a run, and replaying it twice gives the same trace.
    #[test]
    fn any_record_replays_identically(
        values in proptest::collection::vec(proptest::collection::vec(0u64..4000, 0..8), 16..17)
    ) {
        let s = load(&root().join("scenarios/payment-stable-key.toml"));
        let mut sim = Sim::new(&s.system);
        let record = Record { streams: values };
        let mut a = Recorder::default();
        let ra = shrink::replay(&mut sim, &s.system, &record, false, &mut a);
        let read = sim.choices.take_recorded();
        let mut b = Recorder::default();
        let rb = shrink::replay(&mut sim, &s.system, &read, false, &mut b);
        prop_assert_eq!(ra, rb);
        prop_assert_eq!(a.entries, b.entries);
    }

    /// Stream names round-trip, so a repro's keys find their streams.
    #[test]
    fn stream_names_round_trip(stream in 0u32..16) {
        let s = load(&root().join("scenarios/payment-stable-key.toml"));
        let name = shrink::stream_name(&s.system.world, stream);
        prop_assert_eq!(shrink::stream_by_name(&s.system.world, &name), Some(stream));
    }
}

/// A run that lasts days keeps its columns: the time column is as wide as
/// the latest time ("1d 00:00:00.203"), so every entry's actor starts at the
/// same character before and after the first midnight.
#[test]
fn the_text_trace_stays_aligned_past_a_day() {
    let (code, out, err) = idemsim(&["shrink", "messaging-webhook-ids-forgotten"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("1d 00:00:00"), "the run passes a day:\n{out}");
    let actor_columns: std::collections::BTreeSet<usize> = out
        .lines()
        .filter(|l| l.starts_with("  ") || l.starts_with(" #") || l.starts_with('#'))
        .filter(|l| !l.starts_with("# ") && !l.contains('⋮') && !l.contains("──"))
        .map(|l| {
            let chars: Vec<char> = l.chars().collect();
            // Past the step number, the time, then two spaces before the actor.
            let start = 5 + chars[5..].iter().position(|c| *c != ' ').expect("a time");
            start
                + (start..chars.len() - 1)
                    .position(|i| chars[i] == ' ' && chars[i + 1] == ' ')
                    .expect("a gap")
                + 2
        })
        .collect();
    assert_eq!(
        actor_columns.len(),
        1,
        "actor columns {actor_columns:?}:\n{out}"
    );
}

/// The search replays the failing run with every trace entry kept, so a run
/// longer than its budget is not searched at all, and says so; one exactly
/// at the budget is. A run that does not fail has nothing to search.
#[test]
fn the_point_of_no_return_is_not_searched_in_a_run_longer_than_the_budget() {
    let (_, s, seed) = violating()
        .into_iter()
        .next()
        .expect("a violating scenario");
    let mut sim = Sim::new(&s.system);
    let (record, report) = shrink::record_seed(&mut sim, &s.system, seed);
    let events = report.events;
    let over = shrink::point_of_no_return_within(&mut sim, &s.system, &record, events - 1);
    assert!(over.too_long && over.turn.is_none() && !over.complete());
    assert_eq!((over.searched, over.decisions), (0, 0));
    let within = shrink::point_of_no_return_within(&mut sim, &s.system, &record, events);
    assert!(!within.too_long && within.searched > 0);

    let holds = idemsim::scenarios::load("payment-stable-key", &[]).unwrap();
    let mut sim = Sim::new(&holds.system);
    let (record, _) = shrink::record_seed(&mut sim, &holds.system, 0);
    let none = shrink::point_of_no_return_within(&mut sim, &holds.system, &record, 0);
    assert!(!none.too_long && none.complete() && none.turn.is_none());

    // The ending then says the search did not run, not that no decision avoids it.
    let record = idemsim::render::run::record_of_seed(&s.system, seed).unwrap();
    let (mut trace, _) =
        idemsim::render::run::trace_of_record(&s.system, &s.name, &record, "seed".into(), None);
    trace.end.note_unsearched(10);
    let sentence = &trace.end.sentence;
    assert!(sentence.contains("(the point of no return was not searched: the run has more than the 10 events the search may replay)."), "{sentence}");
    assert!(
        !sentence.contains("no single different decision"),
        "{sentence}"
    );
}

/// Shrinking keeps a failing run's decisions and replays copies of them, so
/// a run longer than its bound is not shrunk: its seed is reported instead,
/// after one unrecorded run. One within the bound shrinks; a seed that does
/// not fail is told apart from both.
#[test]
fn a_failing_run_longer_than_shrinking_takes_on_is_reported_not_shrunk() {
    use idemsim::minimize::{self as cmd, Budget, SeedShrink};
    let s = idemsim::scenarios::load("payment-retry-without-key", &[]).unwrap();
    let seed = 2;
    let events = cmd::unrecorded_run(&s, seed).events;
    match cmd::shrink_seed_within_events(&s, seed, Budget::default(), events - 1) {
        SeedShrink::TooLong(report) => {
            assert_eq!(report.events, events);
            assert!(report.outcome.is_failure());
            let note = cmd::too_long_note(&s, seed, &report);
            assert!(
                note.starts_with(
                    "payment-retry-without-key: seed 2 fails (violation of no-duplicate-effect"
                ),
                "{note}"
            );
            assert!(note.contains(&format!("its run has {events} events, more than the 10000000 shrinking takes on, so it is not shrunk")), "{note}");
        }
        _ => panic!("a run of {events} events is over a bound of {}", events - 1),
    }
    assert!(matches!(
        cmd::shrink_seed_within_events(&s, seed, Budget::default(), events),
        SeedShrink::Done(_)
    ));
    let holds = idemsim::scenarios::load("payment-stable-key", &[]).unwrap();
    assert!(matches!(
        cmd::shrink_seed_or_long(&holds, 0, Budget::default()),
        SeedShrink::Holds
    ));
}

/// A trace or a search replays without keeping what the run read (a replay
/// of a long repro would otherwise grow by every decision), and the next
/// ordinary replay, the shrinker's, keeps it again.
#[test]
fn an_unrecorded_replay_keeps_no_record_and_the_next_replay_does() {
    let s = idemsim::scenarios::load("payment-retry-without-key", &[]).unwrap();
    let mut sim = Sim::new(&s.system);
    let (record, report) = shrink::record_seed(&mut sim, &s.system, 2);
    assert!(record.nonzero_count() > 0);
    let again = shrink::replay_unrecorded(&mut sim, &s.system, &record, false, &mut NoTrace);
    assert_eq!(again.outcome, report.outcome);
    assert_eq!(sim.choices.recorded().nonzero_count(), 0);
    assert!(sim.choices.recorded().streams.iter().all(|s| s.is_empty()));
    shrink::replay(&mut sim, &s.system, &record, false, &mut NoTrace);
    assert_eq!(sim.choices.take_recorded(), record);
}

/// The values a record holds, over every stream.
fn values(r: &Record) -> usize {
    r.streams.iter().map(Vec::len).sum()
}

/// A seed's run past the record bound has no record to give: one cut at
/// the bound replays zeros past its end, another run.
#[test]
fn a_seed_too_long_to_record_gives_no_cut_record() {
    let s = idemsim::scenarios::load("payment-retry-without-key", &[]).unwrap();
    let full = idemsim::render::run::record_of_seed(&s.system, 1).unwrap();
    let cut = sim::with_record_bound(values(&full) / 2, || {
        idemsim::render::run::record_of_seed(&s.system, 1)
    });
    let e = cut.expect_err("a record cut at the bound is not given as the seed's");
    assert_eq!(e.seed, 1);
    assert!(
        e.to_string().contains("more decisions than a record holds"),
        "{e}"
    );
}

/// A regression whose replay reads more decisions than a record holds
/// cannot have every decision checked against the scenario: an edited
/// value past the bound would pass unseen.
#[test]
fn a_regression_too_long_to_check_whole_is_refused() {
    let dir = support::scratch("shrink/too-long-regression");
    let s = idemsim::scenarios::load("payment-retry-without-key", &[]).unwrap();
    let entry = idemsim::scenarios::locate("payment-retry-without-key").unwrap();
    let mut sim = Sim::new(&s.system);
    let (mut record, report) = shrink::record_seed(&mut sim, &s.system, 1);
    // The last decision of the longest stream: read by the replay, past
    // what a bound of half the record keeps.
    let (stream, list) = record
        .streams
        .iter()
        .enumerate()
        .max_by_key(|(_, l)| l.len())
        .map(|(i, l)| (i as sim::StreamId, l.clone()))
        .unwrap();
    let bound = values(&record) / 2;
    record.set(stream, list.len() - 1, u64::MAX);
    let repro = idemsim::repro::Repro::new(
        &s.name,
        s.hash,
        &s.system.world,
        Some(1),
        &record,
        &report.outcome,
    );
    let stored = idemsim::regressions::Stored {
        path: dir.join("too-long-regression.json"),
        repro: Ok(repro),
    };
    let db = idemsim::regressions::Db::new(dir);
    // Whole, the edit is found.
    let whole = db.replay(&stored, &entry);
    assert!(
        whole
            .as_ref()
            .is_err_and(|e| e.0.contains("but that decision takes")),
        "{:?}",
        whole.map(|r| r.text())
    );
    let cut = sim::with_record_bound(bound, || db.replay(&stored, &entry));
    let e = cut
        .map(|r| r.text())
        .expect_err("a replay too long to check whole is refused");
    assert!(
        e.0.contains("more decisions than one run's record holds"),
        "{}",
        e.0
    );
    assert!(e.0.contains("help: delete it"), "{}", e.0);
}
