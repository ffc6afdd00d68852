//! The CLI of issue 5: parallel sweeps, shards and merge, exhaustive mode,
//! bench and Ctrl-C, through the real binary.

use crate::support;

use std::process::{Command, Output, Stdio};
use support::{idemsim, scratch};

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

fn summary_data(line: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(line.trim()).expect("a JSON line");
    assert_eq!(v["type"], "summary");
    v["data"].clone()
}

/// The `verify` record of a one-scenario verify's JSON lines.
fn verify_data(out: &str) -> serde_json::Value {
    let line = out.lines().next().expect("a line");
    let v: serde_json::Value = serde_json::from_str(line.trim()).expect("a JSON line");
    assert_eq!(v["type"], "verify", "{line}");
    v["data"].clone()
}

#[test]
fn jobs_do_not_change_the_output() {
    for scenario in ["payment-stable-key", "payment-retry-without-key"] {
        let one = idemsim(&["check", scenario, "--runs", "3000", "--jobs", "1", "--json"]);
        let two = idemsim(&["check", scenario, "--runs", "3000", "--jobs", "2", "--json"]);
        assert_eq!(one.status.code(), two.status.code());
        assert_eq!(stdout(&one), stdout(&two), "{scenario}");
        assert_eq!(one.stderr, two.stderr, "{scenario}");
        assert_eq!(summary_data(&stdout(&one))["schedules"], 3000);
    }
}

#[test]
fn merged_shards_equal_one_machine() {
    for scenario in ["payment-stable-key", "payment-retry-without-key"] {
        let whole = idemsim(&["check", scenario, "--runs", "2500", "--json"]);
        let dir = scratch(&format!("perf_cli/shards-{scenario}"));
        let mut files = Vec::new();
        for i in 0..3 {
            let shard = format!("{i}/3");
            let out = idemsim(&[
                "check", scenario, "--runs", "2500", "--shard", &shard, "--json",
            ]);
            let data = summary_data(&stdout(&out));
            assert!(data["schedules"].as_u64().expect("count") < 2500);
            let path = dir.join(format!("{scenario}-{i}.jsonl"));
            std::fs::write(&path, &out.stdout).expect("write shard");
            files.push(path.to_string_lossy().into_owned());
        }
        // Order of the files does not matter.
        files.reverse();
        let mut args = vec!["merge", "--json"];
        args.extend(files.iter().map(String::as_str));
        let merged = idemsim(&args);
        assert_eq!(stdout(&merged), stdout(&whole), "{scenario}");
        assert_eq!(merged.stderr, whole.stderr, "{scenario}");
        assert_eq!(merged.status.code(), whole.status.code());

        // A missing shard is refused, not merged into a summary that lies.
        let gap = idemsim(&["merge", &files[0], &files[2]]);
        assert_eq!(gap.status.code(), Some(2));
        let err = String::from_utf8_lossy(&gap.stderr);
        assert!(err.contains("are missing"), "{err}");
    }
}

#[test]
fn exhaustive_finds_the_retry_bug_with_one_fault() {
    let out = idemsim(&[
        "check",
        "payment-retry-without-key",
        "--exhaustive",
        "--max-faults",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("shortest counterexample: 1 fault"), "{text}");
    assert!(text.contains("no-duplicate-effect"), "{text}");
    assert!(
        text.contains("link:service->client decision #0 = 1"),
        "{text}"
    );
    assert!(
        text.contains("✗ reply lost"),
        "the trace is printed: {text}"
    );
}

#[test]
fn exhaustive_holds_for_the_stable_key() {
    let out = idemsim(&[
        "check",
        "payment-stable-key",
        "--exhaustive",
        "--max-faults",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON");
    assert_eq!(v["type"], "exhaustive");
    let d = &v["data"];
    assert_eq!(d["verdict"], "holds");
    assert_eq!(d["complete"], true);
    // K = 1 runs the all-zero schedule plus one per decision point it meets.
    let k1 = d["schedules"].as_u64().expect("count");
    assert!(k1 > 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("holds for every schedule with at most 1 fault"),
        "{err}"
    );
    // The claim covers each delay at its range's ends only, and says so:
    // "every schedule" is not every delay in between.
    assert!(
        err.contains("delays only at each range's minimum or maximum"),
        "{err}"
    );
    // One more fault allowed: strictly more schedules, still holds.
    let k2 = idemsim(&[
        "check",
        "payment-stable-key",
        "--exhaustive",
        "--max-faults",
        "2",
        "--json",
    ]);
    assert_eq!(k2.status.code(), Some(0));
    let v2: serde_json::Value = serde_json::from_str(stdout(&k2).trim()).expect("JSON");
    assert!(v2["data"]["schedules"].as_u64().expect("count") > k1);
}

/// Without a counterexample, an inconclusive enumeration names the first
/// schedule that hit a limit, and its repro replays to the same limit.
#[test]
fn exhaustive_names_the_schedule_that_hit_a_limit_and_writes_its_repro() {
    let dir = scratch("perf_cli/inconclusive");
    let repro = dir.join("limit.json");
    let repro = repro.to_str().expect("UTF-8 path");
    let args = [
        "check",
        "payment-stable-key",
        "--exhaustive",
        "--max-faults",
        "2",
        "--set",
        "run.max_steps=15",
        "--repro-out",
        repro,
        "--json",
    ];
    let out = idemsim(&args);
    assert_eq!(out.status.code(), Some(3), "inconclusive");
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON");
    let first = &v["data"]["first_inconclusive"];
    assert_eq!(first["limit"], "max_steps", "{v}");
    assert!(first["record"].is_object(), "{v}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("first schedule that hit a limit (max_steps):"),
        "{err}"
    );
    let replay = idemsim(&["replay", "--repro", repro]);
    assert_eq!(
        replay.status.code(),
        Some(3),
        "the repro hits the limit again"
    );
    assert!(stdout(&replay).contains("hit its max_steps limit"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exhaustive_output_does_not_depend_on_jobs() {
    let cases: [&[&str]; 4] = [
        &["payment-stable-key", "--max-faults", "2"],
        &["payment-retry-without-key", "--max-faults", "2"],
        &["messaging-inbox-separate-tx", "--max-faults", "2"],
        // Cut by the bound in the middle of the enumeration.
        &[
            "payment-stable-key",
            "--max-faults",
            "3",
            "--max-schedules",
            "700",
        ],
    ];
    for case in cases {
        let run = |jobs: &str, json: bool| {
            let mut args = vec!["check", "--exhaustive", "--jobs", jobs];
            args.extend_from_slice(case);
            if json {
                args.push("--json");
            }
            idemsim(&args)
        };
        for json in [false, true] {
            let one = run("1", json);
            let two = run("2", json);
            assert_eq!(one.status.code(), two.status.code(), "{case:?}");
            assert_eq!(stdout(&one), stdout(&two), "{case:?}");
            assert_eq!(one.stderr, two.stderr, "{case:?}");
        }
        let text = stdout(&run("2", false));
        assert!(text.contains("enumerated: "), "{text}");
    }
}

#[test]
fn exhaustive_is_bounded_by_max_schedules() {
    let out = idemsim(&[
        "check",
        "payment-stable-key",
        "--exhaustive",
        "--max-faults",
        "3",
        "--max-schedules",
        "10",
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "hitting the bound is inconclusive"
    );
    assert!(stdout(&out).contains("stopped at --max-schedules 10"));
}

#[test]
fn bench_json_has_the_required_keys() {
    let out = idemsim(&["bench", "--runs", "400", "--jobs", "1", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON");
    assert_eq!(v["type"], "bench");
    let d = &v["data"];
    for key in [
        "schedules_per_sec",
        "events_per_sec",
        "baseline_events_per_sec",
        "overhead_ratio",
    ] {
        let x = d[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} missing: {d}"));
        assert!(x > 0.0, "{key} = {x}");
    }
    assert_eq!(d["schedules"], 400);
    assert_eq!(d["scenario"], "payment-stable-key");
    assert_eq!(d["model"], "payment");
    // The binary counts allocations; the figure is a number, not null.
    assert!(d["allocs_per_run"].as_f64().is_some(), "{d}");
}

#[test]
fn bench_all_measures_the_reference_scenario_of_every_model() {
    let out = idemsim(&[
        "bench",
        "--all",
        "--runs",
        "300",
        "--alloc-runs",
        "100",
        "--jobs",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let models: Vec<&str> = lines
        .iter()
        .map(|v| v["data"]["model"].as_str().expect("model"))
        .collect();
    // One line per model of the registry, each model once.
    let mut unique = models.clone();
    unique.dedup();
    assert_eq!(unique, models);
    assert!(
        models.contains(&"payment") && models.contains(&"messaging"),
        "{models:?}"
    );
    for v in &lines {
        assert_eq!(v["type"], "bench");
        let d = &v["data"];
        for key in [
            "schedules_per_sec",
            "events_per_sec",
            "overhead_ratio",
            "allocs_per_run",
            "peak_rss_kib",
        ] {
            assert!(d[key].as_f64().is_some(), "{key} missing: {d}");
        }
        assert_eq!(d["verdict"], "holds", "a reference scenario holds: {d}");
        // Warm runs allocate nothing; a buffer that grows once in a while
        // is a few hundredths at most, and an allocation on the path of
        // every effect or message (a name formatted before it is needed)
        // is one or more per run. A count, not a timing.
        let allocs = d["allocs_per_run"].as_f64().expect("allocs_per_run");
        assert!(allocs < 0.5, "allocations on the hot path: {d}");
    }
    let scenarios: Vec<&str> = lines
        .iter()
        .map(|v| v["data"]["scenario"].as_str().expect("scenario"))
        .collect();
    assert!(scenarios.contains(&"payment-stable-key"));
    assert!(scenarios.contains(&"messaging-outbox-inbox"));
}

#[test]
fn bench_refuses_zero_rounds_and_says_why_allocations_were_not_counted() {
    let out = idemsim(&["bench", "--runs", "10", "--rounds", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rounds must be at least 1"));
    let out = idemsim(&["bench", "--runs", "10", "--alloc-runs", "0", "--jobs", "1"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("allocations: not counted (--alloc-runs 0)"),
        "{text}"
    );
    let out = idemsim(&["bench", "--runs", "10", "--alloc-runs", "50", "--jobs", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("per run (50 runs on a warm simulator)"),
        "{text}"
    );
}

#[test]
fn shard_out_of_range_is_a_usage_error() {
    let out = idemsim(&["check", "--runs", "10", "--shard", "3/3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("numbered 0 to N-1"));
}

#[cfg(unix)]
#[test]
fn ctrl_c_prints_what_ran() {
    let child = Command::new(support::idemsim_bin())
        .args(["check", "payment-stable-key", "--runs", "1000000000000"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("idemsim starts");
    support::cli::wait_for_sigint_handler(child.id());
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let out = child.wait_with_output().expect("idemsim ends");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(text.contains("interrupted after"), "{text}");
    assert!(
        text.contains("payment-stable-key: interrupted over"),
        "{text}"
    );
}

#[test]
fn swarm_partitions_fire_and_show_in_the_trace() {
    let set = "network.random_partition_per_mille=[0,500]";
    let one = idemsim(&[
        "check", "--runs", "2000", "--set", set, "--jobs", "1", "--json",
    ]);
    let two = idemsim(&[
        "check", "--runs", "2000", "--set", set, "--jobs", "2", "--json",
    ]);
    assert_eq!(stdout(&one), stdout(&two));
    let d = summary_data(&stdout(&one));
    assert_eq!(d["verdict"], "holds");
    assert!(
        d["faults"]["partitioned"].as_u64().expect("count") > 0,
        "{d}"
    );
    // Without the key nothing is partitioned: the default draws no partition.
    let plain = summary_data(&stdout(&idemsim(&["check", "--runs", "2000", "--json"])));
    assert_eq!(plain["faults"]["partitioned"], 0);
    // Some seed among the first few draws one, and its trace says which.
    let shown = (0..20).any(|seed| {
        let seed = seed.to_string();
        let out = idemsim(&[
            "replay",
            "payment-stable-key",
            "--seed",
            &seed,
            "--set",
            set,
        ]);
        stdout(&out).contains("swarm mix: cut off from")
    });
    assert!(shown);
}

#[test]
fn exhaustive_counterexample_replays_from_its_repro_file() {
    let path = scratch("perf_cli/exhaustive").join("exhaustive.repro.json");
    let path = path.to_string_lossy().into_owned();
    let out = idemsim(&[
        "check",
        "payment-retry-without-key",
        "--exhaustive",
        "--max-faults",
        "1",
        "--repro-out",
        &path,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains(&format!("repro: idemsim replay --repro {path}")));
    let replay = idemsim(&["replay", "--repro", &path]);
    assert_eq!(replay.status.code(), Some(1), "the repro fails again");
    assert!(stdout(&replay).contains("no-duplicate-effect"));
}

const RARE: &str = "payment-give-up-silently-low-loss";

#[test]
fn coverage_search_finds_the_rare_bug_that_seeds_miss() {
    // Seeds: the scenario's 2,000 runs see nothing.
    let seeds = idemsim(&[
        "check",
        RARE,
        "--strategy",
        "seeds",
        "--no-shrink",
        "--json",
    ]);
    assert_eq!(seeds.status.code(), Some(0), "no seed of 2,000 fails");
    // Coverage-guided: found, the same way each time.
    let path = scratch("perf_cli/rare").join("rare.repro.json");
    let path = path.to_string_lossy().into_owned();
    let run = || {
        idemsim(&[
            "check",
            RARE,
            "--strategy",
            "coverage",
            "--json",
            "--repro-out",
            &path,
        ])
    };
    let (a, b) = (run(), run());
    assert_eq!(a.status.code(), Some(1));
    assert_eq!(
        stdout(&a),
        stdout(&b),
        "a seed, a budget, a scenario: one search"
    );
    let d = summary_data(stdout(&a).lines().last().expect("a line"));
    assert_eq!(d["strategy"], "coverage");
    assert_eq!(d["invariant"], "no-lost-effect");
    let n = d["schedules"].as_u64().expect("count");
    assert!(n <= 1000, "found within 1,000 schedules, not {n}");
    let err = String::from_utf8_lossy(&a.stderr);
    assert!(
        err.contains("found by coverage-guided search after"),
        "{err}"
    );
    assert!(
        err.contains("shrunk from coverage-guided schedule"),
        "{err}"
    );
    // The shrunk record replays the violation.
    let replay = idemsim(&["replay", "--repro", &path]);
    assert_eq!(replay.status.code(), Some(1));
    assert!(stdout(&replay).contains("no-lost-effect"));
    // Another search seed is another search, still deterministic.
    let other = idemsim(&[
        "check",
        RARE,
        "--strategy",
        "coverage",
        "--seeds",
        "7..2007",
        "--no-shrink",
    ]);
    assert_eq!(other.status.code(), Some(1));
    // The file names no strategy: plain `check` runs the portfolio, whose
    // search parts find it after the seeds.
    let plain = idemsim(&["check", RARE, "--no-shrink", "--json"]);
    assert_eq!(plain.status.code(), Some(1), "{}", stdout(&plain));
    let d = summary_data(stdout(&plain).lines().last().expect("a line"));
    assert_eq!(d["invariant"], "no-lost-effect");
}

/// `verify` and `shrink` find the rare bug without a stated strategy too:
/// when the seeds miss the violation a file expects, both run `check`'s
/// two searches after them, as `check` does, and show the failure it
/// shows: exhaustive search's at fault bound 3.
#[test]
fn verify_and_shrink_search_after_the_seeds_a_file_that_names_no_strategy() {
    let verify = idemsim(&["verify", RARE, "--json"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stdout(&verify));
    let d = verify_data(&stdout(&verify));
    assert_eq!(d["matched"], true, "{d}");
    assert_eq!(d["strategy"], "seeds", "{d}");
    assert_eq!(
        d["schedules"], 2000,
        "the 2,000 seeds, then the searches: {d}"
    );
    assert_eq!(d["lowest_failing_seed"], serde_json::Value::Null, "{d}");
    assert_eq!(d["portfolio"]["found_by"], "exhaustive", "{d}");
    assert_eq!(d["portfolio"]["exhaustive"]["max_faults"], 3, "{d}");
    let shrink = idemsim(&["shrink", RARE]);
    assert_eq!(shrink.status.code(), Some(1), "{}", stdout(&shrink));
    assert!(
        stdout(&shrink).contains("shrunk from exhaustive schedule with at most 3 faults"),
        "{}",
        stdout(&shrink)
    );
    // A holding design's sweep stays its seeds: nothing runs after them.
    let held = idemsim(&["verify", "payment-stable-key", "--runs", "50", "--json"]);
    let d = verify_data(&stdout(&held));
    assert_eq!(d["strategy"], "seeds", "{d}");
    assert_eq!(d["schedules"], 50, "{d}");
}

#[test]
fn bench_find_compares_the_strategies_on_every_catalog_bug() {
    let out = idemsim(&["bench", "--find", "--find-budget", "20000", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let rows: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON")["data"].clone())
        .collect();
    assert!(rows.len() >= 30, "every scenario that expects a violation");
    for d in &rows {
        let best = d["best"]
            .as_str()
            .unwrap_or_else(|| panic!("found by some strategy: {d}"));
        let n = d[best]["schedules"].as_u64().expect("count");
        assert!(
            n <= 1000,
            "{}: the best strategy needs {n} schedules",
            d["scenario"]
        );
        for s in ["random", "swarm", "exhaustive", "coverage"] {
            assert!(d[s]["found"].is_boolean(), "{d}");
        }
    }
    let rare = rows
        .iter()
        .find(|d| d["scenario"] == RARE)
        .expect("the rare bug is in the catalog");
    // Rarer than 1 in 10,000 for seeds; within 1,000 for the coverage-guided search.
    for s in ["random", "swarm"] {
        assert!(
            rare[s]["schedules"].as_u64().is_none_or(|n| n > 10_000),
            "{s}: {rare}"
        );
    }
    assert!(rare["coverage"]["schedules"].as_u64().expect("found") <= 1000);
}
