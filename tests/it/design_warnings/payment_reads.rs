//! Payment status reads: a lagging replica read sooner than it shows a
//! transfer, by the service or the reconciliation job, and a status query
//! that can overtake its transfer.

use super::helpers::{failed_with, ids, warning_text};
use crate::support::{load, load_text, sweep};
use models::Scenario;

/// A status answer read sooner after a transfer than the bank's replica
/// shows it reads "0 EUR paid" for a claim that was paid. The shortest time
/// between a transfer and a read of it is not always the bank timeout: a
/// restarted service asks as soon as it is back.
#[test]
fn a_status_lag_longer_than_the_earliest_read_after_a_transfer_is_a_warning() {
    const RULE: &str = "status-lag-above-read-delay";
    let shown = |s: &Scenario| warning_text(s, RULE);
    // payment-query-before-retry restarts its service 1 to 30 s after a
    // crash and asks the bank at once (query_on_recovery): 1 s less the
    // 49 ms the transfer can be slower to reach the bank than the query.
    let qbr = |lag: u64, sets: &[&str]| {
        let lag = format!("bank.status_lag_ms={lag}");
        load(
            "payment-query-before-retry",
            &[&[lag.as_str()][..], sets].concat(),
        )
    };
    assert!(qbr(0, &[]).design_warnings.is_empty());
    assert_eq!(shown(&qbr(951, &[])), None, "current when the query comes");
    let text = shown(&qbr(952, &[])).expect("a millisecond more is stale");
    assert!(
        text.contains("[crashes.service] restart_ms_min")
            && text.contains("952 ms")
            && text.contains("951 ms"),
        "{text}"
    );
    // The lag the catalog once called safe (the bank timeout less the
    // spread) is broken by the restart, and so is the sweep.
    let restart_at_once = [
        "crashes.service.crash_per_mille=[0,300]",
        "crashes.service.restart_ms_max=1000",
    ];
    let stale = qbr(2000, &restart_at_once);
    assert_eq!(ids(&stale), [RULE]);
    let sum = sweep(&stale, 300);
    assert!(sum.first_failure.is_some(), "a recovery read the replica");
    assert!(sum
        .tally
        .situations
        .contains(models::payment::situations::STATUS_READ_STALE));
    let fresh = qbr(951, &restart_at_once);
    assert!(
        fresh.design_warnings.is_empty(),
        "{:?}",
        fresh.design_warnings
    );
    assert!(sweep(&fresh, 300).first_failure.is_none());
    // Without crashes the earliest read is the query before a re-send, one
    // bank timeout (5 s) after the transfer.
    let replica = |lag: &str| load("payment-query-reads-stale-replica", &[lag]);
    assert!(replica("bank.status_lag_ms=4951")
        .design_warnings
        .is_empty());
    let text =
        shown(&replica("bank.status_lag_ms=4952")).expect("past the timeout less the spread");
    assert!(text.contains("service.query_before_retry"), "{text}");
    // A recovery that re-sends without asking reads nothing.
    assert!(qbr(
        2000,
        &[
            "service.query_before_retry=false",
            "service.query_on_recovery=false"
        ]
    )
    .design_warnings
    .is_empty());
    // A lease takeover asks too: bank calls of 4 x 5 s send their last
    // transfer 15 s after the lock, so a lease of 20 s and 1 ms (strictly
    // longer than the call, or the lease warns) asks 5.001 s after it.
    let lease = |lag: &str| {
        load(
            "payment-query-reads-stale-replica",
            &[
                lag,
                "service.query_before_retry=false",
                "service.lease_ms=20001",
            ],
        )
    };
    assert!(lease("bank.status_lag_ms=4952").design_warnings.is_empty());
    let text = shown(&lease("bank.status_lag_ms=4953")).expect("the takeover's query");
    assert!(text.contains("service.lease_ms"), "{text}");
    // Where the money is written the check is current: a conditional
    // transfer, or a key the bank deduplicates by.
    assert!(load("payment-conditional-survives-stale-read", &[])
        .design_warnings
        .is_empty());
    assert!(qbr(
        10_000,
        &["bank.accepts_key=true", "service.pass_key_to_bank=true"]
    )
    .design_warnings
    .is_empty());
}

/// The claims system's reconciliation job reads the bank's status too, and
/// re-drives a "not paid" (every round but the last): where no layer
/// recognises the re-drive, a stale "not paid" is a second payment. Reply
/// losses make dead letters; the bank's replica runs behind its ledger.
const JOB_READS_REPLICA: &str = r#"format = 2
summary = "a reconciliation job reads a lagging replica"

[client]
key = "stable"
timeout_ms = 10000

[client.retry]
policy = "fixed"
base_ms = 1000
max_attempts = 2
dead_letter = true

[client.reconcile]
after_ms = 60000
max_rounds = 3
ask = "bank"
redrive_key = "new"

[service]
idempotency = "claim-same-tx"
pass_key_to_bank = false

[bank]
accepts_key = false
status_query = true

[[network.links]]
from = "service"
to = "client"
loss_per_mille = [0, 900]
"#;

/// The job's earliest read after a transfer landed: a round (60 s) after a
/// re-drive prompted by an answer that took up to 100 ms, less the 10.1 s a
/// transfer may take to land after its request left the client (50 ms to
/// the service, a bank call whose third and last transfer leaves 10 s
/// later, 50 ms to the bank), plus the 1 ms the query takes at least:
/// 49.801 s. Two rounds only: its first query, 100 ms later.
#[test]
fn a_reconciliation_job_reading_a_lagging_replica_is_a_warning() {
    const RULE: &str = "status-lag-above-read-delay";
    let job = |sets: &[&str]| load_text("job.toml", JOB_READS_REPLICA, sets);
    let text = |s: &Scenario| warning_text(s, RULE);
    assert_eq!(text(&job(&["bank.status_lag_ms=49801"])), None);
    let t = text(&job(&["bank.status_lag_ms=49802"])).expect("a millisecond past the read");
    assert!(
        t.contains("reconciliation job")
            && t.contains("49.801 s")
            && t.contains("client.reconcile.after_ms")
            && t.contains("redrive_key = \"new\""),
        "{t}"
    );
    let first = job(&["bank.status_lag_ms=49902", "client.reconcile.max_rounds=2"]);
    let t = text(&first).expect("the first query");
    assert!(t.contains("first query") && t.contains("49.901 s"), "{t}");
    assert_eq!(
        text(&job(&[
            "bank.status_lag_ms=49901",
            "client.reconcile.max_rounds=2"
        ])),
        None
    );
    // The runs agree: a replica 2 min behind is read stale and the re-drive
    // pays again; one 30 s behind shows every transfer by the job's query.
    let stale = job(&["bank.status_lag_ms=120000"]);
    assert_eq!(ids(&stale), [RULE]);
    let sum = sweep(&stale, 300);
    assert_eq!(failed_with(&sum), Some("no-duplicate-effect"));
    assert!(sum
        .tally
        .situations
        .contains(models::payment::situations::STATUS_READ_STALE));
    let fresh = job(&["bank.status_lag_ms=30000"]);
    assert!(
        fresh.design_warnings.is_empty(),
        "{:?}",
        fresh.design_warnings
    );
    assert!(sweep(&fresh, 300).first_failure.is_none());
    // Silent where the stale "not paid" is harmless or never acted on: a
    // re-drive under the same key, which the service's key table answers
    // (and the runs hold); a job that asks the service, or whose only
    // round leaves its "not paid" for a person.
    let same = job(&[
        "bank.status_lag_ms=120000",
        "client.reconcile.redrive_key=same",
    ]);
    assert!(
        same.design_warnings.is_empty(),
        "{:?}",
        same.design_warnings
    );
    assert!(sweep(&same, 300).first_failure.is_none());
    for set in [
        "client.reconcile.ask=service",
        "client.reconcile.max_rounds=1",
    ] {
        let s = job(&["bank.status_lag_ms=120000", set]);
        assert!(
            s.design_warnings.is_empty(),
            "{set}: {:?}",
            s.design_warnings
        );
    }
    // The same key with nothing that keeps it is no protection.
    let unkept = job(&[
        "bank.status_lag_ms=120000",
        "client.reconcile.redrive_key=same",
        "service.idempotency=none",
    ]);
    assert!(ids(&unkept).contains(&RULE), "{:?}", unkept.design_warnings);
    // A conditional transfer is checked against the ledger itself.
    let conditional = job(&[
        "bank.status_lag_ms=120000",
        "service.mode=state-conditional",
    ]);
    assert!(
        conditional.design_warnings.is_empty(),
        "{:?}",
        conditional.design_warnings
    );
}

/// Query before retry against a bank without keys or lag, whose link from
/// the service delays a transfer up to `delay_ms_max`: past the 5 s bank
/// timeout, the query can arrive first.
fn overtaken(delay_ms_max: u64, sets: &[&str]) -> Scenario {
    let text = format!(
        r#"summary = "a status query overtakes the transfer"

[client]
key = "stable"
timeout_ms = 60000

[service]
idempotency = "claim-same-tx"
pass_key_to_bank = false
bank_timeout_ms = 5000
bank_max_attempts = 4
query_before_retry = true

[bank]
accepts_key = false
status_query = true

[[network.links]]
from = "service"
to = "bank"
delay_ms_min = 0
delay_ms_max = {delay_ms_max}
"#
    );
    load_text("overtaken.toml", &text, sets)
}

/// A status query sent a bank timeout after a transfer can reach the bank
/// before it when the link's delays spread wider than the timeout: "0 EUR
/// paid" from a current ledger, and the service pays again. No lag needed.
#[test]
fn a_status_query_that_can_overtake_its_transfer_is_a_warning() {
    const RULE: &str = "status-query-overtakes-transfer";
    let wide = overtaken(10_000, &[]);
    assert_eq!(ids(&wide), [RULE]);
    let h = &wide.design_warnings[0];
    assert!(
        h.text.contains("5 s before")
            && h.text.contains("service.bank_timeout_ms")
            && h.text.contains("10 s longer"),
        "{}",
        h.text
    );
    assert_eq!(h.shown_by, None, "the bank cannot tell");
    assert_eq!(failed_with(&sweep(&wide, 300)), Some("no-duplicate-effect"));
    // A spread equal to the timeout: the transfer, sent first, is taken
    // first at the same moment; silent, and the runs hold.
    let even = overtaken(5_000, &[]);
    assert!(
        even.design_warnings.is_empty(),
        "{:?}",
        even.design_warnings
    );
    assert!(sweep(&even, 1000).first_failure.is_none());
    assert_eq!(ids(&overtaken(5_001, &[])), [RULE]);
    // A key the bank deduplicates by, or a conditional transfer: silent,
    // and the runs hold.
    for sets in [
        &["service.pass_key_to_bank=true", "bank.accepts_key=true"][..],
        &["service.mode=state-conditional"][..],
    ] {
        let s = overtaken(10_000, sets);
        assert!(
            s.design_warnings.is_empty(),
            "{sets:?}: {:?}",
            s.design_warnings
        );
        assert!(sweep(&s, 300).first_failure.is_none(), "{sets:?}");
    }
    // The reconciliation job's query too: payment-reconcile-new-key's bank
    // link delays transfers up to 100 s, its rounds are a minute apart.
    let job = load("payment-reconcile-new-key", &[]);
    let h = job
        .design_warnings
        .iter()
        .find(|h| h.id == RULE)
        .expect("the job's query");
    let t = &h.text;
    assert!(
        t.contains("reconciliation job") && t.contains("redrive_key"),
        "{t}"
    );
    // A transfer still on its way is the delayed-transfer case's, not the
    // recovery's (the service there never crashes).
    assert_eq!(h.example, "payment-reconcile-new-key");
    // The same job under the same key: the key table recognises the re-drive.
    assert!(load("payment-reconcile-at-bank", &[])
        .design_warnings
        .is_empty());
}

/// A job that re-drives under a new key beside a service that crashes: a
/// bank call without an answer leaves the claim's key "in progress", and a
/// restart recovers it and pays (asking first: a second key of the claim,
/// the re-drive's, recovered beside it reads "not paid" too). The transfers
/// of the first execution land 100 ms after the claim at the latest, so
/// the job's own arithmetic (a minute's wait) says its query is safe.
const JOB_BESIDE_RECOVERY: &str = r#"format = 2
summary = "a job re-drives beside a service that recovers"

[client]
key = "stable"
timeout_ms = 10000

[client.retry]
policy = "fixed"
base_ms = 1000
max_attempts = 2

[client.reconcile]
after_ms = 30000
max_rounds = 2
ask = "bank"
redrive_key = "new"

[service]
idempotency = "claim-same-tx"
pass_key_to_bank = false
bank_max_attempts = 1

[bank]
accepts_key = false
status_query = true

[[network.links]]
from = "service"
to = "bank"
loss_per_mille = [0, 500]

[crashes.service]
crash_per_mille = [0, 200]
restart_ms_min = 1000
restart_ms_max = 30000
"#;

/// The job's first query reaches the bank 30.001 s into the run at the
/// earliest (the claim starts at 0, the job waits 30 s, the trip takes
/// 1 ms); a recovery's transfer lands as late as the end of the faults,
/// plus the 1 s restart, the recovered call's 5 s (it asks, then
/// transfers) and the 50 ms to the bank: F + 6.05 s. So the job's read can
/// come first from a fault phase of 23.952 s on, and it did before this
/// rule counted the recovery: the default 120 s phase failed with no
/// warning.
#[test]
fn a_job_that_can_read_before_a_recovery_pays_is_a_warning() {
    const RULE: &str = "status-query-overtakes-transfer";
    let job = |sets: &[&str]| load_text("recovery.toml", JOB_BESIDE_RECOVERY, sets);
    let text = |s: &Scenario| warning_text(s, RULE);
    let recovering = job(&[]);
    assert_eq!(ids(&recovering), [RULE]);
    // The scenario that shows a recovery's payment overtaken, not the one
    // of a transfer delayed on the link.
    assert_eq!(
        recovering.design_warnings[0].example,
        "payment-reconcile-races-recovery"
    );
    let t = text(&recovering).unwrap();
    assert!(
        t.contains("up to 96 s before")
            && t.contains("as soon as 30 s into the run")
            && t.contains("as late as 126.1 s into the run")
            && t.contains("run.fault_phase_ms")
            && t.contains("[crashes.service] restart_ms_min")
            && t.contains("a transfer that a recovery still sends")
            && t.contains("redrive_key = \"new\""),
        "{t}"
    );
    assert_eq!(
        failed_with(&sweep(&recovering, 1000)),
        Some("no-duplicate-effect")
    );
    // The boundary: a read at the very moment the last transfer lands
    // finds it (the transfer left first).
    assert!(job(&["run.fault_phase_ms=23951"])
        .design_warnings
        .is_empty());
    let t = text(&job(&["run.fault_phase_ms=23952"])).expect("a millisecond later");
    assert!(t.contains("up to 1 ms before"), "{t}");
    // Silent, and the runs hold: faults that end well before the job asks
    // (every recovery has paid by then), a job that waits past them, a
    // service that never crashes, a re-drive the key table recognises.
    for sets in [
        &["run.fault_phase_ms=20000"][..],
        &["client.reconcile.after_ms=130000"][..],
        &["crashes.service.crash_per_mille=0"][..],
        &["client.reconcile.redrive_key=same"][..],
    ] {
        let s = job(sets);
        assert!(
            s.design_warnings.is_empty(),
            "{sets:?}: {:?}",
            s.design_warnings
        );
        assert!(sweep(&s, 3000).first_failure.is_none(), "{sets:?}");
    }
    // Silent where no key is left "in progress" to recover: none is sent,
    // or the table stores none until the bank confirms (whatever else
    // those designs break).
    for set in ["client.key=none", "service.idempotency=check-then-act"] {
        let s = job(&[set]);
        assert!(!ids(&s).contains(&RULE), "{set}: {:?}", s.design_warnings);
    }
}
