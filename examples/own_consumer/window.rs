//! The property of the `proptest_window` example (`proptest_window.rs`
//! runs it): proptest varies the dedup table's size, idemsim explores and
//! shrinks the schedules of each design. Its tests run in the `own_consumer`
//! example's test binary, which declares this module under `cfg(test)`: one
//! test binary for both examples, which share `consumer.rs`.

use crate::consumer::{system, Dedup};
use idemsim::testing::{Check, Failure};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

/// Seeds per design: idemsim's sweep inside one proptest case.
const SEEDS: std::ops::Range<u64> = 0..300;

/// Whether the design that keeps `keep` ids holds on every seed.
fn durable_dedup_holds(keep: usize) -> Result<(), Failure> {
    let model = system(Dedup::Durable { keep });
    Check::new(&format!("dedup table of {keep} ids"), &model)
        .seeds(SEEDS)
        .run()
        .map(|_| ())
}

/// A runner whose cases are the same on every run (and that writes no
/// proptest-regressions file: the seeds idemsim explores are fixed anyway).
fn runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// The property over every table size from 1 to 16: it fails, and proptest
/// reports the smallest failing size with idemsim's shrunk run.
fn search_table_sizes() -> Result<(), TestError<usize>> {
    runner(16).run(&(1usize..=16), |keep| {
        durable_dedup_holds(keep)?;
        Ok(())
    })
}

/// What the example prints: the smallest failing table size and the
/// shrunk run proptest reports with it.
pub fn print_search() {
    match search_table_sizes() {
        Err(TestError::Fail(why, keep)) => {
            println!("minimal failing input: keep = {keep}\n{why}")
        }
        other => println!("unexpected: {other:?}"),
    }
}

proptest! {
    #![proptest_config(Config { cases: 6, failure_persistence: None, ..Config::default() })]

    /// Four events: a table of four ids or more never evicts one.
    #[test]
    fn a_table_as_large_as_the_events_holds(keep in 4usize..=16) {
        durable_dedup_holds(keep)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use idemsim::testing::schedules;
    use std::sync::Arc;

    #[test]
    fn too_small_a_table_fails_with_the_shrunk_run_and_a_repro_line() {
        let Err(TestError::Fail(why, keep)) = search_table_sizes() else {
            panic!("a table of one id loses track of redeliveries");
        };
        // proptest shrank the parameter to below the number of events...
        assert!(keep < 4, "minimal failing keep = {keep}");
        let why = why.to_string();
        // ...and the message is idemsim's shrunk run of that design.
        assert!(
            why.contains(&format!(
                "dedup table of {keep} ids: violation of no-duplicate-effect"
            )),
            "{why}"
        );
        assert!(why.contains("shrunk from seed"), "{why}");
        assert!(why.contains("lease-expired-redelivery"), "{why}");
        let repro = why.lines().last().expect("a last line");
        assert!(
            repro.starts_with("repro: idemsim::testing::replay(&model, "),
            "{repro}"
        );
    }

    #[test]
    fn a_schedule_strategy_shrinks_with_idemsims_shrinker() {
        let model = Arc::new(system(Dedup::Memory { window: 100 }));
        let result = runner(200).run(&schedules(model.clone()), |schedule| {
            schedule.check(&*model)?;
            Ok(())
        });
        let Err(TestError::Fail(why, schedule)) = result else {
            panic!("a crash empties the memory on some of 200 seeds: {result:?}");
        };
        // The minimal failing input is the seed's run shrunk by idemsim, and
        // the message is its trace: the crash that made the consumer forget.
        let shrunk = schedule.shrunk.as_ref().expect("shrunk by idemsim");
        assert!(shrunk.nonzero_count() <= 8, "{shrunk:?}");
        assert!(why.to_string().contains("CRASH"), "{why}");
        assert!(schedule.run(&*model).outcome.is_failure());
    }

    #[test]
    fn the_example_runs() {
        print_search();
    }
}
