//! Settings without effect (`setting-without-effect`): a key the file
//! writes that its other settings leave unread is a design warning at the
//! line that writes it, with the fix; the same key after a `--set` took its
//! effect away (a sweep's variant, a protection removed) is not, since the
//! file was meaningful as written. And a `--set network.X` that no message
//! would see is refused.

use crate::support;

use models::Scenario;
use support::{case, load_text, run_case};

mod contention;
mod network_sets;

const RULE: &str = "setting-without-effect";

/// The texts of the scenario's `setting-without-effect` warnings.
fn unread(s: &Scenario) -> Vec<&str> {
    s.design_warnings
        .iter()
        .filter(|h| h.id == RULE)
        .map(|h| h.text.as_str())
        .collect()
}

/// Each case: a file, the key it writes without effect (`None`: every key
/// it writes has one), the line and column that write it, and words of the
/// fix.
/// The key as `setting = value`, where (`file:line:column`), words of the fix.
type Told = (&'static str, &'static str, &'static str);

const WRITTEN: &[(&str, Option<Told>)] = &[
    // Payment: a service without a key table has nothing to compare,
    // lease, or wait on.
    (
        "summary = \"s\"\n[service]\nidempotency = \"none\"\nfingerprint_check = true\n",
        Some(("service.fingerprint_check = true", "f.toml:4:21", "idempotency = \"claim-same-tx\"")),
    ),
    (
        "summary = \"s\"\n[service]\nidempotency = \"none\"\nlease_ms = 5000\n",
        Some(("service.lease_ms = 5000", "f.toml:4:12", "give the service a key table")),
    ),
    (
        "summary = \"s\"\n[service]\nidempotency = \"none\"\nconcurrent = \"wait\"\n",
        Some(("service.concurrent = \"wait\"", "f.toml:4:14", "give the service a key table")),
    ),
    // The value that says what happens anyway states the design.
    ("summary = \"s\"\n[service]\nidempotency = \"none\"\nlease_ms = 0\nfingerprint_check = false\n", None),
    // With a key table, each of them is read.
    ("summary = \"s\"\n[service]\nlease_ms = 5000\nconcurrent = \"wait\"\nfingerprint_check = true\n", None),
    (
        "summary = \"s\"\n[service]\nquery_on_recovery = true\n",
        Some(("service.query_on_recovery = true", "f.toml:3:21", "status_query = true")),
    ),
    ("summary = \"s\"\n[service]\nquery_on_recovery = true\n[bank]\nstatus_query = true\n", None),
    // A lag of status answers the bank never gives: refused until the
    // ablation below needed it loaded.
    (
        "summary = \"s\"\n[bank]\nstatus_lag_ms = 10000\n",
        Some(("bank.status_lag_ms = 10000", "f.toml:3:17", "status_query = true")),
    ),
    ("summary = \"s\"\n[bank]\nstatus_query = true\nstatus_lag_ms = 10000\n", None),
    // Counting by payment or by claim: only where the bank answers.
    (
        "summary = \"s\"\n[bank]\nstatus_by = \"payment\"\n",
        Some(("bank.status_by = \"payment\"", "f.toml:3:13", "status_query = true")),
    ),
    ("summary = \"s\"\n[bank]\nstatus_by = \"claim\"\n", None),
    ("summary = \"s\"\n[bank]\nstatus_query = true\nstatus_by = \"payment\"\n", None),
    // A bank that refuses refunds beyond what is paid: only a compensation
    // job asks it for one.
    (
        "summary = \"s\"\n[bank]\nrefuse_refund_beyond_paid = true\n",
        Some(("bank.refuse_refund_beyond_paid = true", "f.toml:3:29", "[client.compensate]")),
    ),
    ("summary = \"s\"\n[bank]\nrefuse_refund_beyond_paid = false\n", None),
    (
        "summary = \"s\"\n[client.compensate]\nrefund_when = \"timeout\"\n[bank]\nrefuse_refund_beyond_paid = true\n",
        None,
    ),
    // A query before a re-send, to a bank that answers none: refused until
    // an ablation bank.status_query=false of a file that asks needed it.
    (
        "summary = \"s\"\n[service]\nquery_before_retry = true\n",
        Some(("service.query_before_retry = true", "f.toml:3:22", "status_query = true")),
    ),
    ("summary = \"s\"\n[service]\nquery_before_retry = true\n[bank]\nstatus_query = true\n", None),
    ("summary = \"s\"\n[service]\nquery_before_retry = false\n", None),
    // One bank attempt is told first: even an answering bank is never asked.
    (
        "summary = \"s\"\n[service]\nbank_max_attempts = 1\nquery_before_retry = true\n",
        Some(("service.query_before_retry = true", "f.toml:4:22", "bank_max_attempts = 3")),
    ),
    // A promise to recover from overload where no load is reported.
    (
        "summary = \"s\"\n[service]\nrecover_ms = 30000\n",
        Some(("service.recover_ms = 30000", "f.toml:3:14", "workers = 4")),
    ),
    ("summary = \"s\"\n[service]\nworkers = 2\nrecover_ms = 30000\n", None),
    // Expired work is dropped from a queue: a queue of 0 holds none, with
    // workers or without (a service without them has its 64 slots, and a
    // queue behind those).
    (
        "summary = \"s\"\n[service]\nworkers = 2\ndrop_expired = true\n",
        Some(("service.drop_expired = true", "f.toml:4:16", "queue_max = 16")),
    ),
    ("summary = \"s\"\n[service]\nqueue_max = 16\ndrop_expired = true\n", None),
    (
        "summary = \"s\"\n[client]\nkey_bucket_ms = 500\n",
        Some(("client.key_bucket_ms = 500", "f.toml:3:17", "client.key = \"timestamp\"")),
    ),
    (
        "summary = \"s\"\n[bank]\naccepts_key = false\nkey_retention_ms = 60000\n",
        Some(("bank.key_retention_ms = 60000", "f.toml:4:20", "let a key reach the bank")),
    ),
    (
        "summary = \"s\"\n[client.retry]\npolicy = \"none\"\nwindow_ms = 60000\n",
        Some(("client.retry.window_ms = 60000", "f.toml:4:13", "policy = \"fixed\"")),
    ),
    // HTTP: a PUT mode with no request that PUTs.
    (
        "summary = \"s\"\nmodel = \"http\"\n[server]\nput = \"add\"\n[[requests]]\nmethod = \"post\"\nvalue = 5\n",
        Some(("server.put = \"add\"", "f.toml:4:7", "method = \"put\"")),
    ),
    // An edit writes with a PUT: the mode is read.
    (
        "summary = \"s\"\nmodel = \"http\"\n[server]\nput = \"add\"\n[[resources]]\nid = 1\n[[requests]]\nmethod = \"edit\"\nresource = 1\nvalue = 5\n",
        None,
    ),
    (
        "summary = \"s\"\nmodel = \"http\"\n[client]\ndelete_404 = \"failed\"\n",
        Some(("client.delete_404 = \"failed\"", "f.toml:4:14", "method = \"delete\"")),
    ),
    (
        "summary = \"s\"\nmodel = \"http\"\n[server]\nidempotency_keys = false\nkey_retention_ms = 1000\n",
        Some(("server.key_retention_ms = 1000", "f.toml:5:20", "idempotency_keys = true")),
    ),
    // Messaging: an inbox's cleanup beside a handler without an inbox.
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[consumer]\nhandler = \"effect\"\ninbox_retention_ms = 60000\n",
        Some(("consumer.inbox_retention_ms = 60000", "f.toml:5:22", "handler = \"inbox-same-tx\"")),
    ),
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[broker]\nat_max_deliveries = \"discard\"\n",
        Some(("broker.at_max_deliveries = \"discard\"", "f.toml:4:21", "max_deliveries = 5")),
    ),
    // The chain's relay opens no broker transaction, whatever the settings.
    (
        "summary = \"s\"\nmodel = \"chain\"\n[broker]\ntransaction_timeout_ms = 1000\n",
        Some(("broker.transaction_timeout_ms = 1000", "f.toml:4:26", "messaging-model scenario")),
    ),
    (
        "summary = \"s\"\nmodel = \"chain\"\n[outbox]\nwrite = \"outbox\"\n[broker]\nproducer_id_expiration_ms = 86400000\n",
        Some(("broker.producer_id_expiration_ms = 86400000", "f.toml:6:29", "never publishes with a producer id")),
    ),
    // An expiry of 0 is "never": what the chain does anyway.
    ("summary = \"s\"\nmodel = \"chain\"\n[broker]\nproducer_id_expiration_ms = 0\n", None),
    // The messaging model's producer reads both, each in the design that
    // has what it times: a broker transaction, a relay's producer id.
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"broker-transaction\"\n[broker]\ntransaction_timeout_ms = 1000\n",
        None,
    ),
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"outbox\"\nidempotence = true\n[broker]\nproducer_id_expiration_ms = 86400000\n",
        None,
    ),
    // Idempotence left at Kafka's default is off above five in flight: the
    // text says so, not that the file set it false.
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"outbox\"\nidempotence = \"kafka-default\"\nmax_in_flight = 6\n[broker]\nproducer_id_expiration_ms = 86400000\n",
        Some(("broker.producer_id_expiration_ms = 86400000", "f.toml:8:29", "producer.idempotence = \"kafka-default\" is off here: producer.max_in_flight = 6")),
    ),
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"outbox\"\n[broker]\ntransaction_timeout_ms = 1000\n",
        Some(("broker.transaction_timeout_ms = 1000", "f.toml:6:26", "write = \"broker-transaction\"")),
    ),
    // The outbox relay publishes until the broker confirms: it counts no
    // attempts (the default write is the outbox). Every other write mode
    // gives up, or aborts, after the last.
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\npublish_max_attempts = 5\n",
        Some(("producer.publish_max_attempts = 5", "f.toml:4:24", "write = \"state-first\"")),
    ),
    ("summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"state-first\"\npublish_max_attempts = 5\n", None),
    ("summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"event-first\"\npublish_max_attempts = 5\n", None),
    ("summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"broker-transaction\"\npublish_max_attempts = 5\n", None),
    // Only the outbox relay keeps publishes in flight; a dual write or a
    // broker transaction has one publish per request, whatever it says.
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"state-first\"\nmax_in_flight = 5\n",
        Some(("producer.max_in_flight = 5", "f.toml:5:17", "write = \"outbox\"")),
    ),
    ("summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"state-first\"\nmax_in_flight = 1\n", None),
    ("summary = \"s\"\nmodel = \"messaging\"\n[producer]\nmax_in_flight = 5\n", None),
    // Only an idempotent, non-transactional relay's library gives a batch
    // up at the delivery timeout: a plain relay's resends are new copies
    // anyway, a transactional one's expired batch aborts its transaction.
    ("summary = \"s\"\nmodel = \"messaging\"\n[producer]\nidempotence = true\ndelivery_timeout_ms = 60000\n", None),
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\ndelivery_timeout_ms = 60000\n",
        Some(("producer.delivery_timeout_ms = 60000", "f.toml:4:23", "idempotence = true")),
    ),
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nidempotence = \"kafka-default\"\nmax_in_flight = 6\ndelivery_timeout_ms = 60000\n",
        Some(("producer.delivery_timeout_ms = 60000", "f.toml:6:23", "max_in_flight = 5 or less")),
    ),
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\ntransactional_id = true\ndelivery_timeout_ms = 60000\n",
        Some(("producer.delivery_timeout_ms = 60000", "f.toml:5:23", "without transactional_id")),
    ),
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"state-first\"\ndelivery_timeout_ms = 60000\n",
        Some(("producer.delivery_timeout_ms = 60000", "f.toml:5:23", "write = \"outbox\"")),
    ),
    // The broker's dedup window drops plain publishes only, never those of
    // a broker transaction.
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"broker-transaction\"\n[broker]\ndedup_window_ms = 60000\n",
        Some(("broker.dedup_window_ms = 60000", "f.toml:6:19", "write = \"outbox\"")),
    ),
    ("summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"broker-transaction\"\n[broker]\ndedup_window_ms = 0\n", None),
    ("summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"state-first\"\n[broker]\ndedup_window_ms = 60000\n", None),
    // A consumer that acks after the commit sends each transaction once:
    // the broker still holds the message (the default ack), and its
    // lease redelivers it.
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[consumer]\ntx_max_attempts = 3\n",
        Some(("consumer.tx_max_attempts = 3", "f.toml:4:19", "ack = \"checked-before-commit\"")),
    ),
    (
        "summary = \"s\"\nmodel = \"chain\"\n[accounting]\nack = \"after-commit\"\ntx_max_attempts = 3\n",
        Some(("accounting.tx_max_attempts = 3", "f.toml:5:19", "ack = \"checked-before-commit\"")),
    ),
    ("summary = \"s\"\nmodel = \"messaging\"\n[consumer]\ntx_max_attempts = 1\n", None),
    ("summary = \"s\"\nmodel = \"messaging\"\n[consumer]\nack = \"before-commit\"\ntx_max_attempts = 3\n", None),
    ("summary = \"s\"\nmodel = \"messaging\"\n[consumer]\nack = \"checked-before-commit\"\ntx_max_attempts = 3\n", None),
    // A consumer that acks on receipt holds no lease to renew.
    (
        "summary = \"s\"\nmodel = \"messaging\"\n[consumer]\nack = \"before-commit\"\nlease_renewal_ms = 10000\n",
        Some(("consumer.lease_renewal_ms = 10000", "f.toml:5:20", "ack = \"after-commit\"")),
    ),
    ("summary = \"s\"\nmodel = \"messaging\"\n[consumer]\nack = \"before-commit\"\nlease_renewal_ms = 0\n", None),
    ("summary = \"s\"\nmodel = \"messaging\"\n[consumer]\nack = \"checked-before-commit\"\nlease_renewal_ms = 10000\n", None),
    // The network: durations of a random partition that is never drawn.
    (
        "summary = \"s\"\n[network]\nrandom_partition_ms_max = 5000\n",
        Some(("network.random_partition_ms_max = 5000", "f.toml:3:27", "random_partition_per_mille")),
    ),
];

#[test]
fn a_setting_the_file_writes_without_effect_is_a_warning_at_its_line_with_the_fix() {
    for (text, want) in WRITTEN {
        let s = load_text("f.toml", text, &[]);
        let found = unread(&s);
        match want {
            None => assert!(found.is_empty(), "{text}: {found:?}"),
            Some((setting, at, fix)) => {
                assert_eq!(found.len(), 1, "{text}: {found:?}");
                let t = found[0];
                assert!(
                    t.starts_with(&format!("{at}: {setting} has no effect: ")) && t.contains(fix),
                    "{text}: {t}"
                );
            }
        }
    }
}

/// A holding design with a lease and a fingerprint check, whose
/// protection removes the key table.
const KEYED: &str = r#"summary = "keyed"

[expect]
verdict = "holds"
protections = ["service.idempotency=none"]

[service]
idempotency = "claim-same-tx"
lease_ms = 60000
concurrent = "wait"
fingerprint_check = true
"#;

#[test]
fn a_setting_that_lost_its_effect_to_a_set_or_an_ablation_is_silent() {
    // As written, every setting is read.
    assert!(unread(&load_text("k.toml", KEYED, &[])).is_empty());
    // `check --set`, a sweep's variant: the file was meaningful as written.
    let variant = load_text("k.toml", KEYED, &["service.idempotency=none"]);
    assert!(unread(&variant).is_empty(), "{:?}", unread(&variant));
    // The verify command's protection removed.
    let s = load_text("k.toml", KEYED, &[]);
    let ablated = s
        .ablated("k.toml", &s.protections()[0])
        .expect("the protection can be removed");
    assert!(unread(&ablated).is_empty(), "{:?}", unread(&ablated));
    // A table replaced whole by a --set counts as a variant too.
    let whole = load_text(
        "k.toml",
        KEYED,
        &["service={idempotency = \"none\", lease_ms = 60000}"],
    );
    assert!(unread(&whole).is_empty(), "{:?}", unread(&whole));
    // Switching the bank's status queries off, in a file whose bank lags:
    // a variant (it used to be refused, exit 2), and silent.
    let lagging = "summary = \"s\"\n[bank]\nstatus_query = true\nstatus_lag_ms = 10000\n";
    let off = load_text("l.toml", lagging, &["bank.status_query=false"]);
    assert!(unread(&off).is_empty(), "{:?}", unread(&off));
    // So are the queries before a re-send: the service then re-sends
    // without asking, the run the ablation asks about, and it pays twice.
    let blind = support::load("payment-query-before-retry", &["bank.status_query=false"]);
    assert!(unread(&blind).is_empty(), "{:?}", unread(&blind));
    let sum = support::sweep(&blind, 300);
    assert!(sum.first_failure.is_some(), "the queries were load-bearing");
    let unasked = support::load(
        "payment-query-before-retry",
        &[
            "bank.status_query=false",
            "service.query_before_retry=false",
            "service.query_on_recovery=false",
        ],
    );
    assert_eq!(sum, support::sweep(&unasked, 300), "no query is made");
    // And a service made to work without a capacity, whose file promises
    // a recovery.
    let unbounded = support::load("payment-overload-metastable", &["service.workers=0"]);
    assert!(unread(&unbounded).is_empty(), "{:?}", unread(&unbounded));
    // The messaging write mode and ack, switched by a variant: a broker
    // transaction's attempts under an outbox relay, a renewing consumer
    // made to ack on receipt.
    for (name, set) in [
        ("messaging-broker-transaction", "producer.write=outbox"),
        ("messaging-lease-renewal-lost", "consumer.ack=before-commit"),
    ] {
        let variant = support::load(name, &[set]);
        assert!(
            unread(&variant).is_empty(),
            "{name}: {:?}",
            unread(&variant)
        );
    }
}

/// Reading the state from a bank that gives none is no design, so a
/// variant that makes one is still refused: at the file's line, saying
/// which `--set` made it, with the fix; in `check`, in a sweep (before any
/// variant runs), and in `verify` at the protection that would make it.
#[test]
fn a_variant_the_model_cannot_build_is_refused_naming_the_set_that_made_it() {
    use models::scenario::Override;
    for (name, at, what) in [
        (
            "payment-state-not-action",
            ":40:8: ",
            "\"state instead of action\" reads what is paid",
        ),
        (
            "payment-reconcile-at-bank",
            ":44:7: ",
            "the job is to ask the bank",
        ),
    ] {
        let path = support::scenario_dir().join(format!("{name}.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.to_string_lossy().to_string();
        let set = Override::parse("bank.status_query=false").unwrap();
        let Err(e) = models::Scenario::load_with(&file, &text, &[set]) else {
            panic!("{name} without status queries loads");
        };
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("error: {file}{at}{what}"))
                && shown.contains("(the file as written loads: --set bank.status_query=false made this combination)")
                && shown.contains("help: leave out --set bank.status_query=false: the model cannot build this variant (as a file it would need: add status_query = true to [bank])"),
            "{shown}"
        );
    }
    let (_, err) = run_case(
        &case(
            "a sweep with a variant the model cannot build",
            &[
                "sweep",
                "payment-state-not-action",
                "--runs",
                "2",
                "--set",
                "bank.status_query=false,true",
            ],
        )
        .code(2)
        .err("error: variant 1 of 2 (bank.status_query=false): ")
        .err("made this combination"),
    );
    assert!(!err.contains("variant 2 of 2"), "{err}");
    // A protection that makes such a variant names the protection's line.
    let text =
        std::fs::read_to_string(support::scenario_dir().join("payment-state-not-action.toml"))
            .unwrap()
            .replace(
                "{ set = \"service.mode=state\", breaks = \"no-duplicate-effect\" },",
                "\"bank.status_query=false\",",
            );
    let e = support::load_error("p.toml", &text);
    assert_eq!((e.line, e.column), (20, 3), "{e}");
    assert!(
        e.message
            .starts_with("the protection `bank.status_query=false` cannot be removed: ")
            && e.help
                .as_deref()
                .is_some_and(|h| h.contains("name another protection")),
        "{e}"
    );
}

#[test]
fn a_set_that_writes_a_setting_the_file_leaves_without_effect_is_told_at_the_set() {
    let text = "summary = \"s\"\n[service]\nidempotency = \"none\"\n";
    let s = load_text("n.toml", text, &["service.lease_ms=5000"]);
    let found = unread(&s);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("--set service.lease_ms=5000: service.lease_ms = 5000 has no effect"),
        "{}",
        found[0]
    );
    // A file-written key keeps its line when an unrelated --set moves text.
    let text = "summary = \"s\"\n[service]\nidempotency = \"none\"\nlease_ms = 5000\n";
    let s = load_text("n.toml", text, &["client.timeout_ms=20000"]);
    assert!(
        unread(&s)[0].starts_with("n.toml:4:12: "),
        "{:?}",
        unread(&s)
    );
}

#[test]
fn a_setting_without_effect_shows_in_check_and_its_json_and_changes_no_exit_code() {
    let dir = support::scratch("settings_without_effect/unread");
    let file = dir.join("lease.toml");
    std::fs::write(
        &file,
        "summary = \"s\"\n[service]\nidempotency = \"none\"\nlease_ms = 5000\n",
    )
    .unwrap();
    let f = file.to_string_lossy().to_string();
    // Messages show a path under the checkout relative to it.
    let shown = idemsim::catalog::display_path(&file);
    let at = format!("{shown}:4:12: service.lease_ms = 5000 has no effect");
    let (out, _) = run_case(
        &case(
            "a dead lease in check",
            &["check", &f, "--runs", "3", "--jobs", "1"],
        )
        .out(&format!("design warning (setting-without-effect): {at}"))
        .out("no run reads it: the runs are the same with this setting or without it"),
    );
    assert!(!out.contains("shows it failing"), "{out}");
    let (out, _) = run_case(&case(
        "a dead lease in check --json",
        &["check", &f, "--runs", "3", "--jobs", "1", "--json"],
    ));
    let summary: serde_json::Value = out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["data"].get("hazards").is_some())
        .expect("a summary with design warnings");
    let h = &summary["data"]["hazards"][0];
    assert_eq!(h["id"], RULE);
    assert!(h["text"].as_str().unwrap().starts_with(&at), "{h}");
    assert_eq!(h["situation"], serde_json::Value::Null);
    // The ablated file says nothing.
    let (out, err) = run_case(&case(
        "a lease made dead by --set",
        &[
            "check",
            "payment-lease-covers-bank-call",
            "--runs",
            "3",
            "--jobs",
            "1",
            "--set",
            "service.idempotency=none",
        ],
    ));
    assert!(!out.contains(RULE) && !err.contains(RULE), "{out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
