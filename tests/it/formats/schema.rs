//! A JSON Schema (draft 2020-12) validator for the subset docs/schemas/
//! uses: `type`, `properties`, `required`, `additionalProperties`, `items`,
//! `enum`, `const`, `minimum`, `anyOf`, `$ref` into `$defs`. A schema with
//! any other keyword is refused, so a schema file can never rely on a rule
//! this validator would silently skip. (The `jsonschema` crate would pull a
//! regex engine and an HTTP client into the test build for these few rules.)

use serde_json::Value;

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "$defs",
];
/// Keywords checked.
const CHECKED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "anyOf",
    "$ref",
];

/// The places in `value` where `schema` (whose `$defs` `root` holds) does
/// not hold, each as `path: why`; empty when it validates.
pub fn errors(root: &Value, schema: &Value, value: &Value, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(root, schema, value, path, &mut out);
    out
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_u64() || v.is_i64(),
        other => panic!("unknown type `{other}` in a schema"),
    }
}

fn check(root: &Value, schema: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    let Some(s) = schema.as_object() else {
        match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return out.push(format!("{path}: nothing is allowed here")),
            _ => panic!("a schema is an object or a boolean, at {path}"),
        }
    };
    for k in s.keys() {
        assert!(
            ANNOTATIONS.contains(&k.as_str()) || CHECKED.contains(&k.as_str()),
            "the schema keyword `{k}` (at {path}) is outside the subset this validator checks"
        );
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("only #/$defs/ references: {r}"));
        let target = &root["$defs"][name];
        assert!(!target.is_null(), "no $defs/{name}");
        check(root, target, v, path, out);
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => panic!("type is a string or a list, at {path}"),
        };
        if !types.iter().any(|t| type_matches(t, v)) {
            return out.push(format!("{path}: {v} is not of type {types:?}"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            out.push(format!("{path}: {v} is not one of {e:?}"));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            out.push(format!("{path}: {v} is not {c}"));
        }
    }
    if let (Some(m), Some(n)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if n < m {
            out.push(format!("{path}: {n} is below {m}"));
        }
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        if !any.iter().any(|a| errors(root, a, v, path).is_empty()) {
            out.push(format!("{path}: {v} matches none of anyOf"));
        }
    }
    if let Value::Object(obj) = v {
        object(root, s, obj, path, out);
    }
    if let (Value::Array(items), Some(each)) = (v, s.get("items")) {
        for (i, x) in items.iter().enumerate() {
            check(root, each, x, &format!("{path}[{i}]"), out);
        }
    }
}

fn object(
    root: &Value,
    s: &serde_json::Map<String, Value>,
    obj: &serde_json::Map<String, Value>,
    path: &str,
    out: &mut Vec<String>,
) {
    let props = s.get("properties").and_then(Value::as_object);
    for r in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let r = r.as_str().expect("required names are strings");
        if !obj.contains_key(r) {
            out.push(format!("{path}: the field `{r}` is missing"));
        }
    }
    for (k, x) in obj {
        let at = format!("{path}.{k}");
        match props.and_then(|p| p.get(k)) {
            Some(p) => check(root, p, x, &at, out),
            None => match s.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    out.push(format!("{at}: a field the schema does not name"))
                }
                Some(extra) => check(root, extra, x, &at, out),
                None => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::errors;
    use serde_json::json;

    fn ok(schema: &serde_json::Value, v: serde_json::Value) -> bool {
        errors(schema, schema, &v, "$").is_empty()
    }

    #[test]
    fn each_keyword_refuses_what_it_must_and_passes_the_rest() {
        let s = json!({
            "type": "object",
            "required": ["a"],
            "additionalProperties": false,
            "properties": {
                "a": {"type": ["integer", "null"], "minimum": 0},
                "b": {"enum": ["x", "y"]},
                "c": {"const": 1},
                "d": {"type": "array", "items": {"$ref": "#/$defs/s"}},
                "e": {"type": "object", "additionalProperties": {"type": "integer"}},
                "f": {"anyOf": [{"type": "string"}, {"type": "boolean"}]}
            },
            "$defs": {"s": {"type": "string"}}
        });
        assert!(ok(
            &s,
            json!({"a": 1, "b": "x", "c": 1, "d": ["q"], "e": {"k": 2}, "f": true})
        ));
        assert!(ok(&s, json!({"a": null})));
        assert!(!ok(&s, json!({})), "required");
        assert!(!ok(&s, json!({"a": 1.5})), "integer");
        assert!(!ok(&s, json!({"a": -1})), "minimum");
        assert!(
            !ok(&s, json!({"a": 1, "z": 0})),
            "additionalProperties false"
        );
        assert!(!ok(&s, json!({"a": 1, "b": "z"})), "enum");
        assert!(!ok(&s, json!({"a": 1, "c": 2})), "const");
        assert!(!ok(&s, json!({"a": 1, "d": [3]})), "items through $ref");
        assert!(
            !ok(&s, json!({"a": 1, "e": {"k": "no"}})),
            "additionalProperties schema"
        );
        assert!(!ok(&s, json!({"a": 1, "f": 3})), "anyOf");
        assert!(!ok(&s, json!([])), "type object");
    }

    #[test]
    #[should_panic(expected = "outside the subset")]
    fn a_keyword_outside_the_subset_is_refused() {
        let s = json!({"pattern": "^a"});
        let _ = errors(&s, &s, &json!("a"), "$");
    }
}
