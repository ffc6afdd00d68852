//! The write-your-own exercises of the learning path that are written in
//! Rust (`idemsim learn` lists them as 17 and 18):
//!
//! ```sh
//! cargo run --example learn -- actor       # grades actor.rs, your consumer
//! cargo run --example learn -- invariant   # grades invariant.rs, your invariant
//! ```
//!
//! Add `--solution` to grade the reference solutions. Exit code 0 right, 1
//! wrong (with the lowest failing seed and its trace), 2 bad usage. This
//! example's tests (`cargo test --example learn`, and `cargo test
//! --workspace`) grade the solutions and wrong attempts.

mod actor;
mod actor_solution;
mod actor_wrong;
mod invariant;
mod invariant_solution;
#[cfg(test)]
mod invariant_wrong;
mod world;

use idemsim::learn::{grade_model, invariant::grade};
use std::process::ExitCode;
use world::{bookings, Node};

/// Grades a consumer in the world of exercise 17.
fn grade_actor(name: &str, consumer: Node) -> Result<String, String> {
    grade_model(17, name, &bookings(consumer))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let solution = args.iter().any(|a| a == "--solution");
    let result = match (args.first().map(String::as_str), solution) {
        (Some("actor"), false) => grade_actor("actor.rs", Node::Exercise(actor::Consumer)),
        (Some("actor"), true) => grade_actor(
            "actor_solution.rs",
            Node::Solution(actor_solution::Consumer),
        ),
        (Some("invariant"), false) => grade::<invariant::Mine>(),
        (Some("invariant"), true) => grade::<invariant_solution::OneEffect>(),
        _ => {
            eprintln!("usage: cargo run --example learn -- actor|invariant [--solution]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(wrong) => {
            print!("{wrong}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_actor_is_right() {
        let line = grade_actor("solution", Node::Solution(actor_solution::Consumer))
            .unwrap_or_else(|wrong| panic!("{wrong}"));
        assert!(line.starts_with("exercise 17: right"), "{line}");
    }

    #[test]
    fn wrong_actors_fail_with_a_seed_a_trace_and_a_hint() {
        for (name, node, shows) in [
            (
                "no dedup",
                Node::NoDedup(actor_wrong::NoDedup),
                "EFFECT booking",
            ),
            ("in memory", Node::InMemory(actor_wrong::InMemory), "CRASH"),
        ] {
            let wrong = grade_actor(name, node).expect_err(name);
            assert!(wrong.contains("no-duplicate-effect"), "{name}: {wrong}");
            assert!(wrong.contains("shrunk from seed"), "{name}: {wrong}");
            assert!(wrong.contains(shows), "{name}: {wrong}");
            assert!(
                wrong.contains("hint: read docs/learn/10-inbox.md"),
                "{name}: {wrong}"
            );
        }
    }

    #[test]
    fn the_reference_invariant_is_right() {
        let line =
            grade::<invariant_solution::OneEffect>().unwrap_or_else(|wrong| panic!("{wrong}"));
        assert!(line.starts_with("exercise 18: right"), "{line}");
        // It caught failing runs: the grade is not vacuous.
        assert!(!line.contains("all 0 failing"), "{line}");
    }

    #[test]
    fn wrong_invariants_fail_with_a_seed_and_a_trace() {
        let silent = grade::<invariant_wrong::Silent>().expect_err("never fires");
        assert!(silent.contains("stays silent on seed"), "{silent}");
        assert!(
            silent.contains("EFFECT"),
            "the trace shows the second effect: {silent}"
        );
        let eager = grade::<invariant_wrong::NoRetry>().expect_err("fires on retries");
        assert!(eager.contains("fires on seed"), "{eager}");
        assert!(eager.contains("attempted 2 times"), "{eager}");
        for wrong in [silent, eager] {
            assert!(
                wrong.contains("hint: read docs/learn/00-what-a-verdict-means.md"),
                "{wrong}"
            );
        }
    }
}
