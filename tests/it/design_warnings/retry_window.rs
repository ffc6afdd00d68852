//! `retry-window-too-short`: a retry window with no room for a retry after
//! a timeout.

use super::helpers::{ids, payment, BANK_NO_KEY};
use crate::support;
use crate::support::load_text;

const WINDOW_RULE: &str = "retry-window-too-short";

#[test]
fn a_retry_window_without_room_for_a_retry_after_a_timeout_is_a_warning() {
    // timeout_ms = 10000, a first wait of 1 s: a timed-out attempt is
    // retried only with 21 s of window.
    let window = |window_ms| {
        let s = load_text("w.toml", &payment(window_ms, 0, BANK_NO_KEY), &[]);
        s.design_warnings
            .iter()
            .find(|h| h.id == WINDOW_RULE)
            .map(|h| h.text.clone())
    };
    let equal = window(10_000).expect("window = timeout: a retry only after an answer in 0 ms");
    assert!(
        equal.contains("client.retry.window_ms = 10000 and client.timeout_ms = 10000")
            && equal.contains("never retries")
            && equal.contains("at least 21000"),
        "{equal}"
    );
    // One millisecond more is no room either: an answer takes 2 ms at least.
    assert!(window(10_001).unwrap().contains("never retries"));
    // Room for an early answer, none for a lost one.
    assert!(window(20_999).unwrap().contains("answered early"));
    assert_eq!(
        window(21_000),
        None,
        "a timeout, the first wait and a retry fit"
    );
    // A window below the timeout is refused, as before.
    support::refuses(
        "summary = \"s\"\n",
        &[(
            "[client]\ntimeout_ms = 10000\n[client.retry]\nwindow_ms = 9999\n",
            "shorter than one attempt's timeout",
            "at least client.timeout_ms",
        )],
    );
    // HTTP's client has the same window.
    let http = "summary = \"s\"\nmodel = \"http\"\n[client]\ntimeout_ms = 5000\n[client.retry]\nwindow_ms = 5000\n";
    let s = load_text("h.toml", http, &[]);
    assert!(ids(&s).contains(&WINDOW_RULE), "{:?}", ids(&s));
    let s = load_text("h.toml", http, &["client.retry.window_ms=10000"]);
    assert!(!ids(&s).contains(&WINDOW_RULE), "{:?}", ids(&s));
    // The runs that gave an operation up show it.
    let s = load_text("g.toml", &payment(10_000, 0, BANK_NO_KEY), &[]);
    let h = s
        .design_warnings
        .iter()
        .find(|h| h.id == WINDOW_RULE)
        .unwrap();
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("client-dead-lettered")
    );
}
