//! docs/fidelity.md, the table of the real mechanisms idemsim names: every
//! row is pinned by scenarios that exist (and so run in `idemsim verify`,
//! which runs the whole catalog), and every real system a setting, a preset,
//! a situation or an invariant names has a row.

use crate::support::docs::backticked;
use crate::support::root;

/// One row of the table: its mechanism cell and its conformance cell.
struct Row {
    mechanism: String,
    modelled_by: String,
    conformance: String,
}

fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(root().join("docs/fidelity.md")).unwrap();
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 5, "a fidelity row has five cells: {line}");
        if cells[0] == "mechanism" || cells[0].starts_with("---") {
            continue;
        }
        // The mechanism cell starts with its anchor: `<a id="..."></a>Kafka: ...`.
        let mechanism = cells[0].rsplit("</a>").next().unwrap_or(cells[0]);
        rows.push(Row {
            mechanism: mechanism.to_string(),
            modelled_by: cells[2].to_string(),
            conformance: cells[4].to_string(),
        });
    }
    rows
}

/// The names `idemsim list` lists without user folders: the shipped catalog.
fn catalog() -> Vec<&'static str> {
    idemsim::catalog::BUILT_IN.iter().map(|(n, _)| *n).collect()
}

/// The scenarios a row's conformance cell names; what follows
/// "one side only:" is the reason, not a list of scenarios.
fn named(r: &Row) -> Vec<&str> {
    let listed = r.conformance.split("one side only:").next().unwrap_or("");
    backticked(listed)
}

/// The vendors whose names, as a word of a scenario's name, make the
/// scenario a claim about that vendor (`messaging-sqs-fifo-dedup-past`,
/// `payment-refund-unkeyed-at-stripe`): each such scenario pins some row.
const VENDOR_WORDS: &[&str] = &[
    "kafka",
    "sqs",
    "servicebus",
    "pubsub",
    "nats",
    "rabbitmq",
    "stripe",
    "aws",
];

/// Everything that makes the table untrue of the catalog: a name that is no
/// scenario, a row pinned from one side without its reason, a vendor's
/// scenario no row names. Empty when the page and the catalog agree.
fn problems(rows: &[Row], catalog: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        // A row no scenario can pin says so, and why: `none (not modelled)`.
        if r.conformance.starts_with("none") {
            continue;
        }
        let names = named(r);
        if names.is_empty() {
            out.push(format!(
                "`{}`: a row names its scenarios, or says `none (why)`",
                r.mechanism
            ));
        }
        for name in &names {
            if !catalog.contains(name) {
                out.push(format!(
                    "`{}` names `{name}`, which is no scenario of the catalog",
                    r.mechanism
                ));
            }
        }
        out.extend(sides_problem(r, &names, catalog));
    }
    for name in catalog {
        let vendor = name.split('-').any(|w| VENDOR_WORDS.contains(&w));
        if vendor && !rows.iter().any(|r| named(r).contains(name)) {
            out.push(format!(
                "`{name}` names a vendor, and no row of docs/fidelity.md names it: add it to its row's conformance cell"
            ));
        }
    }
    out
}

/// A row pins its limit from both sides: two scenarios at least, or one and
/// the words "one side only" with the reason no second scenario can show
/// the other side (a reason, not a shrug: a dozen words at least).
fn sides_problem(r: &Row, names: &[&str], catalog: &[&str]) -> Option<String> {
    let scenarios = names.iter().filter(|n| catalog.contains(n)).count();
    if scenarios >= 2 {
        return None;
    }
    let why = r.conformance.split("one side only:").nth(1).unwrap_or("");
    (why.split_whitespace().count() < 12).then(|| format!(
        "`{}` names {scenarios} scenario(s): name one on each side of its limit (inside and past it, with the mechanism and without), or write `; one side only: <why>`",
        r.mechanism
    ))
}

#[test]
fn every_fidelity_row_names_conformance_scenarios_that_exist_or_says_why_not() {
    let rows = rows();
    assert!(rows.len() >= 30, "only {} rows", rows.len());
    let catalog = catalog();
    let found = problems(&rows, &catalog);
    assert!(found.is_empty(), "{}", found.join("\n"));
    let mut pinned = 0;
    for name in rows.iter().flat_map(named) {
        // `verify` runs every catalog scenario; one without `[expect]` it cannot judge.
        let (_, text) = idemsim::catalog::BUILT_IN
            .iter()
            .find(|(n, _)| *n == name)
            .expect("checked above");
        let s = models::Scenario::load(name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            s.expect.is_some(),
            "{name} has no [expect]: verify cannot judge it"
        );
        pinned += 1;
    }
    assert!(pinned >= 60, "only {pinned} scenario references");
}

#[test]
fn a_wrong_name_a_one_sided_row_and_an_unnamed_vendor_scenario_are_caught() {
    let catalog = catalog();
    let good = rows();
    // The NATS MaxDeliver pair is named by its own row only.
    let planted = |from: &str, to: &str| -> Vec<Row> {
        let mut rows = rows();
        let r = rows
            .iter_mut()
            .find(|r| r.conformance.contains(from))
            .unwrap();
        r.conformance = r.conformance.replace(from, to);
        rows
    };
    assert!(problems(&good, &catalog).is_empty());
    // A misspelt name: no such scenario, and the real one is named nowhere.
    let found = problems(
        &planted(
            "`messaging-nats-max-deliver-past`",
            "`messaging-nats-max-delivery-past`",
        ),
        &catalog,
    );
    assert!(
        found
            .iter()
            .any(|p| p.contains("`messaging-nats-max-delivery-past`, which is no scenario")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.starts_with("`messaging-nats-max-deliver-past` names a vendor")),
        "{found:?}"
    );
    // A row left with one scenario and no reason.
    let r = good
        .iter()
        .find(|r| r.mechanism.starts_with("SQS: FIFO"))
        .unwrap();
    let one = Row {
        mechanism: r.mechanism.clone(),
        modelled_by: String::new(),
        conformance: "`messaging-sqs-fifo-dedup-inside`".to_string(),
    };
    let found = problems(&[one], &catalog);
    assert!(
        found.iter().any(|p| p.contains("names 1 scenario(s)")),
        "{found:?}"
    );
}

/// A real system's name as the code and docs write it, and the words the
/// mechanism cell of its rows starts with.
const SYSTEMS: &[(&str, &str)] = &[
    ("Kafka", "Kafka:"),
    ("SQS", "SQS:"),
    ("RabbitMQ", "RabbitMQ:"),
    ("NATS", "NATS JetStream:"),
    ("JetStream", "NATS JetStream:"),
    ("Pub/Sub", "Google Cloud Pub/Sub:"),
    ("Service Bus", "Azure Service Bus:"),
    ("Stripe", "Stripe:"),
    ("RFC 9110", "RFC 9110:"),
    ("AWS SDK", "AWS SDKs:"),
    ("Postgres", "PostgreSQL:"),
    ("Spring", "Spring for Apache Kafka:"),
    ("Powertools", "Powertools for AWS Lambda:"),
    ("gRPC", "gRPC:"),
];

/// The systems `texts` name that no row of `rows` starts with.
fn missing(texts: &[(String, String)], rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for (whence, text) in texts {
        for (needle, prefix) in SYSTEMS {
            if text.contains(needle) && !rows.iter().any(|r| r.mechanism.starts_with(prefix)) {
                out.push(format!(
                    "{whence} names {needle}, and no row starts with \"{prefix}\""
                ));
            }
        }
    }
    out
}

/// What the settings, presets, situations and invariants say.
fn named_texts() -> Vec<(String, String)> {
    let mut texts = Vec::new();
    for s in models::registry::situations() {
        texts.push((format!("situation {}", s.name), s.doc.to_string()));
    }
    for i in models::core::invariants::ALL {
        texts.push((format!("invariant {}", i.name), i.doc.to_string()));
    }
    for m in models::registry::MODELS {
        for p in m.presets() {
            let all: Vec<&str> = p.settings.iter().map(|s| s.source).collect();
            texts.push((p.written(), format!("{} {}", p.system, all.join(" "))));
        }
    }
    // The settings' reference: every key's row in the scenario format.
    let format = std::fs::read_to_string(root().join("docs/scenario-format.md")).unwrap();
    for (i, line) in format
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("| `"))
    {
        texts.push((
            format!("docs/scenario-format.md:{}", i + 1),
            line.to_string(),
        ));
    }
    texts
}

#[test]
fn every_real_system_a_setting_preset_or_situation_names_has_a_fidelity_row() {
    let rows = rows();
    let gaps = missing(&named_texts(), &rows);
    assert!(gaps.is_empty(), "{}", gaps.join("\n"));
    // The check can fail: a setting naming a system the table lacks is caught.
    let text = vec![("a new key".to_string(), "like SQS's redrive".to_string())];
    let without: Vec<Row> = rows
        .into_iter()
        .filter(|r| !r.mechanism.starts_with("SQS:"))
        .collect();
    assert_eq!(missing(&text, &without).len(), 1);
}

#[test]
fn every_preset_has_a_fidelity_row_that_names_it() {
    let rows = rows();
    for m in models::registry::MODELS {
        for p in m.presets() {
            let written = format!("\"{}\"", p.name);
            assert!(
                rows.iter().any(|r| r.modelled_by.contains(&written)),
                "no row of docs/fidelity.md names {} in its \"modelled by\" column",
                p.written()
            );
        }
    }
}
