//! Helpers shared by several groups: rule ids, the payment design and its
//! constants, and what a sweep found.

use models::Scenario;

pub fn ids(s: &Scenario) -> Vec<&'static str> {
    s.design_warnings.iter().map(|h| h.id).collect()
}

/// The text of the warning `rule` gives `s`, if it gives one.
pub fn warning_text(s: &Scenario, rule: &str) -> Option<String> {
    s.design_warnings
        .iter()
        .find(|h| h.id == rule)
        .map(|h| h.text.clone())
}

pub const KEY_RULE: &str = "key-retention-below-retry-span";
pub const INBOX_RULE: &str = "inbox-retention-below-redelivery";

/// A payment design: one claim, a stable key, a client retrying for
/// `window_ms`, a service keeping keys `retention_ms`, then `tail`.
pub fn payment(window_ms: u64, retention_ms: u64, tail: &str) -> String {
    format!(
        r#"summary = "retention against the retry window"

[client]
key = "stable"
timeout_ms = 10000

[client.retry]
policy = "exponential"
base_ms = 1000
cap_ms = 3600000
max_attempts = 0
window_ms = {window_ms}

[service]
idempotency = "claim-same-tx"
retention_ms = {retention_ms}
{tail}
"#
    )
}

pub const DAY_MS: u64 = 86_400_000;
/// Without a `[network]` table a message takes 1 to 50 ms: a later copy can
/// arrive 49 ms later than the first, and a retention must cover that too.
pub const DEFAULT_SPREAD_MS: u64 = 49;
/// A bank that deduplicates by the key too, for as long as the service.
pub const BANK_ONE_DAY: &str = "\n[bank]\naccepts_key = true\nkey_retention_ms = 86400000\n";
pub const BANK_NO_KEY: &str = "\n[bank]\naccepts_key = false\n";

/// The invariant of `sum`'s lowest failing seed, if one failed.
pub fn failed_with(sum: &sim::Summary) -> Option<&'static str> {
    match &sum.first_failure.as_ref()?.outcome {
        sim::Outcome::Violation(v) => Some(v.invariant),
        other => panic!("{other:?}"),
    }
}

/// A key-retention warning that counts a crashed client's restarts (its
/// retries have no window): the text names both, the runs reach `situation`
/// and pay twice. Shared by the payment and HTTP clients, which resume
/// their retries from storage alike.
pub fn restarts_break_key_retention(resumed: &Scenario, situation: &str) {
    assert_eq!(ids(resumed), [KEY_RULE]);
    let t = &resumed.design_warnings[0].text;
    assert!(
        t.contains("[crashes.client] restart_ms_max") && t.contains("no window_ms"),
        "{t}"
    );
    assert_eq!(
        resumed.design_warnings[0]
            .shown_by
            .map(models::registry::situation_name),
        Some(situation)
    );
    assert_eq!(
        failed_with(&crate::support::sweep(resumed, 300)),
        Some("no-duplicate-effect")
    );
}
