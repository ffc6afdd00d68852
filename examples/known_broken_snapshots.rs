//! Example (b): keep the shrunk traces of your known-broken designs as
//! reviewed insta snapshots. Copy this file into your `tests/` folder and
//! point `FOLDER` at your scenarios.
//!
//! ```sh
//! cargo run --example known_broken_snapshots      # prints the traces
//! cargo test --example known_broken_snapshots     # checks them against the snapshots
//! cargo insta review                              # after a change: read the diff, accept or reject
//! ```
//!
//! Every scenario in the folder that expects a violation is swept on its own
//! seeds, its lowest failing seed shrunk to a locally minimal run, and that
//! run's trace compared with the snapshot in `examples/snapshots/`. Shrinking
//! is deterministic, so the trace changes only when the design, the scenario
//! or idemsim changes how the failure happens: exactly when a person should
//! look at it again. The Mermaid form renders on GitHub, in review.

use idemsim::scenarios;
use idemsim::testing::{check_scenario, Failure};

/// The folder of scenario files, relative to the package root (where
/// `cargo test` runs).
const FOLDER: &str = "examples/ci/scenarios";

/// Each scenario of `FOLDER` that expects a violation, with its shrunk failure.
fn known_broken() -> Vec<(String, Failure)> {
    let mut out = Vec::new();
    for entry in scenarios::locate_all(FOLDER).expect("the folder of scenarios") {
        let s = scenarios::load_entry(&entry, &[]).unwrap_or_else(|e| panic!("{e}"));
        if s.expected_verdict() != Some(models::scenario::Verdict::Violation) {
            continue;
        }
        let failure = match check_scenario(&s, &entry.arg(), None) {
            Ok(_) => panic!("{} expects a violation, and every seed holds", s.name),
            Err(f) => f,
        };
        // Broken the way the scenario says, not some other way.
        assert_eq!(failure.invariant(), s.expected_invariant(), "{failure}");
        out.push((s.name, failure));
    }
    out
}

fn main() {
    for (_, failure) in known_broken() {
        println!("{failure}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_broken_designs_keep_their_shrunk_traces() {
        let broken = known_broken();
        assert!(!broken.is_empty(), "{FOLDER} has a known-broken design");
        for (name, failure) in broken {
            insta::assert_snapshot!(name.clone(), failure.to_string());
            insta::assert_snapshot!(format!("{name}.mermaid"), failure.mermaid);
        }
    }

    #[test]
    fn the_example_runs() {
        main();
    }
}
