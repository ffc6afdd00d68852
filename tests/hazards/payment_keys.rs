//! Payment keys: `key-retention-below-retry-span` (a key must outlive the
//! retries that carry it, the guide's 1 day against 3), timestamp keys, and
//! client restarts that stretch the retries.

use crate::common::{load, load_text, run, sweep};
use crate::support::{
    failed_with, ids, payment, restarts_break_key_retention, BANK_NO_KEY, BANK_ONE_DAY, DAY_MS,
    DEFAULT_SPREAD_MS, KEY_RULE,
};
use models::Scenario;

#[test]
fn a_key_forgotten_while_the_client_still_retries_is_a_warning() {
    let s = load_text("a.toml", &payment(3 * DAY_MS, DAY_MS, BANK_NO_KEY), &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
    let h = &s.hazards[0];
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
        s.hazards[0].text.contains("without end"),
        "{}",
        s.hazards[0].text
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
        s.hazards[0].shown_by.map(models::registry::situation_name),
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
        even.hazards[0]
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
        assert!(s.hazards.is_empty(), "case {i}: {:?}", s.hazards);
    }
    // A key that changes with every attempt, or no dedup at all, is no matter
    // of retention: the runs show those designs failing by themselves.
    for sets in [
        &["client.key=per-attempt"][..],
        &["service.idempotency=none"][..],
    ] {
        let s = load_text("k.toml", &payment(3 * DAY_MS, DAY_MS, BANK_NO_KEY), sets);
        assert!(s.hazards.is_empty(), "{sets:?}: {:?}", s.hazards);
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
    assert_eq!(ids(&s), [KEY_RULE], "{:?}", s.hazards);
    let h = &s.hazards[0];
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
    assert_eq!(ids(&s), [KEY_RULE], "{:?}", s.hazards);
    // The service keeping the key as long as the retries can run: silent.
    let kept_ms = 3 * DAY_MS - 10_000 + DEFAULT_SPREAD_MS + 1;
    let s = load_text("ok.toml", &payment(3 * DAY_MS, kept_ms, bank_forever), &[]);
    assert!(s.hazards.is_empty(), "{:?}", s.hazards);
    // A --set of the retention is named as the place.
    let s = load_text("r02.toml", &text, &["service.retention_ms=3600000"]);
    assert!(
        s.hazards[0]
            .text
            .starts_with("--set service.retention_ms=3600000: "),
        "{}",
        s.hazards[0].text
    );
}

/// A link table for the payment designs: requests from the client take
/// `min_ms..=max_ms` to reach the service.
fn slow_requests(min_ms: u64, max_ms: u64) -> String {
    format!("\n[[network.links]]\nfrom = \"client\"\nto = \"service\"\ndelay_ms_min = {min_ms}\ndelay_ms_max = {max_ms}\n")
}

/// The warnings of `s` but the service's own key gap: the cases that keep
/// the service's keys for 1 s ask about the bank's memory alone.
fn bank_gaps(s: &Scenario) -> Vec<&'static str> {
    s.hazards
        .iter()
        .filter(|h| !h.text.contains("the service forgets it"))
        .map(|h| h.id)
        .collect()
}

/// The text of the first of [`bank_gaps`].
fn bank_gap_text(s: &Scenario) -> String {
    s.hazards
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
        s.hazards[0].text.contains("up to 60 s later") && s.hazards[0].text.contains("[network]"),
        "{}",
        s.hazards[0].text
    );
    // Kept exactly span + spread: the last copy can arrive at the very age
    // at which the store forgets the key.
    let equal = payment(DAY_MS, span_ms + 59_999, &format!("{BANK_NO_KEY}{net}"));
    let s = load_text("equal.toml", &equal, &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        s.hazards[0]
            .text
            .contains("the very moment the last copy can arrive"),
        "{}",
        s.hazards[0].text
    );
    let covered = payment(DAY_MS, span_ms + 60_000, &format!("{BANK_NO_KEY}{net}"));
    assert!(load_text("covered.toml", &covered, &[]).hazards.is_empty());
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
        .hazards
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
        !s.hazards[0].text.contains("[network]"),
        "{}",
        s.hazards[0].text
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
    assert!(bank_gaps(&once).is_empty(), "{:?}", once.hazards);
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
        queried_ok.hazards
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
        conditional.hazards
    );
}

#[test]
fn the_catalogs_equal_retention_fails_and_one_network_delay_more_holds() {
    let s = load("payment-retention-equals-window", &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        s.hazards[0].text.contains("60 s later"),
        "{}",
        s.hazards[0].text
    );
    let sum = sweep(&s, 200);
    assert!(
        sum.first_failure.is_some(),
        "a slow last retry after the key expired pays again"
    );
    let s = load("payment-retention-covers-delay", &[]);
    assert!(s.hazards.is_empty(), "{:?}", s.hazards);
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
    assert!(longer.hazards.is_empty(), "{:?}", longer.hazards);
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
    assert!(load_text("55.toml", &text, &sets).hazards.is_empty());
    let s = load_text(
        "54.toml",
        &payment(0, 55_000 + DEFAULT_SPREAD_MS, BANK_NO_KEY),
        &sets,
    );
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(s.hazards[0].text.contains("55 s"), "{}", s.hazards[0].text);
}

#[test]
fn keys_kept_a_day_and_retries_for_three_hold_only_while_no_outage_lasts_a_day() {
    // The guide's question, with a bank that forgets as soon as the service.
    let text = payment(3 * DAY_MS, DAY_MS, BANK_ONE_DAY);
    let dir = std::env::temp_dir().join(format!("idemsim-hazards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
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

/// A key minted from the clock names a time bucket, not an operation. The
/// rule fires for every timestamp key: the start times are the workload
/// this scenario samples, not something the design keeps apart. Its text
/// says what this scenario's own operations do.
#[test]
fn a_timestamp_key_is_a_warning_and_says_whether_the_scenarios_claims_meet_in_a_bucket() {
    const RULE: &str = "timestamp-key-collides";
    let text_of = |s: &Scenario| {
        s.hazards
            .iter()
            .find(|h| h.id == RULE)
            .map(|h| h.text.clone())
            .unwrap_or_else(|| panic!("{RULE} in {:?}", s.hazards))
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
    assert_eq!(s.hazards[0].shown_by, Some(collision));
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
    assert_eq!(unkeyed.hazards[0].shown_by, None);
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
            load("payment-timestamp-key", &[&set]).hazards.is_empty(),
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
    assert!(ids(&short).contains(&KEY_RULE), "{:?}", short.hazards);
    let sum = sweep(&short, 1000);
    assert_eq!(failed_with(&sum), Some("no-duplicate-effect"));
    // Kept for the default 30 days at the service and forever at the bank.
    let kept = load("payment-timestamp-key", &["client.key_bucket_ms=1"]);
    assert!(!ids(&kept).contains(&KEY_RULE), "{:?}", kept.hazards);
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
    assert!(steady.hazards.is_empty(), "{:?}", steady.hazards);
    // Kept longer than four restarts and the retries: silent, and held.
    let kept = with(0, 3_000_000, &[]);
    assert!(kept.hazards.is_empty(), "{:?}", kept.hazards);
    assert!(sweep(&kept, 300).first_failure.is_none());
    // A 10 min window bounds the resumed retries too: a key kept a little
    // longer covers them, restarts and all.
    let windowed = with(600_000, 700_000, &[]);
    assert!(windowed.hazards.is_empty(), "{:?}", windowed.hazards);
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
        short.hazards[0].text.contains("reconciliation job"),
        "{}",
        short.hazards[0].text
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
    assert!(kept.hazards.is_empty(), "{:?}", kept.hazards);
    assert_eq!(failed_with(&sweep(&kept, 2000)), None);
}
