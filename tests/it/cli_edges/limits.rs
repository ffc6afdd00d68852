//! Numbers at their limits: seed ranges, shards, `--jobs`, `--runs`, `diff
//! --width` and `bench`'s sizes, each accepted up to its bound and refused,
//! with the fix, one past it.

use crate::support::{case, run_case as check};
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

/// A run that retries into a dead network until it hits `max_steps`: one
/// operation, a 1 ms timeout and a 1 ms link, so it is all retries.
const ENDLESS_RETRIES: &str = r#"summary = "retries until the step limit"
[expect]
verdict = "inconclusive"
[run]
runs = 1
max_steps = 120000
[client]
key = "stable"
timeout_ms = 1
[client.retry]
policy = "fixed"
base_ms = 0
max_attempts = 0
[service]
idempotency = "claim-same-tx"
[network]
loss_per_mille = 1000
delay_ms_min = 1
delay_ms_max = 1
"#;

/// `max_steps` may be a billion, and a replay of such a run once held every
/// trace item (about 700 bytes an event: 21 GB at 30 million). The trace
/// now keeps both ends of a long run and marks what it left out, and the
/// HTML report gives a long run a page that says so: memory stays bounded
/// at any length, and a run of 360,000 entries shows the limit at work.
#[test]
fn a_long_run_is_traced_by_its_ends_and_the_report_says_it_is_too_long() {
    let dir = crate::support::scratch("cli_edges/long-run");
    std::fs::write(dir.join("endless.toml"), ENDLESS_RETRIES).unwrap();
    let (out, _) = check(
        &case(
            "a replay of a run longer than the trace keeps",
            &["replay", "endless.toml", "--seed", "0"],
        )
        .cwd(&dir)
        .code(3)
        .out("# endless · seed 0 · 120000 events")
        .out("not kept: the trace of a long run keeps its first and last 100000 entries, and its effects")
        .out("=> inconclusive: the run hit its max_steps limit."),
    );
    // The last step is there, whole, after the gap.
    let gap = out.find("not kept").unwrap();
    assert!(out[gap..].contains("#120000 "), "{out}");
    check(
        &case(
            "its report is a short page naming the text trace",
            &["report", "endless.toml", "--seed", "0", "-o", "long.html"],
        )
        .cwd(&dir)
        .code(3)
        .err("wrote long.html"),
    );
    let page = std::fs::read_to_string(dir.join("long.html")).unwrap();
    assert!(page.len() < 10_000, "{} bytes", page.len());
    assert!(page.contains("This run has 120000 events: the report draws runs of at most 100000."));
    assert!(page.contains("idemsim replay endless.toml --seed 0"));
    // It holds (inconclusive): there is nothing to shrink, so no such command.
    assert!(!page.contains("--shrink"), "{page}");

    // A diff keeps both runs' traces whole: a run over its bound is refused
    // with the way out, which then works.
    std::fs::write(
        dir.join("longer.toml"),
        ENDLESS_RETRIES.replace("max_steps = 120000", "max_steps = 250000"),
    )
    .unwrap();
    let set = [
        "diff",
        "longer.toml",
        "--seed",
        "0",
        "--set",
        "client.timeout_ms=2",
    ];
    check(
        &case("a diff of a run over its bound", &set)
            .cwd(&dir)
            .code(2)
            .err("error: run A has 250000 events, more than the 200000 a diff compares")
            .err(
                "help: compare shorter runs of both designs, e.g. with --both run.max_steps=200000",
            ),
    );
    let shorter = [&set[..], &["--both", "run.max_steps=200000"]].concat();
    check(
        &case("the same diff within the bound", &shorter)
            .cwd(&dir)
            .out("A => inconclusive: the run hit its max_steps limit"),
    );

    // Without a key, every retry that gets through after a minute of a dead
    // network pays again: a failure after about 120,000 events.
    let late_failure = ENDLESS_RETRIES
        .replace(
            "verdict = \"inconclusive\"",
            "verdict = \"violation\"\ninvariant = \"no-duplicate-effect\"",
        )
        .replace(
            "max_steps = 120000",
            "max_steps = 1000000\nfault_phase_ms = 60000",
        )
        .replace("key = \"stable\"", "key = \"none\"")
        .replace("idempotency = \"claim-same-tx\"", "idempotency = \"none\"");
    std::fs::write(dir.join("late.toml"), late_failure).unwrap();
    check(
        &case(
            "the report of a long failing run offers to shrink it",
            &["report", "late.toml", "--seed", "0", "-o", "late.html"],
        )
        .cwd(&dir)
        .code(1),
    );
    let page = std::fs::read_to_string(dir.join("late.html")).unwrap();
    assert!(page.contains("violation of no-duplicate-effect"), "{page}");
    assert!(
        page.contains("idemsim report late.toml --seed 0 --shrink -o REPORT.html"),
        "{page}"
    );
}

/// A coverage-guided search runs as one sequence and takes no shard, whether
/// `--strategy coverage` or the file's `run.strategy` asks for it; `--strategy
/// seeds` shards such a scenario's seeds, as merge's help says.
#[test]
fn a_shard_of_a_coverage_guided_search_is_refused() {
    // A fixture that states the strategy: no catalog scenario needs one.
    let searched = "tests/fixtures/strategy/coverage-low-loss.toml";
    let shard = ["check", searched, "--shard", "0/2", "--runs", "4", "--json"];
    check(
        &case("the file's run.strategy", &shard)
            .code(2)
            .err("run.strategy = \"coverage\"")
            .err("--strategy seeds"),
    );
    let explicit = [&shard[..], &["--strategy", "coverage"]].concat();
    check(&case("--strategy coverage", &explicit).code(2));
    let seeds = [&shard[..], &["--strategy", "seeds"]].concat();
    let (out, _) = check(&case("--strategy seeds", &seeds));
    assert!(out.contains("\"shard\":{\"count\":2"), "{out}");
}
