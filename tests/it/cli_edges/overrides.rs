//! `--set` overrides: a design the file's own protections do not fit still
//! runs, and the `sweep` grids built from them are refused when they would not
//! compare what they say.

use crate::support::{case, run_case as check};

/// A scenario file that states `run.strategy = "coverage"` (no catalog
/// scenario needs to any more).
const COVERAGE_FILE: &str = "tests/fixtures/strategy/coverage-low-loss.toml";

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
                COVERAGE_FILE,
                "--runs",
                "5",
                "--set",
                "client.retry.max_attempts=2,3",
            ],
        )
        .out("2 variants, each on seeds 0..5")
        .err(&format!("note: {COVERAGE_FILE} sets run.strategy = \"coverage\"")),
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
        .err("error: variant 2 of 2 (client.retry.base_ms=50000): scenarios/payment-stable-key.toml:41:10: the backoff cap"),
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
