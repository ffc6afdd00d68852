//! Payment keys against network delays: a retry that can arrive later than
//! the first attempt needs the difference kept too, at the service and at a
//! bank that outlives it.

use super::helpers::{ids, payment, BANK_NO_KEY, DAY_MS, KEY_RULE};
use crate::support::load_text;
use models::Scenario;

/// A link table for the payment designs: requests from the client take
/// `min_ms..=max_ms` to reach the service.
fn slow_requests(min_ms: u64, max_ms: u64) -> String {
    format!("\n[[network.links]]\nfrom = \"client\"\nto = \"service\"\ndelay_ms_min = {min_ms}\ndelay_ms_max = {max_ms}\n")
}

/// The warnings of `s` but the service's own key gap: the cases that keep
/// the service's keys for 1 s ask about the bank's memory alone.
fn bank_gaps(s: &Scenario) -> Vec<&'static str> {
    s.design_warnings
        .iter()
        .filter(|h| !h.text.contains("the service forgets it"))
        .map(|h| h.id)
        .collect()
}

/// The text of the first of [`bank_gaps`].
fn bank_gap_text(s: &Scenario) -> String {
    s.design_warnings
        .iter()
        .find(|h| !h.text.contains("the service forgets it"))
        .map_or_else(String::new, |h| h.text.clone())
}

#[test]
fn a_retry_that_can_arrive_later_than_the_first_attempt_needs_the_difference_kept_too() {
    // The last retry starts one timeout before the window ends: 1 day - 10 s.
    let span_ms = DAY_MS - 10_000;
    // Requests take 1 ms to 60 s: a late copy can arrive 59,999 ms after a fast first one.
    let net = slow_requests(1, 60_000);
    let exact = payment(DAY_MS, span_ms, &format!("{BANK_NO_KEY}{net}"));
    let s = load_text("exact.toml", &exact, &[]);
    assert_eq!(
        ids(&s),
        [KEY_RULE],
        "equal to the span is short by the spread"
    );
    assert!(
        s.design_warnings[0].text.contains("up to 60 s later")
            && s.design_warnings[0].text.contains("[network]"),
        "{}",
        s.design_warnings[0].text
    );
    // Kept exactly span + spread: the last copy can arrive at the very age
    // at which the store forgets the key.
    let equal = payment(DAY_MS, span_ms + 59_999, &format!("{BANK_NO_KEY}{net}"));
    let s = load_text("equal.toml", &equal, &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        s.design_warnings[0]
            .text
            .contains("the very moment the last copy can arrive"),
        "{}",
        s.design_warnings[0].text
    );
    let covered = payment(DAY_MS, span_ms + 60_000, &format!("{BANK_NO_KEY}{net}"));
    assert!(load_text("covered.toml", &covered, &[])
        .design_warnings
        .is_empty());
    // A fixed delay, however long, delays every copy alike: no spread, and
    // one millisecond over the span covers it.
    let fixed = |kept_ms| {
        payment(
            DAY_MS,
            kept_ms,
            &format!("{BANK_NO_KEY}{}", slow_requests(60_000, 60_000)),
        )
    };
    assert!(load_text("fixed.toml", &fixed(span_ms + 1), &[])
        .design_warnings
        .is_empty());
    assert_eq!(
        ids(&load_text("fixed-equal.toml", &fixed(span_ms), &[])),
        [KEY_RULE]
    );
    // A span no retention covers is said without the delay: it is not what decides.
    let s = load_text(
        "far.toml",
        &payment(3 * DAY_MS, DAY_MS, &format!("{BANK_NO_KEY}{net}")),
        &[],
    );
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        !s.design_warnings[0].text.contains("[network]"),
        "{}",
        s.design_warnings[0].text
    );
    // The bank's memory counts the whole way there: client, service, bank.
    let bank_keys = format!(
        "\n[bank]\naccepts_key = true\nkey_retention_ms = {}\n{net}\n[[network.links]]\nfrom = \"service\"\nto = \"bank\"\ndelay_ms_min = 1\ndelay_ms_max = 5001\n",
        span_ms + 59_999
    );
    let s = load_text("bank.toml", &payment(DAY_MS, 1_000, &bank_keys), &[]);
    assert_eq!(
        bank_gaps(&s),
        [KEY_RULE],
        "59,999 ms on the first hop, 5,000 more on the second"
    );
    // The service's own re-sends to the bank carry the key further still:
    // by default it tries the bank 3 times, 5 s apart, so the last copy
    // leaves 10 s after the retry that caused it.
    let kept = |ms: u64| bank_keys.replace(&format!("{}", span_ms + 59_999), &format!("{ms}"));
    let resent = kept(span_ms + 65_000);
    let s = load_text("bank-resent.toml", &payment(DAY_MS, 1_000, &resent), &[]);
    assert_eq!(
        bank_gaps(&s),
        [KEY_RULE],
        "both hops' spread, not the re-sends"
    );
    assert!(
        bank_gap_text(&s).contains(
            "re-sends carry it on for up to 10 s more (service.bank_max_attempts and service.bank_timeout_ms)"
        ),
        "{}",
        bank_gap_text(&s)
    );
    // A service that calls the bank once re-sends nothing.
    let once = load_text(
        "bank-once.toml",
        &payment(DAY_MS, 1_000, &resent),
        &["service.bank_max_attempts=1"],
    );
    assert!(bank_gaps(&once).is_empty(), "{:?}", once.design_warnings);
    // Kept 10 s longer, the re-sends are covered; one millisecond less is not.
    let ok = kept(span_ms + 75_000);
    assert!(bank_gaps(&load_text(
        "bank-ok.toml",
        &payment(DAY_MS, 1_000, &ok),
        &[]
    ))
    .is_empty());
    let short = kept(span_ms + 74_999);
    assert_eq!(
        bank_gaps(&load_text(
            "bank-short.toml",
            &payment(DAY_MS, 1_000, &short),
            &[]
        )),
        [KEY_RULE]
    );
    // Asking the bank's status before a re-send waits up to one more
    // timeout for the answer before each re-send: 20 s in all.
    let queried = load_text(
        "bank-queried.toml",
        &payment(DAY_MS, 1_000, &ok),
        &["service.query_before_retry=true", "bank.status_query=true"],
    );
    assert_eq!(bank_gaps(&queried), [KEY_RULE], "10 s are 10 s short");
    assert!(
        bank_gap_text(&queried).contains("up to 20 s more"),
        "{}",
        bank_gap_text(&queried)
    );
    let queried_short = load_text(
        "bank-queried-short.toml",
        &payment(DAY_MS, 1_000, &kept(span_ms + 84_999)),
        &["service.query_before_retry=true", "bank.status_query=true"],
    );
    assert_eq!(
        bank_gaps(&queried_short),
        [KEY_RULE],
        "both re-sends' status answers count"
    );
    let queried_ok = load_text(
        "bank-queried-ok.toml",
        &payment(DAY_MS, 1_000, &kept(span_ms + 85_000)),
        &["service.query_before_retry=true", "bank.status_query=true"],
    );
    assert!(
        bank_gaps(&queried_ok).is_empty(),
        "{:?}",
        queried_ok.design_warnings
    );
    // A conditional transfer cannot pay twice, whatever the bank remembers
    // when a re-send arrives: its re-sends are no reason to keep keys longer.
    let conditional = load_text(
        "bank-conditional.toml",
        &payment(DAY_MS, 1_000, &resent),
        &["service.mode=state-conditional", "bank.status_query=true"],
    );
    assert!(
        bank_gaps(&conditional).is_empty(),
        "{:?}",
        conditional.design_warnings
    );
}
