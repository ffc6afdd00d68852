//! The outbox relay's role for an external program (`[relay] program =
//! [...]`, docs/protocol.md). The producer commits its state change and
//! the outbox row in one transaction, as with the built-in relay; the rows
//! reach the program as `publish` lines from `producer` (the outbox table
//! as the relay reads it, each unconfirmed row again at the producer's
//! `publish_timeout_ms`), the program publishes them to the broker, and its
//! `publish-ack` to the producer marks the row sent. The effects are the
//! consumers' writes, so the program reports none: a row it marks sent
//! before the broker has it is a lost event, one it publishes twice a
//! duplicate the consumers must survive.

use super::msg::{Event, Msg};
use super::ENTITY;
use crate::core::Obs;
use crate::external::{External, PayloadError, Role};
use serde_json::{Map, Value};
use sim::SituationId;

/// A user's program as the outbox relay.
pub type ProgramRelay<W> = External<W, RelayRole>;

/// The outbox relay's role for a program: what it receives and may send.
pub struct RelayRole;

const PUBLISH_EXAMPLE: &str =
    r#"{"type":"publish","event":{"id":1,"entity":4711,"value":1200,"version":1}}"#;
const ACK_EXAMPLE: &str = r#"{"type":"publish-ack","id":1}"#;

impl crate::core::Ends for RelayRole {
    const ROLES: &'static [&'static str] = &["relay"];
    const SENDS: &'static [(&'static str, &'static str)] =
        &[("publish", "broker"), ("publish-ack", "producer")];
    const ANSWERS: &'static [(&'static str, &'static str)] = &[("publish-ack", "publish")];
}

fn bad(what: impl Into<String>) -> PayloadError {
    PayloadError {
        what: what.into(),
        fix: format!(
            "a relay publishes a row to the broker with {PUBLISH_EXAMPLE}, the event as the producer's row had it, and marks the row sent with {ACK_EXAMPLE} to the producer"
        ),
    }
}

fn num(o: &Map<String, Value>, name: &str) -> Result<u32, PayloadError> {
    o.get(name)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            bad(format!(
                "`{name}` must be a whole number from 0 to {}",
                u32::MAX
            ))
        })
}

/// The event of a `publish`, as the row had it.
fn event(o: &Map<String, Value>) -> Result<Event, PayloadError> {
    let Some(Value::Object(e)) = o.get("event") else {
        return Err(bad("a publish has an `event` object"));
    };
    Ok(Event {
        id: num(e, "id")?,
        entity: num(e, "entity")?,
        value: num(e, "value")?,
        version: num(e, "version")?,
        entity_space: &ENTITY,
        entity_part: 0,
    })
}

impl Role for RelayRole {
    type Msg = Msg;
    const NAME: &'static str = "outbox relay";
    /// A relay has no effects, so nothing arrives after one.
    const REDELIVERED_AFTER_EFFECT: Option<SituationId> = None;
    const NO_EFFECTS: Option<&'static str> = Some(
        "a relay's effects are the consumers' writes: publish the row to the broker instead of an effect",
    );

    /// The producer's rows and the broker's confirmations, written by hand
    /// (numbers only) so that `type` comes first.
    fn incoming(msg: &Msg) -> Option<String> {
        match msg {
            // An idempotent producer numbers its rows' publishes; the
            // program publishes them as it sees fit.
            Msg::Publish { ev } | Msg::SeqPublish { ev, .. } => Some(format!(
                r#"{{"type":"publish","event":{{"id":{},"entity":{},"value":{},"version":{}}}}}"#,
                ev.id, ev.entity, ev.value, ev.version
            )),
            Msg::PublishAck { id, duplicate } => Some(format!(
                r#"{{"type":"publish-ack","id":{id},"duplicate":{duplicate}}}"#
            )),
            _ => None,
        }
    }

    fn arrival(_msg: &Msg) -> Option<(u32, Obs)> {
        None
    }

    fn outgoing(to: &str, payload: &Value) -> Result<Msg, PayloadError> {
        let Value::Object(o) = payload else {
            return Err(bad(format!("{payload} is not an object")));
        };
        let (msg, goes_to) = match o.get("type").and_then(Value::as_str) {
            Some("publish") => (Msg::Publish { ev: event(o)? }, "broker"),
            Some("publish-ack") => (
                Msg::PublishAck {
                    id: num(o, "id")?,
                    duplicate: o.get("duplicate").and_then(Value::as_bool).unwrap_or(false),
                },
                "producer",
            ),
            Some(other) => return Err(bad(format!("a relay cannot send \"{other}\""))),
            None => return Err(bad("it has no \"type\"")),
        };
        if to != goes_to {
            return Err(bad(format!(
                "this message goes to the {goes_to}, not to \"{to}\""
            )));
        }
        Ok(msg)
    }

    /// Never called: `NO_EFFECTS` above refuses a relay's effect.
    fn effect(op: u32, payload: u32) -> Obs {
        Obs::Effect {
            site: &super::CONSUMER_WRITE,
            op: crate::core::Op::new(&super::EVENT, op),
            payload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_goes_out_as_json_and_comes_back_as_a_publish_and_a_mark() {
        let ev = Event {
            id: 2,
            entity: 4711,
            value: 1200,
            version: 1,
            entity_space: &ENTITY,
            entity_part: 0,
        };
        let text = RelayRole::incoming(&Msg::Publish { ev }).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            RelayRole::outgoing("broker", &v),
            Ok(Msg::Publish { ev }),
            "{text}"
        );
        assert!(RelayRole::outgoing("producer", &v).is_err());
        let mark = json!({"type": "publish-ack", "id": 2});
        assert_eq!(
            RelayRole::outgoing("producer", &mark),
            Ok(Msg::PublishAck {
                id: 2,
                duplicate: false
            })
        );
        let e = RelayRole::outgoing("broker", &json!({"type": "publish", "event": {"id": 2}}))
            .unwrap_err();
        assert!(e.fix.contains(PUBLISH_EXAMPLE), "{e:?}");
    }
}
