//! A client's settings: its requests and how it sends and reads them.

use crate::core::client_op::Persistence;
use crate::core::Op;
use crate::http::REQUEST;
use sim::ActorId;

/// What a request asks of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// POST /claims: create a resource with `value`.
    Create,
    /// PUT /claims/{id}: the resource is `value`.
    Replace,
    /// DELETE /claims/{id}.
    Delete,
    /// PATCH /claims/{id}: add `value`.
    Increment,
    /// GET /claims/{id}, then PUT it back with `value` added to what was read.
    Edit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// One request a client makes: a business operation.
pub struct RequestSpec {
    /// The request's number: `request #id`, one business operation.
    pub id: u32,
    /// What it does.
    pub action: Action,
    /// The resource it addresses (0: the collection, for a POST).
    pub resource: u32,
    /// The body, or the amount added.
    pub value: u32,
    /// When it starts.
    pub start_ms: u64,
    /// The value its retries send instead (the client rebuilt the request
    /// from data that changed meanwhile, under the same key): none, the
    /// same body on every attempt.
    pub retry_value: Option<u32>,
}

impl RequestSpec {
    /// The request's business operation.
    pub fn op(&self) -> Op {
        Op::new(&REQUEST, self.id)
    }

    /// What the operation asks for: the body, the amount added, or (for a
    /// DELETE, which has no body) the resource it removes.
    pub fn payload(&self) -> u32 {
        match self.action {
            Action::Delete => self.resource,
            _ => self.value,
        }
    }

    /// The value attempt `attempt` sends: a retry's, if it has its own.
    pub fn value_for(&self, attempt: u32) -> u32 {
        match self.retry_value {
            Some(v) if attempt > 1 => v,
            _ => self.value,
        }
    }

    /// What attempt `attempt` asks for, as [`RequestSpec::payload`]: the
    /// payload a "done" in answer to it confirms.
    pub fn payload_for(&self, attempt: u32) -> u32 {
        match self.action {
            Action::Delete => self.resource,
            _ => self.value_for(attempt),
        }
    }
}

/// How a client builds a retry's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryBody {
    /// The bytes of the first attempt, resent as they were.
    Same,
    /// Serialised anew for each attempt, with the time it is sent in a
    /// `sent_at` field: the same value in other bytes.
    NewTimestamp,
}

/// How a client reads a 404 in answer to a DELETE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeleteNotFound {
    /// The resource is gone, which is what was asked: done. (An earlier
    /// attempt whose answer was lost may have deleted it.)
    Done,
    /// "Nothing to delete": recorded as failed (a mistake when retrying).
    Failed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// A client's configuration.
pub struct ClientConfig {
    /// The server it talks to.
    pub server: ActorId,
    /// How it retries and gives up.
    pub persistence: Persistence,
    /// Every write carries its request's Idempotency-Key (`req-3-01`).
    pub idempotency_key: bool,
    /// An edit's PUT is conditional on the ETag it read (If-Match).
    pub if_match: bool,
    /// A PUT, PATCH or DELETE reads the resource before its first attempt
    /// and carries the ETag read as If-Match on every attempt (a PUT that
    /// read nothing carries If-None-Match: *).
    pub conditional_writes: bool,
    /// How a retry's body is built.
    pub retry_body: RetryBody,
    /// How it reads a 404 answering a DELETE.
    pub delete_404: DeleteNotFound,
    /// Retry a final error (a 404) too: a mistake, it never becomes a success.
    pub retry_final_errors: bool,
    /// Sorted by id.
    pub requests: Vec<RequestSpec>,
}
