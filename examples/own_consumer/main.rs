//! Example (a): your own consumer, with its own dedup logic, checked against
//! idemsim's producer, broker and network, judged by idemsim's effect ledger.
//!
//! ```sh
//! cargo run --release --example own_consumer
//! ```
//!
//! The consumer that remembers handled event ids in memory writes an order
//! twice after a crash, and idemsim prints the shrunk run; the one that keeps
//! them in its database, in the effect's transaction, holds on every seed.
//! `cargo test --example own_consumer` (and `cargo test --workspace`) runs
//! the tests at the bottom, and those of the `proptest_window` example
//! (`window.rs`), which shares this consumer.

mod consumer;
// The proptest_window example's property and tests: compiled into this
// example's test binary so the two examples link one test binary, not two.
#[cfg(test)]
mod window;

use consumer::{system, Dedup};
use idemsim::testing::Check;

/// Seeds each variant runs: enough for the memory variant to fail.
const SEEDS: std::ops::Range<u64> = 0..500;

fn main() {
    let memory = system(Dedup::Memory { window: 100 });
    match Check::new("memory dedup", &memory).seeds(SEEDS).run() {
        Ok(_) => println!("memory dedup: holds on seeds {SEEDS:?} (unexpected)"),
        Err(failure) => println!("{failure}\n"),
    }
    let durable = system(Dedup::Durable { keep: 100 });
    match Check::new("durable dedup", &durable).seeds(SEEDS).run() {
        Ok(summary) => println!(
            "durable dedup: holds on seeds {SEEDS:?}, with {} crashes, {} lost and {} duplicated messages",
            summary.tally.faults.crashed, summary.tally.faults.lost, summary.tally.faults.duplicated
        ),
        Err(failure) => println!("{failure}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use idemsim::testing::check_model;

    #[test]
    fn ids_in_memory_write_twice_after_a_crash() {
        let failure = check_model(&system(Dedup::Memory { window: 100 }), SEEDS)
            .expect_err("a crash empties the memory");
        assert_eq!(failure.invariant(), Some("no-duplicate-effect"));
        // The shrunk run names the crash that made the consumer forget.
        assert!(failure.trace.contains("CRASH"), "{failure}");
        assert!(failure.trace.contains("EFFECT order write"), "{failure}");
        assert!(failure.to_string().ends_with(&format!(
            "repro: idemsim::testing::replay(&model, {})",
            failure.seed
        )));
    }

    #[test]
    fn ids_in_the_effects_transaction_hold_and_faults_fired() {
        let summary = check_model(&system(Dedup::Durable { keep: 100 }), SEEDS)
            .unwrap_or_else(|f| panic!("{f}"));
        let faults = summary.tally.faults;
        assert!(faults.crashed > 0 && faults.lost > 0 && faults.duplicated > 0);
        // Redeliveries happened and the dedup table absorbed them.
        let names = models::registry::situation_names(&summary.tally.situations);
        assert!(names.contains(&"inbox-hit"), "{names:?}");
        assert!(names.contains(&"lease-expired-redelivery"), "{names:?}");
    }

    #[test]
    fn the_example_runs() {
        main();
    }
}
