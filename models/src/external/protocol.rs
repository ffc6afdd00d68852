//! The lines of the protocol (docs/protocol.md): what idemsim writes to a
//! program, and what a program may write back, checked line by line with a
//! message that says what is wrong and how to write it instead.

use crate::core::input::did_you_mean;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What a program may write, one per line. A handler's lines end with `done`.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    /// Send `payload` to the actor named `to`.
    Send {
        /// The receiver's name.
        to: String,
        /// The message, as the receiver's model reads it.
        payload: Value,
    },
    /// Set the timer `id` to fire `after_us` from now (replacing one of that id).
    SetTimer {
        /// The program's name for the timer.
        id: String,
        /// How long from now, in µs.
        after_us: u64,
    },
    /// Cancel the timer `id`.
    CancelTimer {
        /// The program's name for the timer.
        id: String,
    },
    /// An effect landed in the outside world: operation `op`, with `payload`.
    Effect {
        /// The business operation (e.g. the event id).
        op: u32,
        /// What landed (e.g. the amount).
        payload: u32,
    },
    /// Write `key` durably, in the same step.
    Store {
        /// The key.
        key: String,
        /// Its new value (`null` deletes it).
        value: Value,
    },
    /// Asks idemsim for a recorded decision: a value in `0..bound`, which
    /// idemsim answers at once with a `drawn` line (the answer goes on).
    Draw {
        /// The program's name for what it decides (shown in transcripts).
        name: String,
        /// How many values there are to choose from.
        bound: u64,
    },
    /// The protocol version the program speaks, in answer to a `start`.
    Hello {
        /// Its version.
        protocol: u64,
    },
    /// A line for the transcript.
    Log {
        /// What the program says.
        text: String,
    },
    /// The handler's answer is complete.
    Done,
}

/// The `type`s a program may write.
pub const OUT_TYPES: &[&str] = &[
    "send",
    "set_timer",
    "cancel_timer",
    "effect",
    "store",
    "draw",
    "hello",
    "log",
    "done",
];

/// The protocol version this idemsim speaks: 1 had only the consumer and
/// no draws; 2 added the other roles, draws and the state folder; 3 added
/// a role's own fields to `start` (the HTTP server's `resources`).
pub const PROTOCOL: u64 = 3;

/// Most values one draw may choose from: a bound keeps a draw's recorded
/// value small enough for repro files and shrinking to read.
pub const MAX_DRAW_BOUND: u64 = 1 << 32;

/// Longest timer a program may set: ten years, as for scenario durations.
const MAX_AFTER_MS: u64 = crate::core::input::MAX_DURATION_MS;

/// A JSON string literal.
fn q(s: &str) -> String {
    Value::from(s).to_string()
}

/// The `start` line: the program forgets everything it holds in memory and
/// rebuilds from `storage`, the durable keys it stored before. `fields` is
/// the role's own fields, each written `,"name":value` (protocol 3; empty
/// for a role without any). Written by hand so that `type` comes first, as
/// people read it.
pub fn start(
    actor: &str,
    (restarted, now_us): (bool, u64),
    fields: &str,
    storage: &BTreeMap<String, Value>,
) -> String {
    let storage: Map<String, Value> = storage
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    format!(
        r#"{{"type":"start","protocol":{PROTOCOL},"actor":{},"restarted":{restarted},"now_us":{now_us}{fields},"storage":{}}}"#,
        q(actor),
        Value::Object(storage)
    )
}

/// The `msg` line; `payload` is the message's JSON text.
pub fn msg(from: &str, now_us: u64, payload: &str) -> String {
    format!(
        r#"{{"type":"msg","from":{},"now_us":{now_us},"payload":{payload}}}"#,
        q(from)
    )
}

/// The line telling the program that its timer `id` fired.
pub fn timer(id: &str, now_us: u64) -> String {
    format!(r#"{{"type":"timer","id":{},"now_us":{now_us}}}"#, q(id))
}

/// The answer to a `draw`: the value idemsim chose (and recorded).
pub fn drawn(name: &str, value: u64) -> String {
    format!(r#"{{"type":"drawn","name":{},"value":{value}}}"#, q(name))
}

/// A mistake in one line: what is wrong and the line as it should be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    /// What is wrong with the line.
    pub what: String,
    /// How the program should write it.
    pub fix: String,
}

fn err(what: impl Into<String>, fix: impl Into<String>) -> LineError {
    LineError {
        what: what.into(),
        fix: fix.into(),
    }
}

fn example(kind: &str) -> &'static str {
    match kind {
        "send" => r#"{"type":"send","to":"broker","payload":{"type":"ack","id":1,"receipt":1}}"#,
        "set_timer" => r#"{"type":"set_timer","id":"work:1","after_ms":200}"#,
        "cancel_timer" => r#"{"type":"cancel_timer","id":"work:1"}"#,
        "effect" => r#"{"type":"effect","op":1,"payload":1200}"#,
        "store" => r#"{"type":"store","key":"processed:1","value":true}"#,
        "draw" => r#"{"type":"draw","name":"retry","bound":3}"#,
        "hello" => r#"{"type":"hello","protocol":3}"#,
        "log" => r#"{"type":"log","text":"what happened"}"#,
        _ => r#"{"type":"done"}"#,
    }
}

fn field<'a>(o: &'a Map<String, Value>, kind: &str, name: &str) -> Result<&'a Value, LineError> {
    o.get(name).ok_or_else(|| {
        err(
            format!("a `{kind}` line without `{name}`"),
            format!("write it as {}", example(kind)),
        )
    })
}

fn string(o: &Map<String, Value>, kind: &str, name: &str) -> Result<String, LineError> {
    match field(o, kind, name)? {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        v => Err(err(
            format!("`{name}` of a `{kind}` line must be a non-empty string, not {v}"),
            format!("write it as {}", example(kind)),
        )),
    }
}

/// A whole number in `0..=max`.
pub fn number(v: &Value, what: &str, max: u64, fix: &str) -> Result<u64, LineError> {
    match v.as_u64() {
        Some(n) if n <= max => Ok(n),
        _ => Err(err(
            format!("{what} must be a whole number from 0 to {max}, not {v}"),
            fix.to_string(),
        )),
    }
}

fn known_fields(o: &Map<String, Value>, kind: &str, fields: &[&str]) -> Result<(), LineError> {
    for k in o.keys() {
        if k != "type" && !fields.contains(&k.as_str()) {
            let hint = match did_you_mean(k, fields.iter().copied()) {
                Some(b) => format!("did you mean `{b}`? "),
                None => String::new(),
            };
            return Err(err(
                format!("a `{kind}` line has no field `{k}`"),
                format!("{hint}write it as {}", example(kind)),
            ));
        }
    }
    Ok(())
}

/// How the error of a key written twice starts, to tell it from bad JSON.
const TWICE: &str = "the key ";

/// A JSON value in which no object has a key twice. serde_json keeps the
/// last of two silently, so `{"op":1,"op":2}` would be an effect for 2
/// that the program may have meant for 1; JSON leaves it undefined.
struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::from(s))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut o = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let Strict(v) = map.next_value()?;
            if o.contains_key(&k) {
                return Err(serde::de::Error::custom(format!("{TWICE}{} twice", q(&k))));
            }
            o.insert(k, v);
        }
        Ok(Value::Object(o))
    }
}

/// Parses one line a program wrote.
pub fn parse(line: &str) -> Result<Out, LineError> {
    let (kind, o) = typed_object(line)?;
    match kind.as_str() {
        "send" => parse_send(&o),
        "set_timer" => parse_set_timer(&o),
        "cancel_timer" => {
            known_fields(&o, "cancel_timer", &["id"])?;
            Ok(Out::CancelTimer {
                id: string(&o, "cancel_timer", "id")?,
            })
        }
        "effect" => parse_effect(&o),
        "store" => {
            known_fields(&o, "store", &["key", "value"])?;
            Ok(Out::Store {
                key: string(&o, "store", "key")?,
                value: field(&o, "store", "value")?.clone(),
            })
        }
        "draw" => parse_draw(&o),
        "hello" => {
            known_fields(&o, "hello", &["protocol"])?;
            let v = field(&o, "hello", "protocol")?;
            Ok(Out::Hello {
                protocol: number(v, "`protocol`", u64::from(u32::MAX), &fix("hello"))?,
            })
        }
        "log" => parse_log(&o),
        "done" => {
            known_fields(&o, "done", &[])?;
            Ok(Out::Done)
        }
        other => Err(unknown_type(other)),
    }
}

/// The line as a JSON object (each key once) and its `type`.
fn typed_object(line: &str) -> Result<(String, Map<String, Value>), LineError> {
    let Strict(v) = serde_json::from_str(line).map_err(|e| {
        if e.to_string().starts_with(TWICE) {
            return err(
                format!("a line with {e}"),
                "write each key of an object once",
            );
        }
        err(
            format!("not a JSON object: {e}"),
            "write exactly one JSON object per line, and nothing else on stdout (send debug output to stderr, or as {\"type\":\"log\",\"text\":\"...\"})",
        )
    })?;
    let Value::Object(o) = v else {
        return Err(err(
            format!("a line that is JSON but not an object: {v}"),
            "every line is an object with a \"type\", e.g. {\"type\":\"done\"}",
        ));
    };
    match o.get("type") {
        Some(Value::String(t)) => Ok((t.clone(), o)),
        _ => Err(err(
            "a line without a string \"type\"",
            format!(
                "give every line a \"type\": one of {}",
                OUT_TYPES.join(", ")
            ),
        )),
    }
}

/// How to write a line of `kind`: the fix for a wrong value in it.
fn fix(kind: &str) -> String {
    format!("write it as {}", example(kind))
}

fn parse_send(o: &Map<String, Value>) -> Result<Out, LineError> {
    known_fields(o, "send", &["to", "payload"])?;
    Ok(Out::Send {
        to: string(o, "send", "to")?,
        payload: field(o, "send", "payload")?.clone(),
    })
}

fn parse_set_timer(o: &Map<String, Value>) -> Result<Out, LineError> {
    known_fields(o, "set_timer", &["id", "after_ms", "after_us"])?;
    let id = string(o, "set_timer", "id")?;
    let after_us = match (o.get("after_ms"), o.get("after_us")) {
        (Some(ms), None) => number(ms, "`after_ms`", MAX_AFTER_MS, &fix("set_timer"))? * 1000,
        (None, Some(us)) => number(us, "`after_us`", MAX_AFTER_MS * 1000, &fix("set_timer"))?,
        _ => {
            return Err(err(
                "a `set_timer` line needs exactly one of `after_ms` and `after_us`",
                fix("set_timer"),
            ))
        }
    };
    Ok(Out::SetTimer { id, after_us })
}

fn parse_effect(o: &Map<String, Value>) -> Result<Out, LineError> {
    known_fields(o, "effect", &["op", "payload"])?;
    let max = u64::from(u32::MAX);
    Ok(Out::Effect {
        op: number(field(o, "effect", "op")?, "`op`", max, &fix("effect"))? as u32,
        payload: number(
            field(o, "effect", "payload")?,
            "`payload`",
            max,
            &fix("effect"),
        )? as u32,
    })
}

fn parse_draw(o: &Map<String, Value>) -> Result<Out, LineError> {
    known_fields(o, "draw", &["name", "bound"])?;
    let name = string(o, "draw", "name")?;
    let bound = number(
        field(o, "draw", "bound")?,
        "`bound`",
        MAX_DRAW_BOUND,
        &fix("draw"),
    )?;
    if bound == 0 {
        return Err(err(
            "a `draw` with `bound` 0 has no value to choose",
            format!(
                "give the number of values to choose from, 1 or more: {}",
                example("draw")
            ),
        ));
    }
    Ok(Out::Draw { name, bound })
}

fn parse_log(o: &Map<String, Value>) -> Result<Out, LineError> {
    known_fields(o, "log", &["text"])?;
    match field(o, "log", "text")? {
        Value::String(s) => Ok(Out::Log { text: s.clone() }),
        v => Err(err(
            format!("`text` of a `log` line must be a string, not {v}"),
            fix("log"),
        )),
    }
}

fn unknown_type(other: &str) -> LineError {
    let hint = match did_you_mean(other, OUT_TYPES.iter().copied()) {
        Some(b) => format!("did you mean \"{b}\"? "),
        None => String::new(),
    };
    // The lines idemsim writes are not answers: a program that echoes them is confused.
    let extra = if ["start", "msg", "timer", "drawn"].contains(&other) {
        " (that is a line idemsim writes to the program, not one it reads)"
    } else {
        ""
    };
    err(
        format!("unknown type \"{other}\"{extra}"),
        format!(
            "{hint}a program writes {}, and ends every handler with {{\"type\":\"done\"}}",
            OUT_TYPES.join(", ")
        ),
    )
}

/// A payload that is not a message its receiver takes: what is wrong, and
/// the message to send instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadError {
    /// What is wrong with the payload.
    pub what: String,
    /// How the program should write it.
    pub fix: String,
}

/// The line error for a payload the role refused.
pub fn payload_error(to: &str, e: PayloadError) -> LineError {
    err(
        format!(
            "the payload of a `send` to \"{to}\" is not a message it takes: {}",
            e.what
        ),
        e.fix,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_line_type_parses() {
        assert_eq!(
            parse(example("send")).unwrap(),
            Out::Send {
                to: "broker".into(),
                payload: json!({"type":"ack","id":1,"receipt":1})
            }
        );
        assert_eq!(
            parse(example("set_timer")).unwrap(),
            Out::SetTimer {
                id: "work:1".into(),
                after_us: 200_000
            }
        );
        assert_eq!(
            parse(r#"{"type":"set_timer","id":"t","after_us":5}"#).unwrap(),
            Out::SetTimer {
                id: "t".into(),
                after_us: 5
            }
        );
        assert_eq!(
            parse(example("cancel_timer")).unwrap(),
            Out::CancelTimer {
                id: "work:1".into()
            }
        );
        assert_eq!(
            parse(example("effect")).unwrap(),
            Out::Effect {
                op: 1,
                payload: 1200
            }
        );
        assert_eq!(
            parse(example("store")).unwrap(),
            Out::Store {
                key: "processed:1".into(),
                value: json!(true)
            }
        );
        assert_eq!(
            parse(example("log")).unwrap(),
            Out::Log {
                text: "what happened".into()
            }
        );
        assert_eq!(parse(r#"{"type":"done"}"#).unwrap(), Out::Done);
        assert_eq!(
            parse(example("draw")).unwrap(),
            Out::Draw {
                name: "retry".into(),
                bound: 3
            }
        );
        assert_eq!(
            parse(example("hello")).unwrap(),
            Out::Hello { protocol: PROTOCOL }
        );
    }

    #[test]
    fn a_draw_needs_a_value_to_choose() {
        let e = parse(r#"{"type":"draw","name":"x","bound":0}"#).unwrap_err();
        assert!(e.what.contains("bound` 0"), "{e:?}");
        let e = parse(r#"{"type":"draw","name":"x","bound":4294967297}"#).unwrap_err();
        assert!(e.what.contains("from 0 to 4294967296"), "{e:?}");
        let e = parse(r#"{"type":"draw","bound":2}"#).unwrap_err();
        assert!(e.what.contains("without `name`"), "{e:?}");
        assert_eq!(
            drawn("x\"", 3),
            r#"{"type":"drawn","name":"x\"","value":3}"#
        );
    }

    #[test]
    fn mistakes_are_named_with_a_fix() {
        let e = parse("hello").unwrap_err();
        assert!(e.what.contains("not a JSON object"), "{e:?}");
        assert!(e.fix.contains("stderr"), "{e:?}");
        let e = parse(r#"{"type":"sned","to":"x","payload":{}}"#).unwrap_err();
        assert!(e.what.contains("unknown type \"sned\""), "{e:?}");
        assert!(e.fix.contains("did you mean \"send\""), "{e:?}");
        let e = parse(r#"{"type":"effect","op":-1,"payload":3}"#).unwrap_err();
        assert!(e.what.contains("`op` must be a whole number"), "{e:?}");
        let e = parse(r#"{"type":"set_timer","id":"a"}"#).unwrap_err();
        assert!(e.what.contains("exactly one of"), "{e:?}");
        let e = parse(r#"{"type":"store","key":"a","valeu":1}"#).unwrap_err();
        assert!(e.fix.contains("did you mean `value`"), "{e:?}");
        let e = parse(r#"{"type":"msg"}"#).unwrap_err();
        assert!(e.what.contains("idemsim writes"), "{e:?}");
        let e = parse(r#"{"type":"log","text":5}"#).unwrap_err();
        assert!(e.what.contains("must be a string, not 5"), "{e:?}");
        let e = parse("[1]").unwrap_err();
        assert!(e.what.contains("not an object"), "{e:?}");
        let e = parse(r#"{"type":"effect","op":1,"payload":1200,"op":2}"#).unwrap_err();
        assert!(
            e.what.starts_with("a line with the key \"op\" twice"),
            "{e:?}"
        );
        let e = parse(r#"{"type":"send","to":"b","payload":{"id":1,"id":1}}"#).unwrap_err();
        assert!(e.what.contains("the key \"id\" twice"), "{e:?}");
    }

    #[test]
    fn inputs_are_one_json_object_per_line() {
        let mut storage = BTreeMap::new();
        storage.insert("processed:1".to_string(), json!(true));
        let s = start("consumer-1", (true, 5), "", &storage);
        assert_eq!(
            s,
            r#"{"type":"start","protocol":3,"actor":"consumer-1","restarted":true,"now_us":5,"storage":{"processed:1":true}}"#
        );
        let s = start("server", (false, 0), r#","resources":[]"#, &BTreeMap::new());
        assert_eq!(
            s,
            r#"{"type":"start","protocol":3,"actor":"server","restarted":false,"now_us":0,"resources":[],"storage":{}}"#
        );
        let m = msg("broker", 1, &json!({"a": "b\nc"}).to_string());
        assert!(!m.contains('\n'));
        let back: Value = serde_json::from_str(&m).unwrap();
        assert_eq!(back["payload"]["a"], "b\nc");
        assert_eq!(timer("w\"", 3), r#"{"type":"timer","id":"w\"","now_us":3}"#);
    }
}
