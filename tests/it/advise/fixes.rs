//! For every failing catalog scenario whose fix is a setting, the fix
//! advise must find, written here by hand, not computed by the code under
//! test. The list was derived from the catalog's pairs: a failing scenario
//! and a holding sibling that differs from it by settings alone (no network,
//! operations or crashes), e.g. `payment-fingerprint-off` and
//! `payment-fingerprint-check`. Each entry names the keys of the sibling's
//! change that a found fix must make; where the sibling changes more than
//! the failure needs (`payment-keys-never-expire`'s sibling also adds a
//! retry window), the entry names the part that makes it hold, and says so.

use crate::support::root;
use idemsim::advise::{advise, Budget, Fix};
use idemsim::catalog;
use models::scenario::Override;
use sim::SeedRange;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicBool;

/// Which keys a fix must set, one fix of one change each: all of these
/// need a single change, so advise runs with `max_changes = 1` here to stay
/// quick; `cli.rs` runs the default budget.
const KNOWN: &[(&str, &[&str])] = &[
    (
        "messaging-discard-at-max-deliveries",
        &["broker.at_max_deliveries"],
    ),
    ("messaging-eod-checked-ack-lossy-db", &["consumer.handler"]),
    ("messaging-import-rerun-append", &["consumer.handler"]),
    (
        "messaging-kafka-delivery-timeout-past",
        &["producer.delivery_timeout_ms"],
    ),
    (
        "messaging-nats-duplicate-window-past",
        &["producer.publish_timeout_ms"],
    ),
    (
        "messaging-servicebus-duplicate-detection-past",
        &["producer.publish_timeout_ms"],
    ),
    (
        "messaging-sqs-fifo-dedup-past",
        &["producer.publish_timeout_ms"],
    ),
    (
        "messaging-webhook-ids-forgotten",
        &["consumer.inbox_retention_ms"],
    ),
    ("messaging-webhook-no-dedup", &["consumer.handler"]),
    ("payment-fingerprint-off", &["service.fingerprint_check"]),
    ("payment-give-up-silently", &["client.retry.dead_letter"]),
    // The sibling also bounds the retries with a window; keys kept a day cover them alone.
    ("payment-keys-never-expire", &["service.retention_ms"]),
    // The sibling also turns the fingerprint check on, which is on by default.
    (
        "payment-payload-swallowed-downstream",
        &["service.idempotency"],
    ),
    // The sibling writes format 2 and drops the query before retry; the conditional transfer is the fix.
    ("payment-query-reads-stale-replica", &["service.mode"]),
    ("payment-reconcile-asked-service", &["client.reconcile.ask"]),
    // The sibling also bounds the retries with a window; the same key on re-drive is the fix.
    (
        "payment-reconcile-new-key",
        &["client.reconcile.redrive_key"],
    ),
    // The sibling asks the bank first, which needs a bank that answers.
    (
        "payment-refund-on-timeout",
        &["client.compensate.refund_when"],
    ),
    (
        "payment-refund-retried-without-key",
        &["client.compensate.refund_key"],
    ),
    ("payment-retention-equals-window", &["service.retention_ms"]),
    (
        "payment-retry-rejected-input",
        &["client.retry.retry_final_errors"],
    ),
    ("payment-shed-twin-executes", &["client.overloaded_means"]),
    // The sibling tunes the backoff to Stripe's 24 h key retention (a value,
    // not a protection); keys kept longer than the retries cover it alike.
    (
        "payment-stripe-key-retention-past",
        &["service.retention_ms"],
    ), // The sibling re-drives through a reconciliation job and a service lease;
    // the job alone makes the books agree.
    (
        "chain-booked-before-bank-cut-off",
        &["client.reconcile.max_rounds"],
    ),
    ("http-delete-recreated", &["client.conditional_writes"]),
    ("http-patch-retried", &["client.conditional_writes"]),
    ("http-post-body-changed-on-retry", &["server.fingerprint"]),
    ("payment-bank-retry-storm", &["client.budget.capacity"]),
    // The sibling keeps the producer id past the retries (Kafka's
    // producer.id.expiration.ms raised); idemsim's 0 keeps it for good.
    (
        "messaging-producer-id-expired",
        &["broker.producer_id_expiration_ms"],
    ),
    (
        "payment-key-deleted-on-timeout",
        &["service.on_bank_timeout"],
    ),
    (
        "payment-overload-deadline-ignored",
        &["service.drop_expired"],
    ),
    // Its nearest sibling by settings is payment-overload-deadline-propagated,
    // which also has fewer attempts: with five, dropping expired work is not
    // enough (tests/it/load.rs), and the budget of payment-overload-budget is.
    ("payment-overload-metastable", &["client.budget.capacity"]),
    // Its sibling, messaging-nats-duplicate-window-inbox-outlasts, keeps inbox
    // rows past the copy NATS stores again (its window is not restarted by
    // the dropped duplicate between them).
    (
        "messaging-nats-duplicate-window-not-restarted",
        &["consumer.inbox_retention_ms"],
    ),
];

fn keys(f: &Fix) -> Vec<&'static str> {
    f.changes
        .iter()
        .flat_map(|r| r.sets.iter().map(|(k, _)| *k))
        .collect()
}

fn overrides(f: &Fix) -> Vec<Override> {
    f.changes
        .iter()
        .flat_map(|r| r.sets.iter())
        .map(|(k, v)| Override {
            key: (*k).to_string(),
            value: (*v).to_string(),
        })
        .collect()
}

/// Advise finds the known fix, and its first-ranked fix holds on every seed
/// `verify` runs (the scenario's `run.runs`, by the scenario's own strategy:
/// `Scenario::search`, the seeds, which advise's promise is about).
fn finds(name: &str, want: &[&str]) {
    let entry = catalog::locate(name).expect("a catalog scenario");
    let budget = Budget {
        max_changes: 1,
        ..Budget::default()
    };
    let stop = AtomicBool::new(false);
    let a = advise(&entry, &[], budget, 1, &stop).expect("it loads");
    assert!(a.fails(), "{name} fails as it is");
    assert!(
        a.fixes
            .iter()
            .any(|f| want.iter().all(|k| keys(f).contains(k))),
        "{name}: no fix sets {want:?}; found {:?}",
        a.fixes.iter().map(Fix::describe).collect::<Vec<_>>()
    );
    let first = &a.fixes[0];
    let fixed = catalog::load_entry(&entry, &overrides(first)).expect("the fix loads");
    let seeds = SeedRange {
        start: 0,
        end: fixed.runs.into(),
    };
    let sum = fixed.search(seeds, 2, &stop);
    assert_eq!(
        (sum.tally.failing(), sum.tally.inconclusive),
        (0, 0),
        "{name}: the first-ranked fix {} does not hold under verify's budget",
        first.describe()
    );
}

macro_rules! known_fix_tests {
    ($($test:ident: $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                finds($name, want_of($name));
            }
        )*
        /// The scenarios a test above runs: each entry of [`KNOWN`] needs
        /// one (`every_known_fix_has_its_test`), named, not numbered.
        const TESTED: &[&str] = &[$($name),*];
    };
}

/// The keys [`KNOWN`] gives for `name`.
fn want_of(name: &str) -> &'static [&'static str] {
    KNOWN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, want)| *want)
        .unwrap_or_else(|| panic!("{name} is not in KNOWN"))
}

// One test per scenario, so the harness runs them side by side.
known_fix_tests! {
    discard_at_max_deliveries: "messaging-discard-at-max-deliveries",
    eod_checked_ack_lossy_db: "messaging-eod-checked-ack-lossy-db",
    import_rerun_append: "messaging-import-rerun-append",
    kafka_delivery_timeout_past: "messaging-kafka-delivery-timeout-past",
    nats_duplicate_window_past: "messaging-nats-duplicate-window-past",
    servicebus_duplicate_detection_past: "messaging-servicebus-duplicate-detection-past",
    sqs_fifo_dedup_past: "messaging-sqs-fifo-dedup-past",
    webhook_ids_forgotten: "messaging-webhook-ids-forgotten",
    webhook_no_dedup: "messaging-webhook-no-dedup",
    fingerprint_off: "payment-fingerprint-off",
    give_up_silently: "payment-give-up-silently",
    keys_never_expire: "payment-keys-never-expire",
    payload_swallowed_downstream: "payment-payload-swallowed-downstream",
    query_reads_stale_replica: "payment-query-reads-stale-replica",
    reconcile_asked_service: "payment-reconcile-asked-service",
    reconcile_new_key: "payment-reconcile-new-key",
    refund_on_timeout: "payment-refund-on-timeout",
    refund_retried_without_key: "payment-refund-retried-without-key",
    retention_equals_window: "payment-retention-equals-window",
    retry_rejected_input: "payment-retry-rejected-input",
    shed_twin_executes: "payment-shed-twin-executes",
    stripe_key_retention_past: "payment-stripe-key-retention-past",
    booked_before_bank_cut_off: "chain-booked-before-bank-cut-off",
    delete_recreated: "http-delete-recreated",
    patch_retried: "http-patch-retried",
    post_body_changed_on_retry: "http-post-body-changed-on-retry",
    bank_retry_storm: "payment-bank-retry-storm",
    producer_id_expired: "messaging-producer-id-expired",
    key_deleted_on_timeout: "payment-key-deleted-on-timeout",
    overload_deadline_ignored: "payment-overload-deadline-ignored",
    overload_metastable: "payment-overload-metastable",
    nats_duplicate_window_not_restarted: "messaging-nats-duplicate-window-not-restarted",
}

/// Top-level tables whose difference is not a setting: the faults, the
/// load, the topology, or the scenario's own bookkeeping.
const NOT_SETTINGS: &[&str] = &[
    "network",
    "operations",
    "clients",
    "crashes",
    "requests",
    "resources",
    "model",
    // A rollout plan is named per scenario (`rollouts.NAME`): advise searches
    // the models' protections, not deployment orders.
    "rollouts",
];
// Likewise a client group (`client.groups.NAME`, above): named per scenario,
// its settings a version's, not a protection advise proposes.

/// A scenario's settings as `dotted.key → value`, without its summary,
/// expectation and run size.
fn settings(text: &str) -> BTreeMap<String, String> {
    fn walk(prefix: &str, t: &dyn toml_edit::TableLike, out: &mut BTreeMap<String, String>) {
        for (k, item) in t.iter() {
            let key = format!("{prefix}{k}");
            match item.as_table_like() {
                Some(inner) if !item.is_array_of_tables() => walk(&format!("{key}."), inner, out),
                _ => {
                    let v = item.to_string();
                    out.insert(key, v.split('#').next().unwrap_or("").trim().to_string());
                }
            }
        }
    }
    let doc: toml_edit::DocumentMut = text.parse().expect("a catalog file parses");
    let mut out = BTreeMap::new();
    walk("", doc.as_table(), &mut out);
    out.retain(|k, _| {
        !["summary", "expect.", "run."]
            .iter()
            .any(|p| k.starts_with(p))
    });
    out
}

/// The list above is the catalog's: every failing scenario with a holding
/// sibling of its model that differs by at most four settings and nothing
/// else is in it, and nothing else is.
#[test]
fn the_known_fixes_are_every_failing_scenario_with_a_sibling_a_few_settings_apart() {
    let mut all = Vec::new();
    for f in crate::support::scenario_files() {
        let text = std::fs::read_to_string(&f).expect("a catalog file");
        let holds = text.contains("verdict = \"holds\"");
        let fails = text.contains("verdict = \"violation\"");
        all.push((crate::support::name_of(&f), holds, fails, settings(&text)));
    }
    let model = |s: &BTreeMap<String, String>| s.get("model").cloned().unwrap_or_default();
    let mut derived: Vec<&str> = all
        .iter()
        .filter(|(_, _, fails, _)| *fails)
        .filter(|(_, _, _, a)| {
            all.iter()
                .filter(|h| h.1 && model(&h.3) == model(a))
                .any(|(_, _, _, b)| {
                    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                    let differ: Vec<&&String> =
                        keys.iter().filter(|k| a.get(**k) != b.get(**k)).collect();
                    differ.len() <= 4
                        && differ.iter().all(|k| {
                            !NOT_SETTINGS.contains(&k.split('.').next().unwrap_or(""))
                                && !k.starts_with("client.groups.")
                        })
                })
        })
        .map(|(n, ..)| n.as_str())
        .collect();
    derived.sort_unstable();
    let mut known: Vec<&str> = KNOWN.iter().map(|(n, _)| *n).collect();
    known.sort_unstable();
    assert_eq!(
        derived, known,
        "a failing scenario with a sibling a few settings apart needs its known fix here"
    );
}

/// Every entry of [`KNOWN`] runs through `finds` in a test of its own, and
/// no test names a scenario twice or one `KNOWN` lacks.
#[test]
fn every_known_fix_has_its_test() {
    let mut known: Vec<&str> = KNOWN.iter().map(|(n, _)| *n).collect();
    let mut tested = TESTED.to_vec();
    known.sort_unstable();
    tested.sort_unstable();
    assert_eq!(
        tested, known,
        "each known fix needs one test in known_fix_tests!"
    );
}

#[test]
fn every_known_fix_is_listed_once_and_every_scenario_fails_in_the_catalog() {
    let mut names: Vec<&str> = KNOWN.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), KNOWN.len());
    for n in names {
        let text = std::fs::read_to_string(root().join(format!("scenarios/{n}.toml")))
            .expect("a catalog file");
        assert!(
            text.contains("verdict = \"violation\""),
            "{n} must be a failing scenario"
        );
    }
}
