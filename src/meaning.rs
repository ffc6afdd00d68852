//! A scenario's meaning: its settings after `--set`, each dotted key with its
//! value in one canonical spelling, so that comments, key order, whitespace
//! and number spelling (`10_000`) change nothing, and a real change can be
//! named key by key ("`client.timeout_ms` changed from 10000 to 9000").
//!
//! Regressions and repro files record it: a repro applies while the meaning
//! it was recorded under holds, whatever was done to the file's text.
//! Keys that do not change what one run does are left out: the prose
//! (`summary`), the expectation (`[expect]`, judged afresh at each replay),
//! and how many seeds a sweep runs and how it searches (`run.runs`,
//! `run.strategy`).

use models::Scenario;
use std::collections::BTreeMap;
use toml_edit::{Item, Table, Value};

/// Keys (or tables, with everything under them) outside the meaning.
const NOT_MEANING: &[&str] = &["summary", "expect", "run.runs", "run.strategy"];

/// Dotted key to its value as JSON (a TOML date as a string), in key order.
pub type Settings = BTreeMap<String, serde_json::Value>;

/// The settings of `s` as its runs read them (its text with its overrides).
pub fn settings(s: &Scenario) -> Settings {
    settings_of_text(&s.effective_text())
}

/// The settings of a scenario's TOML text; a text that does not parse (the
/// loader refuses it first) has none.
pub fn settings_of_text(text: &str) -> Settings {
    let mut out = Settings::new();
    if let Ok(doc) = text.parse::<toml_edit::DocumentMut>() {
        flatten_table(doc.as_table(), "", &mut out);
    }
    out
}

/// The hash of `settings`, as repro files and regression names carry it.
pub fn hash(settings: &Settings) -> u64 {
    let mut text = String::new();
    for (k, v) in settings {
        text.push_str(k);
        text.push('=');
        text.push_str(&v.to_string());
        text.push('\n');
    }
    models::scenario::fnv1a(text.as_bytes())
}

/// Each difference from `old` (recorded) to `new` (now), one phrase each:
/// "`k` changed from A to B", "`k` = A was removed", "`k` = B was added".
pub fn changes(old: &Settings, new: &Settings) -> Vec<String> {
    let mut out = Vec::new();
    for (k, a) in old {
        match new.get(k) {
            Some(b) if a == b => {}
            Some(b) => out.push(format!("`{k}` changed from {a} to {b}")),
            None => out.push(format!("`{k}` = {a} was removed")),
        }
    }
    for (k, b) in new {
        if !old.contains_key(k) {
            out.push(format!("`{k}` = {b} was added"));
        }
    }
    out
}

/// `changes` as one clause: the first three, and how many more.
pub fn changes_text(changes: &[String]) -> String {
    let mut text = changes
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if changes.len() > 3 {
        text.push_str(&format!(" and {} more", changes.len() - 3));
    }
    text
}

fn key(prefix: &str, k: &str) -> String {
    if prefix.is_empty() {
        k.to_string()
    } else {
        format!("{prefix}.{k}")
    }
}

fn left_out(k: &str) -> bool {
    NOT_MEANING.contains(&k)
}

fn flatten_table(t: &Table, prefix: &str, out: &mut Settings) {
    for (k, item) in t.iter() {
        let k = key(prefix, k);
        if left_out(&k) {
            continue;
        }
        match item {
            Item::None => {}
            Item::Table(t) => flatten_table(t, &k, out),
            Item::ArrayOfTables(a) => {
                for (i, t) in a.iter().enumerate() {
                    flatten_table(t, &format!("{k}[{i}]"), out);
                }
            }
            Item::Value(v) => flatten_value(v, &k, out),
        }
    }
}

fn flatten_value(v: &Value, k: &str, out: &mut Settings) {
    match v {
        Value::InlineTable(t) => {
            for (sub, v) in t.iter() {
                let sub = key(k, sub);
                if !left_out(&sub) {
                    flatten_value(v, &sub, out);
                }
            }
        }
        other => {
            out.insert(k.to_string(), canonical(other));
        }
    }
}

/// One spelling per value, as JSON: no decor, numbers as numbers.
fn canonical(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::String(s) => J::from(s.value().as_str()),
        Value::Integer(i) => J::from(*i.value()),
        Value::Float(f) => J::from(*f.value()),
        Value::Boolean(b) => J::from(*b.value()),
        Value::Datetime(d) => J::from(d.value().to_string()),
        Value::Array(a) => J::Array(a.iter().map(canonical).collect()),
        Value::InlineTable(t) => J::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), canonical(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_order_whitespace_and_spelling_change_nothing() {
        let a = "model = \"payment\"\n[client]\ntimeout_ms = 10000\nretries = 3\n";
        let b = "# a comment\nmodel=\"payment\"\n\n[client]\nretries   = 3 # three\ntimeout_ms = 10_000\n";
        assert_eq!(settings_of_text(a), settings_of_text(b));
        assert_eq!(hash(&settings_of_text(a)), hash(&settings_of_text(b)));
    }

    #[test]
    fn a_changed_value_is_named() {
        let a = settings_of_text("[client]\ntimeout_ms = 10000\nkey = \"stable\"\n");
        let b = settings_of_text("[client]\ntimeout_ms = 9000\n[server]\nx = 1\n");
        assert_eq!(
            changes(&a, &b),
            [
                "`client.key` = \"stable\" was removed",
                "`client.timeout_ms` changed from 10000 to 9000",
                "`server.x` = 1 was added"
            ]
        );
        assert_ne!(hash(&a), hash(&b));
    }

    #[test]
    fn the_prose_and_the_expectation_are_not_meaning() {
        let a = settings_of_text(
            "summary = \"a\"\n[run]\nruns = 5\nmax_steps = 9\n[expect]\nverdict = \"holds\"\n",
        );
        let b = settings_of_text("summary = \"b\"\n[run]\nruns = 7\nmax_steps = 9\n");
        assert_eq!(a, b);
        assert_eq!(a.len(), 1);
    }
}
