//! Entries that could never fire are refused: a link or a loop that names
//! nothing, a link or a kind no message crosses (every send of every built-in
//! scenario crosses a declared link), sends the settings never make, an ack
//! result fault where consumers ack plainly, a partition nothing crosses;
//! and a variant keeps its file's fault entries.

use super::*;

#[test]
fn link_entries_that_name_nothing_or_a_loop_are_refused() {
    refuses(
        "summary = \"x\"\n",
        &[
            (
                "[[network.links]]\nloss_per_mille = 5\n",
                "neither `from` nor `to` nor `kinds` changes every link",
                "set these values in [network]",
            ),
            (
                "[[network.links]]\nfrom = \"bank\"\nto = \"bank\"\nkinds = [\"transfer\"]\n",
                "a link from \"bank\" to itself",
                "two different actors",
            ),
            (
                "[[network.links]]\nkinds = [\"transfr\"]\nduplicate_per_mille = 0\n",
                "unknown message kind \"transfr\"",
                "did you mean \"transfer\"?",
            ),
            (
                // Another model's kind: accepted once, a fault that never fired.
                "[[network.links]]\nkinds = [\"publish\"]\nloss_per_mille = 1000\n",
                "the payment model sends no \"publish\" messages",
                "the payment model's message kinds are pay, pay-reply, transfer",
            ),
            (
                "[[network.links]]\nto = \"bnak\"\nloss_per_mille = 5\n",
                "no actor named \"bnak\"",
                "did you mean \"bank\"?",
            ),
        ],
    );
}

/// The kinds each actor declares it sends to whom ([`models::core::Ends`])
/// cover all the traffic of every built-in scenario: a declaration that left
/// a send out would refuse a user's valid `[[network.links]]` entry.
#[test]
fn every_send_of_every_built_in_scenario_crosses_a_link_its_actors_declare() {
    let kinds = models::registry::message_kinds();
    let mut sends = 0;
    for p in support::scenario_files() {
        let s = load(&support::name_of(&p), &[]);
        let ends: Vec<_> = s.system.nodes.iter().map(|n| n.ends()).collect();
        let names = &s.system.world().actor_names;
        for seed in 0..6 {
            for e in trace_of(&s, seed).0 {
                if let TraceKind::Send { from, to, msg, .. } = &e.kind {
                    let kind = kinds[msg.kind() as usize];
                    assert!(
                        models::core::wire::carries(
                            &ends[*from as usize],
                            &ends[*to as usize],
                            kind
                        ),
                        "{}: seed {seed}: {} sent \"{kind}\" to {}, which its Ends do not declare",
                        s.name,
                        names[*from as usize],
                        names[*to as usize]
                    );
                    sends += 1;
                }
            }
        }
    }
    assert!(sends > 10_000, "the scenarios send plenty: {sends}");
}

#[test]
fn link_entries_no_message_ever_crosses_are_refused() {
    refuses(
        "summary = \"x\"\n",
        &[
            (
                "[[network.links]]\nfrom = \"client\"\nto = \"service\"\nkinds = [\"transfer\"]\nloss_per_mille = 500\n",
                "no \"transfer\" message ever travels from \"client\" to \"service\": a fault for it would never fire",
                "\"transfer\" travels service → bank",
            ),
            (
                // The second kind is the wrong one, and the error says which.
                "[[network.links]]\nfrom = \"service\"\nkinds = [\"transfer\", \"transfer-done\"]\nloss_per_mille = 500\n",
                "no \"transfer-done\" message ever travels out of \"service\"",
                "\"transfer-done\" travels bank → service",
            ),
            (
                // Nothing sends a status query with the default settings.
                "[[network.links]]\nto = \"bank\"\nkinds = [\"status-query\"]\nloss_per_mille = 500\n",
                "no \"status-query\" message ever travels into \"bank\"",
                "no actor sends \"status-query\" with this scenario's settings",
            ),
            (
                // Nor a status reply: a reply travels only where its request does.
                "[[network.links]]\nto = \"client\"\nkinds = [\"status-reply\"]\nloss_per_mille = 500\n",
                "no \"status-reply\" message ever travels into \"client\"",
                "no actor sends \"status-reply\" with this scenario's settings",
            ),
        ],
    );
    // The producer talks to the broker only, and the consumers hear from it.
    refuses(
        "summary = \"x\"\nmodel = \"messaging\"\n",
        &[(
            "[[network.links]]\nfrom = \"producer\"\nto = \"consumer-1\"\nloss_per_mille = 500\n",
            "no message ever travels from \"producer\" to \"consumer-1\": this entry would change nothing",
            "name a link that carries messages: producer → broker, broker → consumer-1, consumer-db → consumer-1",
        )],
    );
    // The same entries on the links that carry those kinds load.
    for set in [
        "network.links=[{from=\"client\", to=\"service\", loss_per_mille=500}]",
        "network.links=[{from=\"service\", to=\"bank\", kinds=[\"transfer\"], loss_per_mille=500}]",
    ] {
        load("payment-stable-key", &[set]);
    }
    for set in [
        "network.links=[{from=\"service\", kinds=[\"transfer\", \"status-query\"], loss_per_mille=500}]",
        "network.links=[{to=\"service\", kinds=[\"status-reply\"], loss_per_mille=500}]",
    ] {
        load("payment-query-before-retry", &[set]);
    }
    // In the chain the booking service is the payment service and the
    // relay's producer at once: the bank answers it, the broker confirms to it.
    load(
        "chain-outbox-inbox",
        &["network.links=[{from=\"bank\", to=\"service\", loss_per_mille=300}, {from=\"broker\", to=\"service\", kinds=[\"publish-ack\"], loss_per_mille=300}]"],
    );
}

/// Whether a link carries a kind depends on the settings, not only on the
/// kinds of actor: a status query only where something asks one, its reply
/// only back along that link, a lease extension only from a consumer that
/// renews, a method only where a request uses it.
#[test]
fn link_entries_for_sends_the_settings_never_make_are_refused() {
    let entry = |from: &str, to: &str, kind: &str| {
        format!("network.links=[{{from=\"{from}\", to=\"{to}\", kinds=[\"{kind}\"], loss_per_mille=500}}]")
    };
    // `name` with its text edited where `name` holds `from=>to`, as a file of
    // the user's: a `--set` of a setting would be a variant, which keeps the
    // entries its file as written needs (see the next test).
    let refused = |name: &str, sets: &[&str], message: &str| {
        let path =
            support::scenario_dir().join(format!("{}.toml", name.split(':').next().unwrap()));
        let mut text = std::fs::read_to_string(&path).expect("catalog file");
        for edit in name.split(':').skip(1) {
            let (from, to) = edit.split_once("=>").expect("an edit is from=>to");
            assert!(text.contains(from), "{from} in {name}");
            text = text.replacen(from, to, 1);
        }
        let overrides: Vec<_> = sets
            .iter()
            .map(|s| models::scenario::Override::parse(s).expect("well-formed"))
            .collect();
        let Err(e) = models::Scenario::load_with(&path.to_string_lossy(), &text, &overrides) else {
            panic!("{name} {sets:?} loads");
        };
        assert!(e.to_string().contains(message), "{name} {sets:?}: {e}");
    };
    // The reconciliation job asks whom it is told to, and only that one answers it.
    let at_bank = "payment-reconcile-at-bank";
    load(at_bank, &[&entry("client", "bank", "status-query")]);
    load(at_bank, &[&entry("bank", "client", "status-reply")]);
    refused(
        at_bank,
        &[&entry("client", "service", "status-query")],
        "no \"status-query\" message ever travels from \"client\" to \"service\"",
    );
    refused(
        at_bank,
        &[&entry("service", "client", "status-reply")],
        "no \"status-reply\" message ever travels from \"service\" to \"client\"",
    );
    let asked_service = "payment-reconcile-asked-service";
    load(
        asked_service,
        &[&entry("client", "service", "status-query")],
    );
    load(
        asked_service,
        &[&entry("service", "client", "status-reply")],
    );
    refused(
        asked_service,
        &[&entry("client", "bank", "status-query")],
        "ever travels from \"client\" to \"bank\"",
    );
    // The service asks the bank only where a setting says so.
    let asks = entry("service", "bank", "status-query");
    load("payment-query-before-retry", &[&asks]);
    refused(
        "payment-query-before-retry:query_before_retry = true=>query_before_retry = false\nquery_on_recovery = false",
        &[&asks],
        "ever travels from \"service\" to \"bank\"",
    );
    // A bank without status queries ignores them: the service's setting takes no effect.
    refused(
        "payment-query-before-retry:query_before_retry = true=>query_before_retry = false:status_query = true=>status_query = false",
        &[&asks],
        "ever travels from \"service\" to \"bank\"",
    );
    load(
        "payment-query-before-retry",
        &[
            "service.query_before_retry=false",
            "service.query_on_recovery=true",
            &asks,
        ],
    );
    // A consumer renews leases only with a renewal period.
    let renews = entry("consumer-1", "broker", "extend");
    load("messaging-lease-renewal-lost", &[&renews]);
    refused(
        "messaging-lease-renewal-lost:lease_renewal_ms = 10000=>lease_renewal_ms = 0",
        &[&renews],
        "no \"extend\" message ever travels",
    );
    refused(
        "messaging-outbox-inbox",
        &[&renews],
        "no \"extend\" message ever travels",
    );
    // Nor with one, where it acks on receipt: an acked delivery has no lease.
    refused(
        "messaging-lease-renewal-lost:ack = \"after-commit\"=>ack = \"before-commit\"",
        &[&renews],
        "no \"extend\" message ever travels",
    );
    // An outbox relay publishes plainly; a broker transaction is another set of kinds.
    refused(
        "messaging-outbox-inbox",
        &[&entry("producer", "broker", "tx-publish")],
        "no \"tx-publish\" message ever travels",
    );
    refused(
        "messaging-outbox-inbox",
        &[&entry("broker", "producer", "tx-ended")],
        "no \"tx-ended\" message ever travels",
    );
    load(
        "messaging-outbox-inbox",
        &[&entry("broker", "producer", "publish-ack")],
    );
    // Requests that only POST send no DELETE, and get no response to one.
    load("http-post-with-key", &[&entry("client", "server", "post")]);
    refused(
        "http-post-with-key",
        &[&entry("client", "server", "delete")],
        "no \"delete\" message ever travels",
    );
}

/// The broker answers an ack with its result only to a consumer that asks
/// for one (`ack = "checked-before-commit"`): one that acks plainly gets no
/// `ack-result`, so a fault entry for it would never fire, though the kind
/// travels in other designs. A program in the consumer's place may ask
/// (`"result": true`), so its links keep the kind.
#[test]
fn an_ack_result_fault_where_consumers_ack_plainly_is_refused() {
    let base = "summary = \"x\"\nmodel = \"messaging\"\n[broker]\nconsumers = 2\n";
    let refusal = "no \"ack-result\" message ever travels";
    let help = "no actor sends \"ack-result\" with this scenario's settings";
    for ack in ["after-commit", "before-commit"] {
        refuses(
            &format!("{base}[consumer]\nack = \"{ack}\"\n"),
            &[
                (
                    "[[network.links]]\nkinds = [\"ack-result\"]\nloss_per_mille = 100\n",
                    &format!("{refusal} over any link"),
                    help,
                ),
                (
                    "[[network.links]]\nfrom = \"broker\"\nto = \"consumer-2\"\nkinds = [\"deliver\", \"ack-result\"]\nloss_per_mille = 100\n",
                    &format!("{refusal} from \"broker\" to \"consumer-2\""),
                    help,
                ),
            ],
        );
    }
    let checked = format!(
        "{base}[consumer]\nack = \"checked-before-commit\"\n[[network.links]]\nfrom = \"broker\"\nto = \"consumer-2\"\nkinds = [\"ack-result\"]\nloss_per_mille = 100\n"
    );
    load_text("checked.toml", &checked, &[]);
    // Its ablation to a plain ack is a variant of a file that asks: it loads.
    load_text("checked.toml", &checked, &["consumer.ack=after-commit"]);
    load("messaging-eod-checked-ack", &["consumer.ack=after-commit"]);
    // A program may ask for the result of any ack it sends.
    support::load_path(
        "examples/python/external-consumer-dedup-in-tx.toml",
        &["network.links=[{from=\"broker\", to=\"consumer-1\", kinds=[\"ack-result\"], loss_per_mille=100}]"],
    );
}

/// A variant of a file (`--set`, or a protection removed by `verify`) keeps
/// the fault entries the file as written needs, even where its settings no
/// longer send what they name: removing the service's status queries is the
/// point of the ablation, and must not make the file fail to load.
#[test]
fn a_variant_keeps_the_fault_entries_of_its_file() {
    let path = support::scenario_dir().join("payment-query-before-retry.toml");
    let text = std::fs::read_to_string(&path)
        .expect("catalog file")
        .replace(
            "[crashes.service]",
            "[[network.links]]\nfrom = \"service\"\nto = \"bank\"\nkinds = [\"status-query\"]\nloss_per_mille = 300\n\n[crashes.service]",
        );
    let quiet = [
        "service.query_before_retry=false",
        "service.query_on_recovery=false",
    ];
    // As written it loads, and so does its ablation (the protection loads
    // as the file does) and a --set of the same.
    let s = load_text("q.toml", &text, &[]);
    assert!(!s.protections().is_empty());
    load_text("q.toml", &text, &quiet);
    // A new entry the variant adds for what neither sends is still refused.
    let overrides: Vec<_> = [quiet[0], quiet[1], "network.links=[{from=\"client\", to=\"bank\", kinds=[\"status-query\"], loss_per_mille=500}]"]
        .iter()
        .map(|s| models::scenario::Override::parse(s).expect("well-formed"))
        .collect();
    let Err(e) = models::Scenario::load_with("q.toml", &text, &overrides) else {
        panic!("an idle entry of the variant's own loads");
    };
    assert!(
        e.to_string()
            .contains("ever travels from \"client\" to \"bank\""),
        "{e}"
    );
}

/// A partition between two actors that never talk cuts nothing: refused
/// like a links entry for an idle link, naming the links that do carry
/// messages to or from them.
#[test]
fn a_partition_no_message_ever_crosses_is_refused() {
    let base = "summary = \"x\"\nmodel = \"messaging\"\n[run]\nfault_phase_ms = 120000\n";
    refuses(
        base,
        &[
            (
                "[[network.partitions]]\nbetween = [\"producer\", \"consumer-1\"]\nstart_ms = 0\nend_ms = 1000\n",
                "no message ever travels between \"producer\" and \"consumer-1\": this partition would cut nothing",
                "cut a link that carries messages: producer → broker, broker → producer, broker → consumer-1",
            ),
            (
                // The database answers the consumer only.
                "[[network.partitions]]\nbetween = [\"consumer-db\", \"broker\"]\none_way = true\nstart_ms = 0\nend_ms = 1000\n",
                "no message ever travels from \"consumer-db\" to \"broker\"",
                "consumer-db → consumer-1",
            ),
        ],
    );
    // One way that does carry messages, and both ways of a busy pair, load.
    for set in [
        "network.partitions=[{between=[\"broker\", \"producer\"], one_way=true, start_ms=0, end_ms=1000}]",
        "network.partitions=[{between=[\"consumer-1\", \"consumer-db\"], start_ms=0, end_ms=1000}]",
    ] {
        load("messaging-outbox-inbox", &[set]);
    }
}
