//! The warnings through the commands: sweeps and merged shards count the
//! runs that reached them, JSON carries them, `verify` does not let a design
//! hold by luck past one, and bad input is refused before their arithmetic.

use super::helpers::{ids, payment, BANK_NO_KEY, DAY_MS, INBOX_RULE, KEY_RULE};
use crate::support;
use crate::support::{load, load_text, refuses, run, sweep};
use models::Scenario;

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
    let dir = support::scratch("design_warnings/merged-shards");
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
    assert!(s.design_warnings.is_empty());
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
        let e = support::load_error("bad.toml", &format!("{base}{tail}"));
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
