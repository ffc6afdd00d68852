//! Scale of one scenario: every model runs a scenario of 1,000 operations
//! (claims, events, requests) within the default limits of a run, and the
//! loader refuses one more with the bound and a fix, instead of panicking.

use crate::support;

use models::core::ledger::counter;
use models::scenario::Verdict;
use std::fmt::Write;
use support::{load_error, load_text, sweep};

const N: usize = 1000;
const SEEDS: u64 = 4;

fn head(model: &str) -> String {
    format!(
        "summary = \"{N} operations\"\nmodel = \"{model}\"\n[expect]\nverdict = \"holds\"\n\
         [network]\nloss_per_mille = [0, 50]\nduplicate_per_mille = [0, 20]\n"
    )
}

/// `n` claims, one every 20 ms.
fn claims(n: usize) -> String {
    let mut t = String::new();
    for i in 0..n {
        let start = i * 20;
        writeln!(
            t,
            "[[operations]]\nclaim = {}\namount_eur = 100\nstart_ms = {start}",
            1 + i
        )
        .unwrap();
    }
    t
}

fn payment(n: usize) -> String {
    head("payment") + &claims(n)
}

fn messaging(n: usize) -> String {
    let mut t = head("messaging");
    for i in 0..n {
        writeln!(
            t,
            "[[events]]\nentity = {}\nvalue = 1\nstart_ms = {}",
            1 + i % 100,
            i * 20
        )
        .unwrap();
    }
    t
}

/// `n` requests of every method from 50 clients, each on its own resource.
fn http(n: usize) -> String {
    let mut t = head("http");
    for i in 0..n.min(N) {
        writeln!(t, "[[resources]]\nid = {}\nvalue = 1000", 1 + i).unwrap();
    }
    let methods = ["post", "put", "patch", "delete", "edit"];
    for i in 0..n {
        let method = methods[i % methods.len()];
        let client = format!("client-{}", i % 50);
        write!(
            t,
            "[[requests]]\nclient = \"{client}\"\nmethod = \"{method}\"\nstart_ms = {}\n",
            i * 20
        )
        .unwrap();
        if method != "post" {
            writeln!(t, "resource = {}", 1 + i % N).unwrap();
        }
        if method != "delete" {
            writeln!(t, "value = 7").unwrap();
        }
    }
    t
}

fn chain(n: usize) -> String {
    head("chain") + "[broker]\nconsumers = 4\n" + &claims(n)
}

#[test]
fn every_model_runs_a_thousand_operations_within_the_default_limits() {
    let cases: [(&str, String, &str); 4] = [
        ("payment", payment(N), counter::OPERATIONS),
        ("messaging", messaging(N), counter::EVENTS),
        ("http", http(N), counter::OPERATIONS),
        ("chain", chain(N), counter::OPERATIONS),
    ];
    for (model, text, ops) in cases {
        let s = load_text(&format!("{model}-{N}.toml"), &text, &[]);
        let sum = sweep(&s, SEEDS);
        let j = s.judge(&sum);
        assert_eq!(
            j.found,
            Verdict::Holds,
            "{model}: {:?} {:?}",
            sum.first_failure.map(|f| f.outcome),
            sum.first_inconclusive
        );
        assert_eq!(
            sum.tally.counter(ops).unwrap()[0],
            N as u64 * SEEDS,
            "{model}"
        );
        assert!(
            sum.tally.events >= 3 * N as u64 * SEEDS,
            "{model}: {} events",
            sum.tally.events
        );
        if model == "chain" {
            // Every claim's booking is an event accounting books.
            assert_eq!(
                sum.tally.counter(counter::EVENTS).unwrap()[0],
                N as u64 * SEEDS
            );
        }
    }
}

#[test]
fn one_operation_more_is_refused_with_the_bound() {
    let cases: [(&str, String, &str); 4] = [
        (
            "payment",
            payment(N + 1),
            "1001 operations: a scenario has 1 to 1000",
        ),
        (
            "messaging",
            messaging(N + 1),
            "1001 events: a scenario has 1 to 1000",
        ),
        (
            "http",
            http(N + 1),
            "1001 requests: a scenario has 1 to 1000",
        ),
        (
            "chain",
            chain(N + 1),
            "1001 operations: a scenario has 1 to 1000",
        ),
    ];
    for (model, text, message) in cases {
        let e = load_error(&format!("{model}.toml"), &text);
        assert!(e.message.contains(message), "{model}: {e}");
        assert!(e.help.is_some(), "{model}: {e}");
    }
}
