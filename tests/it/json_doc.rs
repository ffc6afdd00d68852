//! docs/json-output.md documents every JSON record the commands print: the
//! commands below print every record type, and each type they print, with
//! each of its fields (and the fields of its objects, dotted), must have its
//! section (`### \`type\``) and its row (`| \`field\` |`) in the doc.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use crate::support;

use support::{outcome as stdout, root, scratch};

/// Objects whose keys are data (names of situations, keys, streams), not fields.
const MAPS: &[&str] = &["situation_runs", "set", "counterexample.record"];

/// type → fields printed, with one level of object fields as `outer.inner`.
fn printed(jsonl: &str, into: &mut BTreeMap<String, BTreeSet<String>>) {
    for line in jsonl.lines().filter(|l| l.starts_with('{')) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let kind = v["type"].as_str().expect("a type").to_string();
        let fields = into.entry(kind).or_default();
        // A seed's `_decimal` twin is documented once, in the table of names.
        let twin = |k: &str| k.ends_with("_decimal");
        for (k, x) in v["data"].as_object().expect("data is an object") {
            if twin(k) {
                continue;
            }
            fields.insert(k.clone());
            if let Some(obj) = x.as_object() {
                if !MAPS.contains(&k.as_str()) {
                    for k2 in obj.keys().filter(|k2| !twin(k2)) {
                        fields.insert(format!("{k}.{k2}"));
                    }
                }
            }
        }
    }
}

/// type → fields documented: the backticked names of each `###` heading, and
/// the backticked names in the first cell of each table row below it.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("docs/json-output.md")).expect("the doc");
    let ticked =
        |s: &str| -> Vec<String> { s.split('`').skip(1).step_by(2).map(String::from).collect() };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("### ") {
            current = ticked(h);
            for t in &current {
                out.entry(t.clone()).or_default();
            }
        } else if line.starts_with("## ") {
            current.clear();
        } else if line.starts_with("| `") {
            let first = line.split('|').nth(1).unwrap_or("");
            for t in &current {
                out.get_mut(t).expect("a section").extend(ticked(first));
            }
        }
    }
    out
}

/// Every JSON line the commands below print, run once for every test that
/// reads them (this one, and `formats::` which validates them against
/// docs/schemas/).
pub(crate) fn printed_lines() -> &'static [String] {
    static LINES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    LINES.get_or_init(run_commands)
}

fn run_commands() -> Vec<String> {
    let dir = scratch("json_doc");
    let mut all = String::new();
    let commands: &[&[&str]] = &[
        &[
            "check",
            "payment-retry-without-key",
            "--runs",
            "100",
            "--json",
        ],
        &["check", "payment-stable-key", "--runs", "50", "--json"],
        // Too few seeds to reach every situation it names: an `expect` line.
        &["check", "payment-stable-key", "--runs", "2", "--json"],
        &["check", "payment-uncapped-retries", "--runs", "2", "--json"],
        &["check", "--runs", "10", "--shard", "1/2", "--json"],
        &[
            "check",
            "payment-retry-without-key",
            "--exhaustive",
            "--max-faults",
            "1",
            "--json",
        ],
        &[
            "check",
            "payment-stable-key",
            "--exhaustive",
            "--max-faults",
            "1",
            "--json",
        ],
        &[
            "verify",
            "payment-stable-key",
            "payment-retry-without-key",
            "--max-runs",
            "30",
            "--json",
        ],
        // Met only by check's searches, which verify then runs too.
        &[
            "verify",
            "tests/fixtures/expect_reach/reached-by-a-search.toml",
            "--no-ablations",
            "--no-regressions",
            "--json",
        ],
        &[
            "sweep",
            "payment-stable-key",
            "--set",
            "client.retry.max_attempts=1,2",
            "--runs",
            "20",
            "--format",
            "json",
        ],
        &[
            "advise",
            "payment-fingerprint-off",
            "--max-changes",
            "1",
            "--runs",
            "100",
            "--json",
        ],
        &["bench", "--runs", "100", "--json"],
        &["list", "--json"],
        &["learn", "--json"],
        &[
            "learn",
            "check",
            "13",
            "--set",
            "client.retry.dead_letter=false",
            "--json",
        ],
        &["shrink", "payment-retry-without-key", "--format", "json"],
        &[
            "shrink",
            "payment-retry-without-key",
            "--shrink-max-runs",
            "2",
            "--format",
            "json",
        ],
        &["shrink", "payment-lease-too-short", "--format", "json"],
        &["shrink", "messaging-ack-before-commit", "--format", "json"],
        &[
            "replay",
            "payment-key-expired-before-retry",
            "--seed",
            "2",
            "--format",
            "json",
        ],
        &[
            "replay",
            "messaging-dead-letter",
            "--seed",
            "1",
            "--format",
            "json",
        ],
        &[
            "replay",
            "payment-stable-key",
            "--seed",
            "3",
            "--format",
            "json",
        ],
    ];
    for args in commands {
        all += &stdout(args);
    }
    // merge --json, from two shards.
    let mut files = Vec::new();
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = stdout(&[
            "check",
            "payment-retry-without-key",
            "--runs",
            "200",
            "--shard",
            &shard,
            "--json",
            "--no-shrink",
        ]);
        let path = dir.join(format!("shard-{i}.jsonl"));
        std::fs::write(&path, out).expect("write a shard");
        files.push(path.to_string_lossy().into_owned());
    }
    all += &stdout(&["merge", "--json", &files[0], &files[1]]);
    // The regression database: a holding design broken in a scratch copy,
    // checked twice (records, then replays), then verified.
    let text = std::fs::read_to_string(root().join("examples/ci/scenarios/order-events.toml"))
        .expect("the example scenario")
        .replace(r#"handler = "inbox-same-tx""#, r#"handler = "effect""#);
    let scenario = dir.join("order-events.toml");
    std::fs::write(&scenario, text).expect("write a scenario");
    let db = dir.join("regressions");
    let (scenario, db) = (scenario.to_string_lossy(), db.to_string_lossy());
    for _ in 0..2 {
        let args = [
            "check",
            &scenario,
            "--runs",
            "50",
            "--json",
            "--regressions",
            &db,
        ];
        all += &stdout(&args);
    }
    let args = [
        "verify",
        &scenario,
        "--no-ablations",
        "--json",
        "--regressions",
        &db,
    ];
    all += &stdout(&args);
    all.lines()
        .filter(|l| l.starts_with('{'))
        .map(String::from)
        .collect()
}

#[test]
fn every_json_record_and_field_is_documented() {
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    printed(&printed_lines().join("\n"), &mut seen);

    let doc = documented();
    let mut missing = Vec::new();
    for (kind, fields) in &seen {
        match doc.get(kind) {
            None => missing.push(format!("record type `{kind}` has no section")),
            Some(documented) => {
                for f in fields.difference(documented) {
                    missing.push(format!("`{kind}`: field `{f}` is not documented"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/json-output.md is missing:\n{}",
        missing.join("\n")
    );
    // The commands really print the record types the doc is about.
    for kind in [
        "summary",
        "exhaustive",
        "verify",
        "verify_summary",
        "advise",
        "advise_fix",
        "advise_summary",
        "sweep",
        "variant",
        "bench",
        "scenario",
        "run",
        "send",
        "deliver",
        "drop",
        "effect",
        "end",
        "regression",
    ] {
        assert!(seen.contains_key(kind), "no command above printed `{kind}`");
    }
}
