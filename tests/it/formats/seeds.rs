//! D10: seeds are `u64`; a reader that parses numbers as doubles rounds
//! those above 2^53, so each seed has its decimal-string twin, and the top
//! of the seed space can be checked and replayed.

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

#[test]
fn a_range_past_the_last_seed_is_refused_naming_the_way_to_that_seed() {
    // A range's end is exclusive and a u64: 2^64 cannot end one, so the
    // last seed is replayed alone (above), never silently left out.
    let range = format!("{}..18446744073709551616", TOP - 5);
    let out = crate::support::idemsim(&["check", "payment-stable-key", "--seeds", &range]);
    let err = crate::support::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is past the last seed"), "{err}");
    assert!(
        err.contains(&format!("idemsim replay SCENARIO --seed {TOP}")),
        "{err}"
    );
}
