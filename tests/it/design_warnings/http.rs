//! The HTTP model's keys: a retry after the key expired, for the methods
//! whose repeat takes effect, and a client restart that stretches retries.

use super::helpers::{failed_with, ids, restarts_break_key_retention, KEY_RULE};
use crate::support::{load, load_text, sweep};

#[test]
fn an_http_key_matters_only_for_requests_whose_repeat_takes_effect() {
    let s = load("http-post-with-key", &["server.key_retention_ms=5000"]);
    assert_eq!(ids(&s), [KEY_RULE]);
    assert_eq!(
        s.design_warnings[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("request-after-key-expired")
    );
    assert!(load("http-post-with-key", &[]).design_warnings.is_empty());
    // Eight attempts span 161 s (seven timeouts of 10 s, waits of at most
    // 1+2+4+8+16+30+30 s); a copy takes 1 ms to 12 s: 11,999 ms of spread.
    let s = load("http-post-with-key", &["server.key_retention_ms=161000"]);
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        s.design_warnings[0].text.contains("[network]"),
        "{}",
        s.design_warnings[0].text
    );
    let s = load("http-post-with-key", &["server.key_retention_ms=172999"]);
    assert_eq!(
        ids(&s),
        [KEY_RULE],
        "kept exactly as long as the last copy may come"
    );
    assert!(
        load("http-post-with-key", &["server.key_retention_ms=173000"])
            .design_warnings
            .is_empty()
    );
    assert!(
        load("http-post-with-key", &["client.idempotency_key=false"])
            .design_warnings
            .is_empty()
    );
    // A retried PUT that replaces is harmless however short the retention.
    let put = "summary = \"put\"\nmodel = \"http\"\n\n[server]\nkey_retention_ms = 1000\n\n[[requests]]\nmethod = \"put\"\nresource = 4711\nvalue = 1200\n";
    assert!(load_text("put.toml", put, &[]).design_warnings.is_empty());
    let adds = load_text("put.toml", put, &["server.put=add"]);
    assert_eq!(ids(&adds), [KEY_RULE]);
    // And the warning is right: that short retention lets a retried POST pay again.
    let sum = sweep(
        &load("http-post-with-key", &["server.key_retention_ms=5000"]),
        300,
    );
    assert!(
        sum.first_failure.is_some(),
        "a retry after 5 s creates a second resource"
    );
}

#[test]
fn an_edit_retried_after_its_key_expired_adds_again_and_is_a_warning() {
    // A read-modify-write whose 200 is lost is retried: it GETs the
    // resource, which holds its own write, and PUTs that plus its amount.
    // If-Match passes (the ETag it read is current); only the stored key
    // answers the retry instead of executing it. http-if-match's editors
    // retry for 86.2 s (eight attempts of 10 s, waits up to 5 s).
    let short = load("http-if-match", &["server.key_retention_ms=60000"]);
    assert_eq!(ids(&short), [KEY_RULE]);
    let text = &short.design_warnings[0].text;
    assert!(
        text.contains("takes effect again")
            && text.contains("reads its own write back")
            && text.contains("If-Match"),
        "{text}"
    );
    assert_eq!(
        short.design_warnings[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("request-after-key-expired")
    );
    assert_eq!(
        short.design_warnings[0].example,
        "http-key-expired-before-retry"
    );
    // Kept past the retries (the shipped 24 h, or an hour): no warning.
    assert!(load("http-if-match", &[]).design_warnings.is_empty());
    assert!(load("http-if-match", &["server.key_retention_ms=3600000"])
        .design_warnings
        .is_empty());
    // And the warning is right: once the key is gone the edit adds again.
    let gone = sweep(&load("http-if-match", &["server.key_retention_ms=1"]), 300);
    assert_eq!(failed_with(&gone), Some("no-duplicate-effect"));
}

#[test]
fn a_delete_retried_after_its_key_expired_is_a_warning_only_where_its_404_reads_as_failed() {
    // A DELETE's repeat deletes nothing more: without its stored 204 it is
    // answered 404. A client that reads that 404 as "gone, as asked" is
    // right whatever the key; one that records it as failed needs the key
    // to outlive its retries (http-delete-retried's: 40 s).
    let keyed = ["client.idempotency_key=true", "client.delete_404=failed"];
    let short = load(
        "http-delete-retried",
        &[keyed[0], keyed[1], "server.key_retention_ms=1"],
    );
    assert_eq!(ids(&short), [KEY_RULE]);
    let text = &short.design_warnings[0].text;
    assert!(
        text.contains("404")
            && text.contains("client.delete_404 = \"failed\"")
            && !text.contains("takes effect again"),
        "{text}"
    );
    assert_eq!(
        short.design_warnings[0].example,
        "http-delete-404-as-failure"
    );
    // The key outlives the retries: the retry gets the stored 204.
    assert!(load("http-delete-retried", &keyed)
        .design_warnings
        .is_empty());
    // A 404 read as done: nothing to warn of, however short the retention.
    let done = load(
        "http-delete-retried",
        &[
            keyed[0],
            "client.delete_404=done",
            "server.key_retention_ms=1",
        ],
    );
    assert!(
        done.design_warnings.is_empty(),
        "{:?}",
        done.design_warnings
    );
    // The runs agree on both sides.
    assert_eq!(failed_with(&sweep(&short, 300)), Some("no-false-failure"));
    assert_eq!(failed_with(&sweep(&done, 300)), None);
    assert_eq!(
        failed_with(&sweep(&load("http-delete-retried", &keyed), 300)),
        None
    );
    // Beside a POST, the warning names both costs.
    let both = "summary = \"both\"\nmodel = \"http\"\n\n[client]\ndelete_404 = \"failed\"\n\n[server]\nkey_retention_ms = 1000\n\n[[requests]]\nmethod = \"post\"\nvalue = 1200\n\n[[requests]]\nmethod = \"delete\"\nresource = 4711\n";
    let s = load_text("both.toml", both, &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
    let text = &s.design_warnings[0].text;
    assert!(
        text.contains("takes effect again; a DELETE's retry") && text.contains("404"),
        "{text}"
    );
}

/// The HTTP client resumes its pending requests from its own storage after
/// a crash, as the payment client does: without a retry window,
/// `max_attempts` bounds the number of its retries, not their time, and a
/// server that keeps Idempotency-Keys for two minutes forgets one before a
/// POST's retry that comes after a restart of several minutes, which
/// creates the resource again.
#[test]
fn an_http_client_restart_stretches_retries_without_a_window_past_the_keys_retention() {
    let crashes = [
        "client.retry.max_attempts=5",
        "crashes.client.crash_per_mille=[0,100]",
        "crashes.client.restart_ms_min=60000",
        "crashes.client.restart_ms_max=600000",
        "run.fault_phase_ms=1200000",
    ];
    let with = |retention_ms: u64, more: &[&str]| {
        let r = format!("server.key_retention_ms={retention_ms}");
        let sets: Vec<&str> = crashes
            .iter()
            .copied()
            .chain([r.as_str()])
            .chain(more.iter().copied())
            .collect();
        load("http-post-with-key", &sets)
    };
    // Five attempts of 10 s with waits of up to 30 s span under a minute
    // without a crash; each of the four retries may come after a restart of
    // up to 10 min.
    let resumed = with(120_000, &[]);
    restarts_break_key_retention(&resumed, "request-after-key-expired");
    // The same retries from a client that never crashes are covered.
    let steady = with(120_000, &["crashes.client.crash_per_mille=0"]);
    assert!(
        steady.design_warnings.is_empty(),
        "{:?}",
        steady.design_warnings
    );
    // A window bounds the retries in time whatever the restarts: the
    // client gives up (a dead letter) instead of retrying after the key is
    // gone, and the runs hold.
    let windowed = with(120_000, &["client.retry.window_ms=60000"]);
    assert!(
        windowed.design_warnings.is_empty(),
        "{:?}",
        windowed.design_warnings
    );
    assert_eq!(failed_with(&sweep(&windowed, 300)), None);
    // Kept longer than four restarts and the retries: silent, and held.
    let kept = with(3_000_000, &[]);
    assert!(
        kept.design_warnings.is_empty(),
        "{:?}",
        kept.design_warnings
    );
    assert_eq!(failed_with(&sweep(&kept, 300)), None);
    // A crashing client named in [[requests]] counts by its own name.
    let text = "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = true\n[client.retry]\npolicy = \"fixed\"\nmax_attempts = 3\n[server]\nkey_retention_ms = 60000\n[[requests]]\nclient = \"alice\"\nmethod = \"post\"\nvalue = 1\n[crashes.alice]\ncrash_per_mille = 50\nrestart_ms_min = 1000\nrestart_ms_max = 120000\n";
    let alice = load_text("alice.toml", text, &[]);
    assert_eq!(ids(&alice), [KEY_RULE]);
    assert!(alice.design_warnings[0].text.contains("[crashes.alice]"));
    let steady = load_text("alice.toml", text, &["crashes.alice.crash_per_mille=0"]);
    assert!(
        steady.design_warnings.is_empty(),
        "{:?}",
        steady.design_warnings
    );
}

/// An edit's PUT, the request that carries the key, leaves only when its
/// GET is answered, and re-arms the attempt's timeout there: each attempt
/// can last its read's round trip longer than one timeout, and the last
/// PUT leaves that long after its attempt started. Two attempts of 10 s
/// over links of 1 ms to 4 s: the retry's PUT can reach the server up to
/// 10 s, a read of 8 s and 3.999 s of spread after the first PUT, 21.999 s.
/// Counting the timeouts alone (13.999 s), a retention of 16 s looked
/// safe, and the runs find the key gone and the edit applied twice.
#[test]
fn an_edits_read_before_its_put_stretches_the_retries_past_the_keys_retention() {
    let edit = |retention_ms: u64| {
        let text = format!(
            "summary = \"edit\"\nmodel = \"http\"\n\n[client]\nidempotency_key = true\ntimeout_ms = 10000\n\n[client.retry]\npolicy = \"fixed\"\nbase_ms = 0\nmax_attempts = 2\n\n[server]\nkey_retention_ms = {retention_ms}\n\n[[resources]]\nid = 4711\nvalue = 1000\n\n[[requests]]\nmethod = \"edit\"\nresource = 4711\nvalue = 200\n\n[network]\nloss_per_mille = [0, 300]\ndelay_ms_min = 1\ndelay_ms_max = 4000\n"
        );
        load_text("edit.toml", &text, &[])
    };
    let short = edit(16_000);
    assert_eq!(ids(&short), [KEY_RULE]);
    let text = &short.design_warnings[0].text;
    assert!(
        text.contains("an edit's PUT") && text.contains("up to 18 s after"),
        "{text}"
    );
    assert_eq!(
        failed_with(&sweep(&short, 300)),
        Some("no-duplicate-effect")
    );
    // Kept exactly as long as the last PUT may come, and one ms longer.
    assert_eq!(ids(&edit(21_999)), [KEY_RULE]);
    let kept = edit(22_000);
    assert!(
        kept.design_warnings.is_empty(),
        "{:?}",
        kept.design_warnings
    );
    assert_eq!(failed_with(&sweep(&kept, 2000)), None);
}
