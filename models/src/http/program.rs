//! The HTTP server's role for an external program (`[server] program =
//! [...]`, docs/protocol.md): the clients' requests go to the program as
//! JSON, its responses come back to the client that asked, and its effects
//! are the changes its requests make to the resources, judged by the
//! ledger per request (a POST executed twice is `no-duplicate-effect`).

use super::msg::{Method, Msg, Precondition, Request, Status};
use super::{REQUEST, SERVER_LAYER};
use crate::core::{Obs, Op, Site};
use crate::external::{External, PayloadError, Role};
use serde_json::{json, Map, Value};
use sim::SituationId;

/// A user's program in the HTTP server's place.
pub type ProgramServer<W> = External<W, ServerRole>;

/// The HTTP server's role for a program: what it receives and may send.
pub struct ServerRole;

/// A program's effect: the change one request made to a resource.
pub static CHANGE: Site = Site { name: "change" };

const RESPONSE_EXAMPLE: &str = r#"{"type":"response","request":1,"attempt":1,"method":"POST","status":201,"resource":1,"value":1200,"etag":1,"replayed":false}"#;

const METHODS: &[Method] = &[
    Method::Get,
    Method::Post,
    Method::Put,
    Method::Patch,
    Method::Delete,
];

const STATUSES: &[(u64, Status)] = &[
    (200, Status::Ok),
    (201, Status::Created),
    (204, Status::NoContent),
    (404, Status::NotFound),
    (412, Status::PreconditionFailed),
    (422, Status::UnprocessableContent),
];

impl crate::core::Ends for ServerRole {
    const ROLES: &'static [&'static str] = &["server"];
    const SENDS: &'static [(&'static str, &'static str)] = &[("response", "client")];
    const ANSWERS: &'static [(&'static str, &'static str)] = &[
        ("response", "get"),
        ("response", "post"),
        ("response", "put"),
        ("response", "patch"),
        ("response", "delete"),
    ];
}

/// The HTTP server's own field of its program's `start` line (protocol 3):
/// `resources`, what the server's database holds when a run begins, as the
/// built-in server starts with them: each at ETag 1, sorted by id, so a POST
/// creates ids after the last one. The same on every `start`; a program
/// stores them at the first (`restarted` false) and reads its storage after.
pub fn start_fields(resources: &[(u32, u32)]) -> String {
    // Written by hand, so each entry reads `resource` first, as the docs do.
    let list: Vec<String> = resources
        .iter()
        .map(|&(id, value)| format!(r#"{{"resource":{id},"value":{value},"etag":1}}"#))
        .collect();
    format!(r#","resources":[{}]"#, list.join(","))
}

fn bad(what: impl Into<String>) -> PayloadError {
    PayloadError {
        what: what.into(),
        fix: format!(
            "an HTTP server answers a request with {RESPONSE_EXAMPLE}, echoing its request, attempt and method (status 200, 201, 204, 404, 412 or 422; value and etag as the resource stands; replayed: answered from the Idempotency-Key store)"
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

/// A request as the program reads it: `resource` is 0 for a POST to the
/// collection; `if_match` the ETag a conditional write names.
fn request_json(q: &Request) -> Value {
    let (if_match, if_none_match) = match (q.read, q.cond) {
        (Some(r), _) if r.if_match => (Some(r.version), false),
        (_, Precondition::IfMatch(etag)) => (Some(etag), false),
        (_, Precondition::IfNoneMatchAny) => (None, true),
        _ => (None, false),
    };
    json!({
        "type": "request",
        "request": q.op.id,
        "attempt": q.attempt,
        "method": q.method.as_str(),
        "resource": q.resource,
        "body": q.body,
        "idempotency_key": q.key.then(|| Msg::key_of(q.op, true).to_string()),
        "if_match": if_match,
        "if_none_match": if_none_match,
        "stamp_ms": q.stamp_ms,
    })
}

impl Role for ServerRole {
    type Msg = Msg;
    const NAME: &'static str = "HTTP server";
    /// The HTTP model has no situation for a request arriving after its
    /// change landed: the ledger judges a second change itself.
    const REDELIVERED_AFTER_EFFECT: Option<SituationId> = None;

    fn incoming(msg: &Msg) -> Option<String> {
        match msg {
            Msg::Request(q) => Some(request_json(q).to_string()),
            Msg::Response { .. } => None,
        }
    }

    /// A request arrived at the server, whatever the program makes of it.
    fn arrival(msg: &Msg) -> Option<(u32, Obs)> {
        match *msg {
            Msg::Request(q) => Some((
                q.op.id,
                Obs::Received {
                    layer: &SERVER_LAYER,
                    op: q.op,
                    key: Msg::key_of(q.op, q.key),
                },
            )),
            Msg::Response { .. } => None,
        }
    }

    fn outgoing(to: &str, payload: &Value) -> Result<Msg, PayloadError> {
        let Value::Object(o) = payload else {
            return Err(bad(format!("{payload} is not an object")));
        };
        match o.get("type").and_then(Value::as_str) {
            Some("response") => {}
            Some(other) => return Err(bad(format!("an HTTP server cannot send \"{other}\""))),
            None => return Err(bad("it has no \"type\"")),
        }
        if to == "server" {
            return Err(bad(format!(
                "a response goes to the client that asked, not to \"{to}\""
            )));
        }
        let word = o.get("method").and_then(Value::as_str);
        let Some(&method) = METHODS.iter().find(|m| Some(m.as_str()) == word) else {
            return Err(bad(
                "`method` must be the request's: GET, POST, PUT, PATCH or DELETE",
            ));
        };
        let code = o.get("status").and_then(Value::as_u64);
        let Some(&(_, status)) = STATUSES.iter().find(|(c, _)| Some(*c) == code) else {
            return Err(bad("`status` must be 200, 201, 204, 404, 412 or 422"));
        };
        Ok(Msg::Response {
            op: Op::new(&REQUEST, num(o, "request")?),
            attempt: num(o, "attempt")?,
            method,
            status,
            resource: num(o, "resource")?,
            value: num(o, "value")?,
            etag: num(o, "etag")?,
            replayed: o.get("replayed").and_then(Value::as_bool).unwrap_or(false),
        })
    }

    /// Request `op` changed a resource; `payload` is the body it wrote.
    fn effect(op: u32, payload: u32) -> Obs {
        Obs::Effect {
            site: &CHANGE,
            op: Op::new(&REQUEST, op),
            payload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_out_as_json_and_its_response_comes_back() {
        let op = Op::new(&REQUEST, 3);
        let q = Request {
            op,
            attempt: 2,
            method: Method::Post,
            resource: 0,
            body: 1200,
            key: true,
            read: None,
            cond: Precondition::None,
            stamp_ms: None,
        };
        let v: Value =
            serde_json::from_str(&ServerRole::incoming(&Msg::Request(q)).unwrap()).unwrap();
        assert_eq!(v["idempotency_key"], "req-3-01", "{v}");
        assert_eq!(v["method"], "POST");
        let r = json!({"type": "response", "request": 3, "attempt": 2, "method": "POST",
            "status": 201, "resource": 1, "value": 1200, "etag": 1});
        assert_eq!(
            ServerRole::outgoing("client", &r),
            Ok(Msg::Response {
                op,
                attempt: 2,
                method: Method::Post,
                status: Status::Created,
                resource: 1,
                value: 1200,
                etag: 1,
                replayed: false
            })
        );
        assert_eq!(ServerRole::arrival(&Msg::Request(q)).map(|a| a.0), Some(3));
    }

    #[test]
    fn the_start_names_the_resources_as_the_built_in_server_begins_with_them() {
        assert_eq!(start_fields(&[]), r#","resources":[]"#);
        let fields = start_fields(&[(7, 100), (9, 300)]);
        let line: Value = serde_json::from_str(&format!("{{\"type\":\"start\"{fields}}}")).unwrap();
        assert_eq!(
            line["resources"],
            json!([{"resource": 7, "value": 100, "etag": 1}, {"resource": 9, "value": 300, "etag": 1}])
        );
    }

    #[test]
    fn a_wrong_answer_says_what_to_send() {
        for wrong in [
            json!({"type": "response", "request": 3, "attempt": 1, "method": "POST", "status": 500}),
            json!({"type": "response", "request": 3, "attempt": 1, "method": "post", "status": 201}),
            json!({"type": "response", "request": 3, "attempt": 1, "method": "POST", "status": 201}),
            json!({"type": "reply"}),
        ] {
            let e = ServerRole::outgoing("client", &wrong).unwrap_err();
            assert!(e.fix.contains(RESPONSE_EXAMPLE), "{wrong}: {e:?}");
        }
    }
}
