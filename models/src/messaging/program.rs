//! The consumer's role for an external program (`[consumer] program = [...]`,
//! docs/protocol.md): deliveries go to the program as JSON, with the
//! broker's redelivered flag, its acks and lease extensions come back to the
//! broker, and its effects are writes in its own database, so
//! the program is where they land.

use super::situations as sit;
use super::{Msg, CONSUMER_LAYER, CONSUMER_WRITE, EVENT};
use crate::core::{Key, Obs, Op};
use crate::external::{External, PayloadError, Role};
use serde_json::Value;
use sim::SituationId;

/// A user's program in the consumer's place.
pub type ProgramConsumer<W> = External<W, ConsumerRole>;

/// The messaging consumer's role for a program: what it receives and may send.
pub struct ConsumerRole;

const ACK_EXAMPLE: &str = r#"{"type":"ack","id":1,"receipt":1}"#;
const ACK_RESULT_EXAMPLE: &str = r#"{"type":"ack","id":1,"receipt":1,"result":true}"#;
const EXTEND_EXAMPLE: &str = r#"{"type":"extend","id":1,"receipt":1}"#;

impl crate::core::Ends for ConsumerRole {
    const ROLES: &'static [&'static str] = &["consumer"];
    /// A program may ask for the result of any ack it sends.
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("ack", "broker"),
        (super::ACK_WITH_RESULT, "broker"),
        ("extend", "broker"),
    ];
}

impl Role for ConsumerRole {
    type Msg = Msg;
    const NAME: &'static str = "consumer";
    /// The role protocol 1 had.
    const SINCE_PROTOCOL: u64 = 1;

    const REDELIVERED_AFTER_EFFECT: Option<SituationId> = Some(sit::PROGRAM_EFFECT_REDELIVERED);
    const OLD_CONNECTION: Option<SituationId> = Some(sit::DELIVERY_ON_OLD_CONNECTION);

    /// A delivery comes over the program's connection to the broker, as
    /// it does to a built-in consumer.
    fn connection_sent_us(msg: &Msg) -> Option<sim::TimeUs> {
        match msg {
            Msg::Deliver { sent_us, .. } => Some(*sent_us),
            _ => None,
        }
    }

    fn frame_id(msg: &Msg) -> Option<u32> {
        match msg {
            Msg::Deliver { receipt, .. } => Some(*receipt),
            _ => None,
        }
    }

    /// A consumer gets deliveries, and the result of an ack that asked for
    /// one; nothing else reaches it from the built-in actors. Written by hand
    /// (numbers only, nothing to escape) so that `type` comes first, as
    /// people read it.
    fn incoming(msg: &Msg) -> Option<String> {
        match msg {
            Msg::AckResult { id, receipt, ok } => Some(format!(
                r#"{{"type":"ack-result","id":{id},"receipt":{receipt},"ok":{ok}}}"#
            )),
            Msg::Deliver {
                ev,
                receipt,
                redelivered,
                ..
            } => Some(format!(
                r#"{{"type":"deliver","event":{{"id":{},"entity":{},"value":{},"version":{}}},"receipt":{receipt},"redelivered":{redelivered}}}"#,
                ev.id, ev.entity, ev.value, ev.version
            )),
            _ => None,
        }
    }

    /// A delivery happened: idemsim saw it, whatever the program makes of it.
    fn arrival(msg: &Msg) -> Option<(u32, Obs)> {
        match msg {
            Msg::Deliver { ev, .. } => Some((
                ev.id,
                Obs::Received {
                    layer: &CONSUMER_LAYER,
                    op: ev.op(),
                    key: Key::None,
                },
            )),
            _ => None,
        }
    }

    fn outgoing(to: &str, payload: &Value) -> Result<Msg, PayloadError> {
        let bad = |what: String| {
            PayloadError {
            what,
            fix: format!(
                "a consumer sends acks to the broker, {ACK_EXAMPLE} (or {ACK_RESULT_EXAMPLE} to be told whether it counted), and lease extensions, {EXTEND_EXAMPLE}, with the id and receipt of the delivery"
            ),
        }
        };
        let Value::Object(o) = payload else {
            return Err(bad(format!("{payload} is not an object")));
        };
        let kind = match o.get("type").and_then(Value::as_str) {
            Some(k @ ("ack" | "extend")) => k,
            Some(other) => return Err(bad(format!("a consumer cannot send \"{other}\""))),
            None => return Err(bad("it has no \"type\"".into())),
        };
        if let Some(k) = o.keys().find(|k| {
            !["type", "id", "receipt"].contains(&k.as_str())
                && (kind, k.as_str()) != ("ack", "result")
        }) {
            return Err(bad(format!("an {kind} has no field `{k}`")));
        }
        let result = match o.get("result") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(other) => {
                return Err(bad(format!(
                "`result` of an ack is true (answer whether the ack counted) or false, not {other}"
            )))
            }
        };
        let num = |name: &str| -> Result<u32, PayloadError> {
            o.get(name)
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    bad(format!(
                        "`{name}` of an {kind} must be a whole number from 0 to {}",
                        u32::MAX
                    ))
                })
        };
        let (id, receipt) = (num("id")?, num("receipt")?);
        // Only the broker reads acks and extensions: another actor would
        // drop one unseen, and the run would go on as if it never was sent.
        if to != "broker" {
            return Err(bad(format!(
                "an {kind} goes to the broker, and \"{to}\" takes none"
            )));
        }
        Ok(match kind {
            "ack" if result => Msg::AckWithResult { id, receipt },
            "ack" => Msg::Ack { id, receipt },
            _ => Msg::Extend { id, receipt },
        })
    }

    /// A write in the program's database, for the event `op`, with the
    /// event's value as the payload.
    fn effect(op: u32, payload: u32) -> Obs {
        Obs::Effect {
            site: &CONSUMER_WRITE,
            op: Op::new(&EVENT, op),
            payload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messaging::Event;
    use serde_json::json;

    #[test]
    fn a_delivery_is_json_and_an_ack_comes_back() {
        let ev = Event {
            id: 3,
            entity: 4711,
            value: 1200,
            version: 1,
            entity_space: &crate::messaging::ENTITY,
            entity_part: 0,
        };
        let text = ConsumerRole::incoming(&Msg::Deliver {
            ev,
            receipt: 7,
            redelivered: false,
            sent_us: 0,
        })
        .unwrap();
        assert!(text.starts_with(r#"{"type":"deliver","#), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            json!({"type":"deliver","event":{"id":3,"entity":4711,"value":1200,"version":1},"receipt":7,"redelivered":false})
        );
        let again = ConsumerRole::incoming(&Msg::Deliver {
            ev,
            receipt: 8,
            redelivered: true,
            sent_us: 0,
        })
        .unwrap();
        let v: Value = serde_json::from_str(&again).unwrap();
        assert_eq!(v["redelivered"], json!(true), "{again}");
        assert_eq!(
            ConsumerRole::outgoing("broker", &json!({"type":"extend","id":3,"receipt":8})),
            Ok(Msg::Extend { id: 3, receipt: 8 })
        );
        assert_eq!(
            ConsumerRole::outgoing("broker", &json!({"type":"ack","id":3,"receipt":7})),
            Ok(Msg::Ack { id: 3, receipt: 7 })
        );
        assert!(ConsumerRole::incoming(&Msg::Ack { id: 1, receipt: 1 }).is_none());
        assert_eq!(
            ConsumerRole::arrival(&Msg::Deliver {
                ev,
                receipt: 7,
                redelivered: false,
                sent_us: 0,
            })
            .map(|a| a.0),
            Some(3)
        );
    }

    #[test]
    fn a_wrong_payload_says_what_to_send() {
        for bad in [
            json!("ack"),
            json!({"type":"publish"}),
            json!({"id":1}),
            json!({"type":"ack","id":1}),
            json!({"type":"ack","id":1,"receipt":-2}),
            json!({"type":"ack","id":1,"receipt":2,"extra":0}),
            json!({"type":"extend","id":1}),
            json!({"type":"extend","id":1,"receipt":2,"by_ms":500}),
            json!({"type":"nack","id":1,"receipt":2}),
        ] {
            let e = ConsumerRole::outgoing("broker", &bad).unwrap_err();
            assert!(e.fix.contains(ACK_EXAMPLE), "{bad}: {e:?}");
            assert!(e.fix.contains(EXTEND_EXAMPLE), "{bad}: {e:?}");
        }
        for to in ["producer", "consumer-1"] {
            let e =
                ConsumerRole::outgoing(to, &json!({"type":"ack","id":1,"receipt":1})).unwrap_err();
            assert!(e.what.contains("goes to the broker"), "{to}: {e:?}");
        }
    }
}
