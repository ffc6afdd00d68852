//! The jitter experiment with the reference simulator's own delay model
//! (`network.delay_sd_ms`, docs/backoff-and-jitter.md): with `|N(10, 2)|` ms
//! the strategy without jitter makes the calls AWS's simulator makes, which
//! the uniform 7 to 13 ms of the catalog scenario does not. The intervals are
//! those `reference.py` (next to this file) printed for the simulator.

use crate::support;

use models::core::ledger::counter;
use sim::{explore, SeedRange};
use std::sync::atomic::AtomicBool;

/// Mean calls (attempts) per run of `contention-no-jitter` at 50 clients,
/// seeds 0..100, with `sets` applied.
fn calls_at_50(sets: &[&str]) -> f64 {
    let mut all = vec!["clients=50"];
    all.extend_from_slice(sets);
    let s = support::load("contention-no-jitter", &all);
    let stop = AtomicBool::new(false);
    let seeds = SeedRange { start: 0, end: 100 };
    let sum = explore(&s.system, seeds, support::JOBS, &stop, &|_| {});
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    let attempts = sum.tally.counter(counter::ATTEMPTS).expect("attempts")[0];
    attempts as f64 / sum.tally.schedules as f64
}

/// The simulator's 95% interval for a mean of 100 runs, no jitter, 50 clients.
const REFERENCE_CALLS_AT_50: (f64, f64) = (619.0, 631.0);

#[test]
fn no_jitter_makes_the_simulators_calls_with_its_normal_delay_and_not_with_a_uniform_one() {
    let (lo, hi) = REFERENCE_CALLS_AT_50;
    let normal = calls_at_50(&[
        "network.delay_ms_min=0",
        "network.delay_ms_max=20",
        "network.delay_sd_ms=2",
    ]);
    assert!(
        (lo..=hi).contains(&normal),
        "{normal} calls with |N(10, 2)| ms"
    );
    let uniform = calls_at_50(&[]);
    assert!(uniform > hi, "{uniform} calls with 7 to 13 ms");
}

#[test]
fn delay_sd_ms_zero_is_the_uniform_draw_and_above_zero_changes_the_runs() {
    let stop = AtomicBool::new(false);
    let completion_us = |sets: &[&str]| {
        let mut all = vec![
            "clients=5",
            "network.delay_ms_min=0",
            "network.delay_ms_max=20",
        ];
        all.extend_from_slice(sets);
        let s = support::load("contention-no-jitter", &all);
        let sum = explore(
            &s.system,
            SeedRange { start: 0, end: 20 },
            1,
            &stop,
            &|_| {},
        );
        assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
        sum.tally
            .counter(counter::COMPLETION_US)
            .expect("completion")[0]
    };
    let uniform = completion_us(&[]);
    assert_eq!(uniform, completion_us(&["network.delay_sd_ms=0"]));
    assert_ne!(uniform, completion_us(&["network.delay_sd_ms=2"]));
}
