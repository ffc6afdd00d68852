//! Formats users keep for years: every JSON record carries its `schema` and
//! validates against its shipped JSON Schema (docs/schemas/), seeds keep
//! their precision for readers that round numbers (`seeds.rs`), a variant's
//! trace names its overrides (`traces.rs`), and scenario and repro files
//! carry their `format` (`files.rs`), and a file in TOML 1.1's syntax means
//! what its 1.0 spelling means (`toml_syntax.rs`).

mod files;
pub(crate) mod schema;
mod seeds;
mod toml_syntax;
mod traces;

use crate::support::{outcome as stdout, root};
use idemsim::render::json::SCHEMAS;
use serde_json::Value;
use std::collections::BTreeSet;

/// Record types no test command prints, and why: their schemas are written
/// from docs/json-output.md alone.
const UNPRINTED: &[(&str, &str)] = &[
    ("interrupted", "only after Ctrl-C stops a sweep"),
    ("elided", "only in a trace of more than 200,000 entries"),
];

fn schema_file(kind: &str) -> Value {
    let path = root().join(format!("docs/schemas/{kind}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The errors of one JSON line against its type's schema file.
pub(crate) fn line_errors(line: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(line).expect("a JSON line");
    let kind = v["type"].as_str().expect("a type");
    let Some((_, version)) = SCHEMAS.iter().find(|(k, _)| *k == kind) else {
        return vec![format!(
            "record type `{kind}` is not in render::json::SCHEMAS"
        )];
    };
    let mut errors = Vec::new();
    if v["schema"] != *version {
        errors.push(format!("`{kind}`: schema {} is not {version}", v["schema"]));
    }
    let s = schema_file(kind);
    errors.extend(schema::errors(&s, &s, &v, kind));
    errors
}

#[test]
fn every_record_of_every_command_validates_against_its_shipped_schema() {
    let mut lines: Vec<String> = crate::json_doc::printed_lines().to_vec();
    let more: &[&[&str]] = &[
        &["models", "--json"],
        &["models", "--presets", "--json"],
        &[
            "bench",
            "--find",
            "payment-retry-without-key",
            "--find-budget",
            "200",
            "--json",
        ],
        &[
            "check",
            "payment-retry-without-key",
            "--strategy",
            "coverage",
            "--runs",
            "200",
            "--json",
        ],
        &[
            "replay",
            "payment-stable-key",
            "--seed",
            "3",
            "--set",
            "client.retry.max_attempts=2",
            "--format",
            "json",
        ],
    ];
    for args in more {
        lines.extend(stdout(args).lines().map(String::from));
    }
    let mut seen = BTreeSet::new();
    let mut errors = Vec::new();
    for line in lines.iter().filter(|l| l.starts_with('{')) {
        let v: Value = serde_json::from_str(line).expect("a JSON line");
        seen.insert(v["type"].as_str().expect("a type").to_string());
        errors.extend(line_errors(line));
    }
    errors.dedup();
    assert!(
        errors.is_empty(),
        "records that break their schema:\n{}",
        errors.join("\n")
    );
    for (kind, _) in SCHEMAS {
        if UNPRINTED.iter().any(|(k, _)| k == kind) {
            continue;
        }
        assert!(seen.contains(*kind), "no command above printed `{kind}`");
    }
}

#[test]
fn every_record_type_has_one_schema_file_and_each_file_a_type() {
    let types: BTreeSet<String> = SCHEMAS.iter().map(|(k, _)| k.to_string()).collect();
    let mut files = BTreeSet::new();
    for e in std::fs::read_dir(root().join("docs/schemas")).expect("docs/schemas") {
        let name = e
            .expect("an entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let kind = name
            .strip_suffix(".schema.json")
            .unwrap_or_else(|| panic!("docs/schemas/{name} is not TYPE.schema.json"));
        // The external program protocol's lines are no record of a
        // command's output: tests/it/external/schema.rs checks them.
        if kind.starts_with("protocol-") {
            continue;
        }
        files.insert(kind.to_string());
    }
    assert_eq!(types, files, "record types and schema files differ");
    for (kind, version) in SCHEMAS {
        let s = schema_file(kind);
        assert_eq!(
            s["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{kind}"
        );
        assert_eq!(s["properties"]["type"]["const"], *kind);
        assert_eq!(s["properties"]["schema"]["const"], *version, "{kind}");
    }
}

#[test]
fn a_record_that_breaks_its_schema_is_caught() {
    // The check above must be able to fail: a renamed field and a wrong version.
    let good =
        r#"{"type":"interrupted","schema":1,"data":{"variants_run":1,"variants":2,"note":"x"}}"#;
    assert!(line_errors(good).is_empty(), "{:?}", line_errors(good));
    let renamed = good.replace("variants_run", "variants_done");
    assert!(!line_errors(&renamed).is_empty());
    let bumped = good.replace("\"schema\":1", "\"schema\":2");
    assert!(!line_errors(&bumped).is_empty());
}
