//! A bank whose status answers come from a read replica behind its ledger
//! (`bank.status_lag_ms`): every design that decides on a status read is as
//! safe as that read is current, and the designs that check where the money
//! is written do not care. Each case is derived from the timing, not fitted
//! to a run: a query before a re-send reaches the bank no sooner than the
//! bank timeout minus the link's delay spread after the transfer it asks
//! about landed, and a restarted service's recovery query no sooner than
//! its shortest restart minus that spread (`status-lag-above-read-delay`).

use crate::support;

use models::payment::situations as sit;
use models::scenario::Verdict;
use sim::Outcome;
use support::{check, failing_trace, load, reached, refuses, run};

const DUP: Option<&str> = Some("no-duplicate-effect");

#[test]
fn query_before_retry_holds_while_the_replica_is_fresher_than_the_bank_timeout() {
    // Bank timeout 5 s, delays 1 to 50 ms each way, no crashes: a query
    // reaches the bank at least 4.951 s after the transfer it asks about.
    let name = "payment-query-reads-stale-replica";
    check(
        name,
        &["bank.status_lag_ms=4900"],
        1000,
        Verdict::Holds,
        None,
    );
    check(name, &["bank.status_lag_ms=0"], 1000, Verdict::Holds, None);
    // Past 5.05 s every query after a lost confirmation reads "0 EUR".
    check(
        name,
        &["bank.status_lag_ms=5100"],
        300,
        Verdict::Violation,
        DUP,
    );
}

#[test]
fn the_second_transfer_follows_a_stale_reply_of_nothing_paid() {
    let (entries, outcome) = failing_trace("payment-query-reads-stale-replica");
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-duplicate-effect"),
        "{outcome:?}"
    );
    assert!(
        reached(&entries, sit::STATUS_READ_STALE),
        "the reply was stale"
    );
}

#[test]
fn a_query_right_after_a_restart_reads_the_replica_too() {
    // payment-query-before-retry restarts its service 1 to 30 s after a
    // crash and asks at once: a lag of a few seconds is enough.
    check(
        "payment-query-before-retry",
        &["bank.status_lag_ms=4000"],
        1000,
        Verdict::Violation,
        DUP,
    );
}

#[test]
fn a_conditional_transfer_or_a_key_at_the_bank_makes_stale_reads_harmless() {
    let name = "payment-conditional-survives-stale-read";
    for lag in ["0", "10000", "600000"] {
        check(
            name,
            &[&format!("bank.status_lag_ms={lag}")],
            300,
            Verdict::Holds,
            None,
        );
    }
    // The reconciliation job re-drives under the same key, which the bank
    // deduplicates: a stale "unpaid" costs a dedup hit, not a transfer.
    check(
        "payment-reconcile-at-bank",
        &["bank.status_lag_ms=200000"],
        300,
        Verdict::Holds,
        None,
    );
}

#[test]
fn a_reconciliation_job_at_a_bank_without_keys_must_wait_out_the_lag() {
    // The job asks 60 s after the dead letter: a replica a second behind is
    // current by then, one minutes behind answers "unpaid" for a paid claim.
    let name = "payment-reconcile-bank-without-keys";
    check(
        name,
        &["bank.status_lag_ms=1000"],
        1000,
        Verdict::Holds,
        None,
    );
    check(
        name,
        &["bank.status_lag_ms=200000"],
        1000,
        Verdict::Violation,
        DUP,
    );
}

#[test]
fn a_lag_takes_a_duration_and_without_status_queries_has_no_effect() {
    let base = "summary = \"lag\"\n[expect]\nverdict = \"holds\"\n";
    // No query, no answer to lag: a setting without effect, told at its
    // line (it was refused before; the ablation bank.status_query=false of a
    // lagging bank's file must load).
    let s = support::load_text(
        "lag.toml",
        &format!("{base}[bank]\nstatus_lag_ms = 1000\n"),
        &[],
    );
    let unread: Vec<&str> = s
        .design_warnings
        .iter()
        .filter(|h| h.id == "setting-without-effect")
        .map(|h| h.text.as_str())
        .collect();
    assert!(
        unread.len() == 1
            && unread[0].contains("bank.status_lag_ms = 1000")
            && unread[0].contains("status_query = true"),
        "{unread:?}"
    );
    refuses(
        base,
        &[
            (
                "[bank]\nstatus_query = true\nstatus_lag_ms = \"10s\"\n",
                "without a unit",
                "status_lag_ms = 10000",
            ),
            (
                "[bank]\nstatus_query = true\nstatus_lag_ms = 86400001\n",
                "longer than the 24 h",
                "the range is 0 to 86400000",
            ),
        ],
    );
}

/// A refusal carries what the ledger holds now, and the service acts on it:
/// it does not read the lagging replica again, which would be refused again
/// round after round until the replica caught up. Every schedule with up to
/// three faults ends, well inside the event bound, and holds.
#[test]
fn a_refused_transfer_is_answered_from_the_refusal_not_from_another_stale_read() {
    let (out, err) = run(
        &[
            "check",
            "payment-conditional-survives-stale-read",
            "--exhaustive",
            "--max-faults",
            "3",
        ],
        0,
    );
    assert!(
        out.contains("holds for every schedule with at most 3 faults"),
        "{out}{err}"
    );
    let s = load("payment-conditional-survives-stale-read", &[]);
    let sum = support::sweep(&s, 300);
    assert_eq!(sum.tally.inconclusive, 0);
    assert!(sum.tally.situations.contains(sit::STATUS_READ_STALE));
    assert!(sum
        .tally
        .situations
        .contains(sit::CONDITIONAL_TRANSFER_REFUSED));
}
