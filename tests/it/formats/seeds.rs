//! D10: seeds are `u64`; a reader that parses numbers as doubles rounds
//! those above 2^53, so each seed has its decimal-string twin, and the top
//! of the seed space, the last seed included, can be checked (`--seeds
//! A..=B`, `--seed N`), sharded, merged and replayed.

use crate::support::{outcome as stdout, summary};

const TOP: u64 = u64::MAX;

#[test]
fn seeds_near_the_top_keep_their_precision_as_decimal_strings() {
    // 2^64 - 100 .. 2^64 - 1: a double cannot tell these seeds apart.
    let start = (TOP - 100).to_string();
    let range = format!("{start}..{TOP}");
    let out = stdout(&[
        "check",
        "payment-retry-without-key",
        "--seeds",
        &range,
        "--json",
        "--no-shrink",
    ]);
    let s = summary(&out);
    assert_eq!(s["seeds"]["start_decimal"], start.as_str());
    assert_eq!(s["seeds"]["end_decimal"], TOP.to_string().as_str());
    let seed = s["lowest_failing_seed"].as_u64().expect("a failing seed");
    assert!(seed > 1 << 53, "{seed}");
    assert_eq!(s["lowest_failing_seed_decimal"], seed.to_string().as_str());
    assert_eq!(s["failure"]["seed_decimal"], seed.to_string().as_str());
    // What a double makes of it is another seed: the twin is what a
    // JavaScript reader must use.
    assert_ne!((seed as f64) as u64, seed);
    // And that seed replays as the sweep found it.
    let trace = stdout(&[
        "replay",
        "payment-retry-without-key",
        "--seed",
        &seed.to_string(),
    ]);
    assert!(trace.starts_with(&format!("# payment-retry-without-key · seed {seed} ·")));
    assert!(trace.contains("no-duplicate-effect"), "{trace}");
}

#[test]
fn the_last_seed_replays() {
    let top = TOP.to_string();
    let trace = stdout(&["replay", "payment-stable-key", "--seed", &top]);
    assert!(trace.starts_with(&format!("# payment-stable-key · seed {top} ·")));
}

/// The exclusive end of a range that holds the last seed: 2^64.
const PAST_TOP: &str = "18446744073709551616";

/// Every line of `jsonl` against its shipped schema, a null `end` included.
#[track_caller]
fn valid(jsonl: &str) {
    for line in jsonl.lines() {
        let errors = super::line_errors(line);
        assert!(errors.is_empty(), "{errors:?} in {line}");
    }
}

#[test]
fn check_runs_a_range_that_ends_at_the_last_seed_and_says_where_it_ends() {
    let start = TOP - 5;
    let inclusive = format!("{start}..={TOP}");
    let args = |range: &str| {
        stdout(&[
            "check",
            "payment-stable-key",
            "--seeds",
            range,
            "--json",
            "--no-shrink",
        ])
    };
    let out = args(&inclusive);
    let s = summary(&out);
    assert_eq!(s["schedules"], 6, "{out}");
    valid(&out);
    assert_eq!(s["seeds"]["start"], start);
    assert_eq!(s["seeds"]["start_decimal"], start.to_string().as_str());
    // The exclusive end, 2^64, is no u64: null, and spelled by its twin.
    assert_eq!(s["seeds"]["end"], serde_json::Value::Null, "{out}");
    assert_eq!(s["seeds"]["end_decimal"], PAST_TOP);
    assert!(s.get("requested").is_none(), "{out}");
    // The coverage-guided search's seed, the range's end, wraps to 0.
    assert_eq!(s["portfolio"]["search_seed"], 0);
    // The exclusive spelling of the same range is the same run.
    assert_eq!(args(&format!("{start}..{PAST_TOP}")), out);
    // And the text names the range as --seeds takes it back, with the last
    // seed itself rather than the 2^64 past it.
    let text = crate::support::idemsim(&["check", "payment-stable-key", "--seeds", &inclusive]);
    let text = crate::support::text(&text.stdout);
    assert!(
        text.contains(&format!("over 6 schedules (seeds {inclusive})")),
        "{text}"
    );
    assert!(!text.contains(PAST_TOP), "{text}");
}

#[test]
fn a_violation_at_the_last_seed_is_its_lowest_failing_seed_and_its_repro_replays_it() {
    let top = TOP.to_string();
    let out = crate::support::idemsim(&[
        "check",
        "payment-retry-without-key",
        "--seed",
        &top,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let s = summary(&crate::support::text(&out.stdout));
    assert_eq!(s["schedules"], 1);
    assert_eq!(s["lowest_failing_seed"], TOP);
    assert_eq!(s["lowest_failing_seed_decimal"], top.as_str());
    assert_eq!(s["failure"]["seed_decimal"], top.as_str());
    assert_eq!(s["invariant"], "no-duplicate-effect");
    let repro = s["repro"].as_str().expect("a repro line");
    assert_eq!(
        repro,
        format!("idemsim replay payment-retry-without-key --seed {top}")
    );
    // The printed line runs as it is.
    let words: Vec<&str> = repro.split(' ').skip(1).collect();
    let replayed = crate::support::idemsim(&words);
    assert_eq!(replayed.status.code(), Some(1));
    let trace = crate::support::text(&replayed.stdout);
    assert!(trace.starts_with(&format!("# payment-retry-without-key · seed {top} ·")));
    assert!(trace.contains("no-duplicate-effect"), "{trace}");
}

#[test]
fn shards_of_a_range_ending_at_the_last_seed_merge_to_the_unsharded_summary() {
    let scenario = "payment-retry-without-key";
    let range = format!("{}..={TOP}", TOP - 149);
    let run = |extra: &[&str]| {
        let mut args = vec!["check", scenario, "--seeds", &range, "--json"];
        args.extend_from_slice(extra);
        crate::support::idemsim(&args)
    };
    let whole = run(&[]);
    assert_eq!(whole.status.code(), Some(1));
    let dir = crate::support::scratch("formats/top-shards");
    let mut files = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let out = run(&["--shard", &shard]);
        let s = summary(&crate::support::text(&out.stdout));
        valid(&crate::support::text(&out.stdout));
        assert_eq!(s["schedules"], 50);
        assert_eq!(s["shard"]["of"]["end"], serde_json::Value::Null);
        assert_eq!(s["shard"]["of"]["end_decimal"], PAST_TOP);
        // Only the last shard holds the last seed.
        let end_is_null = s["seeds"]["end"].is_null();
        assert_eq!(end_is_null, i == 2, "{s}");
        let path = dir.join(format!("shard-{i}.jsonl"));
        std::fs::write(&path, &out.stdout).expect("write a shard");
        files.push(path.to_string_lossy().into_owned());
    }
    files.reverse();
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let merged = crate::support::idemsim(&args);
    let text = crate::support::text;
    assert_eq!(text(&merged.stdout), text(&whole.stdout));
    valid(&text(&merged.stdout));
    assert_eq!(text(&merged.stderr), text(&whole.stderr));
    assert_eq!(merged.status.code(), whole.status.code());
    // The last shard alone is refused as a gap, named by its seeds.
    let gap = crate::support::idemsim(&["merge", &files[0], &files[2]]);
    assert_eq!(gap.status.code(), Some(2));
    assert!(
        text(&gap.stderr).contains("are missing"),
        "{}",
        text(&gap.stderr)
    );
}

#[test]
fn a_range_past_the_last_seed_is_refused_naming_the_range_that_ends_there() {
    let start = TOP - 5;
    for past in ["18446744073709551617".to_string(), format!("={PAST_TOP}")] {
        let range = format!("{start}..{past}");
        let out = crate::support::idemsim(&["check", "payment-stable-key", "--seeds", &range]);
        let err = crate::support::text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("is past the last seed"), "{err}");
        assert!(err.contains(&format!("{start}..={TOP}")), "{err}");
    }
}

#[test]
fn one_seed_is_checked_alone_and_not_beside_a_range() {
    let out = stdout(&["check", "payment-stable-key", "--seed", "7", "--json"]);
    let s = summary(&out);
    assert_eq!(s["schedules"], 1);
    assert_eq!(s["seeds"]["start"], 7);
    assert_eq!(s["seeds"]["end"], 8);
    let both = crate::support::idemsim(&["check", "--seed", "7", "--seeds", "0..9"]);
    assert_eq!(both.status.code(), Some(2));
}
