//! The JSON Lines records every command prints: `{"type", "schema", "data"}`.
//!
//! Users keep scripts that read these records for years, so each record
//! says which version of its layout it follows (`schema`), and a JSON Schema
//! of each type ships in `docs/schemas/` (docs/json-output.md, Compatibility).
//! A type's version goes up when one of its fields is removed, renamed, or
//! changes its type or meaning; a new field leaves it as it is.
//!
//! Seeds are `u64`, and a reader that parses numbers as doubles (JavaScript,
//! jq before 1.7) rounds those above 2^53. So every seed a record carries
//! has a twin, `FIELD_decimal`, the same seed as a decimal string, added
//! here for every record at once so that no command can forget one.

/// Each record type and the version of its layout. A type printed but not
/// listed here fails `tests/it/formats`; a bump is one edit here and one in
/// its schema file.
pub const SCHEMAS: &[(&str, u32)] = &[
    // check, merge
    ("summary", 1),
    ("expect", 1),
    ("exhaustive", 1),
    ("regression", 1),
    // verify
    ("verify", 1),
    ("verify_summary", 1),
    // advise
    ("advise", 1),
    ("advise_fix", 1),
    ("advise_summary", 1),
    // sweep
    ("sweep", 1),
    ("variant", 1),
    ("interrupted", 1),
    // bench
    ("bench", 1),
    ("find", 1),
    // list, models
    ("scenario", 1),
    ("preset", 1),
    ("model", 1),
    ("message_kinds", 1),
    ("invariant", 1),
    // learn, learn check
    ("exercise", 1),
    ("learn_check", 1),
    // traces: replay and shrink --format json
    ("run", 1),
    ("mix", 1),
    ("start", 1),
    ("restart", 1),
    ("crash", 1),
    ("healing", 1),
    ("send", 1),
    ("drop", 1),
    ("deliver", 1),
    ("timer_set", 1),
    ("timer_fired", 1),
    ("effect", 1),
    ("attempt", 1),
    ("observe", 1),
    ("situation", 1),
    ("elided", 1),
    ("end", 1),
];

/// The layout version of record type `kind` (0 for a type [`SCHEMAS`] does
/// not list, which the tests refuse).
pub fn schema_of(kind: &str) -> u32 {
    SCHEMAS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(0, |(_, v)| *v)
}

/// Fields whose number is a seed.
const SEED_FIELDS: &[&str] = &["seed", "lowest_failing_seed", "search_seed"];
/// Fields whose object is a seed range `{start, end}`.
const SEED_RANGES: &[&str] = &["seeds", "requested", "of"];
/// The suffix of a seed's decimal-string twin.
pub const DECIMAL: &str = "_decimal";

/// Adds the `_decimal` twin of every seed in `v`, at any depth.
fn add_decimal_seeds(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            let mut twins = Vec::new();
            for (k, x) in map.iter_mut() {
                if SEED_FIELDS.contains(&k.as_str()) {
                    if let Some(n) = x.as_u64() {
                        twins.push((format!("{k}{DECIMAL}"), n));
                    }
                } else if SEED_RANGES.contains(&k.as_str()) {
                    if let Some(range) = x.as_object_mut() {
                        range_twins(range);
                    }
                }
                add_decimal_seeds(x);
            }
            for (k, n) in twins {
                map.insert(k, serde_json::Value::String(n.to_string()));
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(add_decimal_seeds),
        _ => {}
    }
}

/// The exclusive end of a range that holds the last seed, 2^64: no `u64`,
/// so a range's `end` is null there and only its twin spells it.
const PAST_LAST_SEED: &str = "18446744073709551616";

fn range_twins(range: &mut serde_json::Map<String, serde_json::Value>) {
    for end in ["start", "end"] {
        let twin = match range.get(end) {
            Some(serde_json::Value::Number(n)) => n.as_u64().map(|n| n.to_string()),
            Some(serde_json::Value::Null) if end == "end" && range.contains_key("start") => {
                Some(PAST_LAST_SEED.to_string())
            }
            _ => None,
        };
        if let Some(twin) = twin {
            range.insert(format!("{end}{DECIMAL}"), serde_json::Value::String(twin));
        }
    }
}

/// Removes every `_decimal` twin from `v`, for a reader (`merge`) that
/// reads the numbers themselves.
pub fn strip_decimal_twins(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|k, _| !k.ends_with(DECIMAL));
            map.values_mut().for_each(strip_decimal_twins);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_decimal_twins),
        _ => {}
    }
}

/// JSON Lines envelope: `{"type": ..., "schema": ..., "data": ...}`, with
/// every seed's decimal twin added to `data`.
pub fn json_line(kind: &str, mut data: serde_json::Value) -> String {
    add_decimal_seeds(&mut data);
    serde_json::json!({ "type": kind, "schema": schema_of(kind), "data": data }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_seed_gets_a_decimal_twin_at_any_depth() {
        let max = u64::MAX;
        let line = json_line(
            "summary",
            serde_json::json!({
                "lowest_failing_seed": max,
                "seeds": {"start": 1, "end": max},
                "failure": {"seed": max, "events": 3},
                "ablations": [{"lowest_failing_seed": null}],
                "shard": {"of": {"start": 0, "end": 9}},
            }),
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(v["type"], "summary");
        let d = &v["data"];
        assert_eq!(d["lowest_failing_seed_decimal"], "18446744073709551615");
        assert_eq!(d["seeds"]["start_decimal"], "1");
        assert_eq!(d["seeds"]["end_decimal"], "18446744073709551615");
        assert_eq!(d["failure"]["seed_decimal"], "18446744073709551615");
        assert_eq!(d["shard"]["of"]["end_decimal"], "9");
        // A null seed has no twin, and other numbers none either.
        assert!(d["ablations"][0]
            .get("lowest_failing_seed_decimal")
            .is_none());
        assert!(d["failure"].get("events_decimal").is_none());
        // The number itself is exact in the text.
        assert!(line.contains("\"lowest_failing_seed\":18446744073709551615"));
        // And a reader of the numbers gets back what was given.
        let mut data = v["data"].clone();
        strip_decimal_twins(&mut data);
        assert_eq!(data["seeds"], serde_json::json!({"start": 1, "end": max}));
        assert!(data.get("lowest_failing_seed_decimal").is_none());
    }

    #[test]
    fn a_range_ending_at_the_last_seed_has_a_null_end_spelled_by_its_twin() {
        let line = json_line(
            "summary",
            serde_json::json!({
                "seeds": {"start": u64::MAX - 5, "end": null},
                "requested": null,
            }),
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let seeds = &v["data"]["seeds"];
        assert_eq!(seeds["end"], serde_json::Value::Null);
        assert_eq!(seeds["end_decimal"], "18446744073709551616");
        assert_eq!(seeds["start_decimal"], "18446744073709551610");
        assert_eq!(v["data"]["requested"], serde_json::Value::Null);
    }

    #[test]
    fn an_unlisted_type_has_schema_zero() {
        assert_eq!(schema_of("no-such-record"), 0);
        assert_eq!(schema_of("end"), 1);
    }
}
