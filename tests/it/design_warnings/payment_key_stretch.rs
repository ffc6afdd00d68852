//! What stretches a payment key's retries past its retention: timestamp
//! keys (and whether a scenario's claims meet in a bucket), client restarts,
//! and a reconciliation's redrive.

use super::helpers::{failed_with, ids, restarts_break_key_retention, DEFAULT_SPREAD_MS, KEY_RULE};
use crate::support::{load, load_text, sweep};
use models::Scenario;

/// A key minted from the clock names a time bucket, not an operation. The
/// rule fires for every timestamp key: the start times are the workload
/// this scenario samples, not something the design keeps apart. Its text
/// says what this scenario's own operations do.
#[test]
fn a_timestamp_key_is_a_warning_and_says_whether_the_scenarios_claims_meet_in_a_bucket() {
    const RULE: &str = "timestamp-key-collides";
    let text_of = |s: &Scenario| {
        s.design_warnings
            .iter()
            .find(|h| h.id == RULE)
            .map(|h| h.text.clone())
            .unwrap_or_else(|| panic!("{RULE} in {:?}", s.design_warnings))
    };
    // Claims at 0 and 400 ms in buckets of 1 s: one key in every run.
    let s = load("payment-timestamp-key", &[]);
    assert_eq!(ids(&s), [RULE]);
    let t = text_of(&s);
    assert!(
        t.contains("claims 4711 and 4712") && t.contains("every run gives them one key"),
        "{t}"
    );
    // The key table reports the second claim's request as it arrives, in
    // the step the ledger judges a violation: the runs reach the situation
    // the warning names, and every one that does is a failure.
    let collision = models::payment::situations::KEY_COLLISION;
    assert_eq!(s.design_warnings[0].shown_by, Some(collision));
    let sum = sweep(&s, 100);
    assert_eq!(failed_with(&sum), Some("one-key-one-operation"));
    assert!(
        sum.tally.situations.contains(collision),
        "key-collision reached"
    );
    // Without a key table nothing stores the key to collide with: the
    // ledger's verdict alone marks the gap.
    let unkeyed = load("payment-timestamp-key", &["service.idempotency=none"]);
    assert_eq!(ids(&unkeyed), [RULE]);
    assert_eq!(unkeyed.design_warnings[0].shown_by, None);
    // Buckets of 1 ms keep these two apart, by luck: the sweep holds, and
    // the warning says that it is luck.
    let lucky = load("payment-timestamp-key", &["client.key_bucket_ms=1"]);
    let t = text_of(&lucky);
    assert!(
        t.contains("unique only by luck") && t.contains("400 ms apart"),
        "{t}"
    );
    assert!(sweep(&lucky, 300).first_failure.is_none());
    // Two claims 200 ms apart across a bucket's edge: two keys here, one
    // with the clock a little shifted.
    let ops = |a: u64, b: u64| {
        format!(
            "summary = \"x\"\n[client]\nkey = \"timestamp\"\nkey_bucket_ms = 1000\n[[operations]]\nclaim = 1\namount_eur = 10\nstart_ms = {a}\n[[operations]]\nclaim = 2\namount_eur = 10\nstart_ms = {b}\n"
        )
    };
    let edge = load_text("edge.toml", &ops(900, 1100), &[]);
    let t = text_of(&edge);
    assert!(t.contains("200 ms apart") && t.contains("in two"), "{t}");
    assert!(sweep(&edge, 100).first_failure.is_none());
    // Operations dealt to two client actors share the clock all the same.
    let two = load_text("two.toml", &ops(0, 400), &["client.actors=2"]);
    assert!(text_of(&two).contains("every run gives them one key"));
    assert_eq!(failed_with(&sweep(&two, 50)), Some("one-key-one-operation"));
    // A client that is down when its claims are due starts them together
    // when it is back: 5 s apart in the file, one bucket after a restart.
    let crashes = "[crashes.client]\ncrash_per_mille = [0, 500]\nrestart_ms_min = 6000\nrestart_ms_max = 10000\n";
    let backlog = load_text("backlog.toml", &format!("{}{crashes}", ops(0, 5000)), &[]);
    let t = text_of(&backlog);
    assert!(t.contains("[crashes.client]"), "{t}");
    assert_eq!(
        failed_with(&sweep(&backlog, 300)),
        Some("one-key-one-operation"),
        "a restart started both at once"
    );
    // Keys that name the operation are no timestamp.
    for key in ["stable", "per-attempt", "none"] {
        let set = format!("client.key={key}");
        assert!(
            load("payment-timestamp-key", &[&set])
                .design_warnings
                .is_empty(),
            "{key}"
        );
    }
}

/// Every retry of an operation carries the timestamp of its start: the key
/// is as stable as a stable one, and a retry after every layer forgot it is
/// paid again.
#[test]
fn a_timestamp_key_forgotten_while_the_client_still_retries_is_a_warning() {
    let short = load(
        "payment-timestamp-key",
        &[
            "client.key_bucket_ms=1",
            "service.retention_ms=5000",
            "bank.key_retention_ms=5000",
        ],
    );
    assert!(
        ids(&short).contains(&KEY_RULE),
        "{:?}",
        short.design_warnings
    );
    let sum = sweep(&short, 1000);
    assert_eq!(failed_with(&sum), Some("no-duplicate-effect"));
    // Kept for the default 30 days at the service and forever at the bank.
    let kept = load("payment-timestamp-key", &["client.key_bucket_ms=1"]);
    assert!(
        !ids(&kept).contains(&KEY_RULE),
        "{:?}",
        kept.design_warnings
    );
}

/// Without a retry window, `max_attempts` bounds the number of attempts,
/// not their time: a client that crashes and resumes its pending claims
/// from its own database minutes later retries under the same key after
/// every layer forgot it. A window bounds the retries whatever the restarts.
#[test]
fn a_client_restart_stretches_retries_without_a_window_past_the_keys_retention() {
    let crashes = [
        "client.retry.max_attempts=5",
        "crashes.client.crash_per_mille=[0,100]",
        "crashes.client.restart_ms_min=60000",
        "crashes.client.restart_ms_max=600000",
        "run.fault_phase_ms=1200000",
    ];
    let with = |window_ms: u64, retention_ms: u64, more: &[&str]| {
        let w = format!("client.retry.window_ms={window_ms}");
        let s = format!("service.retention_ms={retention_ms}");
        let b = format!("bank.key_retention_ms={retention_ms}");
        let sets: Vec<&str> = crashes
            .iter()
            .copied()
            .chain([w.as_str(), s.as_str(), b.as_str()])
            .chain(more.iter().copied())
            .collect();
        load("payment-stable-key", &sets)
    };
    // Five attempts of 10 s and waits of up to 30 s span under two minutes
    // without a crash; each of the four retries may come after a restart
    // of up to 10 min.
    let resumed = with(0, 120_000, &[]);
    restarts_break_key_retention(&resumed, "retry-after-key-expired");
    // The same retries without client crashes are covered by two minutes.
    let steady = with(0, 120_000, &["crashes.client.crash_per_mille=0"]);
    assert!(
        steady.design_warnings.is_empty(),
        "{:?}",
        steady.design_warnings
    );
    // Kept longer than four restarts and the retries: silent, and held.
    let kept = with(0, 3_000_000, &[]);
    assert!(
        kept.design_warnings.is_empty(),
        "{:?}",
        kept.design_warnings
    );
    assert!(sweep(&kept, 300).first_failure.is_none());
    // A 10 min window bounds the resumed retries too: a key kept a little
    // longer covers them, restarts and all.
    let windowed = with(600_000, 700_000, &[]);
    assert!(
        windowed.design_warnings.is_empty(),
        "{:?}",
        windowed.design_warnings
    );
    assert!(sweep(&windowed, 300).first_failure.is_none());
}

/// The reconciliation job starts from the dead letter, which comes a whole
/// timeout after the last attempt, and its re-drive under the same key is
/// one more copy for the key table to recognise. A client with a single
/// attempt of 10 s has no retry span to stand for that timeout: its job's
/// re-drive (rounds of 3 s, three of them) can reach the service 19 s and
/// the network's 49 ms of spread after the first attempt, and a key kept
/// 12 s is gone by the first round's.
#[test]
fn a_reconciliation_redrive_after_a_single_attempt_counts_the_attempts_timeout() {
    let job = |retention_ms: u64| {
        let r = format!("service.retention_ms={retention_ms}");
        load(
            "payment-reconcile-at-bank",
            &[
                "client.retry.max_attempts=1",
                "client.reconcile.after_ms=3000",
                "client.reconcile.max_rounds=3",
                "bank.accepts_key=false",
                "service.lease_ms=0",
                "network.links=[{from=\"service\",to=\"bank\",loss_per_mille=500}]",
                &r,
            ],
        )
    };
    let short = job(12_000);
    assert_eq!(ids(&short), [KEY_RULE]);
    assert!(
        short.design_warnings[0].text.contains("reconciliation job"),
        "{}",
        short.design_warnings[0].text
    );
    // The re-drive is taken for a new request while the first execution's
    // bank call still runs.
    assert_eq!(
        failed_with(&sweep(&short, 300)),
        Some("at-most-one-executor")
    );
    // Kept exactly as long as the last re-drive may come, and one ms longer.
    assert_eq!(ids(&job(19_000 + DEFAULT_SPREAD_MS)), [KEY_RULE]);
    let kept = job(19_000 + DEFAULT_SPREAD_MS + 1);
    assert!(
        kept.design_warnings.is_empty(),
        "{:?}",
        kept.design_warnings
    );
    assert_eq!(failed_with(&sweep(&kept, 2000)), None);
}
