//! Payment keys: `key-retention-below-retry-span` (a key must outlive the
//! retries that carry it, the guide's 1 day against 3). Delays that make a
//! retry arrive late are in `payment_key_delays`; timestamp keys and client
//! restarts that stretch the retries in `payment_key_stretch`.

use super::helpers::{
    ids, payment, BANK_NO_KEY, BANK_ONE_DAY, DAY_MS, DEFAULT_SPREAD_MS, KEY_RULE,
};
use crate::support::{load, load_text, run, sweep};

#[test]
fn a_key_forgotten_while_the_client_still_retries_is_a_warning() {
    let s = load_text("a.toml", &payment(3 * DAY_MS, DAY_MS, BANK_NO_KEY), &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
    let h = &s.design_warnings[0];
    assert!(
        h.text.contains("3 days")
            && h.text.contains("1 day")
            && h.text.contains("service.retention_ms"),
        "{}",
        h.text
    );
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("retry-after-key-expired")
    );
    // The same with a bank that forgets as soon: the longest memory is a day.
    let s = load_text("b.toml", &payment(3 * DAY_MS, DAY_MS, BANK_ONE_DAY), &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
    // Retries without end outlive any retention.
    let s = load_text(
        "c.toml",
        &payment(0, 30 * DAY_MS, BANK_NO_KEY),
        &["client.retry.max_attempts=0"],
    );
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        s.design_warnings[0].text.contains("without end"),
        "{}",
        s.design_warnings[0].text
    );
}

/// A bank that remembers longer than the service is the last layer to
/// forget: runs in which only the service forgot did not reach the gap, and
/// the warning must not count them as if they had.
#[test]
fn the_gap_of_a_bank_that_outlives_the_service_is_shown_by_the_bank() {
    let s = load(
        "payment-key-expired-before-retry",
        &["bank.key_retention_ms=345600000"],
    );
    assert_eq!(ids(&s), [KEY_RULE]);
    assert_eq!(
        s.design_warnings[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("bank-key-expired")
    );
    let sum = sweep(&s, 300);
    assert!(
        sum.first_failure.is_none(),
        "the bank's key answers the retry after the outage"
    );
    let reached = |name: &str| {
        sum.tally
            .situations
            .iter()
            .any(|id| models::registry::situation_name(id) == name)
    };
    assert!(
        reached("retry-after-key-expired"),
        "the service forgot in some runs"
    );
    assert!(
        !reached("bank-key-expired"),
        "no run came near the bank's four days"
    );
    // With the service's memory as long as the bank's, the service's report marks it.
    let even = load(
        "payment-key-expired-before-retry",
        &["bank.key_retention_ms=86400000"],
    );
    assert_eq!(
        even.design_warnings[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("retry-after-key-expired")
    );
}

#[test]
fn a_key_kept_as_long_as_the_retries_or_by_a_later_layer_is_no_warning() {
    let silent = [
        // Kept a week, retried for three days.
        payment(3 * DAY_MS, 7 * DAY_MS, BANK_NO_KEY),
        // Kept one millisecond longer than the last retry can start (window
        // minus timeout) plus how much later its copy can arrive than the
        // first attempt's: a key whose age reaches its retention is gone.
        payment(DAY_MS, DAY_MS - 10_000 + DEFAULT_SPREAD_MS + 1, BANK_NO_KEY),
        // Kept forever by the service.
        payment(3 * DAY_MS, 0, BANK_NO_KEY),
        // Kept a week by the service, forever by the bank.
        payment(3 * DAY_MS, 7 * DAY_MS, "\n[bank]\naccepts_key = true\n"),
    ];
    for (i, text) in silent.iter().enumerate() {
        let s = load_text(&format!("silent-{i}.toml"), text, &[]);
        assert!(
            s.design_warnings.is_empty(),
            "case {i}: {:?}",
            s.design_warnings
        );
    }
    // A key that changes with every attempt, or no dedup at all, is no matter
    // of retention: the runs show those designs failing by themselves.
    for sets in [
        &["client.key=per-attempt"][..],
        &["service.idempotency=none"][..],
    ] {
        let s = load_text("k.toml", &payment(3 * DAY_MS, DAY_MS, BANK_NO_KEY), sets);
        assert!(
            s.design_warnings.is_empty(),
            "{sets:?}: {:?}",
            s.design_warnings
        );
    }
    // One millisecond less is one too short.
    let s = load_text(
        "edge.toml",
        &payment(DAY_MS, DAY_MS - 10_001 + DEFAULT_SPREAD_MS, BANK_NO_KEY),
        &[],
    );
    assert_eq!(ids(&s), [KEY_RULE]);
}

/// The service's key must outlive the client's retries whatever the bank
/// remembers: a bank that deduplicates forever keeps the money to one
/// transfer, but the service, having forgotten the key, executes the retry
/// again (the review's r02). The text names the service's setting, where
/// the file writes it.
#[test]
fn a_service_key_forgotten_while_the_client_retries_is_a_warning_though_the_bank_dedups() {
    let bank_forever = "\n[bank]\naccepts_key = true\n";
    let text = payment(3 * DAY_MS, DAY_MS, bank_forever);
    let s = load_text("r02.toml", &text, &[]);
    assert_eq!(ids(&s), [KEY_RULE], "{:?}", s.design_warnings);
    let h = &s.design_warnings[0];
    assert!(
        h.text.starts_with("r02.toml:16:16: ")
            && h.text
                .contains("the service forgets it after 1 day (service.retention_ms)")
            && h.text
                .contains("the bank's key keeps the money to one transfer")
            && h.text.contains("executes the retry a second time")
            && !h.text.contains("only layer"),
        "{}",
        h.text
    );
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("retry-after-key-expired")
    );
    // A bank that remembers a week rather than forever is the same case.
    let week = format!("{bank_forever}key_retention_ms = {}\n", 7 * DAY_MS);
    let s = load_text("r02-week.toml", &payment(3 * DAY_MS, DAY_MS, &week), &[]);
    assert_eq!(ids(&s), [KEY_RULE], "{:?}", s.design_warnings);
    // The service keeping the key as long as the retries can run: silent.
    let kept_ms = 3 * DAY_MS - 10_000 + DEFAULT_SPREAD_MS + 1;
    let s = load_text("ok.toml", &payment(3 * DAY_MS, kept_ms, bank_forever), &[]);
    assert!(s.design_warnings.is_empty(), "{:?}", s.design_warnings);
    // A --set of the retention is named as the place.
    let s = load_text("r02.toml", &text, &["service.retention_ms=3600000"]);
    assert!(
        s.design_warnings[0]
            .text
            .starts_with("--set service.retention_ms=3600000: "),
        "{}",
        s.design_warnings[0].text
    );
}

#[test]
fn the_catalogs_equal_retention_fails_and_one_network_delay_more_holds() {
    let s = load("payment-retention-equals-window", &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        s.design_warnings[0].text.contains("60 s later"),
        "{}",
        s.design_warnings[0].text
    );
    let sum = sweep(&s, 200);
    assert!(
        sum.first_failure.is_some(),
        "a slow last retry after the key expired pays again"
    );
    let s = load("payment-retention-covers-delay", &[]);
    assert!(s.design_warnings.is_empty(), "{:?}", s.design_warnings);
    assert!(sweep(&s, 200).first_failure.is_none());
}

/// The edge the rule and the store must agree on: every answer lost, fixed
/// delays, retries with no wait, so the last one arrives exactly as old as
/// the key's retention. The store has forgotten it then (every seed pays
/// twice), and the rule says so; one millisecond more holds, silently.
#[test]
fn a_key_kept_exactly_as_long_as_the_retries_is_forgotten_by_the_last_one() {
    let text = |retention_ms: u64| {
        format!(
            "summary = \"x\"\n[run]\nfault_phase_ms = 3600000\n[client]\nkey = \"stable\"\ntimeout_ms = 10000\n[client.retry]\npolicy = \"fixed\"\nbase_ms = 0\nmax_attempts = 0\nwindow_ms = 3600000\n[service]\nidempotency = \"claim-same-tx\"\nretention_ms = {retention_ms}\n[bank]\naccepts_key = false\n[network]\ndelay_ms_min = 1\ndelay_ms_max = 1\n[[network.links]]\nfrom = \"service\"\nto = \"client\"\nloss_per_mille = 1000\n"
        )
    };
    let equal = load_text("equal.toml", &text(3_590_000), &[]);
    assert_eq!(ids(&equal), [KEY_RULE]);
    let sum = sweep(&equal, 5);
    assert_eq!(sum.tally.failing(), 5, "every seed pays twice");
    let longer = load_text("longer.toml", &text(3_590_001), &[]);
    assert!(
        longer.design_warnings.is_empty(),
        "{:?}",
        longer.design_warnings
    );
    assert!(sweep(&longer, 5).first_failure.is_none());
}

#[test]
fn the_retries_of_a_capped_client_span_their_timeouts_and_longest_waits() {
    // Five attempts of 10 s each, waits of at most 1, 2, 4 and 8 s: the last
    // attempt starts at most 55 s after the first.
    let text = payment(0, 55_000 + DEFAULT_SPREAD_MS + 1, BANK_NO_KEY);
    let sets = [
        "client.retry.max_attempts=5",
        "client.retry.cap_ms=30000",
        "client.retry.jitter=full",
    ];
    assert!(load_text("55.toml", &text, &sets)
        .design_warnings
        .is_empty());
    let s = load_text(
        "54.toml",
        &payment(0, 55_000 + DEFAULT_SPREAD_MS, BANK_NO_KEY),
        &sets,
    );
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        s.design_warnings[0].text.contains("55 s"),
        "{}",
        s.design_warnings[0].text
    );
}

#[test]
fn keys_kept_a_day_and_retries_for_three_hold_only_while_no_outage_lasts_a_day() {
    // The guide's question, with a bank that forgets as soon as the service.
    let text = payment(3 * DAY_MS, DAY_MS, BANK_ONE_DAY);
    let dir = crate::support::scratch("design_warnings/keys-1d-retries-3d");
    let calm = dir.join("keys-1d-retries-3d.toml");
    std::fs::write(&calm, &text).unwrap();
    let calm = calm.to_string_lossy().into_owned();
    // Without an outage every retry comes within minutes: the sweep holds,
    // and says that it never went where the design breaks.
    let (out, _) = run(&["check", &calm, "--runs", "200", "--no-regressions"], 0);
    assert!(out.contains("holds over 200 schedules"), "{out}");
    assert!(
        out.contains("design warning (key-retention-below-retry-span)")
            && out.contains("no run here reached it (retry-after-key-expired: 0 runs)")
            && out.contains("payment-key-expired-before-retry shows it failing"),
        "{out}"
    );
    let (json, _) = run(
        &[
            "check",
            &calm,
            "--runs",
            "200",
            "--no-regressions",
            "--json",
        ],
        0,
    );
    let summary: serde_json::Value = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["type"] == "summary")
        .expect("a summary line");
    let h = &summary["data"]["hazards"][0];
    assert_eq!(h["id"], KEY_RULE, "{summary}");
    assert_eq!(h["situation"], "retry-after-key-expired");
    assert_eq!(h["reached_runs"], 0);
    // A two-day outage inside three days of faults: the first retry through
    // pays again, and the warning says the runs went there.
    let stormy = dir.join("keys-1d-retries-3d-outage.toml");
    std::fs::write(
        &stormy,
        format!(
            "{text}\n[run]\nruns = 100\nfault_phase_ms = 259200000\n\n[[network.partitions]]\nbetween = [\"client\", \"service\"]\nstart_ms = 1000\nend_ms = 172800000\n\n[[network.links]]\nfrom = \"service\"\nto = \"client\"\nloss_per_mille = [0, 500]\n"
        ),
    )
    .unwrap();
    let stormy = stormy.to_string_lossy().into_owned();
    let (out, _) = run(&["check", &stormy, "--no-regressions", "--no-shrink"], 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
    assert!(
        out.contains("design warning (key-retention-below-retry-span)")
            && out.contains("runs (retry-after-key-expired): the verdict covers them"),
        "{out}"
    );
}
