//! The payment catalog: every scenario against its `[expect]` (the logic of
//! `idemsim verify`, on a smaller budget), and focused tests of the variants
//! that are easy to get subtly wrong.

use models::ledger::{inv, Obs};
use models::msg::{Key, Msg};
use models::payment::{
    Client, ClientConfig, ClientOp, Jitter, KeyPolicy, OpSpec, OpStatus, RetryPolicy,
};
use models::scenario::{Override, Verdict};
use models::{situation, Scenario};
use sim::{explore, Choices, Ctx, Outcome, SeedRange, Sim, Source, TraceKind};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// Seeds per scenario in the test profile: enough for every expectation,
/// small enough to keep the whole catalog well under a minute.
const TEST_BUDGET: u64 = 300;

fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

fn load(name: &str, sets: &[&str]) -> Scenario {
    let path = scenario_dir().join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).expect("scenario file exists");
    let overrides: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse(s).expect("well-formed override"))
        .collect();
    Scenario::load_with(&path.to_string_lossy(), &text, &overrides)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn sweep(s: &Scenario, seeds: u64) -> sim::Summary {
    let stop = AtomicBool::new(false);
    explore(
        &s.system,
        SeedRange {
            start: 0,
            end: seeds,
        },
        2,
        &stop,
        &|_| {},
    )
}

/// The one data-driven check: a scenario (with overrides) gives `verdict`
/// (and `invariant`, for a violation) within `seeds`.
fn check(name: &str, sets: &[&str], seeds: u64, verdict: Verdict, invariant: Option<&str>) {
    let s = load(name, sets);
    let sum = sweep(&s, seeds);
    let found = s.expect.judge(&sum);
    assert_eq!(
        (found.found, found.invariant),
        (verdict, invariant),
        "{name} {sets:?} over {seeds} seeds"
    );
}

#[test]
fn every_scenario_matches_its_expectation_within_the_test_budget() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    let mut mismatches = Vec::new();
    for p in &paths {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let s = load(&name, &[]);
        let sum = sweep(&s, s.runs.min(TEST_BUDGET));
        let j = s.expect.judge(&sum);
        if let Some(m) = j.mismatch {
            mismatches.push(format!("{name}: {m}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "scenarios off their expectation:\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn every_invariant_fires_in_some_scenario() {
    let mut expected: Vec<&str> = Vec::new();
    for e in std::fs::read_dir(scenario_dir()).expect("scenarios/ exists") {
        let p = e.expect("readable entry").path();
        if p.extension().is_some_and(|e| e == "toml") {
            let s = load(&p.file_stem().unwrap().to_string_lossy(), &[]);
            expected.extend(s.expect.invariant);
        }
    }
    for i in inv::ALL {
        assert!(expected.contains(i), "no scenario expects {i} to fire");
    }
}

#[test]
fn fixes_hold_and_their_failures_come_back_when_the_fix_is_removed() {
    use Verdict::{Holds, Violation};
    let cases: &[(&str, &[&str], Verdict, Option<&str>)] = &[
        ("payment-stable-key", &[], Holds, None),
        (
            "payment-key-passed-to-bank",
            &["bank.accepts_key=false"],
            Violation,
            Some(inv::NO_DUPLICATE_EFFECT),
        ),
        (
            "payment-query-before-retry",
            &["bank.status_query=false"],
            Violation,
            Some(inv::NO_DUPLICATE_EFFECT),
        ),
        (
            "payment-state-not-action",
            &["service.mode=action"],
            Violation,
            Some(inv::NO_DUPLICATE_EFFECT),
        ),
        (
            "payment-concurrent-wait",
            &["service.idempotency=check-then-act"],
            Violation,
            Some(inv::AT_MOST_ONE_EXECUTOR),
        ),
        (
            "payment-retention-covers-retries",
            &["service.retention_ms=86400000"],
            Violation,
            Some(inv::NO_DUPLICATE_EFFECT),
        ),
        (
            "payment-fingerprint-check",
            &["service.fingerprint_check=false"],
            Violation,
            Some(inv::NO_MISMATCHED_PAYLOAD),
        ),
        (
            "payment-dead-letter",
            &["client.retry.dead_letter=false"],
            Violation,
            Some(inv::NO_LOST_EFFECT),
        ),
        (
            "payment-split-key-first",
            &["service.idempotency=claim-same-tx"],
            Holds,
            None,
        ),
    ];
    for (name, sets, verdict, invariant) in cases {
        check(name, sets, TEST_BUDGET, *verdict, *invariant);
    }
}

// ------------------------------------------------------------- backoff

fn client(jitter: Jitter, multiplier: u64) -> Client {
    Client {
        cfg: ClientConfig {
            service: 1,
            timeout_ms: 10_000,
            key: KeyPolicy::Stable,
            retry: RetryPolicy {
                max_attempts: 0,
                base_ms: 100,
                cap_ms: 2_000,
                multiplier,
                jitter,
                window_ms: 0,
                retry_final_errors: false,
                dead_letter: true,
            },
            ops: vec![OpSpec {
                op: 4711,
                amount_eur: 1200,
                start_ms: 0,
                retry_amount_eur: None,
            }],
        },
    }
}

fn op_after(attempts: u32, last_backoff_ms: u64) -> ClientOp {
    ClientOp {
        status: OpStatus::Pending,
        attempts,
        started_us: 0,
        last_backoff_ms,
    }
}

/// Backoffs of `attempts` 1..=n under seed `seed`.
fn backoffs(c: &Client, seed: u64, n: u32) -> Vec<u64> {
    let mut choices = Choices::new();
    choices.start_random(seed, 1, false);
    let mut out = Vec::new();
    let mut ctx: Ctx<'_, Msg, Obs> = Ctx::detached(0, 0, &mut choices, &mut out);
    let mut last = 0;
    (1..=n)
        .map(|a| {
            last = c.backoff_ms(&op_after(a, last), &mut ctx);
            last
        })
        .collect()
}

#[test]
fn exponential_backoff_doubles_up_to_the_cap() {
    assert_eq!(
        backoffs(&client(Jitter::None, 2), 0, 7),
        vec![100, 200, 400, 800, 1600, 2000, 2000]
    );
    assert_eq!(
        backoffs(&client(Jitter::None, 1), 0, 3),
        vec![100, 100, 100]
    );
}

#[test]
fn jittered_backoffs_stay_within_their_formulas() {
    for seed in 0..200 {
        let full = backoffs(&client(Jitter::Full, 2), seed, 8);
        let equal = backoffs(&client(Jitter::Equal, 2), seed, 8);
        let deco = backoffs(&client(Jitter::Decorrelated, 2), seed, 8);
        let mut prev = 100;
        for (i, ((f, e), d)) in full.iter().zip(&equal).zip(&deco).enumerate() {
            let exp = (100u64 << i).min(2_000);
            assert!(*f <= exp, "full jitter: U(0, {exp}), got {f}");
            assert!(
                *e >= exp / 2 && *e <= exp,
                "equal jitter: {exp}/2 + U(0, {exp}/2), got {e}"
            );
            assert!(
                *d >= 100 && *d <= (prev * 3).min(2_000),
                "decorrelated: min(cap, U(base, 3 * {prev})), got {d}"
            );
            prev = *d;
        }
    }
    // Jitter really spreads the retries of different runs.
    let firsts: Vec<u64> = (0..50)
        .map(|s| backoffs(&client(Jitter::Full, 2), s, 3)[2])
        .collect();
    assert!(firsts.iter().any(|&v| v != firsts[0]));
}

#[test]
fn key_policies_name_what_they_should() {
    let mut c = client(Jitter::None, 1);
    assert_eq!(c.key_for(0, 3, 0), Key::Op { op: 4711, n: 1 });
    c.cfg.key = KeyPolicy::PerAttempt;
    assert_eq!(c.key_for(0, 3, 0), Key::Op { op: 4711, n: 3 });
    c.cfg.key = KeyPolicy::Timestamp { bucket_ms: 1000 };
    assert_eq!(c.key_for(0, 1, 400_000), c.key_for(0, 2, 999_000));
    assert_ne!(c.key_for(0, 1, 400_000), c.key_for(0, 1, 1_000_000));
    c.cfg.key = KeyPolicy::None;
    assert_eq!(c.key_for(0, 1, 0), Key::None);
}

// ------------------------------------------------- traces of the mechanisms

fn failing_trace(name: &str) -> (Vec<sim::TraceEntry<Msg, Obs>>, Outcome) {
    let s = load(name, &[]);
    let sum = sweep(&s, TEST_BUDGET);
    let seed = sum.first_failure.expect("the scenario fails").seed;
    let mut sim = Sim::new(&s.system);
    let mut rec = sim::Recorder::default();
    let r = sim.run(
        &s.system,
        Source::Seed {
            seed,
            record: false,
        },
        &mut rec,
    );
    (rec.entries, r.outcome)
}

fn reached(entries: &[sim::TraceEntry<Msg, Obs>], id: u32) -> bool {
    entries
        .iter()
        .any(|e| matches!(e.kind, TraceKind::Reached { situation, .. } if situation == id))
}

#[test]
fn split_booking_first_pays_twice_only_after_a_crash_between_its_steps() {
    let (entries, outcome) = failing_trace("payment-split-booking-first");
    assert!(matches!(outcome, Outcome::Violation(v) if v.invariant == inv::NO_DUPLICATE_EFFECT));
    assert!(reached(&entries, situation::CRASH_BETWEEN_STEPS));
    // Without crashes the same design never pays twice.
    check(
        "payment-split-booking-first",
        &["crashes.service.crash_per_mille=0"],
        TEST_BUDGET,
        Verdict::Holds,
        None,
    );
}

#[test]
fn split_key_first_answers_paid_from_a_key_without_booking() {
    let (entries, outcome) = failing_trace("payment-split-key-first");
    assert!(matches!(outcome, Outcome::Violation(v) if v.invariant == inv::NO_FALSE_SUCCESS));
    assert!(reached(&entries, situation::CRASH_BETWEEN_STEPS));
    assert!(reached(&entries, situation::DUPLICATE_AFTER_COMMIT));
}

#[test]
fn a_short_lease_lets_a_second_executor_take_over_a_running_one() {
    let (entries, outcome) = failing_trace("payment-lease-too-short");
    assert!(matches!(outcome, Outcome::Violation(v) if v.invariant == inv::AT_MOST_ONE_EXECUTOR));
    assert!(reached(&entries, situation::LEASE_EXPIRED_TAKEOVER));
    // Without a lease the key is never taken over: no second executor.
    check(
        "payment-lease-too-short",
        &["service.lease_ms=0"],
        TEST_BUDGET,
        Verdict::Holds,
        None,
    );
}

#[test]
fn messages_and_observations_stay_small() {
    assert!(
        std::mem::size_of::<Msg>() <= 32,
        "Msg is {} bytes",
        std::mem::size_of::<Msg>()
    );
    assert!(
        std::mem::size_of::<Obs>() <= 32,
        "Obs is {} bytes",
        std::mem::size_of::<Obs>()
    );
}

#[test]
fn a_holding_scenario_that_misses_a_named_situation_does_not_match() {
    let s = load(
        "payment-stable-key",
        &["expect.situations=[\"key-reaped\"]"],
    );
    let j = s.expect.judge(&sweep(&s, 50));
    assert_eq!(j.found, Verdict::Holds);
    assert_eq!(
        j.mismatch.as_deref(),
        Some("situations not reached: key-reaped")
    );
    let s = load(
        "payment-check-then-act",
        &["expect.invariant=\"no-duplicate-effect\""],
    );
    let j = s.expect.judge(&sweep(&s, 50));
    assert_eq!(j.invariant, Some(inv::AT_MOST_ONE_EXECUTOR));
    assert!(!j.matched());
}
