//! The bank's role for an external program (`[bank] program = [...]`,
//! docs/protocol.md): transfers and status queries go to the program as
//! JSON, its answers come back to the service (or the client that asked),
//! and its effects are the transfers the ledger counts, since the bank is
//! where money leaves.

use super::msg::{Msg, TransferResult};
use super::{BANK_LAYER, CLAIM, TRANSFER};
use crate::core::{Key, Obs, Op};
use crate::external::{External, PayloadError, Role};
use serde_json::{json, Map, Value};
use sim::SituationId;

/// A user's program in the bank's place.
pub type ProgramBank<W> = External<W, BankRole>;

/// The bank's role for a program: what it receives and may send.
pub struct BankRole;

const DONE_EXAMPLE: &str = r#"{"type":"transfer-done","claim":4711,"part":0,"reference":{"claim":4711,"part":0,"n":1,"passed":true},"result":"done"}"#;
const REFUSED_EXAMPLE: &str = r#"{"type":"transfer-done","claim":4711,"part":0,"reference":{...},"result":"refused","paid_eur":120}"#;
const STATUS_EXAMPLE: &str =
    r#"{"type":"status-reply","claim":4711,"part":0,"question":3,"paid_eur":120}"#;

impl crate::core::Ends for BankRole {
    const ROLES: &'static [&'static str] = &["bank"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("transfer-done", "service"),
        ("status-reply", "service"),
        ("status-reply", "client"),
    ];
    const ANSWERS: &'static [(&'static str, &'static str)] = &[
        ("transfer-done", "transfer"),
        ("status-reply", "status-query"),
    ];
}

/// The reference a transfer names (the service's key, and whether it is
/// also the idempotency key): the program echoes it in its answer.
pub(super) fn reference(key: Key, passed: bool) -> Value {
    match key {
        Key::None => json!({ "passed": passed }),
        Key::Op { op, n } => json!({"claim": op.id, "part": op.part, "n": n, "passed": passed}),
        Key::Time { bucket } => json!({ "time": bucket, "passed": passed }),
    }
}

fn bad(what: String) -> PayloadError {
    PayloadError {
        what,
        fix: format!(
            "a bank answers a transfer with {DONE_EXAMPLE} (or {REFUSED_EXAMPLE} when its condition no longer holds), echoing the transfer's claim, part and reference, and a status query with {STATUS_EXAMPLE}"
        ),
    }
}

pub(super) fn num(o: &Map<String, Value>, name: &str, max: u64) -> Result<u64, PayloadError> {
    o.get(name)
        .and_then(Value::as_u64)
        .filter(|n| *n <= max)
        .ok_or_else(|| bad(format!("`{name}` must be a whole number from 0 to {max}")))
}

/// The claim and part a payload names.
pub(super) fn op_of(o: &Map<String, Value>) -> Result<Op, PayloadError> {
    let claim = num(o, "claim", u64::from(u32::MAX))? as u32;
    let part = num(o, "part", u64::from(u8::MAX))? as u8;
    Ok(Op::part(&CLAIM, claim, part))
}

/// A reference as [`reference`] wrote it, back to its key.
pub(super) fn key_of(v: Option<&Value>) -> Result<(Key, bool), PayloadError> {
    let echo = || bad("`reference` must be the transfer's reference, echoed as it came".into());
    let Some(Value::Object(r)) = v else {
        return Err(echo());
    };
    let passed = r.get("passed").and_then(Value::as_bool).ok_or_else(echo)?;
    let key = if let Some(bucket) = r.get("time") {
        Key::Time {
            bucket: bucket.as_u64().ok_or_else(echo)?,
        }
    } else if r.contains_key("claim") {
        let n = num(r, "n", u64::from(u32::MAX)).map_err(|_| echo())? as u32;
        Key::Op {
            op: op_of(r).map_err(|_| echo())?,
            n,
        }
    } else {
        Key::None
    };
    Ok((key, passed))
}

impl Role for BankRole {
    type Msg = Msg;
    const NAME: &'static str = "bank";
    /// The payment model has no situation for a transfer asked again after
    /// the program paid it: the ledger judges a second payment itself.
    const REDELIVERED_AFTER_EFFECT: Option<SituationId> = None;

    /// Transfers and status queries; written with serde (a reference is an
    /// object), `type` first as people read it.
    fn incoming(msg: &Msg) -> Option<String> {
        let v = match *msg {
            Msg::Transfer {
                op,
                key,
                key_passed,
                amount_eur,
                if_paid_eur,
                ..
            } => json!({
                "type": "transfer",
                "claim": op.id,
                "part": op.part,
                "amount_eur": amount_eur,
                "if_paid_eur": if_paid_eur,
                "idempotency_key": key_passed.then(|| key.to_string()).filter(|_| key.is_some()),
                "reference": reference(key, key_passed),
            }),
            Msg::StatusQuery { op, question } => json!({
                "type": "status-query",
                "claim": op.id,
                "part": op.part,
                "question": question,
            }),
            _ => return None,
        };
        Some(v.to_string())
    }

    /// A transfer arrived at the bank, whatever the program makes of it.
    fn arrival(msg: &Msg) -> Option<(u32, Obs)> {
        match *msg {
            Msg::Transfer {
                op,
                key,
                key_passed,
                ..
            } => Some((
                op.id,
                Obs::Received {
                    layer: &BANK_LAYER,
                    op,
                    key: super::msg::wire(key, key_passed),
                },
            )),
            _ => None,
        }
    }

    fn outgoing(to: &str, payload: &Value) -> Result<Msg, PayloadError> {
        let Value::Object(o) = payload else {
            return Err(bad(format!("{payload} is not an object")));
        };
        let msg = match o.get("type").and_then(Value::as_str) {
            Some("transfer-done") => {
                let (key, key_passed) = key_of(o.get("reference"))?;
                let result = match o.get("result").and_then(Value::as_str) {
                    Some("done") => TransferResult::Done,
                    Some("refused") => TransferResult::Refused {
                        paid_eur: num(o, "paid_eur", u64::from(u32::MAX))? as u32,
                    },
                    _ => return Err(bad("`result` must be \"done\" or \"refused\"".into())),
                };
                Msg::TransferDone {
                    op: op_of(o)?,
                    key,
                    key_passed,
                    result,
                }
            }
            Some("status-reply") => Msg::StatusReply {
                op: op_of(o)?,
                question: num(o, "question", u64::from(u32::MAX))? as u32,
                paid_eur: num(o, "paid_eur", u64::from(u32::MAX))? as u32,
            },
            Some(other) => return Err(bad(format!("a bank cannot send \"{other}\""))),
            None => return Err(bad("it has no \"type\"".into())),
        };
        // A transfer's answer goes to the service that asked; a status
        // reply to whoever asked (the service, or a client reconciling).
        let ok = match msg {
            Msg::TransferDone { .. } => to == "service",
            _ => to == "service" || to.starts_with("client"),
        };
        if !ok {
            return Err(bad(format!("\"{to}\" asks the bank nothing this answers")));
        }
        Ok(msg)
    }

    /// A transfer executed: money left the bank for the claim `op`
    /// (its first payment), `payload` euros.
    fn effect(op: u32, payload: u32) -> Obs {
        Obs::Effect {
            site: &TRANSFER,
            op: Op::new(&CLAIM, op),
            payload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_goes_out_as_json_and_its_answer_comes_back() {
        let op = Op::new(&CLAIM, 4711);
        let key = Key::Op { op, n: 1 };
        let t = Msg::Transfer {
            op,
            key,
            key_passed: true,
            amount_eur: 120,
            if_paid_eur: None,
            version: 0,
        };
        let text = BankRole::incoming(&t).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["idempotency_key"], "zahl-4711-01", "{text}");
        assert_eq!(v["if_paid_eur"], Value::Null, "{text}");
        let answer = json!({"type": "transfer-done", "claim": 4711, "part": 0,
            "reference": v["reference"], "result": "done"});
        assert_eq!(
            BankRole::outgoing("service", &answer),
            Ok(Msg::TransferDone {
                op,
                key,
                key_passed: true,
                result: TransferResult::Done
            })
        );
        // Without its key handed on, the bank sees no idempotency key.
        let unkeyed = Msg::Transfer {
            op,
            key,
            key_passed: false,
            amount_eur: 120,
            if_paid_eur: Some(0),
            version: 0,
        };
        let v: Value = serde_json::from_str(&BankRole::incoming(&unkeyed).unwrap()).unwrap();
        assert_eq!(v["idempotency_key"], Value::Null);
        assert_eq!(BankRole::arrival(&t).map(|a| a.0), Some(4711));
    }

    #[test]
    fn a_wrong_answer_says_what_to_send() {
        for bad in [
            json!({"type": "transfer-done", "claim": 1, "part": 0, "result": "done"}),
            json!({"type": "transfer-done", "claim": 1, "part": 0, "reference": {"passed": true}, "result": "ok"}),
            json!({"type": "status-reply", "claim": 1, "part": 0}),
            json!({"type": "pay"}),
        ] {
            let e = BankRole::outgoing("service", &bad).unwrap_err();
            assert!(e.fix.contains(DONE_EXAMPLE), "{bad}: {e:?}");
        }
        let status =
            json!({"type": "status-reply", "claim": 1, "part": 0, "question": 2, "paid_eur": 0});
        assert!(BankRole::outgoing("client", &status).is_ok());
        assert!(BankRole::outgoing("bank", &status).is_err());
    }
}
