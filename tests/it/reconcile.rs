//! The claims system's reconciliation job (chapter 14): it drives the
//! unknown share of a design to zero when it asks the bank and re-drives
//! under the same key; asking the service, or re-driving under a new key,
//! pays twice; a crash between any two of its steps is survivable; and its
//! keys are validated like every other key. Its sibling, the compensation
//! job, ends claims "cancelled", which the summaries count apart.

use crate::support;

use models::core::ledger::counter;
use models::payment::situations as sit;
use models::scenario::Verdict;
use support::{check, failing_trace, load, reached, refuses, run, sweep};

fn unknown_and_done(name: &str, sets: &[&str], seeds: u64) -> (u64, u64, u64) {
    let sum = sweep(&load(name, sets), seeds);
    let n = |c| sum.tally.counter(c).map_or(0, |v| v[0]);
    (
        n(counter::UNKNOWN),
        n(counter::DONE),
        n(counter::OPERATIONS),
    )
}

#[test]
fn asking_the_bank_and_re_driving_under_the_same_key_leaves_nothing_unknown() {
    check("payment-reconcile-at-bank", &[], 1000, Verdict::Holds, None);
    let (unknown, done, ops) = unknown_and_done("payment-reconcile-at-bank", &[], 300);
    assert_eq!((unknown, done), (0, ops), "every claim ends done");
    // The same job with no rounds hands every dead letter to a person.
    let (unknown, _, _) = unknown_and_done(
        "payment-reconcile-at-bank",
        &["client.reconcile.max_rounds=0"],
        300,
    );
    assert!(unknown > 0, "without rounds the dead letters stay unknown");
}

#[test]
fn payment_dead_letter_keeps_its_unknown_share_without_a_job_and_loses_it_with_one() {
    let (before, _, ops) = unknown_and_done("payment-dead-letter", &[], 300);
    assert_eq!((before, ops), (39, 300), "13% unknown, as chapter 14 shows");
    let with_job = ["bank.status_query=true", "client.reconcile.max_rounds=3"];
    check("payment-dead-letter", &with_job, 300, Verdict::Holds, None);
    let (after, _, _) = unknown_and_done("payment-dead-letter", &with_job, 300);
    assert_eq!(after, 0);
}

#[test]
fn re_driving_under_a_new_key_or_asking_the_service_pays_twice() {
    let dup = Some("no-duplicate-effect");
    check(
        "payment-reconcile-new-key",
        &[],
        300,
        Verdict::Violation,
        dup,
    );
    check(
        "payment-reconcile-asked-service",
        &[],
        300,
        Verdict::Violation,
        dup,
    );
    // Each mistake alone, on the holding designs.
    let new_key = ["client.reconcile.redrive_key=new"];
    check(
        "payment-reconcile-at-bank",
        &new_key,
        300,
        Verdict::Violation,
        dup,
    );
    let service = ["client.reconcile.ask=service"];
    check(
        "payment-reconcile-bank-without-keys",
        &service,
        300,
        Verdict::Violation,
        dup,
    );
    check(
        "payment-reconcile-bank-without-keys",
        &[],
        1000,
        Verdict::Holds,
        None,
    );
}

/// payment-reconcile-races-recovery: the bank's "not paid" is true when the
/// job asks, but the claim's key is stuck "in progress" at a service that a
/// restart will recover, and the job goes around it under a new key. The
/// failing run needs both: a re-drive and a restart's recovery. The warning
/// names the scenario; each fix (the same key, or a first question after
/// the latest a recovery's transfer can land: the faults end at 120 s, the
/// restart takes 1 s, the recovered call up to 15 s, the trip 50 ms) makes
/// it silent and the runs hold, and so does a service that never crashes.
#[test]
fn a_re_drive_around_a_key_a_restart_will_recover_pays_twice() {
    const NAME: &str = "payment-reconcile-races-recovery";
    const RULE: &str = "status-query-overtakes-transfer";
    let dup = Some("no-duplicate-effect");
    check(NAME, &[], 300, Verdict::Violation, dup);
    let (trace, _) = failing_trace(NAME);
    assert!(reached(&trace, sit::RECONCILE_REDRIVEN));
    assert!(reached(&trace, sit::RECOVERED_AFTER_RESTART));
    let s = load(NAME, &[]);
    let h = s
        .design_warnings
        .iter()
        .find(|h| h.id == RULE)
        .expect("the warning");
    assert_eq!(h.example, NAME);
    assert!(h.text.contains("as late as 136.1 s"), "{}", h.text);
    for fix in [
        "client.reconcile.redrive_key=same",
        "client.reconcile.after_ms=140000",
        "crashes.service.crash_per_mille=0",
    ] {
        let s = load(NAME, &[fix]);
        assert!(
            s.design_warnings.is_empty(),
            "{fix}: {:?}",
            s.design_warnings
        );
        assert!(sweep(&s, 5000).first_failure.is_none(), "{fix}");
    }
}

#[test]
fn a_client_crash_between_any_two_steps_of_the_job_is_survivable() {
    // Crashes fall before any step: between the dead letter and the first
    // round, between a question and its answer, after a re-drive.
    let crashes = [
        "crashes.client.crash_per_mille=[0,100]",
        "crashes.client.restart_ms_min=1000",
        "crashes.client.restart_ms_max=60000",
    ];
    check(
        "payment-reconcile-at-bank",
        &crashes,
        1000,
        Verdict::Holds,
        None,
    );
    let (unknown, _, _) = unknown_and_done("payment-reconcile-at-bank", &crashes, 300);
    assert_eq!(unknown, 0, "a restarted job resumes from its records");
}

#[test]
fn the_trace_names_the_jobs_timer_and_its_question() {
    let (out, _) = run(&["replay", "payment-reconcile-at-bank", "--seed", "2"], 0);
    assert!(out.contains("timer: reconcile (claim 4711)"), "{out}");
    assert!(out.contains("how much is paid for claim 4711?"), "{out}");
}

#[test]
fn without_a_reconcile_table_a_late_paid_is_still_dropped() {
    // payment-dead-letter has no job: its dead letters stay for a person.
    let (unknown, _, _) = unknown_and_done("payment-dead-letter", &["bank.status_query=true"], 300);
    assert_eq!(unknown, 39);
}

#[test]
fn the_reconcile_keys_are_checked_with_a_place_and_a_fix() {
    let base = "summary = \"reconcile\"\n[expect]\nverdict = \"holds\"\n";
    refuses(
        base,
        &[
            (
                "[client.reconcile]\nask = \"bank\"\n",
                "the bank answers no status queries",
                "status_query = true",
            ),
            (
                "[bank]\nstatus_query = true\n[client.reconcile]\nask = \"banc\"\n",
                "banc",
                "bank",
            ),
            (
                "[bank]\nstatus_query = true\n[client.reconcile]\nafter_ms = 0\n",
                "must be above 0",
                "after_ms = 60000",
            ),
            (
                "[bank]\nstatus_query = true\n[client.reconcile]\nmax_rounds = 101\n",
                "101 rounds: the range is 0 to 100",
                "write a number",
            ),
            (
                "[client.reconcile]\nask = \"service\"\nredrive_key = \"fresh\"\n",
                "fresh",
                "same",
            ),
            (
                "[client.reconcile]\nask = \"service\"\nevery_ms = 5\n",
                "every_ms",
                "",
            ),
        ],
    );
}

/// A claim the compensation job cancelled may have been paid and refunded:
/// it is counted `cancelled`, never among the `failed`, whose meaning is
/// "nothing executed". The ledger's counters, the text summary and the JSON
/// summary give the same numbers, and every operation is in one ending.
#[test]
fn a_compensated_claim_is_counted_cancelled_not_failed() {
    let name = "payment-refund-after-query";
    let sum = sweep(&load(name, &[]), 300);
    let n = |c| sum.tally.counter(c).map_or(0, |v| v[0]);
    let cancelled = n(counter::CANCELLED);
    assert!(cancelled > 0, "the job cancels some dead letters");
    let endings = [
        counter::DONE,
        counter::FAILED,
        counter::CANCELLED,
        counter::UNKNOWN,
        counter::ABANDONED,
        counter::OPEN,
    ];
    assert_eq!(endings.map(n).iter().sum::<u64>(), n(counter::OPERATIONS));
    let json = support::summary(&support::outcome(&[
        "check",
        name,
        "--runs",
        "300",
        "--strategy",
        "seeds",
        "--no-shrink",
        "--json",
    ]));
    let ops = &json["operations"];
    assert_eq!(ops["cancelled"], cancelled, "{ops}");
    assert_eq!(ops["failed"], n(counter::FAILED), "{ops}");
    let (text, _) = run(&["check", name, "--runs", "300", "--strategy", "seeds"], 0);
    assert!(
        text.contains(&format!("{cancelled} cancelled (taken back)")),
        "{text}"
    );
    // A design that cancels nothing keeps its line as it was.
    let (text, _) = run(&["check", "payment-reconcile-at-bank", "--runs", "30"], 0);
    assert!(!text.contains("cancelled"), "{text}");
}
