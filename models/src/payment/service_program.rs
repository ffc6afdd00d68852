//! The payment service's role for an external program (`[service] program
//! = [...]`, docs/protocol.md): the clients' payment requests and the
//! bank's answers go to the program as JSON; its answers to the clients and
//! its transfers and status queries to the bank come back. The money leaves
//! at the bank, so the program reports no effects: the ledger counts the
//! bank's transfers, and judges the program by them.

use super::msg::{Msg, PayStatus};
use super::program::{key_of, num, op_of, reference};
use super::{CLAIM, SERVICE_LAYER};
use crate::core::{Key, Obs, Op};
use crate::external::{External, PayloadError, Role};
use serde_json::{json, Map, Value};
use sim::SituationId;

/// A user's program in the payment service's place.
pub type ProgramService<W> = External<W, ServiceRole>;

/// The payment service's role for a program: what it receives and may send.
pub struct ServiceRole;

const REPLY_EXAMPLE: &str =
    r#"{"type":"pay-reply","claim":4711,"part":0,"attempt":1,"status":"paid","amount_eur":120}"#;
const TRANSFER_EXAMPLE: &str = r#"{"type":"transfer","claim":4711,"part":0,"amount_eur":120,"reference":{"claim":4711,"part":0,"n":1,"passed":true}}"#;
const QUERY_EXAMPLE: &str = r#"{"type":"status-query","claim":4711,"part":0,"question":1}"#;

/// The statuses of a `pay-reply`, as a program writes them.
const STATUSES: &[(&str, PayStatus)] = &[
    ("paid", PayStatus::Paid),
    ("in-progress", PayStatus::InProgress),
    ("mismatch", PayStatus::Mismatch),
    ("overloaded", PayStatus::Overloaded),
    ("gateway-timeout", PayStatus::GatewayTimeout),
];

impl crate::core::Ends for ServiceRole {
    const ROLES: &'static [&'static str] = &["service"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("pay-reply", "client"),
        ("status-reply", "client"),
        ("transfer", "bank"),
        ("status-query", "bank"),
    ];
    const ANSWERS: &'static [(&'static str, &'static str)] =
        &[("pay-reply", "pay"), ("status-reply", "status-query")];
}

fn bad(what: impl Into<String>) -> PayloadError {
    PayloadError {
        what: what.into(),
        fix: format!(
            "a payment service answers a client with {REPLY_EXAMPLE} (status paid, in-progress, mismatch, overloaded or gateway-timeout), pays through the bank with {TRANSFER_EXAMPLE} (an optional \"if_paid_eur\" makes it conditional; \"passed\": false keeps the key from the bank) and asks it with {QUERY_EXAMPLE}"
        ),
    }
}

/// A helper of the bank's codec, its error told with the service's fix.
fn field<T>(r: Result<T, PayloadError>) -> Result<T, PayloadError> {
    r.map_err(|e| bad(e.what))
}

/// A `pay-reply` as the program wrote it.
fn pay_reply(o: &Map<String, Value>) -> Result<Msg, PayloadError> {
    let status = o.get("status").and_then(Value::as_str);
    let Some(&(_, status)) = STATUSES.iter().find(|(n, _)| Some(*n) == status) else {
        let names: Vec<_> = STATUSES.iter().map(|s| s.0).collect();
        return Err(bad(format!("`status` must be one of {}", names.join(", "))));
    };
    Ok(Msg::PayReply {
        op: field(op_of(o))?,
        attempt: field(num(o, "attempt", u64::from(u32::MAX)))? as u32,
        status,
        amount_eur: field(num(o, "amount_eur", u64::from(u32::MAX)))? as u32,
    })
}

/// A `transfer` as the program wrote it: its reference (the key it pays
/// under, handed on to the bank when `passed`), and an optional condition.
fn transfer(o: &Map<String, Value>) -> Result<Msg, PayloadError> {
    let (key, key_passed) = match o.get("reference") {
        None | Some(Value::Null) => (Key::None, false),
        r => key_of(r).map_err(|_| {
            bad("`reference` must be an object like {\"claim\":4711,\"part\":0,\"n\":1,\"passed\":true} (the `key` of the pay, or one of the service's own)")
        })?,
    };
    let if_paid_eur = match o.get("if_paid_eur") {
        None | Some(Value::Null) => None,
        Some(_) => Some(field(num(o, "if_paid_eur", u64::from(u32::MAX)))? as u32),
    };
    Ok(Msg::Transfer {
        op: field(op_of(o))?,
        key,
        key_passed,
        amount_eur: field(num(o, "amount_eur", u64::from(u32::MAX)))? as u32,
        if_paid_eur,
        // A program is one version: no rollouts.
        version: 0,
    })
}

impl Role for ServiceRole {
    type Msg = Msg;
    const NAME: &'static str = "payment service";
    /// The payment model has no situation for a request arriving after its
    /// transfer: the ledger judges a second transfer itself.
    const REDELIVERED_AFTER_EFFECT: Option<SituationId> = None;
    const NO_EFFECTS: Option<&'static str> = Some(
        "the money leaves at the bank, which reports the transfer: send the bank a transfer instead of an effect",
    );

    /// Payment requests and status queries from clients, the bank's answers.
    fn incoming(msg: &Msg) -> Option<String> {
        let v = match *msg {
            Msg::Pay {
                op,
                attempt,
                key,
                amount_eur,
                timeout_ms,
            } => json!({
                "type": "pay",
                "claim": op.id,
                "part": op.part,
                "attempt": attempt,
                "amount_eur": amount_eur,
                "timeout_ms": timeout_ms,
                "idempotency_key": key.is_some().then(|| key.to_string()),
                "key": key.is_some().then(|| reference(key, true)),
            }),
            Msg::TransferDone {
                op,
                key,
                key_passed,
                result,
            } => {
                let mut v = json!({
                    "type": "transfer-done",
                    "claim": op.id,
                    "part": op.part,
                    "reference": reference(key, key_passed),
                    "result": "done",
                });
                if let super::msg::TransferResult::Refused { paid_eur } = result {
                    v["result"] = "refused".into();
                    v["paid_eur"] = paid_eur.into();
                }
                v
            }
            Msg::StatusQuery { op, question } => json!({
                "type": "status-query", "claim": op.id, "part": op.part, "question": question,
            }),
            Msg::StatusReply {
                op,
                question,
                paid_eur,
            } => json!({
                "type": "status-reply", "claim": op.id, "part": op.part,
                "question": question, "paid_eur": paid_eur,
            }),
            // Refunds go from the client's compensation job to the bank.
            Msg::PayReply { .. }
            | Msg::Transfer { .. }
            | Msg::Refund { .. }
            | Msg::RefundDone { .. } => return None,
        };
        Some(v.to_string())
    }

    /// A payment request arrived at the service, whatever the program makes of it.
    fn arrival(msg: &Msg) -> Option<(u32, Obs)> {
        match *msg {
            Msg::Pay { op, key, .. } => Some((
                op.id,
                Obs::Received {
                    layer: &SERVICE_LAYER,
                    op,
                    key,
                },
            )),
            _ => None,
        }
    }

    fn outgoing(to: &str, payload: &Value) -> Result<Msg, PayloadError> {
        let Value::Object(o) = payload else {
            return Err(bad(format!("{payload} is not an object")));
        };
        let (msg, to_bank) = match o.get("type").and_then(Value::as_str) {
            Some("pay-reply") => (pay_reply(o)?, false),
            Some("transfer") => (transfer(o)?, true),
            Some("status-query") => (
                Msg::StatusQuery {
                    op: field(op_of(o))?,
                    question: field(num(o, "question", u64::from(u32::MAX)))? as u32,
                },
                true,
            ),
            Some("status-reply") => (
                Msg::StatusReply {
                    op: field(op_of(o))?,
                    question: field(num(o, "question", u64::from(u32::MAX)))? as u32,
                    paid_eur: field(num(o, "paid_eur", u64::from(u32::MAX)))? as u32,
                },
                false,
            ),
            Some(other) => return Err(bad(format!("a payment service cannot send \"{other}\""))),
            None => return Err(bad("it has no \"type\"")),
        };
        let ok = match to_bank {
            true => to == "bank",
            false => to == "client" || to.starts_with("client-"),
        };
        if !ok {
            let goes = if to_bank { "the bank" } else { "a client" };
            return Err(bad(format!("this message goes to {goes}, not to \"{to}\"")));
        }
        Ok(msg)
    }

    /// Never called: `NO_EFFECTS` above refuses a service's effect.
    fn effect(op: u32, payload: u32) -> Obs {
        Obs::Effect {
            site: &super::TRANSFER,
            op: Op::new(&CLAIM, op),
            payload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pay_goes_out_with_its_key_and_a_transfer_comes_back() {
        let op = Op::new(&CLAIM, 4711);
        let key = Key::Op { op, n: 1 };
        let pay = Msg::Pay {
            op,
            attempt: 2,
            key,
            amount_eur: 120,
            timeout_ms: 3000,
        };
        let v: Value = serde_json::from_str(&ServiceRole::incoming(&pay).unwrap()).unwrap();
        assert_eq!(v["idempotency_key"], "zahl-4711-01");
        let t = json!({"type": "transfer", "claim": 4711, "part": 0, "amount_eur": 120,
            "reference": v["key"]});
        assert_eq!(
            ServiceRole::outgoing("bank", &t),
            Ok(Msg::Transfer {
                op,
                key,
                key_passed: true,
                amount_eur: 120,
                if_paid_eur: None,
                version: 0,
            })
        );
        assert!(ServiceRole::outgoing("client", &t).is_err());
        let r = json!({"type": "pay-reply", "claim": 4711, "part": 0, "attempt": 2,
            "status": "in-progress", "amount_eur": 0});
        assert!(ServiceRole::outgoing("client-3", &r).is_ok());
        assert!(ServiceRole::outgoing("bank", &r).is_err());
        assert_eq!(ServiceRole::arrival(&pay).map(|a| a.0), Some(4711));
    }

    #[test]
    fn a_wrong_answer_says_what_to_send() {
        for wrong in [
            json!({"type": "pay-reply", "claim": 1, "part": 0, "attempt": 1, "status": "ok", "amount_eur": 1}),
            json!({"type": "transfer", "claim": 1, "part": 0, "amount_eur": 1, "reference": 3}),
            json!({"type": "transfer", "claim": 1, "part": 0}),
            json!({"type": "transfer-done"}),
        ] {
            let e = ServiceRole::outgoing("bank", &wrong).unwrap_err();
            assert!(e.fix.contains(TRANSFER_EXAMPLE), "{wrong}: {e:?}");
        }
    }
}
