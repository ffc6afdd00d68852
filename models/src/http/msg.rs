//! The HTTP model's messages: a request and its response, small and `Copy`.

use crate::core::wire::ModelMessage;
use crate::core::{Key, Op};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// An HTTP method.
pub enum Method {
    /// GET: read.
    Get,
    /// POST: create in the collection.
    Post,
    /// PUT: replace.
    Put,
    /// PATCH: add to the value.
    Patch,
    /// DELETE: remove.
    Delete,
}

impl Method {
    /// The method as HTTP writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The status codes the model answers with.
#[derive(serde::Serialize)]
pub enum Status {
    /// 200
    Ok,
    /// 201
    Created,
    /// 204
    NoContent,
    /// 404
    NotFound,
    /// 412: the If-Match ETag is not the resource's current one; nothing written.
    PreconditionFailed,
    /// 422: the Idempotency-Key is known with another request body (the
    /// server's fingerprint differs); nothing executed, nothing replayed.
    UnprocessableContent,
}

impl Status {
    /// The status line.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "200 OK",
            Status::Created => "201 Created",
            Status::NoContent => "204 No Content",
            Status::NotFound => "404 Not Found",
            Status::PreconditionFailed => "412 Precondition Failed",
            Status::UnprocessableContent => "422 Unprocessable Content",
        }
    }

    /// A 2xx.
    pub fn is_success(self) -> bool {
        matches!(self, Status::Ok | Status::Created | Status::NoContent)
    }
}

/// What a write was computed from: the representation the client read, and
/// whether the request makes the write conditional on it (`If-Match`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    /// The ETag read: the resource's version.
    pub version: u32,
    /// The value read.
    pub value: u32,
    /// The write carries `If-Match` with the ETag read.
    pub if_match: bool,
}

/// The precondition a PUT, PATCH or DELETE carries from the read before
/// its first attempt (`client.conditional_writes`); an edit's PUT carries
/// its own in [`Read`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Precondition {
    /// Unconditional.
    None,
    /// `If-Match` with the ETag read (RFC 9110 13.1.1).
    IfMatch(u32),
    /// `If-None-Match: *`: the read found nothing, so the PUT may only
    /// create (RFC 9110 13.1.2).
    IfNoneMatchAny,
}

/// One attempt's request. `resource` is 0 for a POST to the collection;
/// `key` says whether it carries its operation's Idempotency-Key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The request's business operation.
    pub op: Op,
    /// The attempt number, from 1.
    pub attempt: u32,
    /// The method.
    pub method: Method,
    /// The resource addressed.
    pub resource: u32,
    /// The body (a value, or an amount to add).
    pub body: u32,
    /// It carries the operation's Idempotency-Key.
    pub key: bool,
    /// What an edit's write was computed from.
    pub read: Option<Read>,
    /// A PUT's, PATCH's or DELETE's precondition.
    pub cond: Precondition,
    /// The body's own timestamp field, in ms, where the client serialises
    /// the body anew for each attempt (`client.retry_body = "new-timestamp"`):
    /// bytes that differ from one attempt to the next, not the business value.
    pub stamp_ms: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A message of the HTTP model.
pub enum Msg {
    /// Client to server.
    Request(Request),
    /// The server's answer: the resource's value and ETag as they stand after
    /// the request, or as they were when the stored answer was made.
    Response {
        /// The request's operation.
        op: Op,
        /// The attempt it answers.
        attempt: u32,
        /// The method of the request it answers (an edit's GET or its PUT).
        method: Method,
        /// The status.
        status: Status,
        /// The resource's id.
        resource: u32,
        /// Its value.
        value: u32,
        /// Its ETag (version).
        etag: u32,
        /// Answered from the Idempotency-Key store, not executed again.
        replayed: bool,
    },
}

impl Msg {
    /// The Idempotency-Key a request of `op` carries, if any.
    pub fn key_of(op: Op, key: bool) -> Key {
        if key {
            Key::Op { op, n: 1 }
        } else {
            Key::None
        }
    }
}

impl ModelMessage for Msg {
    const KINDS: &'static [&'static str] = &["get", "post", "put", "patch", "delete", "response"];

    fn kind(&self) -> u16 {
        match self {
            Msg::Request(Request { method, .. }) => match method {
                Method::Get => 0,
                Method::Post => 1,
                Method::Put => 2,
                Method::Patch => 3,
                Method::Delete => 4,
            },
            Msg::Response { .. } => 5,
        }
    }

    fn is_reply(&self) -> bool {
        matches!(self, Msg::Response { .. })
    }

    fn delivery_note(&self, effect: bool, sent: &[Msg]) -> Option<&'static str> {
        let Msg::Request(Request { method, .. }) = self else {
            return None;
        };
        if effect {
            return None;
        }
        let (status, replayed) = sent.iter().find_map(|m| match m {
            Msg::Response {
                status, replayed, ..
            } => Some((*status, *replayed)),
            Msg::Request(_) => None,
        })?;
        match (method, status) {
            _ if replayed => Some("Idempotency-Key known: the stored response, not executed again"),
            // True of a PUT that found its value already there and of a late
            // repeat that set it again over another write (the new version
            // the trace shows next tells the two apart).
            (Method::Put, Status::Ok) => Some("no new effect: the value is this PUT's body"),
            (Method::Delete, Status::NotFound) => Some("already gone: nothing deleted"),
            (_, Status::PreconditionFailed) => Some("If-Match names an old ETag: nothing written"),
            (_, Status::UnprocessableContent) => {
                Some("Idempotency-Key known with another body: refused, nothing executed")
            }
            _ => None,
        }
    }

    fn same_for_diff(&self, other: &Self) -> bool {
        match (self, other) {
            // What the client acts on is the status; the value may differ.
            (Msg::Response { status: a, .. }, Msg::Response { status: b, .. }) => a == b,
            _ => self.kind() == other.kind(),
        }
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Msg::Request(Request {
                op,
                attempt,
                method,
                resource,
                body,
                key,
                read,
                cond,
                stamp_ms,
            }) => {
                write!(f, "{op}: {}", method.as_str())?;
                match (method, resource) {
                    (Method::Post, _) => write!(f, " /claims value {body}")?,
                    (Method::Get | Method::Delete, r) => write!(f, " /claims/{r}")?,
                    (Method::Patch, r) => write!(f, " /claims/{r} add {body}")?,
                    (Method::Put, r) => write!(f, " /claims/{r} value {body}")?,
                }
                if let Some(t) = stamp_ms {
                    write!(f, " sent_at {t}")?;
                }
                match read {
                    Some(Read {
                        version,
                        if_match: true,
                        ..
                    }) => write!(f, " [If-Match v{version}")?,
                    Some(Read { version, .. }) => write!(f, " [read v{version}, no If-Match")?,
                    None => match cond {
                        Precondition::None => f.write_str(" [")?,
                        Precondition::IfMatch(v) => write!(f, " [If-Match v{v}")?,
                        Precondition::IfNoneMatchAny => f.write_str(" [If-None-Match *")?,
                    },
                }
                if read.is_some() || cond != Precondition::None {
                    f.write_str(", ")?;
                }
                if key {
                    write!(f, "Idempotency-Key {}, ", Msg::key_of(op, key))?;
                }
                write!(f, "attempt {attempt}]")
            }
            Msg::Response {
                op,
                attempt,
                status,
                resource,
                value,
                etag,
                replayed,
                ..
            } => {
                write!(f, "{op}: {}", status.as_str())?;
                match status {
                    Status::Ok | Status::Created => {
                        write!(f, " /claims/{resource} = {value}, ETag v{etag}")?
                    }
                    Status::PreconditionFailed => write!(f, ", ETag now v{etag}")?,
                    Status::NoContent | Status::NotFound | Status::UnprocessableContent => {}
                }
                let r = if replayed { ", replayed" } else { "" };
                write!(f, " [attempt {attempt}{r}]")
            }
        }
    }
}
