//! Client groups and rollouts (docs/rollouts.md): groups deal the
//! operations out by a fixed rule and draw nothing; a service rollout
//! restarts the service as the new version with its database kept, so a
//! version that starts to record keys knows none of the old version's
//! requests; a client rollout starts the later operations in an actor of
//! its own; every mistake in a group or a rollout is refused where it is
//! written, with the fix.

mod messaging;
mod refusals;

use crate::support;

use models::core::{Obs, Op};
use models::payment::situations as sit;
use models::payment::CLAIM;
use models::scenario::Verdict;
use sim::TraceKind;
use support::{check, load, load_text, reached, sweep, trace_of};

/// The operations each client actor started on seed 0, by actor name.
fn started_by(text: &str) -> Vec<(String, usize)> {
    let s = load_text("groups.toml", text, &[]);
    let names = sim::Model::world(&s.system).actor_names.clone();
    let (entries, _) = trace_of(&s, 0);
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| n.starts_with("client"))
        .map(|(i, n)| {
            let intents = entries
                .iter()
                .filter(|e| {
                    matches!(&e.kind, TraceKind::Observe { actor, obs: Obs::Intent { .. } }
                        if *actor as usize == i)
                })
                .count();
            (n.clone(), intents)
        })
        .collect()
}

const TEN_OPS: &str = "summary = \"groups\"\n[[operations]]\nclaim = 1\namount_eur = 10\nrepeat = 10\nevery_ms = 100\n";

#[test]
fn groups_get_their_share_or_their_count_of_the_operations() {
    let shares = format!(
        "{TEN_OPS}[client.groups.old]\nshare = 0.3\nkey = \"none\"\n[client.groups.new]\nshare = 0.7\n"
    );
    assert_eq!(
        started_by(&shares),
        vec![("client-new".into(), 7), ("client-old".into(), 3)]
    );
    // A third of ten: the remainder goes to the first group by name.
    let thirds = format!(
        "{TEN_OPS}[client.groups.a]\nshare = 0.3333333333333333\n[client.groups.b]\nshare = 0.3333333333333333\n[client.groups.c]\nshare = 0.3333333333333334\n"
    );
    let counts: Vec<usize> = started_by(&thirds).into_iter().map(|(_, n)| n).collect();
    assert_eq!(counts.iter().sum::<usize>(), 10);
    assert!(counts.iter().all(|n| (3..=4).contains(n)), "{counts:?}");
    let ops = format!("{TEN_OPS}[client.groups.a]\nops = 9\n[client.groups.b]\nops = 1\n");
    assert_eq!(
        started_by(&ops),
        vec![("client-a".into(), 9), ("client-b".into(), 1)]
    );
}

/// A group with `[client]`'s own settings is the same design under another
/// actor name: every seed runs the same way, so the groups drew nothing.
#[test]
fn a_group_draws_nothing_from_the_seed() {
    let path = support::scenario_dir().join("payment-retry-without-key.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let plain = sweep(&load("payment-retry-without-key", &[]), 200);
    let grouped = format!("{text}\n[client.groups.all]\nshare = 1\n")
        .replace("from = \"client\"", "from = \"client-all\"")
        .replace("to = \"client\"", "to = \"client-all\"");
    let grouped = sweep(&load_text("grouped.toml", &grouped, &[]), 200);
    assert_eq!(
        (plain.tally.events, plain.tally.violations),
        (grouped.tally.events, grouped.tally.violations)
    );
    assert!(
        plain.tally.violations > 0,
        "the comparison has failures in it"
    );
    assert_eq!(
        plain.first_failure.map(|f| f.seed),
        grouped.first_failure.map(|f| f.seed)
    );
}

/// The ledger's record of an operation names the client version that
/// started it; the turns follow the dealing rule: of ten, `old` (3) gets
/// the 2nd, the 6th and the 9th.
#[test]
fn the_ledger_says_which_version_started_each_operation() {
    let text = format!(
        "{TEN_OPS}[client.groups.old]\nshare = 0.3\nkey = \"none\"\n[client.groups.new]\nshare = 0.7\n"
    );
    let s = load_text("groups.toml", &text, &[]);
    let mut sim = sim::Sim::new(&s.system);
    sim.run_seed(&s.system, 0);
    let names = &sim::Model::world(&s.system).actor_names;
    let by = |claim| {
        let r = sim.oracle().get(Op::new(&CLAIM, claim)).expect("a record");
        names[r.started_by.expect("an intent") as usize].clone()
    };
    let old: Vec<u32> = (1..=10).filter(|c| by(*c) == "client-old").collect();
    assert_eq!(old, vec![2, 6, 9]);
    assert!((1..=10).all(|c| ["client-old", "client-new"].contains(&by(c).as_str())));
}

#[test]
fn a_client_rollout_starts_the_later_operations_as_its_own_actor() {
    let text = format!(
        "{TEN_OPS}[rollouts.v2]\nactor = \"client\"\nat_ms = 450\nset = {{ key = \"none\" }}\n"
    );
    // Operations at 0, 100, ..., 900 ms: those from 450 ms on are v2's.
    assert_eq!(
        started_by(&text),
        vec![("client".into(), 5), ("client-v2".into(), 5)]
    );
}

/// The service's key table is empty for what the keyless version handled:
/// moved after the clients' retries, the same key rollout pays twice.
#[test]
fn keys_recorded_after_the_retries_start_pay_twice() {
    check(
        "rollout-keys-before-retries",
        &[],
        300,
        Verdict::Holds,
        None,
    );
    check(
        "rollout-keys-before-retries",
        &["rollouts.keys.at_ms=60000"],
        300,
        Verdict::Violation,
        Some("no-duplicate-effect"),
    );
}

#[test]
fn the_service_restarts_as_the_new_version_at_its_time() {
    let s = load("rollout-rollback-keeps-keys", &[]);
    let (entries, _) = trace_of(&s, 0);
    assert!(reached(&entries, sit::SERVICE_REDEPLOYED));
    let first = entries
        .iter()
        .find(|e| {
            matches!(e.kind, TraceKind::Reached { situation, .. } if situation == sit::SERVICE_REDEPLOYED)
        })
        .expect("reached");
    assert!(first.time_us >= 10_000_000, "not before rollout `keys`");
    // Without rollouts nothing is redeployed.
    let (entries, _) = trace_of(&load("payment-stable-key", &[]), 0);
    assert!(!reached(&entries, sit::SERVICE_REDEPLOYED));
}

/// A rollback to a version that ignores keys drops the key table's
/// protection for the retries in flight; one that reads it keeps it.
#[test]
fn a_rollback_is_safe_only_to_a_version_that_reads_the_keys() {
    check(
        "rollout-rollback-keeps-keys",
        &[],
        300,
        Verdict::Holds,
        None,
    );
    check(
        "rollout-rollback-drops-keys",
        &[],
        300,
        Verdict::Violation,
        Some("no-duplicate-effect"),
    );
}

/// The ledger says which version handled what: in the wrong order of the
/// keys rollout, the duplicate's first transfer came from v1 (which ignored
/// the key) and its second from v2 (whose key table is empty for it), as
/// the trace's lines before each effect say. A run without rollouts
/// attributes nothing.
#[test]
fn the_ledger_attributes_the_duplicates_two_effects_to_v1_and_v2() {
    let s = load("rollout-retries-before-keys", &[]);
    let (seed, claim) = (0..50)
        .find_map(|seed| {
            let mut sim = sim::Sim::new(&s.system);
            sim.run_seed(&s.system, seed);
            let ledger = sim.oracle();
            let twice = ledger.ops.values().find(|r| r.effects == 2)?;
            Some((seed, twice.op))
        })
        .expect("a seed that pays twice");
    let mut sim = sim::Sim::new(&s.system);
    sim.run_seed(&s.system, seed);
    let ledger = sim.oracle();
    assert_eq!(ledger.effect_versions(claim), vec![Some(1), Some(2)]);
    let took: Vec<u8> = ledger
        .attempt_versions(claim)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert!(
        took.contains(&1) && took.contains(&2),
        "both versions took an attempt: {took:?}"
    );
    // The trace names the version before each effect, in the same order.
    let (entries, _) = trace_of(&s, seed);
    let named: Vec<u8> = entries
        .iter()
        .filter_map(|e| match e.kind {
            TraceKind::Observe {
                obs: Obs::EffectBy { op, version },
                ..
            } if op == claim => Some(version),
            _ => None,
        })
        .collect();
    assert_eq!(named, vec![1, 2]);
    // Without rollouts: no version is named, none recorded.
    let plain = load("payment-retry-without-key", &[]);
    let mut sim = sim::Sim::new(&plain.system);
    sim.run_seed(&plain.system, 0);
    assert!(sim.oracle().attributions().is_empty());
    let (entries, _) = trace_of(&plain, 0);
    assert!(!entries.iter().any(|e| matches!(
        e.kind,
        TraceKind::Observe {
            obs: Obs::EffectBy { .. } | Obs::Handled { .. },
            ..
        }
    )));
}
