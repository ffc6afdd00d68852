//! Command-line edges (issue 10): each case is a command line a user or a
//! script may really give, with the exit code and the words it must produce.
//! Every case runs through the shared `common::run_case`, which also fails on
//! a panic, on a hang, and on an exit-2 message without a fix.

mod common;
#[path = "common/edges.rs"]
mod edges;

use common::{case, run_case as check, Stdout};
use edges::{edited, root, scratch, shards, user_scenario};
use std::time::Duration;

const TOP: &str = "18446744073709551615";

#[test]
fn seed_ranges_shards_and_jobs_at_their_limits() {
    let cases = [
        case(
            "a one-seed range at the top of u64 runs that seed and ends",
            &[
                "check",
                "--seeds",
                "18446744073709551614..18446744073709551615",
                "--jobs",
                "2",
            ],
        )
        .out("holds over 1 schedules (seeds 18446744073709551614..18446744073709551615)"),
        case(
            "the top seed range fails the same way when sharded",
            &[
                "check",
                "payment-retry-without-key",
                "--seeds",
                "18446744073709551000..18446744073709551615",
                "--shard",
                "1/2",
                "--no-shrink",
            ],
        )
        .code(1)
        .out("(seeds 18446744073709551307..18446744073709551615)"),
        case(
            "a shard of the top 10^12 seeds runs its half (interrupted to end it)",
            &[
                "check",
                "--seeds",
                &format!("18446743073709551615..{TOP}"),
                "--shard",
                "1/2",
                "--jobs",
                "1",
            ],
        )
        .interrupt(Duration::from_millis(1500))
        .code(130)
        .out("payment-stable-key: interrupted over ")
        .out("(seeds 18446743573709551615..")
        .out("did not; the counts cover only what ran"),
        case(
            "a seed range longer than --runs may be is refused, not run until killed",
            &["check", "--seeds", &format!("0..{TOP}")],
        )
        .code(2)
        .err("seed range 0..18446744073709551615 holds 18446744073709551615 seeds, more than 1000000000000")
        .err("give a range of at most 1000000000000 seeds, e.g. 0..1000000000000"),
        case(
            "one seed past the bound is refused too",
            &["check", "--seeds", "7..1000000000008", "--shard", "0/2"],
        )
        .code(2)
        .err("holds 1000000000001 seeds"),
        case(
            "--jobs has an upper bound",
            &["check", "--runs", "1", "--jobs", "100000"],
        )
        .code(2)
        .err("--jobs 100000 is more than 1024"),
        case("--jobs 0 is refused", &["verify", "--jobs", "0"])
            .code(2)
            .err("--jobs must be at least 1"),
        case(
            "sweep and bench share the bound",
            &[
                "sweep",
                "payment-stable-key",
                "--set",
                "client.key=stable",
                "--jobs",
                "5000",
            ],
        )
        .code(2)
        .err("more than 1024"),
        case(
            "a shard with no seeds says so and is not a verdict over 0 schedules",
            &["check", "--runs", "1", "--shard", "0/4"],
        )
        .out("no seeds ran: shard 0/4 of seeds 0..1 is empty")
        .not_out("over 0 schedules"),
        case(
            "its JSON verdict is no-seeds",
            &["check", "--runs", "2", "--shard", "0/3", "--json"],
        )
        .out("\"verdict\":\"no-seeds\""),
        case("--runs 0 is refused", &["check", "--runs", "0"])
            .code(2)
            .err("--runs must be at least 1"),
        case(
            "a reversed seed range is refused",
            &["check", "--seeds", "9..3"],
        )
        .code(2)
        .err("empty seed range 9..3"),
        case(
            "--runs past the file's own cap is refused, not run until killed",
            &["check", "--runs", TOP],
        )
        .code(2)
        .err("--runs 18446744073709551615 is more than 1000000000000")
        .err("--seeds A..B"),
        case("so is --max-runs 0", &["verify", "--max-runs", "0"])
            .code(2)
            .err("--max-runs must be at least 1"),
        case(
            "one key set twice is refused: the last value would win without a word",
            &[
                "check",
                "--runs",
                "5",
                "--set",
                "client.key=none",
                "--set",
                "client.key=stable",
            ],
        )
        .code(2)
        .err("--set client.key is given twice (client.key=none and client.key=stable)")
        .err("idemsim sweep"),
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn overrides_explore_designs_the_files_protections_do_not_fit() {
    let cases = [
        case(
            "a --set the file's own protections cannot be combined with still runs",
            &[
                "check",
                "chain-outbox-inbox",
                "--set",
                "service.idempotency=split-key-first",
                "--runs",
                "200",
                "--no-shrink",
                "--no-regressions",
            ],
        )
        .code(1)
        .out("chain-outbox-inbox: violation over ")
        .out("no-false-success"),
        case(
            "a protection broken as written is refused, --set or not",
            &[
                "check",
                "tests/fixtures/bad/protection-bad-override.toml",
                "--set",
                "client.timeout_ms=5000",
            ],
        )
        .code(2)
        .err("protection-bad-override.toml:5:")
        .err("cannot be removed"),
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn diff_width_is_validated() {
    let base = [
        "diff",
        "payment-retry-without-key",
        "--seed",
        "2",
        "--set",
        "client.key=stable",
    ];
    let with = |extra: &[&str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let cases = [
        (with(&["--width", "0"]), 2, "--width 0 is outside 20..=1000"),
        (with(&["--width", "19"]), 2, "--width 19 is outside"),
        (with(&["--width", TOP]), 2, "is outside 20..=1000"),
        (with(&["--width", "20"]), 0, ""),
        (with(&["--width", "1000", "--after", TOP]), 0, ""),
    ];
    for (args, code, err) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut c = case("diff --width", &args).code(code);
        if !err.is_empty() {
            c = c.err(err);
        } else {
            c = c.out("A => ");
        }
        check(&c);
    }
}

#[test]
fn a_closed_stdout_is_the_end_of_the_output_not_a_panic() {
    let cases = [
        case("idemsim list | head -1", &["list"]).stdout(Stdout::ClosedAfterOneLine),
        case("idemsim list >&-", &["list"]).stdout(Stdout::ClosedAtOnce),
        // Far more than a pipe holds: the writes after the first line all fail.
        case(
            "a long JSON trace into head -1",
            &[
                "replay",
                "payment-uncapped-retries",
                "--seed",
                "0",
                "--format",
                "json",
            ],
        )
        .stdout(Stdout::ClosedAfterOneLine)
        .code(3),
        case(
            "a failing check keeps its exit code when its reader left",
            &["check", "payment-retry-without-key", "--runs", "50"],
        )
        .stdout(Stdout::ClosedAtOnce)
        .code(1),
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn merge_refuses_corrupt_and_stale_summaries() {
    let dir = scratch("merge");
    let scenario = dir.join("mine.toml");
    std::fs::copy(
        root().join("scenarios/payment-retry-without-key.toml"),
        &scenario,
    )
    .expect("copy a scenario");
    let [s0, s1] = shards(&dir, "mine.toml");
    let (a, b) = (
        s0.to_string_lossy().into_owned(),
        s1.to_string_lossy().into_owned(),
    );
    let reversed = edited(&dir, &s0, "reversed.jsonl", |d| {
        d["seeds"] = serde_json::json!({"start": 200, "end": 0});
    });
    let unbalanced = edited(&dir, &s0, "unbalanced.jsonl", |d| {
        d["holds"] = serde_json::json!(d["holds"].as_u64().unwrap() + 1);
    });
    let wrapped = edited(&dir, &s0, "wrapped.jsonl", |d| {
        d["events"] = serde_json::json!(u64::MAX);
    });
    let wrapped2 = edited(&dir, &s1, "wrapped2.jsonl", |d| {
        d["events"] = serde_json::json!(u64::MAX);
    });
    let outside = edited(&dir, &s0, "outside.jsonl", |d| {
        d["failure"]["seed"] = serde_json::json!(399);
    });
    let cases = [
        case("the shards merge", &["merge", &a, &b]).code(1).out("violation over 400 schedules (seeds 0..400)"),
        case("a reversed range", &["merge", &reversed, &b])
            .code(2)
            .err("reversed.jsonl:1: corrupt summary: the seed range 200..0 is reversed"),
        case("counts that do not add up", &["merge", &unbalanced, &b])
            .code(2)
            .err("unbalanced.jsonl:1: corrupt summary: holds + violations + panics + inconclusive"),
        case("counts that wrap", &["merge", &wrapped, &wrapped2])
            .code(2)
            .err("corrupt summary: the events add up past 2^64"),
        case("a failing seed outside its shard", &["merge", &outside, &b])
            .code(2)
            .err("outside.jsonl:1: corrupt summary: the failing seed 399 is outside its range 0..200"),
        case("one shard twice", &["merge", &a, &a, &b])
            .code(2)
            .err("shard 0/2 is given twice"),
        case("a missing shard", &["merge", &b])
            .code(2)
            .err("shard 0/2 is not among the files: seeds 0..200 are missing"),
    ];
    for c in cases {
        check(&c.cwd(&dir));
    }
    // The scenario file changes after the shards ran: the merge cannot shrink
    // the shards' failing seed under the new text, and says so.
    let text = std::fs::read_to_string(&scenario).unwrap();
    std::fs::write(&scenario, text + "\n# edited after the shards ran\n").unwrap();
    check(
        &case(
            "the scenario changed after the shards ran",
            &["merge", &a, &b],
        )
        .cwd(&dir)
        .code(2)
        .err("the scenario changed after the shards ran"),
    );
    check(
        &case(
            "--no-shrink merges what the shards saw",
            &["merge", "--no-shrink", &a, &b],
        )
        .cwd(&dir)
        .code(1)
        .out("violation over 400 schedules"),
    );
}

#[test]
fn the_binary_works_outside_the_checkout_and_says_where_scenarios_come_from() {
    let away = scratch("away");
    let mine = away.join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    user_scenario(
        &mine,
        "payment-stable-key",
        "payment-stable-key",
        "My own stable key",
    );
    user_scenario(
        &mine,
        "my-retry",
        "payment-retry-without-key",
        "My retry without a key",
    );
    // Longer than the 40 columns the built-in names fit in.
    let long = "my-retry-without-a-key-and-a-name-far-longer-than-forty-characters";
    user_scenario(&mine, long, "payment-retry-without-key", "A long name");
    let long_then_verdict = format!("{long}  violation (no-duplicate-effect)");
    let mine_s = mine.to_string_lossy().into_owned();
    let cases = [
        case("list with no checkout", &["list"])
            .cwd(&away)
            .out("payment-stable-key")
            .out("built-in")
            .not_out("mine"),
        case(
            "check with no checkout",
            &["check", "payment-retry-without-key", "--runs", "100"],
        )
        .cwd(&away)
        .code(1)
        .out("repro: idemsim replay payment-retry-without-key --seed"),
        case(
            "verify one built-in with no checkout",
            &["verify", "payment-stable-key", "--max-runs", "50"],
        )
        .cwd(&away)
        .out("1 of 1 scenarios match"),
        case(
            "--scenarios adds a folder and reports shadowing",
            &["list", "--scenarios", "mine"],
        )
        .cwd(&away)
        .out("my-retry")
        .out("mine/my-retry.toml")
        .out("My own stable key")
        .out(&long_then_verdict)
        .err("note: mine/payment-stable-key.toml shadows built-in `payment-stable-key`"),
        case("IDEMSIM_SCENARIOS does the same", &["list", "--json"])
            .cwd(&away)
            .env("IDEMSIM_SCENARIOS", &mine_s)
            .out("\"source\":\"")
            .out("my-retry.toml")
            .out("\"shadows\":[\"built-in\"]"),
        case(
            "a user scenario by name is replayed by its path",
            &[
                "check",
                "my-retry",
                "--scenarios",
                "mine",
                "--runs",
                "100",
                "--no-shrink",
            ],
        )
        .cwd(&away)
        .code(1)
        .out("repro: idemsim replay mine/my-retry.toml --seed"),
        case(
            "a scenario given by path is replayed by that path",
            &["check", "mine/payment-stable-key.toml", "--runs", "30"],
        )
        .cwd(&away)
        .out("payment-stable-key: holds"),
        case(
            "a missing --scenarios folder",
            &["list", "--scenarios", "nowhere"],
        )
        .cwd(&away)
        .code(2)
        .err("--scenarios names `nowhere`, which is not a folder"),
        case("a near miss of a name", &["check", "payment-stable-ky"])
            .cwd(&away)
            .code(2)
            .err("did you mean `payment-stable-key`"),
    ];
    for c in &cases {
        check(c);
    }
    // The repro line of a path scenario replays that file, not the built-in of its name.
    let (out, _) = check(
        &case(
            "shadowing path scenario",
            &[
                "check",
                "mine/my-retry.toml",
                "--runs",
                "100",
                "--no-shrink",
            ],
        )
        .cwd(&away)
        .code(1),
    );
    let repro = out
        .lines()
        .find_map(|l| l.strip_prefix("repro: idemsim "))
        .expect("a repro line");
    let args: Vec<&str> = repro.split_whitespace().collect();
    check(
        &case("the repro line replays", &args)
            .cwd(&away)
            .code(1)
            .out("# my-retry"),
    );
}

#[test]
fn repro_files_are_checked_against_version_and_scenario() {
    let dir = scratch("repro");
    let file = dir.join("r.json");
    let f = file.to_string_lossy().into_owned();
    check(
        &case(
            "write a repro",
            &["shrink", "payment-retry-without-key", "--out", &f],
        )
        .cwd(&dir)
        .code(1),
    );
    check(
        &case("it replays", &["replay", "--repro", &f])
            .cwd(&dir)
            .code(1),
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["idemsim"] = serde_json::json!("0.0.1-old");
    let old = dir.join("old.json");
    std::fs::write(&old, v.to_string()).unwrap();
    let o = old.to_string_lossy().into_owned();
    check(
        &case("a repro of another version", &["replay", "--repro", &o])
            .cwd(&dir)
            .code(2)
            .err("written by idemsim 0.0.1-old, and this is idemsim"),
    );
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["scenario_hash"] = serde_json::json!("0000000000000000");
    let stale = dir.join("stale.json");
    std::fs::write(&stale, v.to_string()).unwrap();
    let s = stale.to_string_lossy().into_owned();
    check(
        &case(
            "a repro of another scenario text",
            &["replay", "--repro", &s],
        )
        .cwd(&dir)
        .code(2)
        .err("the scenario changed since"),
    );
}

#[test]
fn long_runs_say_where_their_output_was_bounded() {
    // A client that gives up after 3,000 lost attempts: a run of about 12,000 events
    // that fails at its end, with 6,000 decisions before it.
    let dir = scratch("long");
    let text = std::fs::read_to_string(root().join("scenarios/payment-give-up-silently.toml"))
        .unwrap()
        .replace("loss_per_mille = [0, 900]", "loss_per_mille = 1000")
        .replace("max_attempts = 3", "max_attempts = 3000")
        .replace("cap_ms = 8000", "cap_ms = 1")
        .replace("base_ms = 1000", "base_ms = 1")
        .replace("timeout_ms = 10000", "timeout_ms = 10");
    std::fs::write(dir.join("long.toml"), text).unwrap();
    let cases = [
        case(
            "the point of no return of a long run",
            &["replay", "long.toml", "--seed", "0"],
        )
        .cwd(&dir)
        .code(1)
        .out("· 11964 events")
        .out("the point of no return was searched among the last ")
        .out(" of 6000 decisions only: the run is long"),
        case(
            "a Mermaid diagram past Mermaid's limit is cut in the middle, with a warning",
            &["replay", "long.toml", "--seed", "0", "--format", "mermaid"],
        )
        .cwd(&dir)
        .code(1)
        .out("lines left out here: Mermaid renders at most 50000 characters")
        .err("warning: the Mermaid diagram of 11964 events would have "),
        case(
            "its JSON says how far the search went",
            &["replay", "long.toml", "--seed", "0", "--format", "json"],
        )
        .cwd(&dir)
        .code(1)
        .out("\"turn_search\":{\"decisions\":6000,\"searched\":"),
    ];
    for c in &cases {
        let (out, _) = check(c);
        if c.args.contains(&"mermaid".to_string()) {
            assert!(
                out.chars().count() <= 50_000,
                "{} characters",
                out.chars().count()
            );
        }
    }
}

#[test]
fn interrupts_print_what_ran_and_shrinking_keeps_its_budget() {
    let dir = scratch("budget");
    // A failing run of about 12,000 events: each shrinking rerun costs a replay of it.
    let text = std::fs::read_to_string(root().join("scenarios/payment-give-up-silently.toml"))
        .unwrap()
        .replace("loss_per_mille = [0, 900]", "loss_per_mille = 999")
        .replace("max_attempts = 3", "max_attempts = 3000")
        .replace("cap_ms = 8000", "cap_ms = 1")
        .replace("base_ms = 1000", "base_ms = 1")
        .replace("timeout_ms = 10000", "timeout_ms = 10");
    std::fs::write(dir.join("long.toml"), text).unwrap();
    let huge = "100000000000";
    let cases = [
        case(
            "Ctrl-C in sweep prints the rows that ran",
            &[
                "sweep",
                "payment-stable-key",
                "--set",
                "client.retry.max_attempts=1,2,3",
                "--runs",
                huge,
            ],
        )
        .interrupt(Duration::from_millis(800))
        .code(130)
        .out("client.retry.max_attempts")
        .out("interrupted (Ctrl-C): 1 of 3 variants ran, 1 ran seeds 0..")
        .out("the rows cover only what ran"),
        case(
            "Ctrl-C in verify prints the scenarios that ran",
            &["verify", "--runs", huge],
        )
        .interrupt(Duration::from_millis(800))
        .code(130)
        .out("interrupted (Ctrl-C) after seeds 0..")
        .out("not judged")
        .out("interrupted (Ctrl-C): 0 of "),
        case(
            "the rerun budget stops shrinking and the trace says so",
            &[
                "shrink",
                "payment-retry-without-key",
                "--shrink-max-runs",
                "3",
            ],
        )
        .code(1)
        .out("rerun budget hit (--shrink-max-runs): not minimal")
        .err("stopped after 3 reruns: rerun budget hit"),
        case(
            "the time budget stops shrinking and the trace says so",
            &[
                "shrink",
                "long.toml",
                "--seed",
                "0",
                "--shrink-budget-ms",
                "1",
            ],
        )
        .cwd(&dir)
        .code(1)
        .out("time budget hit (--shrink-budget-ms): not minimal")
        .err("time budget hit"),
        case(
            "check takes the same budget",
            &[
                "check",
                "payment-retry-without-key",
                "--runs",
                "50",
                "--shrink-max-runs",
                "2",
                "--json",
            ],
        )
        .code(1)
        .err("rerun budget hit (--shrink-max-runs): not minimal")
        .out("\"shrunk_events\":"),
        case(
            "a zero budget is refused",
            &["check", "--shrink-budget-ms", "0"],
        )
        .code(2)
        .err("--shrink-max-runs and --shrink-budget-ms must be at least 1"),
        case(
            "without shrinking there are no shrink figures",
            &[
                "check",
                "payment-retry-without-key",
                "--runs",
                "50",
                "--no-shrink",
                "--json",
            ],
        )
        .code(1)
        .out("\"lowest_failing_seed\":")
        .not_out("original_events")
        .not_out("situation_bits"),
    ];
    for c in &cases {
        check(c);
    }
}

/// `sweep --set` grids that would not compare what they say: each is refused
/// before any variant runs, with the fix.
#[test]
fn sweep_grids_refuse_what_they_cannot_compare() {
    let values = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let (a101, b101) = (
        format!("client.retry.max_attempts={}", values(101)),
        format!("client.timeout_ms={}", values(101)),
    );
    let (a1000, b1000, c1000) = (
        format!("client.retry.max_attempts={}", values(1000)),
        format!("client.timeout_ms={}", values(1000)),
        format!("client.retry.base_ms={}", values(1000)),
    );
    let cases = [
        case(
            "run.runs with several values: every variant ran the first",
            &[
                "sweep",
                "payment-retry-without-key",
                "--set",
                "run.runs=50,3",
                "--format",
                "csv",
            ],
        )
        .code(2)
        .not_out("violation")
        .err("--set run.runs=50,3")
        .err("use --runs: a sweep compares its variants on the same seeds"),
        case(
            "one value of run.runs is the seeds of every variant",
            &[
                "sweep",
                "payment-retry-without-key",
                "--set",
                "run.runs=7",
                "--set",
                "client.retry.max_attempts=1,2",
            ],
        )
        .out("2 variants, each on seeds 0..7"),
        case(
            "run.strategy=coverage: a sweep ran seeds anyway",
            &[
                "sweep",
                "payment-retry-without-key",
                "--runs",
                "5",
                "--set",
                "run.strategy=seeds,coverage",
            ],
        )
        .code(2)
        .not_out("variants")
        .err("--set run.strategy=coverage: a sweep runs seeds 0..N of every variant")
        .err("`idemsim check payment-retry-without-key --strategy coverage`"),
        case(
            "a file that asks for a coverage search is swept on seeds, and told so",
            &[
                "sweep",
                "payment-give-up-silently-low-loss",
                "--runs",
                "5",
                "--set",
                "client.retry.max_attempts=2,3",
            ],
        )
        .out("2 variants, each on seeds 0..5")
        .err("note: payment-give-up-silently-low-loss sets run.strategy = \"coverage\""),
        case(
            "a value given twice would print its row twice",
            &[
                "sweep",
                "payment-stable-key",
                "--runs",
                "5",
                "--set",
                "client.retry.max_attempts=3,3",
            ],
        )
        .code(2)
        .err("--set client.retry.max_attempts=3,3 gives the value 3 twice")
        .err("help: give each value once, e.g. --set client.retry.max_attempts=3"),
        case(
            "so would two spellings of one value",
            &[
                "sweep",
                "payment-stable-key",
                "--runs",
                "5",
                "--set",
                "client.key=stable,\"stable\"",
            ],
        )
        .code(2)
        .err("the variants client.key=stable and client.key=\"stable\" are the same scenario"),
        case(
            "a grid over the cap is refused with its count",
            &["sweep", "payment-stable-key", "--runs", "1", "--set", &a101, "--set", &b101],
        )
        .code(2)
        .err("the --set values make 10201 variants, more than 10000")
        .err("client.retry.max_attempts (101) x client.timeout_ms (101)")
        .err("help: give fewer values per key"),
        case(
            "a billion variants are refused at once, not loaded",
            &[
                "sweep",
                "payment-stable-key",
                "--runs",
                "1",
                "--set",
                &a1000,
                "--set",
                &b1000,
                "--set",
                &c1000,
            ],
        )
        .code(2)
        .err("make 1000000000 variants"),
        case(
            "a variant the scenario refuses is named",
            &[
                "sweep",
                "payment-stable-key",
                "--runs",
                "10",
                "--set",
                "client.retry.base_ms=0,50000",
            ],
        )
        .code(2)
        .err("error: variant 2 of 2 (client.retry.base_ms=50000): scenarios/payment-stable-key.toml:40:10: the backoff cap"),
        case(
            "values to try written as a list are shown written as values",
            &[
                "sweep",
                "payment-key-expired-before-retry",
                "--runs",
                "10",
                "--set",
                "service.retention_ms=[86400000, 259200000]",
            ],
        )
        .code(2)
        .err("help: to try each of these values, separate them with commas and no brackets: --set service.retention_ms=86400000,259200000"),
        case(
            "a range where a key takes one is a list, not values to try",
            &[
                "sweep",
                "payment-stable-key",
                "--runs",
                "10",
                "--set",
                "network.loss_per_mille=[0,100],[0,300]",
            ],
        )
        .code(0),
    ];
    for c in &cases {
        check(c);
    }
}

/// `sweep --html FILE` writes reports next to FILE: a FILE that cannot be a
/// page is refused before the sweep, and a write that fails leaves nothing.
#[test]
fn sweep_html_checks_its_target_first_and_writes_all_or_nothing() {
    let dir = scratch("sweep-html");
    std::fs::create_dir_all(dir.join("folder")).unwrap();
    let sweep = |html: &str| {
        vec![
            "sweep".to_string(),
            "payment-retry-without-key".into(),
            "--runs".into(),
            "20".into(),
            "--set".into(),
            "client.retry.max_attempts=2,3".into(),
            "--html".into(),
            html.to_string(),
        ]
    };
    let refused = [
        ("/dev/full", "--html /dev/full: is not a regular file"),
        ("/dev/null", "--html /dev/null: is not a regular file"),
        ("folder", "--html folder: is a folder, not a file"),
        ("-", "--html -: `-` is not a file here"),
        (
            "/dev/null/r.html",
            "--html /dev/null/r.html: /dev/null is not a folder",
        ),
    ];
    for (target, err) in refused {
        let args = sweep(target);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(
            &case("an --html target that is no file", &args)
                .cwd(&dir)
                .code(2)
                .not_out("variants")
                .err(err)
                .err("help: give the path of a new or regular file"),
        );
    }
    for stray in ["/dev/full-3-seed-2.html", "/dev/null-3-seed-2.html"] {
        assert!(!std::path::Path::new(stray).exists(), "{stray} was written");
    }
    let beside: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["folder"], "nothing beside the folder");
    // A report's name taken by a folder: the write fails, and no file is left.
    std::fs::create_dir_all(dir.join("out/r-3-seed-2.html")).unwrap();
    let args = sweep("out/r.html");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check(
        &case("a report that cannot be written", &args)
            .cwd(&dir)
            .code(2)
            .err("cannot write out/r-3-seed-2.html")
            .err("nothing was written"),
    );
    let left: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["r-3-seed-2.html"], "only the folder that was there");
    std::fs::remove_dir(dir.join("out/r-3-seed-2.html")).unwrap();
    check(
        &case("the same sweep writes the page and both reports", &args)
            .cwd(&dir)
            .err("wrote out/r.html and 2 report(s)"),
    );
    let mut written: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    assert_eq!(written, ["r-2-seed-2.html", "r-3-seed-2.html", "r.html"]);
}

/// `bench`'s sizes have ranges: past them a count wrapped or never ended.
#[test]
fn bench_sizes_have_ranges() {
    let cases = [
        case(
            "--alloc-runs at the top of u64 wrapped into a false claim",
            &["bench", "--runs", "10", "--jobs", "1", "--alloc-runs", TOP],
        )
        .code(2)
        .not_out("allocations")
        .err("--alloc-runs 18446744073709551615 is more than 10000000")
        .err("help: give 0 (do not count allocations) to 10000000"),
        case(
            "10^12 of them never ended",
            &[
                "bench",
                "--runs",
                "10",
                "--jobs",
                "1",
                "--alloc-runs",
                "1000000000000",
            ],
        )
        .code(2)
        .err("--alloc-runs 1000000000000 is more than 10000000"),
        case(
            "--rounds past --runs",
            &["bench", "--runs", "10", "--jobs", "1", "--rounds", TOP],
        )
        .code(2)
        .err("--rounds 18446744073709551615 is more than --runs 10")
        .err("help: give --rounds 1 to 10"),
        case(
            "the default rounds fit a short run",
            &["bench", "--runs", "3", "--jobs", "1", "--alloc-runs", "0"],
        )
        .out("3 schedules (seeds 0..3)"),
        case(
            "--find ignored --runs",
            &["bench", "--find", "--runs", "10"],
        )
        .code(2)
        .err("--runs does not apply to bench --find")
        .err("give --find-budget N"),
        case(
            "and --alloc-runs",
            &["bench", "--find", "--alloc-runs", "10"],
        )
        .code(2)
        .err("--alloc-runs does not apply to bench --find"),
        case(
            "--find-budget has the range of --runs",
            &["bench", "--find", "--find-budget", TOP],
        )
        .code(2)
        .err("--find-budget 18446744073709551615 is outside 1 to 1000000000000"),
    ];
    for c in &cases {
        check(c);
    }
}
