//! docs/schemas/protocol-3.schema.json, the protocol's lines as a JSON
//! Schema: every line the example programs (examples/python/) and idemsim
//! exchange in a short run validates, in both directions; the schema is
//! closed (a line with a field it does not name is refused, so a field
//! idemsim starts sending fails here until the schema names it); and lines
//! that break the protocol are refused. The validator is the one the record
//! schemas use (`formats::schema`).

use crate::formats::schema::errors;
use crate::support::tools::{require, PYTHON3};
use crate::support::{idemsim, root, text, toml_files_in};
use serde_json::Value;
use std::collections::BTreeSet;

const SCHEMA: &str = "docs/schemas/protocol-3.schema.json";

/// Seeds each example scenario runs: a short run, a few hundred lines.
const SEEDS: [&str; 2] = ["0", "1"];

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join(SCHEMA)).expect("the protocol schema");
    serde_json::from_str(&text).expect("the protocol schema is JSON")
}

/// The `$defs` entry a line of this direction must match: `→` idemsim
/// wrote it, `←` the program did.
fn def_of(direction: char) -> &'static str {
    match direction {
        '→' => "to_program",
        _ => "from_program",
    }
}

/// Where `line` breaks the schema, as `direction: why` entries.
fn line_errors(root: &Value, direction: char, line: &Value) -> Vec<String> {
    let def = &root["$defs"][def_of(direction)];
    assert!(!def.is_null(), "no $defs/{} in {SCHEMA}", def_of(direction));
    errors(root, def, line, &direction.to_string())
}

/// Every line of `replay --transcript` of each example scenario, with its
/// direction; several programs' lines start with the actor's name.
fn exchanged() -> Vec<(char, String)> {
    let files = toml_files_in(&root().join("examples/python"));
    assert!(files.len() >= 12, "the example scenarios: {files:?}");
    let mut lines = Vec::new();
    for f in &files {
        let f = f.to_string_lossy();
        for seed in SEEDS {
            let out = idemsim(&["replay", &f, "--seed", seed, "--transcript"]);
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "replay {f} --seed {seed}: {}",
                text(&out.stderr)
            );
            for l in text(&out.stdout).lines() {
                let (at, direction) = l
                    .char_indices()
                    .find(|&(_, c)| c == '→' || c == '←')
                    .unwrap_or_else(|| panic!("{f} seed {seed}: a line without → or ←: {l}"));
                let json = l[at + direction.len_utf8()..].trim_start();
                lines.push((direction, json.to_string()));
            }
        }
    }
    lines
}

/// The paths of every object key in `v`, but those of the values a
/// program keeps (a `start`'s `storage`, a `store`'s `value`): their keys
/// are the program's own.
fn key_paths(v: &Value, at: &mut Vec<String>, into: &mut Vec<Vec<String>>) {
    let Value::Object(o) = v else {
        if let Value::Array(items) = v {
            for (i, x) in items.iter().enumerate() {
                at.push(format!("[{i}]"));
                key_paths(x, at, into);
                at.pop();
            }
        }
        return;
    };
    let data = at.is_empty() && (v["type"] == "start" || v["type"] == "store");
    for (k, x) in o {
        at.push(k.clone());
        into.push(at.clone());
        if !(data && (k == "storage" || k == "value")) {
            key_paths(x, at, into);
        }
        at.pop();
    }
}

/// `v` with the key at `path` renamed to one no line has.
fn renamed(v: &Value, path: &[String]) -> Value {
    let mut out = v.clone();
    let mut here = &mut out;
    for step in &path[..path.len() - 1] {
        here = match step.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            Some(i) => &mut here[i.parse::<usize>().expect("an index")],
            None => &mut here[step.as_str()],
        };
    }
    let o = here.as_object_mut().expect("an object holds the key");
    let last = &path[path.len() - 1];
    let x = o.remove(last).expect("the key");
    o.insert(format!("{last}_not_in_the_protocol"), x);
    out
}

#[test]
fn every_line_the_example_programs_exchange_validates_and_the_schema_names_each_field() {
    if !require(
        "the protocol schema against the example programs",
        &[&PYTHON3],
    ) {
        return;
    }
    let root = schema();
    let lines = exchanged();
    let mut failures = Vec::new();
    let mut seen = BTreeSet::new();
    let mut distinct = BTreeSet::new();
    for (direction, line) in &lines {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        seen.insert(format!("{direction} {}", v["type"].as_str().unwrap_or("?")));
        if let Some(p) = v.get("payload").and_then(|p| p.get("type")) {
            seen.insert(format!("{direction} payload {}", p.as_str().unwrap_or("?")));
        }
        let e = line_errors(&root, *direction, &v);
        if !e.is_empty() {
            failures.push(format!("{direction} {line}\n    {}", e.join("\n    ")));
        }
        distinct.insert((*direction, line.as_str()));
    }
    assert!(
        failures.is_empty(),
        "lines {SCHEMA} refuses:\n{}",
        failures.join("\n")
    );
    // A short run of the examples exchanges every line type but
    // `cancel_timer`, and a payload of every role.
    let must: &[&str] = &[
        "→ start",
        "→ msg",
        "→ timer",
        "→ drawn",
        "← send",
        "← set_timer",
        "← effect",
        "← store",
        "← draw",
        "← hello",
        "← log",
        "← done",
        "→ payload deliver",
        "→ payload transfer",
        "→ payload pay",
        "→ payload transfer-done",
        "→ payload request",
        "→ payload publish",
        "→ payload publish-ack",
        "← payload ack",
        "← payload transfer-done",
        "← payload pay-reply",
        "← payload transfer",
        "← payload response",
        "← payload publish",
        "← payload publish-ack",
    ];
    let missing: Vec<_> = must.iter().filter(|m| !seen.contains(**m)).collect();
    assert!(
        missing.is_empty(),
        "not exchanged: {missing:?}; seen {seen:?}"
    );
    // Closed: the same line with any one field renamed is refused, so a
    // field idemsim sends that the schema does not name fails the check
    // above.
    let mut open = Vec::new();
    for (direction, line) in &distinct {
        let v: Value = serde_json::from_str(line).expect("parsed above");
        let mut paths = Vec::new();
        key_paths(&v, &mut Vec::new(), &mut paths);
        for p in paths {
            if line_errors(&root, *direction, &renamed(&v, &p)).is_empty() {
                open.push(format!("{direction} {} in {line}", p.join(".")));
            }
        }
    }
    assert!(
        open.is_empty(),
        "{SCHEMA} takes these fields under another name too:\n{}",
        open.join("\n")
    );
}

#[test]
fn the_lines_no_example_exchanges_validate_as_docs_protocol_md_writes_them() {
    let root = schema();
    let good: &[(char, &str)] = &[
        (
            '→',
            r#"{"type":"msg","from":"broker","now_us":5,"payload":{"type":"ack-result","id":1,"receipt":3,"ok":false}}"#,
        ),
        (
            '→',
            r#"{"type":"msg","from":"client","now_us":5,"payload":{"type":"status-query","claim":4711,"part":0,"question":3}}"#,
        ),
        (
            '→',
            r#"{"type":"msg","from":"bank","now_us":5,"payload":{"type":"status-reply","claim":4711,"part":0,"question":1,"paid_eur":1200}}"#,
        ),
        (
            '→',
            r#"{"type":"msg","from":"bank","now_us":5,"payload":{"type":"transfer-done","claim":4711,"part":0,"reference":{"time":3,"passed":false},"result":"refused","paid_eur":1200}}"#,
        ),
        (
            '→',
            r#"{"type":"msg","from":"client","now_us":5,"payload":{"type":"pay","claim":4711,"part":0,"attempt":1,"amount_eur":1200,"timeout_ms":500,"idempotency_key":null,"key":null}}"#,
        ),
        (
            '→',
            r#"{"type":"start","protocol":3,"actor":"server","restarted":true,"now_us":9,"resources":[],"storage":{"k":{"any":["json"]}}}"#,
        ),
        (
            '←',
            r#"{"type":"send","to":"broker","payload":{"type":"ack","id":1,"receipt":3,"result":true}}"#,
        ),
        (
            '←',
            r#"{"type":"send","to":"broker","payload":{"type":"extend","id":1,"receipt":3}}"#,
        ),
        (
            '←',
            r#"{"type":"send","to":"service","payload":{"type":"status-reply","claim":4711,"part":0,"question":3,"paid_eur":0}}"#,
        ),
        (
            '←',
            r#"{"type":"send","to":"bank","payload":{"type":"transfer","claim":4711,"part":0,"amount_eur":1200,"if_paid_eur":0}}"#,
        ),
        (
            '←',
            r#"{"type":"send","to":"client","payload":{"type":"pay-reply","claim":4711,"part":0,"attempt":2,"status":"in-progress","amount_eur":0}}"#,
        ),
        ('←', r#"{"type":"set_timer","id":"work:1","after_us":1500}"#),
        ('←', r#"{"type":"cancel_timer","id":"work:1"}"#),
        ('←', r#"{"type":"store","key":"processed:1","value":null}"#),
        ('←', r#"{"type":"hello","protocol":2}"#),
    ];
    for (direction, line) in good {
        let v: Value = serde_json::from_str(line).expect("JSON");
        let e = line_errors(&root, *direction, &v);
        assert!(e.is_empty(), "{direction} {line}: {e:?}");
    }
}

#[test]
fn lines_that_break_the_protocol_are_refused() {
    let root = schema();
    let bad: &[(char, &str, &str)] = &[
        (
            '→',
            r#"{"type":"msg","from":"broker","now_us":5,"payload":{"type":"deliver","event":{"id":1,"entity":4711,"value":1200,"version":1},"redelivered":false}}"#,
            "a delivery without its receipt",
        ),
        (
            '→',
            r#"{"type":"start","protocol":2,"actor":"consumer-1","restarted":false,"now_us":0,"storage":{}}"#,
            "idemsim speaks version 3",
        ),
        (
            '→',
            r#"{"type":"timer","id":"work:1"}"#,
            "a timer without now_us",
        ),
        (
            '←',
            r#"{"type":"sned","to":"broker","payload":{}}"#,
            "an unknown type",
        ),
        (
            '←',
            r#"{"type":"set_timer","id":"t","after_ms":1,"after_us":1000}"#,
            "both after_ms and after_us",
        ),
        (
            '←',
            r#"{"type":"set_timer","id":"t"}"#,
            "neither after_ms nor after_us",
        ),
        (
            '←',
            r#"{"type":"effect","op":-1,"payload":1200}"#,
            "a negative op",
        ),
        (
            '←',
            r#"{"type":"draw","name":"replica","bound":0}"#,
            "a draw with nothing to choose",
        ),
        (
            '←',
            r#"{"type":"hello","protocol":4}"#,
            "a version idemsim does not speak",
        ),
        (
            '←',
            r#"{"type":"done","extra":1}"#,
            "a field done does not have",
        ),
        (
            '←',
            r#"{"type":"send","to":"broker","payload":{"type":"ack","id":1,"receipt":2,"extra":0}}"#,
            "a field an ack does not have",
        ),
        (
            '←',
            r#"{"type":"send","to":"client","payload":{"type":"pay-reply","claim":4711,"part":0,"attempt":1,"status":"ok","amount_eur":1}}"#,
            "a status a service cannot give",
        ),
        (
            '←',
            r#"{"type":"send","to":"service","payload":{"type":"transfer-done","claim":4711,"part":0,"reference":{"passed":true},"result":"refused"}}"#,
            "refused without paid_eur",
        ),
        (
            '←',
            r#"{"type":"send","to":"broker","payload":{"type":"publish","event":{"id":1,"value":1200,"version":1}}}"#,
            "a publish without its event's entity",
        ),
        (
            '←',
            r#"{"type":"send","to":"client","payload":{"type":"response","request":1,"attempt":1,"method":"POST","status":201,"resource":1,"value":1200}}"#,
            "a response without its etag",
        ),
        (
            '←',
            r#"{"type":"log","text":7}"#,
            "a log whose text is no string",
        ),
    ];
    for (direction, line, why) in bad {
        let v: Value = serde_json::from_str(line).expect("JSON");
        assert!(
            !line_errors(&root, *direction, &v).is_empty(),
            "{why}: {direction} {line} passed"
        );
    }
    // A line the program writes is not one idemsim writes, and back.
    let done: Value = serde_json::json!({"type": "done"});
    assert!(!line_errors(&root, '→', &done).is_empty());
    let timer: Value = serde_json::json!({"type": "timer", "id": "t", "now_us": 1});
    assert!(!line_errors(&root, '←', &timer).is_empty());
}
