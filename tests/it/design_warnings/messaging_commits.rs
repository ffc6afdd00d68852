//! Messaging consumers after the ack: commits re-sent after it without
//! dedup, and ack results whose every ask can go unanswered.

use super::helpers::{failed_with, ids};
use crate::support::{load, load_text, scenario_dir, sweep};

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
    let h = &lossy.design_warnings[0];
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
        record_first.design_warnings[0]
            .text
            .contains("record-resent-took-own-row"),
        "{}",
        record_first.design_warnings[0].text
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
        late.design_warnings[0]
            .text
            .contains("can take up to 400 ms"),
        "{}",
        late.design_warnings[0].text
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
        t.design_warnings[0]
            .text
            .contains("20‰ of consumer-db's answers (tx-done) to consumer-2"),
        "{}",
        t.design_warnings[0].text
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
    assert!(ids(&t).contains(&RULE), "{:?}", t.design_warnings);
    assert!(
        t.design_warnings[0]
            .text
            .contains("50‰ of consumer-db's answers (tx-done) to consumer-2"),
        "{}",
        t.design_warnings[0].text
    );
    // A partition that cuts the answers fires; one that cuts only the
    // transactions does not.
    let cut = |one_way_from: &str, to: &str| {
        format!("{base}\n[[network.partitions]]\nbetween = [\"{one_way_from}\", \"{to}\"]\none_way = true\nstart_ms = 1000\nend_ms = 20000\n")
    };
    let t = load_text("cut.toml", &cut("consumer-db", "consumer-1"), &[]);
    assert!(ids(&t).contains(&RULE));
    assert!(
        t.design_warnings[0].text.contains("[[network.partitions]]"),
        "{}",
        t.design_warnings[0].text
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
            .design_warnings
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
    let h = &once.design_warnings[0];
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
