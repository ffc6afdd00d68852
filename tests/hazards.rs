//! Design warnings: settings that break a rule of the domain, reported
//! whether or not a run reaches the gap. Cases written from the rules
//! themselves (a key must outlive the retries that carry it; an inbox row
//! must outlive the redeliveries of its message), each where the warning must
//! fire and where it must stay silent, and the guide's own question: what if
//! keys live 1 day and retries run for 3?

mod common;

use common::{load, load_text, refuses, run, scenario_dir, scenario_files, sweep};
use models::scenario::Verdict;
use models::Scenario;

fn ids(s: &Scenario) -> Vec<&'static str> {
    s.hazards.iter().map(|h| h.id).collect()
}

const KEY_RULE: &str = "key-retention-below-retry-span";
const INBOX_RULE: &str = "inbox-retention-below-redelivery";

/// A payment design: one claim, a stable key, a client retrying for
/// `window_ms`, a service keeping keys `retention_ms`, then `tail`.
fn payment(window_ms: u64, retention_ms: u64, tail: &str) -> String {
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

const DAY_MS: u64 = 86_400_000;
/// Without a `[network]` table a message takes 1 to 50 ms: a later copy can
/// arrive 49 ms later than the first, and a retention must cover that too.
const DEFAULT_SPREAD_MS: u64 = 49;
/// A bank that deduplicates by the key too, for as long as the service.
const BANK_ONE_DAY: &str = "\n[bank]\naccepts_key = true\nkey_retention_ms = 86400000\n";
const BANK_NO_KEY: &str = "\n[bank]\naccepts_key = false\n";

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
        // The service forgets after a day, the bank (with the key passed on) never.
        payment(3 * DAY_MS, DAY_MS, "\n[bank]\naccepts_key = true\n"),
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

/// A link table for the payment designs: requests from the client take
/// `min_ms..=max_ms` to reach the service.
fn slow_requests(min_ms: u64, max_ms: u64) -> String {
    format!("\n[[network.links]]\nfrom = \"client\"\nto = \"service\"\ndelay_ms_min = {min_ms}\ndelay_ms_max = {max_ms}\n")
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
        ids(&s),
        [KEY_RULE],
        "59,999 ms on the first hop, 5,000 more on the second"
    );
    // The service's own re-sends to the bank carry the key further still:
    // by default it tries the bank 3 times, 5 s apart, so the last copy
    // leaves 10 s after the retry that caused it.
    let kept = |ms: u64| bank_keys.replace(&format!("{}", span_ms + 59_999), &format!("{ms}"));
    let resent = kept(span_ms + 65_000);
    let s = load_text("bank-resent.toml", &payment(DAY_MS, 1_000, &resent), &[]);
    assert_eq!(ids(&s), [KEY_RULE], "both hops' spread, not the re-sends");
    assert!(
        s.hazards[0].text.contains(
            "re-sends carry it on for up to 10 s more (service.bank_max_attempts and service.bank_timeout_ms)"
        ),
        "{}",
        s.hazards[0].text
    );
    // A service that calls the bank once re-sends nothing.
    let once = load_text(
        "bank-once.toml",
        &payment(DAY_MS, 1_000, &resent),
        &["service.bank_max_attempts=1"],
    );
    assert!(once.hazards.is_empty(), "{:?}", once.hazards);
    // Kept 10 s longer, the re-sends are covered; one millisecond less is not.
    let ok = kept(span_ms + 75_000);
    assert!(load_text("bank-ok.toml", &payment(DAY_MS, 1_000, &ok), &[])
        .hazards
        .is_empty());
    let short = kept(span_ms + 74_999);
    assert_eq!(
        ids(&load_text(
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
    assert_eq!(ids(&queried), [KEY_RULE], "10 s are 10 s short");
    assert!(
        queried.hazards[0].text.contains("up to 20 s more"),
        "{}",
        queried.hazards[0].text
    );
    let queried_short = load_text(
        "bank-queried-short.toml",
        &payment(DAY_MS, 1_000, &kept(span_ms + 84_999)),
        &["service.query_before_retry=true", "bank.status_query=true"],
    );
    assert_eq!(
        ids(&queried_short),
        [KEY_RULE],
        "both re-sends' status answers count"
    );
    let queried_ok = load_text(
        "bank-queried-ok.toml",
        &payment(DAY_MS, 1_000, &kept(span_ms + 85_000)),
        &["service.query_before_retry=true", "bank.status_query=true"],
    );
    assert!(queried_ok.hazards.is_empty(), "{:?}", queried_ok.hazards);
    // A conditional transfer cannot pay twice, whatever the bank remembers
    // when a re-send arrives: its re-sends are no reason to keep keys longer.
    let conditional = load_text(
        "bank-conditional.toml",
        &payment(DAY_MS, 1_000, &resent),
        &["service.mode=state-conditional", "bank.status_query=true"],
    );
    assert!(conditional.hazards.is_empty(), "{:?}", conditional.hazards);
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

#[test]
fn an_inbox_that_forgets_before_the_broker_stops_redelivering_is_a_warning() {
    let base = "summary = \"inbox retention\"\nmodel = \"messaging\"\n\n[consumer]\nhandler = \"inbox-same-tx\"\n";
    let with = |sets: &[&str]| load_text("inbox.toml", base, sets);
    // Redelivered every 30 s without end: any retention is too short.
    let s = with(&["consumer.inbox_retention_ms=3600000"]);
    assert_eq!(ids(&s), [INBOX_RULE]);
    assert!(
        s.hazards[0].text.contains("no limit"),
        "{}",
        s.hazards[0].text
    );
    // Three deliveries 30 s apart: the last one a minute after the first.
    let capped = [
        "broker.max_deliveries=3",
        "broker.visibility_timeout_ms=30000",
    ];
    let s = with(&[&capped[..], &["consumer.inbox_retention_ms=59999"]].concat());
    assert_eq!(ids(&s), [INBOX_RULE]);
    assert!(s.hazards[0].text.contains("1 min"), "{}", s.hazards[0].text);
    let s = with(&[&capped[..], &["consumer.inbox_retention_ms=60098"]].concat());
    assert_eq!(
        ids(&s),
        [INBOX_RULE],
        "a row is gone once its age reaches the retention"
    );
    for fine in [
        // 1 min, the default delays' 98 ms over broker, consumer and
        // database (the row is written over the first trip, read over the
        // last), and 1 ms
        "consumer.inbox_retention_ms=60099",
        "consumer.inbox_retention_ms=0",
    ] {
        let s = with(&[&capped[..], &[fine]].concat());
        assert!(s.hazards.is_empty(), "{fine}: {:?}", s.hazards);
    }
    // A redelivery that can reach the consumer later than the first delivery
    // did needs that difference kept too: 1 min of redeliveries, 1 ms to 10 s on the way.
    let slow = format!("{base}\n[[network.links]]\nfrom = \"broker\"\nto = \"consumer-1\"\ndelay_ms_min = 1\ndelay_ms_max = 10001\n");
    let slow = |retention_ms: u64| {
        let retention = format!("consumer.inbox_retention_ms={retention_ms}");
        let sets = [&capped[..], &[retention.as_str()][..]].concat();
        load_text("slow.toml", &slow, &sets)
    };
    let s = slow(60_000);
    assert_eq!(
        ids(&s),
        [INBOX_RULE],
        "1 min of redeliveries and 10 s of spread"
    );
    assert!(
        s.hazards[0].text.contains("[network]"),
        "{}",
        s.hazards[0].text
    );
    // 10 s and the database link's 49 ms.
    assert_eq!(ids(&slow(70_049)), [INBOX_RULE], "exactly as long: gone");
    assert!(slow(70_050).hazards.is_empty());
    // The row is written after the first copy's work; an inbox read in the
    // effect's transaction follows the last copy's. Work drawn up to 10 s
    // longer for the last copy than for the first comes 10 s closer to the
    // row's end (seen failing with 125 s against 2 min of redeliveries).
    let jitter = |retention_ms: u64, handler: &str| {
        let retention = format!("consumer.inbox_retention_ms={retention_ms}");
        let handler = format!("consumer.handler={handler}");
        let sets = [
            &capped[..],
            &[
                retention.as_str(),
                handler.as_str(),
                "consumer.processing_jitter_ms=10000",
            ][..],
        ]
        .concat();
        with(&sets)
    };
    let s = jitter(65_000, "inbox-same-tx");
    assert_eq!(ids(&s), [INBOX_RULE]);
    assert!(
        s.hazards[0].text.contains("processing_jitter_ms"),
        "{}",
        s.hazards[0].text
    );
    assert_eq!(ids(&jitter(70_098, "inbox-same-tx")), [INBOX_RULE]);
    assert!(jitter(70_099, "inbox-same-tx").hazards.is_empty());
    // A check before the work reads the inbox before its own jitter.
    assert!(jitter(65_000, "inbox-separate-tx").hazards.is_empty());
    // A broker the scenario crashes starts every lease over at its restart:
    // a crash just before a lease ran out, and 30 s down, put the next
    // delivery up to 90 s after the one before (seen failing with 125 s
    // against 2 min of redeliveries and restarts of up to 30 s).
    let crashing = format!(
        "{base}\n[crashes.broker]\ncrash_per_mille = [0, 50]\nrestart_ms_min = 10000\nrestart_ms_max = 30000\n"
    );
    let broker_down = |retention_ms: u64| {
        let retention = format!("consumer.inbox_retention_ms={retention_ms}");
        let sets = [&capped[..], &[retention.as_str()][..]].concat();
        load_text("broker-down.toml", &crashing, &sets)
    };
    let s = broker_down(120_000);
    assert_eq!(ids(&s), [INBOX_RULE]);
    assert!(
        s.hazards[0].text.contains("[crashes.broker]"),
        "{}",
        s.hazards[0].text
    );
    // Two gaps of 90 s and the default delays' 98 ms.
    assert_eq!(ids(&broker_down(180_098)), [INBOX_RULE]);
    assert!(broker_down(180_099).hazards.is_empty());
    // The chain's broker likewise: 2 min of redeliveries and 12 s of
    // spread fit in 150 s, until the broker restarts.
    let chain = load(
        "chain-outbox-inbox",
        &[
            "accounting.inbox_retention_ms=150000",
            "broker.max_deliveries=5",
        ],
    );
    assert!(chain.hazards.is_empty(), "{:?}", chain.hazards);
    let chain_text = format!(
        "{}\n[crashes.broker]\ncrash_per_mille = [0, 50]\nrestart_ms_min = 1000\nrestart_ms_max = 30000\n",
        std::fs::read_to_string(scenario_dir().join("chain-outbox-inbox.toml")).expect("catalog file")
    );
    let chain = load_text(
        "chain-broker-down.toml",
        &chain_text,
        &[
            "accounting.inbox_retention_ms=150000",
            "broker.max_deliveries=5",
        ],
    );
    assert!(ids(&chain).contains(&INBOX_RULE), "{:?}", chain.hazards);
    // A unique key and a set-value write read no inbox: its retention is
    // no concern of theirs (before, both were warned).
    for handler in ["unique-key", "set-value-versioned"] {
        let set = format!("consumer.handler={handler}");
        let s = with(&["consumer.inbox_retention_ms=10000", &set]);
        assert!(!ids(&s).contains(&INBOX_RULE), "{handler}: {:?}", s.hazards);
    }
    // The chain's accounting inbox is judged by the same rule, under its own table.
    let s = load(
        "chain-outbox-inbox",
        &["accounting.inbox_retention_ms=1000"],
    );
    assert_eq!(ids(&s), [INBOX_RULE]);
    assert!(
        s.hazards[0].text.contains("accounting.inbox_retention_ms"),
        "{}",
        s.hazards[0].text
    );
}

#[test]
fn an_http_key_matters_only_for_requests_whose_repeat_takes_effect() {
    let s = load("http-post-with-key", &["server.key_retention_ms=5000"]);
    assert_eq!(ids(&s), [KEY_RULE]);
    assert_eq!(
        s.hazards[0].shown_by.map(models::registry::situation_name),
        Some("request-after-key-expired")
    );
    assert!(load("http-post-with-key", &[]).hazards.is_empty());
    // Eight attempts span 161 s (seven timeouts of 10 s, waits of at most
    // 1+2+4+8+16+30+30 s); a copy takes 1 ms to 12 s: 11,999 ms of spread.
    let s = load("http-post-with-key", &["server.key_retention_ms=161000"]);
    assert_eq!(ids(&s), [KEY_RULE]);
    assert!(
        s.hazards[0].text.contains("[network]"),
        "{}",
        s.hazards[0].text
    );
    let s = load("http-post-with-key", &["server.key_retention_ms=172999"]);
    assert_eq!(
        ids(&s),
        [KEY_RULE],
        "kept exactly as long as the last copy may come"
    );
    assert!(
        load("http-post-with-key", &["server.key_retention_ms=173000"])
            .hazards
            .is_empty()
    );
    assert!(
        load("http-post-with-key", &["client.idempotency_key=false"])
            .hazards
            .is_empty()
    );
    // A retried PUT that replaces is harmless however short the retention.
    let put = "summary = \"put\"\nmodel = \"http\"\n\n[server]\nkey_retention_ms = 1000\n\n[[requests]]\nmethod = \"put\"\nresource = 4711\nvalue = 1200\n";
    assert!(load_text("put.toml", put, &[]).hazards.is_empty());
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

/// The invariant of `sum`'s lowest failing seed, if one failed.
fn failed_with(sum: &sim::Summary) -> Option<&'static str> {
    match &sum.first_failure.as_ref()?.outcome {
        sim::Outcome::Violation(v) => Some(v.invariant),
        other => panic!("{other:?}"),
    }
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
    let text = &short.hazards[0].text;
    assert!(
        text.contains("takes effect again")
            && text.contains("reads its own write back")
            && text.contains("If-Match"),
        "{text}"
    );
    assert_eq!(
        short.hazards[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("request-after-key-expired")
    );
    assert_eq!(short.hazards[0].example, "http-key-expired-before-retry");
    // Kept past the retries (the shipped 24 h, or an hour): no warning.
    assert!(load("http-if-match", &[]).hazards.is_empty());
    assert!(load("http-if-match", &["server.key_retention_ms=3600000"])
        .hazards
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
    let text = &short.hazards[0].text;
    assert!(
        text.contains("404")
            && text.contains("client.delete_404 = \"failed\"")
            && !text.contains("takes effect again"),
        "{text}"
    );
    assert_eq!(short.hazards[0].example, "http-delete-404-as-failure");
    // The key outlives the retries: the retry gets the stored 204.
    assert!(load("http-delete-retried", &keyed).hazards.is_empty());
    // A 404 read as done: nothing to warn of, however short the retention.
    let done = load(
        "http-delete-retried",
        &[
            keyed[0],
            "client.delete_404=done",
            "server.key_retention_ms=1",
        ],
    );
    assert!(done.hazards.is_empty(), "{:?}", done.hazards);
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
    let text = &s.hazards[0].text;
    assert!(
        text.contains("takes effect again; a DELETE's retry") && text.contains("404"),
        "{text}"
    );
}

#[test]
fn no_reference_design_holds_only_because_its_faults_stay_short() {
    // A holding catalog scenario with a design warning it does not state
    // would teach a rule it breaks; one that states it must show the design
    // surviving the gap (verify then demands a run reached it). A violating
    // one with a warning explains its own failure.
    let mut explained = 0;
    let mut survived = Vec::new();
    for p in scenario_files() {
        let s = load(&common::name_of(&p), &[]);
        let listed = s.expect.as_ref().map_or(&[][..], |e| &e.warnings[..]);
        match s.expected_verdict() {
            Some(Verdict::Holds) => {
                assert_eq!(
                    ids(&s),
                    listed,
                    "{} holds: its settings' warnings and [expect] warnings differ",
                    s.name
                );
                if !s.hazards.is_empty() {
                    survived.push(s.name.clone());
                }
            }
            _ => explained += usize::from(!s.hazards.is_empty()),
        }
    }
    // One reference design survives a broken rule, and says so.
    assert_eq!(survived, ["messaging-unique-key"]);
    assert!(
        explained >= 3,
        "the retention scenarios explain their failures"
    );
}

#[test]
fn a_sweep_names_the_variants_whose_settings_break_a_rule_under_its_table() {
    let (out, _) = run(
        &[
            "sweep",
            "messaging-inbox-retention",
            "--set",
            "consumer.inbox_retention_ms=10000,3600000",
            "--set",
            "broker.max_deliveries=0,100",
            "--runs",
            "100",
        ],
        0,
    );
    let notes: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("design warnings"))
        .skip(1)
        .collect();
    // 10 s is too short either way, and its runs show it; 1 h is too short
    // only when the broker never stops redelivering, which no run reached.
    assert_eq!(
        notes,
        [
            "consumer.inbox_retention_ms=10000 broker.max_deliveries=0: inbox-retention-below-redelivery, reached in 76 runs (redelivered-after-inbox-cleanup)",
            "consumer.inbox_retention_ms=10000 broker.max_deliveries=100: inbox-retention-below-redelivery, reached in 76 runs (redelivered-after-inbox-cleanup)",
            "consumer.inbox_retention_ms=3600000 broker.max_deliveries=0: inbox-retention-below-redelivery, no run reached it (redelivered-after-inbox-cleanup)",
        ],
        "{out}"
    );
    let (json, _) = run(
        &[
            "sweep",
            "messaging-inbox-retention",
            "--set",
            "consumer.inbox_retention_ms=10000,3600000",
            "--runs",
            "50",
            "--format",
            "json",
        ],
        0,
    );
    let variants: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "variant")
        .collect();
    assert_eq!(variants[0]["data"]["hazards"][0]["id"], INBOX_RULE);
    assert!(
        variants[1]["data"].get("hazards").is_none(),
        "{}",
        variants[1]
    );
}

#[test]
fn merged_shards_count_the_runs_that_reached_a_warning_as_one_sweep_does() {
    let dir = std::env::temp_dir().join(format!("idemsim-hazards-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    let reached = |json: &str| -> u64 {
        let last = json.lines().last().expect("a summary line");
        let v: serde_json::Value = serde_json::from_str(last).unwrap();
        v["data"]["hazards"][0]["reached_runs"]
            .as_u64()
            .expect("reached_runs")
    };
    let f = "messaging-inbox-cleaned-too-early";
    let common = ["--runs", "100", "--json", "--no-regressions", "--no-shrink"];
    let mut shards = Vec::new();
    let mut sum = 0;
    for i in 0..2 {
        let shard = format!("{i}/2");
        let (out, _) = run(
            &[&["check", f, "--shard", &shard][..], &common[..]].concat(),
            1,
        );
        sum += reached(&out);
        let path = dir.join(format!("shard-{i}.jsonl"));
        std::fs::write(&path, &out).unwrap();
        shards.push(path.to_string_lossy().into_owned());
    }
    let (merged, _) = run(
        &["merge", &shards[0], &shards[1], "--no-shrink", "--json"],
        1,
    );
    let (whole, _) = run(&[&["check", f][..], &common[..]].concat(), 1);
    assert!(sum > 0, "the runs reach the gap");
    assert_eq!(reached(&merged), sum);
    assert_eq!(reached(&whole), sum);
}

#[test]
fn a_lease_shorter_than_the_bank_call_it_guards_is_a_warning() {
    const RULE: &str = "lease-shorter-than-bank-call";
    // Two bank attempts of 80 s: the call may take 160 s.
    let s = load("payment-lease-too-short", &[]);
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.hazards[0].text.contains("90 s") && s.hazards[0].text.contains("160 s"),
        "{}",
        s.hazards[0].text
    );
    let with = |sets: &[&str]| ids(&load("payment-lease-too-short", sets));
    assert_eq!(with(&["service.lease_ms=159999"]), [RULE]);
    assert!(
        with(&["service.lease_ms=160000"]).is_empty(),
        "as long as the call"
    );
    assert!(
        with(&["service.lease_ms=0"]).is_empty(),
        "no lease, no takeover"
    );
    assert!(
        with(&["service.bank_max_attempts=1"]).is_empty(),
        "one 80 s attempt"
    );
    assert!(load("payment-lease-covers-bank-call", &[])
        .hazards
        .is_empty());
    assert!(
        load("payment-stable-key", &[]).hazards.is_empty(),
        "60 s against 3 x 5 s"
    );
    // The processing before the call counts, and the text names it.
    let s = load(
        "payment-lease-too-short",
        &["service.processing_ms=1000", "service.lease_ms=160000"],
    );
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.hazards[0].text.contains("service.processing_ms"),
        "{}",
        s.hazards[0].text
    );
}

/// With a status query before every re-send, one attempt after the first is
/// a query and a transfer, each waiting up to a timeout: three attempts of
/// 5 s take up to 25 s, not 15 s. A 20 s lease runs out under a live
/// execution, and the runs show the second executor.
#[test]
fn a_lease_counts_the_status_queries_before_the_re_sends() {
    const RULE: &str = "lease-shorter-than-bank-call";
    let text = |lease_ms: u64| {
        format!(
            "summary = \"x\"\n[run]\nruns = 300\n[client]\nkey = \"stable\"\ntimeout_ms = 10000\n[client.retry]\npolicy = \"fixed\"\nbase_ms = 4000\nmax_attempts = 6\n[service]\nidempotency = \"claim-same-tx\"\nlease_ms = {lease_ms}\nbank_timeout_ms = 5000\nbank_max_attempts = 3\nquery_before_retry = true\n[bank]\naccepts_key = true\nstatus_query = true\n[[network.links]]\nfrom = \"bank\"\nto = \"service\"\ndelay_ms_min = 1\ndelay_ms_max = 4900\n[[network.links]]\nfrom = \"service\"\nto = \"bank\"\nkinds = [\"transfer\"]\nloss_per_mille = 1000\n"
        )
    };
    let short = load_text("lease-qbr.toml", &text(20_000), &[]);
    assert_eq!(ids(&short), [RULE]);
    let h = &short.hazards[0].text;
    assert!(
        h.contains("25 s") && h.contains("service.query_before_retry"),
        "{h}"
    );
    let sum = sweep(&short, 300);
    assert!(
        sum.first_failure.is_some(),
        "a takeover under a live execution"
    );
    assert!(
        load_text("lease-24999.toml", &text(24_999), &[])
            .hazards
            .len()
            == 1
    );
    let covered = load_text("lease-25000.toml", &text(25_000), &[]);
    assert!(covered.hazards.is_empty(), "{:?}", covered.hazards);
    assert!(sweep(&covered, 300).first_failure.is_none());
    // The state modes ask before the first transfer too: 2 x 3 timeouts.
    let state = load_text(
        "lease-state.toml",
        &text(29_999),
        &["service.query_before_retry=false", "service.mode=state"],
    );
    assert_eq!(ids(&state), [RULE]);
    assert!(
        state.hazards[0].text.contains("30 s"),
        "{}",
        state.hazards[0].text
    );
}

/// The service's key table answers the client's retries, not the service's
/// own re-sends of one execution's transfer: only the bank tells those from
/// a new transfer, so the bank must remember the key for as long as they
/// come (bank attempts 5 s apart, the default 1 to 50 ms on the way).
#[test]
fn a_bank_that_forgets_before_the_services_last_re_send_is_a_warning() {
    let passed = |sets: &[&str]| load("payment-key-passed-to-bank", sets);
    let s = passed(&["bank.key_retention_ms=4000"]);
    assert_eq!(ids(&s), [KEY_RULE]);
    let h = &s.hazards[0];
    assert!(
        h.text
            .contains("the service re-sends a transfer to the bank")
            && h.text.contains("bank.key_retention_ms")
            && h.text.contains("not these"),
        "{}",
        h.text
    );
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("bank-key-expired")
    );
    let sum = sweep(&s, 300);
    assert!(
        sum.first_failure.is_some(),
        "the re-send after the bank forgot pays again"
    );
    // 10 s of re-sends and 49 ms of spread: kept exactly that long is short,
    // a millisecond more covers them.
    assert_eq!(ids(&passed(&["bank.key_retention_ms=10049"])), [KEY_RULE]);
    let kept = passed(&["bank.key_retention_ms=10050"]);
    assert!(kept.hazards.is_empty(), "{:?}", kept.hazards);
    // One bank attempt re-sends nothing; a conditional transfer cannot pay twice.
    assert!(
        passed(&["bank.key_retention_ms=4000", "service.bank_max_attempts=1"])
            .hazards
            .is_empty()
    );
    // Without the key at the bank the service's re-sends are another rule's
    // business (the runs show them paying twice): no bank memory to size.
    assert!(ids(&passed(&[
        "bank.key_retention_ms=4000",
        "bank.accepts_key=false"
    ]))
    .iter()
    .all(|id| *id != KEY_RULE));
}

/// A key deleted on the bank's silence leaves only the bank's key between
/// the client's retry and a second transfer: a bank that forgets it before
/// the retries end is no protection.
#[test]
fn a_key_deleted_on_timeout_needs_a_bank_that_remembers_the_retries() {
    const RULE: &str = "key-deleted-on-timeout";
    let deleted = |sets: &[&str]| load("payment-key-deleted-on-timeout", sets);
    let keyed = ["bank.accepts_key=true", "service.pass_key_to_bank=true"];
    assert_eq!(ids(&deleted(&[])), [RULE]);
    assert!(
        ids(&deleted(&keyed)).is_empty(),
        "a bank that never forgets"
    );
    let forgets = deleted(&[&keyed[..], &["bank.key_retention_ms=1000"]].concat());
    assert!(ids(&forgets).contains(&RULE), "{:?}", forgets.hazards);
    let h = forgets.hazards.iter().find(|h| h.id == RULE).unwrap();
    assert!(h.text.contains("bank.key_retention_ms"), "{}", h.text);
    assert!(sweep(&forgets, 300).first_failure.is_some());
}

#[test]
fn a_consumer_that_applies_every_delivery_is_a_warning_whatever_the_broker_filters() {
    const RULE: &str = "consumer-without-dedup";
    let s = load("messaging-broker-exactly-once", &[]);
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.hazards[0].text.contains("dedup window of 5 min"),
        "{}",
        s.hazards[0].text
    );
    assert_eq!(
        s.hazards[0].shown_by.map(models::registry::situation_name),
        Some("redelivered-after-effect")
    );
    assert!(load("messaging-outbox-inbox", &[]).hazards.is_empty());
    assert_eq!(
        ids(&load(
            "messaging-outbox-inbox",
            &["consumer.handler=effect"]
        )),
        [RULE]
    );
    for handler in ["unique-key", "inbox-same-tx", "set-value-versioned"] {
        let set = format!("consumer.handler={handler}");
        let s = load("messaging-broker-exactly-once", &[&set]);
        assert!(s.hazards.is_empty(), "{handler}: {:?}", s.hazards);
    }
    assert_eq!(
        ids(&load("chain-outbox-inbox", &["accounting.handler=effect"])),
        [RULE]
    );
    // An idempotent producer is no reason to drop the consumer's dedup: the
    // warning still fires, and says what the producer ids leave through.
    let idem = load(
        "messaging-idempotent-producer-restart",
        &["consumer.handler=effect"],
    );
    assert_eq!(ids(&idem), [RULE]);
    assert!(
        idem.hazards[0]
            .text
            .contains("not a restarted relay's republish"),
        "{}",
        idem.hazards[0].text
    );
    // A transactional producer's fencing is named for what it stops.
    let fenced = load(
        "messaging-transactional-id-restart",
        &["consumer.handler=effect"],
    );
    assert_eq!(ids(&fenced), [RULE]);
    assert!(
        fenced.hazards[0].text.contains(
            "fences a crashed session's late publishes, not the restarted relay's own republish"
        ),
        "{}",
        fenced.hazards[0].text
    );
    let plain = load(
        "messaging-idempotent-producer-restart",
        &["consumer.handler=effect", "producer.idempotence=false"],
    );
    assert!(
        !plain.hazards[0].text.contains("idempotent"),
        "{}",
        plain.hazards[0].text
    );
    // Reading the inbox only for redelivered messages is a rule of its own;
    // the inbox's retention still counts for the redeliveries it reads.
    let flag = load("messaging-dedup-only-redelivered", &[]);
    assert_eq!(ids(&flag), ["dedup-only-on-redelivery"]);
    assert_eq!(
        flag.hazards[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("republish-taken-for-first-delivery")
    );
    let short = load(
        "messaging-dedup-only-redelivered",
        &["consumer.inbox_retention_ms=10000"],
    );
    assert_eq!(
        ids(&short),
        [
            "dedup-only-on-redelivery",
            "inbox-retention-below-redelivery"
        ]
    );
    assert!(load(
        "messaging-dedup-only-redelivered",
        &["consumer.handler=inbox-same-tx"]
    )
    .hazards
    .is_empty());
    assert_eq!(
        ids(&load(
            "chain-outbox-inbox",
            &["accounting.handler=inbox-if-redelivered"]
        )),
        ["dedup-only-on-redelivery"]
    );
    // Both filters at once are both named.
    let both = load(
        "messaging-idempotent-producer-restart",
        &["consumer.handler=effect", "broker.dedup_window_ms=300000"],
    );
    let text = &both.hazards[0].text;
    assert!(
        text.contains("dedup window of 5 min") && text.contains("relay session"),
        "{text}"
    );
}

/// Under exactly-once delivery with the ack checked before the commit, a
/// message's redeliveries cannot take effect twice; a consumer without dedup
/// is then warned only while a second copy can still come from the producer.
#[test]
fn a_checked_ack_under_exactly_once_delivery_narrows_the_missing_dedup_to_the_producer() {
    const RULE: &str = "consumer-without-dedup";
    // No warning at all: checked ack, producer ids, a producer that never crashes.
    let s = load("messaging-eod-checked-ack", &[]);
    assert!(s.hazards.is_empty(), "{:?}", s.hazards);
    // Each condition taken away brings the warning back.
    for sets in [
        &["producer.idempotence=false"][..],
        &["consumer.ack=after-commit"][..],
        &["broker.exactly_once_delivery=false"][..],
        &["crashes.producer={crash_per_mille=10, restart_ms_min=1000, restart_ms_max=2000}"][..],
    ] {
        let s = load("messaging-eod-checked-ack", sets);
        assert!(ids(&s).contains(&RULE), "{sets:?}: {:?}", ids(&s));
    }
    // With the checked ack in place, the warning says what it filters.
    let s = load("messaging-eod-checked-ack", &["producer.idempotence=false"]);
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.hazards[0].text.contains(
            "keep the redeliveries of one message from taking effect twice, not a second copy a producer published"
        ),
        "{}",
        s.hazards[0].text
    );
    // A checked ack without the broker's promise is named for what it misses.
    let s = load(
        "messaging-eod-checked-ack",
        &["broker.exactly_once_delivery=false"],
    );
    let h = s.hazards.iter().find(|h| h.id == RULE).expect("warned");
    assert!(
        h.text
            .contains("without broker.exactly_once_delivery the broker says every ack did"),
        "{}",
        h.text
    );
    // A crash rate of 0 is no crash.
    let zero = load(
        "messaging-eod-checked-ack",
        &["crashes.producer={crash_per_mille=0, restart_ms_min=1000, restart_ms_max=2000}"],
    );
    assert!(zero.hazards.is_empty(), "{:?}", zero.hazards);
}

/// A handler that outlives its lease is wasted work, not a second effect,
/// for a consumer that checks its ack under exactly-once delivery; under
/// exactly-once delivery the warning is shown by the refused stale ack.
#[test]
fn a_lease_shorter_than_the_work_is_no_warning_for_a_checked_ack() {
    const RULE: &str = "visibility-below-processing";
    let checked = load("messaging-eod-checked-ack", &[]);
    assert!(!ids(&checked).contains(&RULE));
    let unchecked = load("messaging-eod-ack-unchecked", &[]);
    let h = unchecked
        .hazards
        .iter()
        .find(|h| h.id == RULE)
        .expect("an unchecked ack is warned");
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("stale-ack-refused")
    );
    assert!(
        h.text.contains("refuses the first ack as stale"),
        "{}",
        h.text
    );
    // Without exactly-once delivery the checked ack's result means nothing.
    let plain = load(
        "messaging-eod-checked-ack",
        &["broker.exactly_once_delivery=false"],
    );
    let h = plain.hazards.iter().find(|h| h.id == RULE).expect("warned");
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("late-ack")
    );
}

/// A broker forgets a producer id a while after the last publish it stored
/// under it; a relay whose confirmations are cut for longer keeps retrying
/// under that id, and the retry after the expiry is stored again.
#[test]
fn producer_ids_forgotten_while_the_relay_still_retries_are_a_warning() {
    const RULE: &str = "producer-id-expiry-below-retries";
    let s = load("messaging-producer-id-expired", &[]);
    assert_eq!(ids(&s), [RULE]);
    let h = &s.hazards[0];
    assert!(
        h.text.contains("1 day after the last publish") && h.text.contains("up to 2 days"),
        "{}",
        h.text
    );
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("producer-id-expired")
    );
    // The cut (2 days = 172,800,000 ms) against the expiration: the last
    // retry under the cut can reach the broker up to the delay spread
    // (199 ms) later than the first copy, and an id that has idled exactly
    // the expiration is forgotten (seen failing, silent, at the cut and at
    // the cut + 100 ms before). This file's network can also lose the
    // confirmation after the cut, which costs one more hourly retry.
    let with = |sets: &[&str]| ids(&load("messaging-producer-id-expired", sets));
    assert_eq!(
        with(&["broker.producer_id_expiration_ms=172799999"]),
        [RULE]
    );
    let calm = |e: &str| with(&[e, "network.loss_per_mille=0"]);
    assert_eq!(calm("broker.producer_id_expiration_ms=172800000"), [RULE]);
    assert_eq!(calm("broker.producer_id_expiration_ms=172800199"), [RULE]);
    assert!(calm("broker.producer_id_expiration_ms=172800200").is_empty());
    assert_eq!(
        with(&["broker.producer_id_expiration_ms=176400199"]),
        [RULE]
    );
    assert!(with(&["broker.producer_id_expiration_ms=176400200"]).is_empty());
    let s = load(
        "messaging-producer-id-expired",
        &[
            "broker.producer_id_expiration_ms=172800100",
            "network.loss_per_mille=0",
        ],
    );
    let sum = sweep(&s, 200);
    assert_eq!(failed_with(&sum), Some("no-duplicate-effect"));
    assert!(sum
        .tally
        .situations
        .contains(s.hazards[0].shown_by.expect("marked")));
    assert!(with(&["broker.producer_id_expiration_ms=0"]).is_empty());
    // A transactional producer's ids expire the same way.
    assert_eq!(with(&["producer.transactional_id=true"]), [RULE]);
    // Without producer ids there is nothing to forget: every retry is a new
    // message, and the inbox's short memory is the warning instead.
    assert_eq!(
        with(&["producer.idempotence=false"]),
        ["inbox-retention-below-republish"]
    );
}

/// The chain's booking service runs an outbox relay too: accounting's inbox
/// must outlast the window the broker's confirmations to the service are cut.
#[test]
fn accountings_inbox_against_the_booking_relays_republish_is_a_warning() {
    const RULE: &str = "inbox-retention-below-republish";
    let cut = [
        "run.fault_phase_ms=200000",
        r#"network.partitions=[{between=["broker","service"], one_way=true, start_ms=0, end_ms=120000}]"#,
    ];
    let with = |retention: &str| {
        let set = format!("accounting.inbox_retention_ms={retention}");
        ids(&load("chain-outbox-inbox", &[cut[0], cut[1], &set]))
    };
    let warned = with("119999");
    assert!(warned.contains(&RULE), "{warned:?}");
    let h = load(
        "chain-outbox-inbox",
        &[cut[0], cut[1], "accounting.inbox_retention_ms=119999"],
    )
    .hazards
    .into_iter()
    .find(|h| h.id == RULE)
    .unwrap();
    assert!(
        h.text.contains("accounting.inbox_retention_ms"),
        "{}",
        h.text
    );
    // The last copy can reach accounting's inbox up to 26.047 s later than
    // the cut says: 11.999 s of spread from the service to the broker,
    // 12.048 s on to the database through a consumer, 2 s of processing
    // jitter. A row kept exactly that long is gone.
    assert!(with("146047").contains(&RULE));
    assert!(!with("146048").contains(&RULE));
    // The confirmations to another actor are not the relay's.
    let other = load(
        "chain-outbox-inbox",
        &[
            cut[0],
            r#"network.partitions=[{between=["bank","service"], one_way=true, start_ms=0, end_ms=120000}]"#,
            "accounting.inbox_retention_ms=1000",
        ],
    );
    assert!(!ids(&other).contains(&RULE), "{:?}", ids(&other));
}

/// A consumer that acks before its commit loses the event when it crashes
/// in between: a warning wherever the scenario crashes its consumers.
#[test]
fn an_ack_before_the_commit_under_consumer_crashes_is_a_warning() {
    const RULE: &str = "ack-before-commit-under-crashes";
    let s = load("messaging-ack-before-commit", &[]);
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.hazards[0].text.contains("on receipt")
            && s.hazards[0].text.contains("consumer-1, consumer-2"),
        "{}",
        s.hazards[0].text
    );
    assert_eq!(
        s.hazards[0].shown_by.map(models::registry::situation_name),
        Some("crash-between-ack-and-commit")
    );
    // The checked ack too, after the ack counted.
    let checked = load("messaging-eod-checked-ack-crash", &[]);
    assert!(ids(&checked).contains(&RULE));
    assert!(
        !ids(&load("messaging-eod-checked-ack", &[])).contains(&RULE),
        "no crashes"
    );
    // After the commit, or with crash rates of 0, silent.
    assert!(load(
        "messaging-ack-before-commit",
        &["consumer.ack=after-commit"]
    )
    .hazards
    .is_empty());
    let calm = load(
        "messaging-ack-before-commit",
        &[
            "crashes.consumer-1.crash_per_mille=0",
            "crashes.consumer-2.crash_per_mille=0",
        ],
    );
    assert!(calm.hazards.is_empty(), "{:?}", ids(&calm));
    // A crashing producer is not a crashing consumer.
    let producer = load(
        "messaging-ack-before-commit",
        &[
            "crashes.consumer-1.crash_per_mille=0",
            "crashes.consumer-2.crash_per_mille=0",
            "crashes.producer={crash_per_mille=100, restart_ms_min=1000, restart_ms_max=2000}",
        ],
    );
    assert!(!ids(&producer).contains(&RULE));
    // The chain's accounting consumers.
    assert!(ids(&load("chain-accounting-ack-before-commit", &[])).contains(&RULE));
}

/// The gap of `ack-before-commit-under-crashes` is marked by the crash that
/// falls into it, reported by the consumer as it crashes: reached by the
/// catalog's scenarios, never by the same consumers acking after the commit,
/// though they crash as often.
#[test]
fn a_crash_between_the_ack_and_the_commit_is_a_situation_the_sweep_reaches() {
    use models::messaging::situations::CRASH_BETWEEN_ACK_AND_COMMIT as GAP;
    for (name, sets) in [
        ("messaging-ack-before-commit", &[][..]),
        ("messaging-eod-checked-ack-crash", &[][..]),
        ("chain-accounting-ack-before-commit", &[][..]),
    ] {
        let sum = sweep(&load(name, sets), 300);
        assert!(sum.tally.situations.contains(GAP), "{name}");
    }
    let after = load(
        "messaging-ack-before-commit",
        &["consumer.ack=after-commit"],
    );
    let sum = sweep(&after, 300);
    assert!(sum.tally.faults.crashed > 0, "the consumers still crash");
    assert!(!sum.tally.situations.contains(GAP));
    // A design claiming to hold with the warning listed must show a run
    // reaching the gap: a sweep too short for a crash to fall there says so
    // instead of "holds".
    let text = std::fs::read_to_string(scenario_dir().join("messaging-ack-before-commit.toml"))
        .expect("catalog file")
        .replace(
            "verdict = \"violation\"\ninvariant = \"no-lost-effect\"",
            "verdict = \"holds\"\nwarnings = [\"ack-before-commit-under-crashes\"]",
        )
        .replace("crash_per_mille = [0, 200]", "crash_per_mille = 1");
    let lucky = load_text("lucky.toml", &text, &[]);
    let sum = sweep(&lucky, 5);
    assert!(sum.violation().is_none() && !sum.tally.situations.contains(GAP));
    let m = lucky.judge(&sum).mismatch.expect("no run reached the gap");
    assert!(m.contains("crash-between-ack-and-commit: 0 runs"), "{m}");
}

#[test]
fn searches_enumerations_and_verifications_carry_the_warnings_in_json_too() {
    let last = |out: &str| -> serde_json::Value {
        let line = out.lines().last().expect("a JSON line");
        serde_json::from_str(line).unwrap()
    };
    let f = "messaging-inbox-cleaned-too-early";
    let (out, _) = run(
        &[
            "check",
            f,
            "--exhaustive",
            "--max-faults",
            "1",
            "--json",
            "--no-regressions",
        ],
        1,
    );
    let v = last(&out);
    assert_eq!(v["type"], "exhaustive", "{v}");
    assert_eq!(v["data"]["hazards"][0]["id"], INBOX_RULE);
    assert_eq!(v["data"]["hazards"][0]["reached"], true);
    let (out, _) = run(
        &[
            "check",
            f,
            "--strategy",
            "coverage",
            "--runs",
            "200",
            "--json",
            "--no-regressions",
            "--no-shrink",
        ],
        1,
    );
    let v = last(&out);
    assert_eq!(v["data"]["strategy"], "coverage", "{v}");
    assert_eq!(
        v["data"]["hazards"][0]["situation"],
        "redelivered-after-inbox-cleanup"
    );
    let (out, _) = run(
        &[
            "verify",
            "messaging-outbox-inbox",
            "--json",
            "--no-regressions",
        ],
        0,
    );
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["data"]["hazards"], serde_json::json!([]), "{v}");
}

#[test]
fn a_broker_that_redelivers_while_the_handler_still_runs_is_a_warning() {
    const RULE: &str = "visibility-below-processing";
    let base = "summary = \"lease against processing\"\nmodel = \"messaging\"\n\n[broker]\nvisibility_timeout_ms = 30000\n\n[consumer]\nhandler = \"inbox-same-tx\"\n";
    let with = |sets: &[&str]| load_text("lease.toml", base, sets);
    // At the timeout or past it, the ack of the longest handler run comes
    // late: the lease runs from the delivery's departure to the ack's
    // arrival, so the work, and the delivery, transaction and ack trips of
    // the default delays (up to 50 ms each way: 200 ms).
    for (sets, words) in [
        (
            &["consumer.processing_ms=29800"][..],
            "consumer.processing_ms, and up to 200 ms on the network",
        ),
        (
            &[
                "consumer.processing_ms=20000",
                "consumer.processing_jitter_ms=9800",
            ][..],
            "consumer.processing_ms + consumer.processing_jitter_ms",
        ),
    ] {
        let s = with(sets);
        assert_eq!(ids(&s), [RULE], "{sets:?}");
        let h = &s.hazards[0];
        assert!(
            h.text.contains(words) && h.text.contains("30 s"),
            "{}",
            h.text
        );
        assert_eq!(
            h.shown_by.map(models::registry::situation_name),
            Some("late-ack")
        );
    }
    // 1 ms under the lease, or the default 100 ms handler: silent.
    for sets in [
        &["consumer.processing_ms=29799"][..],
        &[
            "consumer.processing_ms=20000",
            "consumer.processing_jitter_ms=9799",
        ][..],
        &[][..],
    ] {
        assert!(with(sets).hazards.is_empty(), "{sets:?}");
    }
    // A check-then-act inbox runs three transactions: 29.5 s of work and
    // trips of 100 to 400 ms each way reach 32.7 s (seen failing, silent,
    // before the trips were counted).
    let slow = format!("{base}\n[network]\ndelay_ms_min = 100\ndelay_ms_max = 400\n");
    let s = load_text(
        "slow.toml",
        &slow,
        &[
            "consumer.handler=inbox-separate-tx",
            "consumer.processing_ms=29500",
        ],
    );
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.hazards[0].text.contains("3 transactions"),
        "{}",
        s.hazards[0].text
    );
    let sum = sweep(&s, 300);
    assert_eq!(failed_with(&sum), Some("no-duplicate-effect"));
    assert!(sum
        .tally
        .situations
        .contains(s.hazards[0].shown_by.expect("marked")));
    // An ack on receipt leaves the lease to the trips: long work is no
    // concern of it (before, it was warned of a redelivery that never came).
    let early = with(&["consumer.processing_ms=40000", "consumer.ack=before-commit"]);
    assert!(!ids(&early).contains(&RULE), "{:?}", early.hazards);
    let sum = sweep(&early, 200);
    assert!(!sum
        .tally
        .situations
        .contains(models::messaging::situations::LATE_ACK));
    // Next to the missing dedup, both rules are named.
    assert_eq!(
        ids(&with(&[
            "consumer.processing_ms=40000",
            "consumer.handler=effect"
        ])),
        ["consumer-without-dedup", RULE]
    );
    // A consumer that renews its lease before it runs out is not warned:
    // each renewal extends the lease from its arrival, so the renewals'
    // interval plus their delay spread must stay under the lease, and the
    // first renewal, counted from the delivery's departure, must arrive
    // within it: the delivery's trip (up to 50 ms by default), the
    // interval, and the renewal's trip (up to 50 ms).
    let long = "consumer.processing_ms=40000";
    assert!(with(&[long, "consumer.lease_renewal_ms=29899"])
        .hazards
        .is_empty());
    for late in [
        "consumer.lease_renewal_ms=29900",
        "consumer.lease_renewal_ms=29930",
    ] {
        assert_eq!(ids(&with(&[long, late])), [RULE], "{late}");
    }
    assert!(with(&[long, "consumer.lease_renewal_ms=10000"])
        .hazards
        .is_empty());
    assert_eq!(
        ids(&with(&[long, "consumer.lease_renewal_ms=30000"])),
        [RULE]
    );
    let slow_renewals = |max_ms: u64| {
        let text = format!(
            "{base}lease_renewal_ms = 10000\nprocessing_ms = 40000\n\n[[network.links]]\nfrom = \"consumer-1\"\nto = \"broker\"\ndelay_ms_min = 1\ndelay_ms_max = {max_ms}\n"
        );
        load_text("renew.toml", &text, &[])
    };
    // 10 s apart, the first arriving at most 50 + 10,000 + 19,949 ms after
    // the delivery left: in time.
    assert!(slow_renewals(19_949).hazards.is_empty());
    // One more millisecond: the lease ends as the first renewal arrives.
    assert_eq!(ids(&slow_renewals(19_950)), [RULE]);
    assert_eq!(ids(&slow_renewals(20_001)), [RULE]);
    // The catalog's scenario of the mistake carries it and reaches it.
    let s = load("messaging-visibility-below-processing", &[]);
    assert_eq!(ids(&s), [RULE]);
    let sum = sweep(&s, 200);
    assert!(sum.violation().is_some());
    assert!(sum
        .tally
        .situations
        .contains(s.hazards[0].shown_by.expect("marked")));
    // The chain's accounting consumer is judged by the same rule.
    let s = load("chain-outbox-inbox", &["accounting.processing_ms=3600000"]);
    assert!(
        s.hazards
            .iter()
            .any(|h| h.id == RULE && h.text.contains("accounting.processing_ms")),
        "{:?}",
        s.hazards
    );
}

/// The guide's question written as a design that claims to hold.
fn guide_question(expect: &str) -> String {
    payment(
        3 * DAY_MS,
        DAY_MS,
        &format!("{BANK_NO_KEY}\n[run]\nruns = 200\n\n[expect]\nverdict = \"holds\"\n{expect}"),
    )
}

#[test]
fn verify_does_not_let_a_design_hold_by_luck_past_a_rule_it_breaks() {
    let judged = |s: &Scenario| s.judge(&sweep(s, 200)).mismatch;
    // Unstated: a mismatch naming the rule and how to state it.
    let s = load_text("q.toml", &guide_question(""), &[]);
    let m = judged(&s).expect("an unstated warning on a holding design");
    assert!(
        m.contains("design warning key-retention-below-retry-span")
            && m.contains("warnings = [\"key-retention-below-retry-span\"]"),
        "{m}"
    );
    // Stated, but no run reached the gap: still a mismatch, pointing at the example.
    let s = load_text(
        "q.toml",
        &guide_question("warnings = [\"key-retention-below-retry-span\"]\n"),
        &[],
    );
    let m = judged(&s).expect("a stated warning no run reached");
    assert!(
        m.contains("retry-after-key-expired: 0 runs")
            && m.contains("payment-key-expired-before-retry"),
        "{m}"
    );
    // Stated for settings that no longer break the rule: stale.
    let s = load_text(
        "q.toml",
        &guide_question("warnings = [\"key-retention-below-retry-span\"]\n"),
        &["service.retention_ms=0"],
    );
    assert!(s.hazards.is_empty());
    let m = judged(&s).expect("a stale warning");
    assert!(m.contains("no longer break"), "{m}");
    // A violation explains itself: its warnings need not be listed, but one
    // listed must still be there.
    let s = load("messaging-visibility-below-processing", &[]);
    assert_eq!(judged(&s), None);
    // Stated and reached, the verdict covers it: the catalog's unique key.
    let s = load("messaging-unique-key", &[]);
    assert_eq!(s.judge(&sweep(&s, 500)).mismatch, None);
    let unstated = s
        .text
        .replace("warnings = [\"visibility-below-processing\"]", "");
    let s = load_text("u.toml", &unstated, &[]);
    let m = s.judge(&sweep(&s, 500)).mismatch.expect("unstated");
    assert!(m.contains("visibility-below-processing"), "{m}");
}

#[test]
fn an_unknown_design_warning_in_expect_is_refused_with_the_rules() {
    let base = "summary = \"x\"\n\n[expect]\nverdict = \"holds\"\n";
    refuses(
        base,
        &[
            (
                "warnings = [\"key-retention-below-retry\"]\n",
                "unknown design warning",
                "did you mean \"key-retention-below-retry-span\"",
            ),
            (
                "warnings = [\"zzz\"]\n",
                "unknown design warning \"zzz\"",
                "visibility-below-processing",
            ),
            (
                "warnings = [\"consumer-without-dedup\", \"consumer-without-dedup\"]\n",
                "\"consumer-without-dedup\" is listed twice",
                "remove the second one",
            ),
            (
                "situations = [\"client-retried\", \"client-retried\"]\n",
                "\"client-retried\" is listed twice",
                "remove the second one",
            ),
        ],
    );
}

#[test]
fn every_rule_has_a_row_in_the_design_warnings_page() {
    let page = std::fs::read_to_string(common::root().join("docs/design-warnings.md"))
        .expect("docs/design-warnings.md");
    let format = std::fs::read_to_string(common::root().join("docs/scenario-format.md"))
        .expect("docs/scenario-format.md");
    for id in models::core::hazard::RULES {
        assert!(page.contains(&format!("| `{id}` (")), "{id} has no row");
        assert!(
            format.contains(&format!("`{id}`")),
            "{id} is not in [expect] warnings"
        );
    }
}

/// The design warnings read the delay tables before the network is built:
/// a delay out of range must be refused there, at its line, not fed into the
/// warnings' arithmetic (a fuzzed `u64::MAX` once overflowed it).
#[test]
fn delays_the_warnings_read_are_range_checked_first() {
    let base = payment(DAY_MS, DAY_MS, BANK_NO_KEY);
    let huge = i64::MAX;
    let link = "\n[[network.links]]\nfrom = \"client\"\nto = \"service\"\n";
    let cases = [
        format!("{link}delay_ms_max = {huge}\n"),
        format!("{link}delay_ms_min = {huge}\ndelay_ms_max = 5\n"),
        format!("{link}delay_ms_max = 86400001\n"),
        format!("\n[network]\ndelay_ms_max = {huge}\n"),
        "\n[network]\ndelay_ms_min = 86400001\n".to_string(),
    ];
    for tail in &cases {
        refuses(
            &base,
            &[(tail, "longer than the 24 h", "the range is 0 to 86400000")],
        );
        let e = common::load_error("bad.toml", &format!("{base}{tail}"));
        let key_line = format!("{base}{tail}")
            .lines()
            .position(|l| {
                l.starts_with("delay_ms_")
                    && (l.contains(&huge.to_string()) || l.contains("86400001"))
            })
            .expect("the bad line")
            + 1;
        assert_eq!(e.line, key_line, "{tail}: {e}");
    }
    // At the limit, the design loads and the warnings see the full day.
    let edge = format!("{base}{link}delay_ms_max = 86400000\n");
    let s = load_text("edge.toml", &edge, &[]);
    assert_eq!(ids(&s), [KEY_RULE]);
}

/// A key deleted when the bank stays silent, from the domain: the silence
/// may hide a payment, so the retry the deletion lets through must meet a
/// bank that deduplicates, or a transfer that pays only what is missing.
#[test]
fn a_key_deleted_on_an_unknown_outcome_is_a_warning_unless_the_bank_catches_the_retry() {
    const RULE: &str = "key-deleted-on-timeout";
    let name = "payment-key-deleted-on-timeout";
    let s = load(name, &[]);
    assert_eq!(ids(&s), [RULE]);
    assert_eq!(
        s.hazards[0].shown_by.map(models::registry::situation_name),
        Some("key-deleted-on-bank-timeout")
    );
    let sum = sweep(&s, 100);
    assert!(sum.violation().is_some());
    assert!(sum
        .tally
        .situations
        .contains(s.hazards[0].shown_by.expect("marked")));
    for sets in [
        &["service.on_bank_timeout=keep-in-progress"][..],
        &["service.pass_key_to_bank=true", "bank.accepts_key=true"][..],
        &["service.mode=state-conditional", "bank.status_query=true"][..],
        &["service.idempotency=none"][..],
    ] {
        assert!(load(name, sets).hazards.is_empty(), "{sets:?}");
    }
    // The key handed on to a bank that ignores keys catches nothing, and
    // the --set that asked for it is told it changed nothing.
    assert_eq!(
        ids(&load(name, &["service.pass_key_to_bank=true"])),
        [RULE, "setting-without-effect"]
    );
}

/// An outbox relay republishes until a confirmation gets through: an inbox
/// that forgets before the scenario's outage of confirmations ends lets a
/// late copy through. Read from the faults the file sets.
#[test]
fn an_inbox_that_forgets_before_the_relay_stops_republishing_is_a_warning() {
    const RULE: &str = "inbox-retention-below-republish";
    // A restart's republish, 30 min of cut confirmations, 10 min of inbox.
    for name in [
        "messaging-idempotent-producer-restart",
        "messaging-transactional-id-restart",
    ] {
        let s = load(name, &[]);
        assert_eq!(ids(&s), [RULE], "{name}");
        assert!(
            s.hazards[0].text.contains("30.5 min after the first"),
            "{}",
            s.hazards[0].text
        );
        assert_eq!(
            s.hazards[0].shown_by.map(models::registry::situation_name),
            Some("redelivered-after-inbox-cleanup")
        );
    }
    // Without producer crashes an idempotent producer's retries are dropped:
    // nothing to warn about (and the design holds).
    assert!(load("messaging-idempotent-producer", &[])
        .hazards
        .is_empty());
    // Without idempotence every retry is a stored copy, crash or not.
    let plain = load(
        "messaging-idempotent-producer",
        &["producer.idempotence=false"],
    );
    assert_eq!(ids(&plain), [RULE]);
    assert!(
        plain.hazards[0].text.contains("every retry is stored"),
        "{}",
        plain.hazards[0].text
    );
    // An inbox that outlasts the cut and the restart (and the 597 ms by
    // which the last copy's trips can be slower than the first's), or
    // forgets nothing.
    assert!(!load(
        "messaging-idempotent-producer-restart",
        &["consumer.inbox_retention_ms=1830597"]
    )
    .hazards
    .is_empty());
    for keep in ["1830598", "0"] {
        let set = format!("consumer.inbox_retention_ms={keep}");
        assert!(
            load("messaging-idempotent-producer-restart", &[&set])
                .hazards
                .is_empty(),
            "{keep}"
        );
    }
    assert_eq!(
        ids(&load(
            "messaging-idempotent-producer-restart",
            &["consumer.inbox_retention_ms=1829999"]
        )),
        [RULE]
    );
    // A consumer without an inbox has its own warning instead.
    assert_eq!(
        ids(&load(
            "messaging-idempotent-producer-restart",
            &["consumer.handler=effect"]
        )),
        ["consumer-without-dedup"]
    );
}

/// Once an ack let the message go, the consumer sends a transaction again
/// when its database does not answer in time; a first one whose answer was
/// lost or late had committed. The rule fires where the scenario can keep
/// an answer away and the commit is not keyed by the message id, and stays
/// silent where either is not so.
#[test]
fn a_commit_resent_after_the_ack_without_dedup_is_a_warning_where_answers_can_fail() {
    const RULE: &str = "commit-resent-without-dedup";
    let lossy = load("messaging-eod-checked-ack-lossy-db", &[]);
    assert_eq!(ids(&lossy), [RULE]);
    let h = &lossy.hazards[0];
    assert!(
        h.text.contains("100‰ of consumer-db's answers") && h.text.contains("10 sends"),
        "{}",
        h.text
    );
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("resent-tx-applied-again")
    );
    // A commit keyed by the message id, an ack after the commit, one send
    // only: silent.
    // A record-first inbox: its row is keyed, its effect after it is not.
    let record_first = load(
        "messaging-eod-checked-ack-lossy-db",
        &["consumer.handler=inbox-record-first"],
    );
    assert_eq!(ids(&record_first), [RULE]);
    assert!(
        record_first.hazards[0]
            .text
            .contains("record-resent-took-own-row"),
        "{}",
        record_first.hazards[0].text
    );
    for sets in [
        &["consumer.handler=inbox-same-tx"][..],
        &["consumer.handler=unique-key"],
        &["consumer.ack=after-commit"],
        &["consumer.tx_max_attempts=1"],
    ] {
        assert!(
            !ids(&load("messaging-eod-checked-ack-lossy-db", sets)).contains(&RULE),
            "{sets:?}"
        );
    }
    assert!(ids(&load("messaging-eod-checked-ack-inbox", &[])).is_empty());
    // Answers that never get lost and come back well within 5 s: silent;
    // a round trip of up to 400 ms against a timeout of 400 ms is a late
    // answer, against 401 ms it is not.
    assert!(!ids(&load("messaging-eod-checked-ack", &[])).contains(&RULE));
    let late = load("messaging-eod-checked-ack", &["consumer.tx_timeout_ms=400"]);
    assert!(ids(&late).contains(&RULE));
    assert!(
        late.hazards[0].text.contains("can take up to 400 ms"),
        "{}",
        late.hazards[0].text
    );
    assert!(!ids(&load(
        "messaging-eod-checked-ack",
        &["consumer.tx_timeout_ms=401"]
    ))
    .contains(&RULE));
    // Lost transactions are sent again and land once; lost answers are what
    // doubles. The catalog file keeps its answers at 0‰ in an entry naming
    // them, which a later entry for the whole link does not change (as the
    // loader reads it); a later entry naming them does.
    let base = std::fs::read_to_string(scenario_dir().join("messaging-eod-checked-ack.toml"))
        .expect("catalog file");
    let tx_only = format!("{base}\n[[network.links]]\nkinds = [\"tx\"]\nloss_per_mille = 50\n");
    assert!(!ids(&load_text("tx.toml", &tx_only, &[])).contains(&RULE));
    let link = format!(
        "{base}\n[[network.links]]\nfrom = \"consumer-db\"\nto = \"consumer-2\"\nloss_per_mille = 50\n"
    );
    assert!(!ids(&load_text("link.toml", &link, &[])).contains(&RULE));
    let answers = format!(
        "{link}\n[[network.links]]\nfrom = \"consumer-db\"\nto = \"consumer-2\"\nkinds = [\"tx-done\"]\nloss_per_mille = [0, 20]\n"
    );
    let t = load_text("answers.toml", &answers, &[]);
    assert!(ids(&t).contains(&RULE));
    assert!(
        t.hazards[0]
            .text
            .contains("20‰ of consumer-db's answers (tx-done) to consumer-2"),
        "{}",
        t.hazards[0].text
    );
    // An entry naming the answers without a loss of its own leaves them to
    // the link, as the loader does: on a network that loses nothing, a
    // later loss on one link reaches that link's answers.
    let calm = base
        .replacen("loss_per_mille = [0, 100]", "loss_per_mille = 0", 1)
        .replace("kinds = [\"tx\", \"tx-done\"]", "kinds = [\"tx\"]");
    assert!(!ids(&load_text("calm.toml", &calm, &[])).contains(&RULE));
    let follows = format!(
        "{calm}\n[[network.links]]\nfrom = \"consumer-db\"\nto = \"consumer-2\"\nloss_per_mille = 50\n"
    );
    let t = load_text("follows.toml", &follows, &[]);
    assert!(ids(&t).contains(&RULE), "{:?}", t.hazards);
    assert!(
        t.hazards[0]
            .text
            .contains("50‰ of consumer-db's answers (tx-done) to consumer-2"),
        "{}",
        t.hazards[0].text
    );
    // A partition that cuts the answers fires; one that cuts only the
    // transactions does not.
    let cut = |one_way_from: &str, to: &str| {
        format!("{base}\n[[network.partitions]]\nbetween = [\"{one_way_from}\", \"{to}\"]\none_way = true\nstart_ms = 1000\nend_ms = 20000\n")
    };
    let t = load_text("cut.toml", &cut("consumer-db", "consumer-1"), &[]);
    assert!(ids(&t).contains(&RULE));
    assert!(
        t.hazards[0].text.contains("[[network.partitions]]"),
        "{}",
        t.hazards[0].text
    );
    assert!(!ids(&load_text(
        "cut.toml",
        &cut("consumer-1", "consumer-db"),
        &[]
    ))
    .contains(&RULE));
    // Acked on receipt, the same: a plain effect and the check-then-act
    // inbox whose row follows the effect both land the re-send again.
    let on_receipt = &[
        "consumer.ack=before-commit",
        "broker.exactly_once_delivery=false",
    ][..];
    for handler in ["effect", "inbox-separate-tx", "inbox-if-redelivered"] {
        let h = format!("consumer.handler={handler}");
        let sets = [on_receipt, &[h.as_str()]].concat();
        let s = load("messaging-eod-checked-ack-lossy-db", &sets);
        assert!(ids(&s).contains(&RULE), "{handler}");
        let t = &s
            .hazards
            .iter()
            .find(|h| h.id == RULE)
            .expect("carried")
            .text;
        assert!(t.contains("acks on receipt") && t.contains(handler), "{t}");
    }
    // The chain's accounting consumers.
    let chain = load(
        "chain-accounting-ack-before-commit",
        &["accounting.handler=effect", "accounting.tx_timeout_ms=10"],
    );
    assert!(ids(&chain).contains(&RULE), "{:?}", ids(&chain));
}

/// A status answer read sooner after a transfer than the bank's replica
/// shows it reads "0 EUR paid" for a claim that was paid. The shortest time
/// between a transfer and a read of it is not always the bank timeout: a
/// restarted service asks as soon as it is back.
#[test]
fn a_status_lag_longer_than_the_earliest_read_after_a_transfer_is_a_warning() {
    const RULE: &str = "status-lag-above-read-delay";
    let shown = |s: &Scenario| {
        s.hazards
            .iter()
            .find(|h| h.id == RULE)
            .map(|h| h.text.clone())
    };
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
    assert!(qbr(0, &[]).hazards.is_empty());
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
    assert!(fresh.hazards.is_empty(), "{:?}", fresh.hazards);
    assert!(sweep(&fresh, 300).first_failure.is_none());
    // Without crashes the earliest read is the query before a re-send, one
    // bank timeout (5 s) after the transfer.
    let replica = |lag: &str| load("payment-query-reads-stale-replica", &[lag]);
    assert!(replica("bank.status_lag_ms=4951").hazards.is_empty());
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
    .hazards
    .is_empty());
    // A lease takeover asks too: bank calls of 4 x 5 s send their last
    // transfer 15 s after the lock, so a 20 s lease asks 5 s after it.
    let lease = |lag: &str| {
        load(
            "payment-query-reads-stale-replica",
            &[
                lag,
                "service.query_before_retry=false",
                "service.lease_ms=20000",
            ],
        )
    };
    assert!(lease("bank.status_lag_ms=4951").hazards.is_empty());
    let text = shown(&lease("bank.status_lag_ms=4952")).expect("the takeover's query");
    assert!(text.contains("service.lease_ms"), "{text}");
    // Where the money is written the check is current: a conditional
    // transfer, or a key the bank deduplicates by.
    assert!(load("payment-conditional-survives-stale-read", &[])
        .hazards
        .is_empty());
    assert!(qbr(
        10_000,
        &["bank.accepts_key=true", "service.pass_key_to_bank=true"]
    )
    .hazards
    .is_empty());
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
    assert_eq!(ids(&resumed), [KEY_RULE]);
    let t = &resumed.hazards[0].text;
    assert!(
        t.contains("[crashes.client] restart_ms_max") && t.contains("no window_ms"),
        "{t}"
    );
    assert_eq!(
        resumed.hazards[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("retry-after-key-expired")
    );
    assert_eq!(
        failed_with(&sweep(&resumed, 300)),
        Some("no-duplicate-effect")
    );
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

const WINDOW_RULE: &str = "retry-window-too-short";

#[test]
fn a_retry_window_without_room_for_a_retry_after_a_timeout_is_a_warning() {
    // timeout_ms = 10000, a first wait of 1 s: a timed-out attempt is
    // retried only with 21 s of window.
    let window = |window_ms| {
        let s = load_text("w.toml", &payment(window_ms, 0, BANK_NO_KEY), &[]);
        s.hazards
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
    common::refuses(
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
    let h = s.hazards.iter().find(|h| h.id == WINDOW_RULE).unwrap();
    assert_eq!(
        h.shown_by.map(models::registry::situation_name),
        Some("client-dead-lettered")
    );
}

/// The claims system's reconciliation job reads the bank's status too, and
/// re-drives a "not paid" (every round but the last): where no layer
/// recognises the re-drive, a stale "not paid" is a second payment. Reply
/// losses make dead letters; the bank's replica runs behind its ledger.
const JOB_READS_REPLICA: &str = r#"summary = "a reconciliation job reads a lagging replica"

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
    let text = |s: &Scenario| {
        s.hazards
            .iter()
            .find(|h| h.id == RULE)
            .map(|h| h.text.clone())
    };
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
    assert!(fresh.hazards.is_empty(), "{:?}", fresh.hazards);
    assert!(sweep(&fresh, 300).first_failure.is_none());
    // Silent where the stale "not paid" is harmless or never acted on: a
    // re-drive under the same key, which the service's key table answers
    // (and the runs hold); a job that asks the service, or whose only
    // round leaves its "not paid" for a person.
    let same = job(&[
        "bank.status_lag_ms=120000",
        "client.reconcile.redrive_key=same",
    ]);
    assert!(same.hazards.is_empty(), "{:?}", same.hazards);
    assert!(sweep(&same, 300).first_failure.is_none());
    for set in [
        "client.reconcile.ask=service",
        "client.reconcile.max_rounds=1",
    ] {
        let s = job(&["bank.status_lag_ms=120000", set]);
        assert!(s.hazards.is_empty(), "{set}: {:?}", s.hazards);
    }
    // The same key with nothing that keeps it is no protection.
    let unkept = job(&[
        "bank.status_lag_ms=120000",
        "client.reconcile.redrive_key=same",
        "service.idempotency=none",
    ]);
    assert!(ids(&unkept).contains(&RULE), "{:?}", unkept.hazards);
    // A conditional transfer is checked against the ledger itself.
    let conditional = job(&[
        "bank.status_lag_ms=120000",
        "service.mode=state-conditional",
    ]);
    assert!(conditional.hazards.is_empty(), "{:?}", conditional.hazards);
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
    let h = &wide.hazards[0];
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
    assert!(even.hazards.is_empty(), "{:?}", even.hazards);
    assert!(sweep(&even, 1000).first_failure.is_none());
    assert_eq!(ids(&overtaken(5_001, &[])), [RULE]);
    // A key the bank deduplicates by, or a conditional transfer: silent,
    // and the runs hold.
    for sets in [
        &["service.pass_key_to_bank=true", "bank.accepts_key=true"][..],
        &["service.mode=state-conditional"][..],
    ] {
        let s = overtaken(10_000, sets);
        assert!(s.hazards.is_empty(), "{sets:?}: {:?}", s.hazards);
        assert!(sweep(&s, 300).first_failure.is_none(), "{sets:?}");
    }
    // The reconciliation job's query too: payment-reconcile-new-key's bank
    // link delays transfers up to 100 s, its rounds are a minute apart.
    let job = load("payment-reconcile-new-key", &[]);
    let t = &job
        .hazards
        .iter()
        .find(|h| h.id == RULE)
        .expect("the job's query")
        .text;
    assert!(
        t.contains("reconciliation job") && t.contains("redrive_key"),
        "{t}"
    );
    // The same job under the same key: the key table recognises the re-drive.
    assert!(load("payment-reconcile-at-bank", &[]).hazards.is_empty());
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
    assert_eq!(ids(&resumed), [KEY_RULE]);
    let t = &resumed.hazards[0].text;
    assert!(
        t.contains("[crashes.client] restart_ms_max") && t.contains("no window_ms"),
        "{t}"
    );
    assert_eq!(
        resumed.hazards[0]
            .shown_by
            .map(models::registry::situation_name),
        Some("request-after-key-expired")
    );
    assert_eq!(
        failed_with(&sweep(&resumed, 300)),
        Some("no-duplicate-effect")
    );
    // The same retries from a client that never crashes are covered.
    let steady = with(120_000, &["crashes.client.crash_per_mille=0"]);
    assert!(steady.hazards.is_empty(), "{:?}", steady.hazards);
    // A window bounds the retries in time whatever the restarts: the
    // client gives up (a dead letter) instead of retrying after the key is
    // gone, and the runs hold.
    let windowed = with(120_000, &["client.retry.window_ms=60000"]);
    assert!(windowed.hazards.is_empty(), "{:?}", windowed.hazards);
    assert_eq!(failed_with(&sweep(&windowed, 300)), None);
    // Kept longer than four restarts and the retries: silent, and held.
    let kept = with(3_000_000, &[]);
    assert!(kept.hazards.is_empty(), "{:?}", kept.hazards);
    assert_eq!(failed_with(&sweep(&kept, 300)), None);
    // A crashing client named in [[requests]] counts by its own name.
    let text = "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = true\n[client.retry]\npolicy = \"fixed\"\nmax_attempts = 3\n[server]\nkey_retention_ms = 60000\n[[requests]]\nclient = \"alice\"\nmethod = \"post\"\nvalue = 1\n[crashes.alice]\ncrash_per_mille = 50\nrestart_ms_min = 1000\nrestart_ms_max = 120000\n";
    let alice = load_text("alice.toml", text, &[]);
    assert_eq!(ids(&alice), [KEY_RULE]);
    assert!(alice.hazards[0].text.contains("[crashes.alice]"));
    let steady = load_text("alice.toml", text, &["crashes.alice.crash_per_mille=0"]);
    assert!(steady.hazards.is_empty(), "{:?}", steady.hazards);
}

/// The copies a producer publishes again reach the inbox as new messages:
/// an outbox relay's under a cut of its confirmations, and a dual write's
/// bounded retries whatever the faults. Seen silent on a violation before:
/// a state-first producer retrying 50 times 5 s apart against rows kept
/// 150 s, and a relay whose confirmations were cut exactly as long as the
/// rows were kept.
#[test]
fn copies_a_producer_publishes_again_must_outlive_the_inbox_as_they_arrive() {
    const RULE: &str = "inbox-retention-below-republish";
    let base = "summary = \"republish against the inbox\"\nmodel = \"messaging\"\n\n[run]\nfault_phase_ms = 400000\n\n[producer]\nwrite = \"state-first\"\npublish_max_attempts = 50\npublish_timeout_ms = 5000\n\n[broker]\nmax_deliveries = 5\n\n[consumer]\nhandler = \"inbox-same-tx\"\n\n[network]\ndelay_ms_min = 10\ndelay_ms_max = 10\n\n[[network.partitions]]\nbetween = [\"broker\", \"producer\"]\none_way = true\nstart_ms = 0\nend_ms = 300000\n";
    let with = |sets: &[&str]| load_text("republish.toml", base, sets);
    // 49 retries 5 s apart: 245 s, fixed delays, no jitter.
    let s = with(&["consumer.inbox_retention_ms=150000"]);
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.hazards[0].text.contains("publish_max_attempts = 50"),
        "{}",
        s.hazards[0].text
    );
    let sum = sweep(&s, 100);
    assert_eq!(failed_with(&sum), Some("no-duplicate-effect"));
    assert!(sum
        .tally
        .situations
        .contains(s.hazards[0].shown_by.expect("marked")));
    assert_eq!(
        ids(&with(&["consumer.inbox_retention_ms=245000"])),
        [RULE],
        "gone at that age"
    );
    assert!(with(&["consumer.inbox_retention_ms=245001"])
        .hazards
        .is_empty());
    assert_eq!(
        ids(&with(&[
            "consumer.inbox_retention_ms=246000",
            "producer.write=event-first"
        ])),
        Vec::<&str>::new()
    );
    assert_eq!(
        ids(&with(&[
            "consumer.inbox_retention_ms=245000",
            "producer.write=event-first"
        ])),
        [RULE]
    );
    // The outbox relay never gives up: the cut of 300 s decides, and a row
    // kept exactly that long is gone when the last copy reads the inbox.
    let relay = |retention: &str| with(&["producer.write=outbox", retention]);
    assert_eq!(ids(&relay("consumer.inbox_retention_ms=300000")), [RULE]);
    assert!(relay("consumer.inbox_retention_ms=300001")
        .hazards
        .is_empty());
    // The last copy's work drawn up to 2 s longer reads 2 s later.
    let jitter = |retention: &str| {
        with(&[
            "producer.write=outbox",
            retention,
            "consumer.processing_jitter_ms=2000",
        ])
    };
    let s = jitter("consumer.inbox_retention_ms=301000");
    assert_eq!(ids(&s), [RULE]);
    assert!(
        s.hazards[0].text.contains("up to 2 s later"),
        "{}",
        s.hazards[0].text
    );
    assert!(failed_with(&sweep(&s, 300)).is_some());
    assert!(jitter("consumer.inbox_retention_ms=302001")
        .hazards
        .is_empty());
}

/// A consumer that acks with result before its commit drops its work when
/// none of its asks for the result is answered, though the ack may have
/// counted: a warning where the scenario can keep every answer away. Seen
/// silent on a violation before: one ask, results lost up to 200‰.
#[test]
fn an_ack_result_every_ask_of_which_can_go_unanswered_is_a_warning() {
    const RULE: &str = "ack-result-lost-drops-work";
    let base = std::fs::read_to_string(scenario_dir().join("messaging-eod-checked-ack.toml"))
        .expect("catalog file");
    // The catalog file loses results, and asks ten times: silent, and holds.
    assert!(!ids(&load("messaging-eod-checked-ack", &[])).contains(&RULE));
    // One ask: any loss of the results drops counted work.
    let once = load("messaging-eod-checked-ack", &["consumer.tx_max_attempts=1"]);
    assert_eq!(ids(&once), [RULE]);
    let h = &once.hazards[0];
    assert!(h.text.contains("asks for the result once"), "{}", h.text);
    let sum = sweep(&once, 1000);
    assert_eq!(failed_with(&sum), Some("no-lost-effect"));
    assert!(sum.tally.situations.contains(h.shown_by.expect("marked")));
    // Results that are never lost, asked once: silent.
    let kept = format!("{base}\n[[network.links]]\nkinds = [\"ack-result\"]\nloss_per_mille = 0\n");
    assert!(!ids(&load_text(
        "kept.toml",
        &kept,
        &["consumer.tx_max_attempts=1"]
    ))
    .contains(&RULE));
    // A cut of the results as long as the asks' span (9 x 5 s) fires; one
    // shorter does not. An ack after the commit asks nothing.
    let cut = |end_ms: u64| {
        format!("{kept}\n[[network.partitions]]\nbetween = [\"broker\", \"consumer-1\"]\none_way = true\nstart_ms = 1000\nend_ms = {end_ms}\n")
    };
    assert!(ids(&load_text("cut.toml", &cut(46_000), &[])).contains(&RULE));
    assert!(!ids(&load_text("cut.toml", &cut(45_999), &[])).contains(&RULE));
    assert!(!ids(&load_text(
        "cut.toml",
        &cut(46_000),
        &["consumer.ack=after-commit"]
    ))
    .contains(&RULE));
    // The chain's accounting consumer is judged by the same rule.
    let chain = load(
        "chain-outbox-inbox",
        &[
            "accounting.ack=checked-before-commit",
            "broker.exactly_once_delivery=true",
            "accounting.tx_max_attempts=1",
        ],
    );
    assert!(ids(&chain).contains(&RULE), "{:?}", ids(&chain));
}
