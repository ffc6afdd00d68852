//! A program's durable state in a real SQLite database, in the folder
//! idemsim gives it (`state_folder = true`): a crash kills the process, the
//! restart keeps the file and loses the memory (examples/python/consumer_sqlite.py).

use super::python_available;
use crate::support::{load_path, run};
use models::registry::NodeStorage;
use sim::Sim;

const ONE_TX: &str = "examples/python/external-consumer-sqlite-one-tx.toml";
const TWO_TX: &str = "examples/python/external-consumer-sqlite-two-tx.toml";

#[test]
fn the_inbox_row_in_the_effects_transaction_holds_and_in_a_second_one_fails() {
    if !python_available() {
        return;
    }
    // Few runs: every crash starts a Python process anew.
    let few = ["--runs", "8", "--jobs", "2", "--determinism-seeds", "1"];
    let (out, _) = run(&[&["check", ONE_TX][..], &few].concat(), 0);
    assert!(out.contains("holds over 8 schedules"), "{out}");
    assert!(out.contains("program-effect-redelivered"), "{out}");
    let (out, _) = run(&[&["check", TWO_TX, "--no-shrink"][..], &few].concat(), 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
}

#[test]
fn a_crash_kills_the_process_and_the_restart_finds_the_file() {
    if !python_available() {
        return;
    }
    let s = load_path(ONE_TX, &[]);
    let mut sim = Sim::new(&s.system);
    let mut crashes = 0;
    for seed in 0..4 {
        crashes += sim.run_seed(&s.system, seed).faults.crashed;
    }
    let Some(NodeStorage::External(st)) = sim.storage(2) else {
        panic!("consumer-1 is actor 2 and runs a program");
    };
    assert!(crashes > 0, "the seeds crash the consumer");
    // One process for the runs, and one more after every crash.
    assert_eq!(st.session.spawns, 1 + crashes);
    let folder = st
        .session
        .state_folder()
        .expect("a state folder")
        .to_path_buf();
    assert!(folder.join("consumer.db").is_file(), "{}", folder.display());
    drop(sim);
    assert!(!folder.exists(), "the folder goes with its simulator");
}
