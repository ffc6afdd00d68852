//! `idemsim sweep` and `idemsim diff` as a user meets them: real differences
//! between designs, honest intervals, output independent of threads, clear
//! errors, the parting step of two runs, and a plot that is well-formed SVG.

use crate::support;

mod plot;
mod tables;

use support::run as check;

use idemsim::stats;

/// The `variant` records of a JSON Lines sweep, in row order.
fn variants(jsonl: &str) -> Vec<serde_json::Value> {
    let mut lines = jsonl.lines();
    let head: serde_json::Value = serde_json::from_str(lines.next().expect("a header")).unwrap();
    assert_eq!(head["type"], "sweep");
    let rows: Vec<serde_json::Value> = lines
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON Lines");
            assert_eq!(v["type"], "variant", "{l}");
            v["data"].clone()
        })
        .collect();
    assert_eq!(head["data"]["variants"].as_u64(), Some(rows.len() as u64));
    rows
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is a number"))
}

/// Every row's interval contains its estimate, and a retrying client makes at least one attempt.
fn assert_consistent(row: &serde_json::Value) {
    let rate = f(&row["violation_rate"]);
    let (lo, hi) = (f(&row["ci95"][0]), f(&row["ci95"][1]));
    assert!(lo <= rate && rate <= hi && hi <= 1.0 && lo >= 0.0, "{row}");
    assert!(
        hi > lo,
        "an interval over a finite sample has a width: {row}"
    );
    assert!(f(&row["attempts_per_operation"]) >= 1.0, "{row}");
    let failing = row["failing"].as_u64().unwrap() as f64;
    assert_eq!(rate, failing / row["schedules"].as_f64().unwrap(), "{row}");
}

#[test]
fn a_stable_key_without_dedup_at_the_service_pays_twice_and_with_it_once() {
    let (out, _) = check(
        &[
            "sweep",
            "payment-retry-without-key",
            "--set",
            "service.idempotency=none,claim-same-tx",
            "--set",
            "client.key=stable",
            "--runs",
            "300",
            "--format",
            "json",
        ],
        0,
    );
    let rows = variants(&out);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_consistent(r);
        assert_eq!(r["set"]["client.key"], "stable");
    }
    let (none, claim) = (&rows[0], &rows[1]);
    assert_eq!(none["set"]["service.idempotency"], "none");
    assert!(f(&none["violation_rate"]) > 0.0, "{none}");
    assert_eq!(none["invariant"], "no-duplicate-effect");
    assert_eq!(f(&none["duplicate_rate"]), f(&none["violation_rate"]));
    assert_eq!(claim["verdict"], "holds", "{claim}");
    assert_eq!(f(&claim["violation_rate"]), 0.0);
    assert!(f(&claim["ci95"][1]) > 0.0, "zero failures still leave room");
    // Only the service with dedup keeps keys.
    assert_eq!(none["peak_dedup_keys"], 0);
    assert_eq!(claim["peak_dedup_keys"], 1);
    // Same seeds: both designs met the same lost replies.
    assert_eq!(none["unknown_rate"], claim["unknown_rate"]);
}

#[test]
fn without_a_key_one_attempt_is_safe_and_three_are_not() {
    let (out, _) = check(
        &[
            "sweep",
            "payment-retry-without-key",
            "--set",
            "client.retry.max_attempts=1,3",
            "--runs",
            "300",
            "--format",
            "json",
        ],
        0,
    );
    let rows = variants(&out);
    for r in &rows {
        assert_consistent(r);
    }
    let (one, three) = (&rows[0], &rows[1]);
    assert_eq!(f(&one["violation_rate"]), 0.0, "{one}");
    assert_eq!(f(&one["attempts_per_operation"]), 1.0, "{one}");
    assert!(f(&one["unknown_rate"]) > 0.0, "replies got lost: {one}");
    assert!(f(&three["violation_rate"]) > 0.0, "{three}");
    assert!(f(&three["attempts_per_operation"]) > 1.0, "{three}");
    let (p50, p99) = (
        three["effect_p50_us"].as_u64().unwrap(),
        three["effect_p99_us"].as_u64().unwrap(),
    );
    assert!(0 < p50 && p50 <= p99, "{three}");
}

#[test]
fn wilson_matches_known_values() {
    let close = |a: (f64, f64), b: (f64, f64)| {
        assert!(
            (a.0 - b.0).abs() < 1e-4 && (a.1 - b.1).abs() < 1e-4,
            "{a:?} vs {b:?}"
        )
    };
    close(stats::wilson(0, 10, stats::Z95), (0.0, 0.2775));
    close(stats::wilson(5, 10, stats::Z95), (0.2366, 0.7634));
    close(stats::wilson(10, 10, stats::Z95), (0.7225, 1.0));
    close(stats::wilson(1, 100, stats::Z95), (0.0018, 0.0545));
    for (k, n) in [(0, 1), (3, 7), (999, 1000), (1000, 1000)] {
        let (lo, hi) = stats::wilson(k, n, stats::Z95);
        let p = k as f64 / n as f64;
        assert!(0.0 <= lo && lo <= p && p <= hi && hi <= 1.0, "{k}/{n}");
    }
}

#[test]
fn quantiles_are_values_that_occurred() {
    let v: Vec<u64> = (1..=100).collect();
    assert_eq!(stats::quantile_sorted(&v, 0.5), Some(50));
    assert_eq!(stats::quantile_sorted(&v, 0.99), Some(99));
    assert_eq!(stats::quantile_sorted(&[7], 0.99), Some(7));
    assert_eq!(stats::quantile_sorted(&[], 0.5), None);
}

#[test]
fn output_does_not_depend_on_jobs() {
    for format in ["table", "json", "csv"] {
        let args = |jobs| {
            [
                "sweep",
                "payment-stable-key",
                "--set",
                "service.idempotency=none,claim-same-tx",
                "--set",
                "bank.accepts_key=true,false",
                "--runs",
                "200",
                "--format",
                format,
                "--jobs",
                jobs,
            ]
        };
        let (one, _) = check(&args("1"), 0);
        let (two, _) = check(&args("2"), 0);
        assert_eq!(one, two, "--format {format}");
    }
}

#[test]
fn a_bad_key_or_value_is_the_scenario_error_with_exit_2() {
    let (_, err) = check(
        &[
            "sweep",
            "payment-stable-key",
            "--set",
            "client.retry.max_attemps=1,3",
            "--runs",
            "10",
        ],
        2,
    );
    assert!(err.contains("unknown field `max_attemps`"), "{err}");
    assert!(err.contains("did you mean `max_attempts`?"), "{err}");
    let (_, err) = check(
        &[
            "sweep",
            "payment-stable-key",
            "--set",
            "service.idempotency=claim-same-tx,maybe",
        ],
        2,
    );
    assert!(err.contains("unknown value \"maybe\""), "{err}");
    let (_, err) = check(&["sweep", "payment-stable-key", "--set", "client.key="], 2);
    assert!(err.contains("empty value"), "{err}");
}

#[test]
fn values_may_be_toml_arrays_with_commas() {
    let (out, _) = check(
        &[
            "sweep",
            "payment-stable-key",
            "--set",
            "network.loss_per_mille=[0,100],50",
            "--runs",
            "20",
            "--format",
            "csv",
        ],
        0,
    );
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(rows[0].starts_with("\"[0,100]\","), "{out}");
    assert!(rows[1].starts_with("50,"), "{out}");
}

#[test]
fn diff_shows_where_the_runs_part_and_both_outcomes() {
    let (out, _) = check(
        &[
            "sweep",
            "payment-retry-without-key",
            "--set",
            "client.key=stable",
            "--runs",
            "300",
            "--format",
            "json",
        ],
        0,
    );
    let seed = variants(&out)[0]["lowest_failing_seed"]
        .as_u64()
        .expect("a failing seed")
        .to_string();
    let (out, _) = check(
        &[
            "diff",
            "payment-retry-without-key",
            "--seed",
            &seed,
            "--set",
            "service.idempotency=claim-same-tx",
            "--set",
            "client.key=stable",
        ],
        0,
    );
    let part = out
        .lines()
        .position(|l| l.contains("the runs part here"))
        .unwrap_or_else(|| panic!("a parting line:\n{out}"));
    let before = out.lines().take(part).collect::<Vec<_>>().join("\n");
    let after = out.lines().skip(part).collect::<Vec<_>>().join("\n");
    // Same lost reply, same retry, in both runs before they part.
    assert!(before.contains("reply lost"), "{out}");
    assert!(before.contains("client-retried"), "{out}");
    // Then A pays again and B answers from the key's record.
    assert!(after.contains("transfer #2 for claim 4711"), "{out}");
    assert!(after.contains("duplicate-after-commit"), "{out}");
    assert!(
        out.contains("A => violation of no-duplicate-effect"),
        "{out}"
    );
    assert!(out.contains("B => every invariant holds"), "{out}");
}

#[test]
fn diff_of_a_change_that_does_not_matter_says_so() {
    let (out, _) = check(
        &[
            "diff",
            "payment-stable-key",
            "--seed",
            "1",
            "--set",
            "service.retention_ms=2592000001",
        ],
        0,
    );
    assert!(!out.contains("the runs part here"), "{out}");
    assert!(out.contains("makes no difference"), "{out}");
}

/// A minimal XML check: every tag closes in order, attributes are quoted.
pub(super) fn assert_well_formed(xml: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find('<') {
        let close = rest[i..].find('>').expect("every tag ends") + i;
        let tag = &rest[i + 1..close];
        rest = &rest[close + 1..];
        assert!(!tag.contains('<'), "a tag inside a tag: {tag}");
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "closing </{name}>");
            continue;
        }
        let name = tag
            .split_whitespace()
            .next()
            .expect("a tag has a name")
            .trim_end_matches('/')
            .to_string();
        assert_eq!(tag.matches('"').count() % 2, 0, "quotes balance in <{tag}>");
        names.push(name.clone());
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    names
}

#[test]
fn the_plot_is_well_formed_svg_with_one_line_per_series() {
    let path = support::scratch("sweep/plot").join("plot.svg");
    let file = path.to_str().unwrap();
    check(
        &[
            "sweep",
            "payment-retry-without-key",
            "--set",
            "client.retry.max_attempts=1,2,4",
            "--set",
            "client.key=none,stable",
            "--set",
            "service.idempotency=claim-same-tx",
            "--runs",
            "100",
            "--plot",
            file,
        ],
        0,
    );
    let svg = std::fs::read_to_string(&path).expect("the plot was written");
    std::fs::remove_file(&path).ok();
    assert!(svg.starts_with("<?xml"), "{svg}");
    let names = assert_well_formed(&svg);
    assert_eq!(names[0], "svg");
    let count = |n: &str| names.iter().filter(|x| *x == n).count();
    assert_eq!(count("path"), 2, "one line per value of client.key");
    assert_eq!(count("polygon"), 2, "one band per line");
    assert_eq!(count("circle"), 6, "one marker per variant");
    assert!(svg.contains("client.key=stable") && svg.contains("client.key=none"));
    assert!(!svg.contains("<script") && !svg.contains("@font-face"));
}

#[test]
fn diff_with_common_settings_parts_where_the_key_has_expired() {
    let mut args = vec!["diff", "payment-retry-without-key", "--seed", "14"];
    for both in [
        "client.key=stable",
        "service.idempotency=claim-same-tx",
        "client.retry.base_ms=43200000",
        "client.retry.cap_ms=43200000",
        "client.retry.max_attempts=7",
        "run.fault_phase_ms=259200000",
        "service.retention_ms=86400000",
    ] {
        args.extend(["--both", both]);
    }
    args.extend(["--set", "service.retention_ms=259200000"]);
    let (out, _) = check(&args, 0);
    let part = out
        .lines()
        .position(|l| l.contains("the runs part here"))
        .unwrap_or_else(|| panic!("a parting line:\n{out}"));
    let first_differing = out.lines().nth(part + 1).unwrap();
    assert!(first_differing.starts_with('≠'), "{out}");
    assert!(first_differing.contains("retry-after-key-expired"), "{out}");
    assert!(out.contains("B => every invariant holds"), "{out}");
}
