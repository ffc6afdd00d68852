//! An HTTP client: it sends each of its requests, retries it within its
//! policy after a timeout, and records what it finally knows. An edit is a
//! read-modify-write: GET the resource, then PUT it back with the change
//! applied to what was read, conditional on the ETag read if `if_match`.

use super::msg::{Method, Msg, Read, Request, Status};
use super::situations as sit;
use super::REQUEST;
pub use crate::core::client_op::ClientStorage;
use crate::core::client_op::{self, ClientSituations, OpStatus, OpTimer, OpTimerKind, Persistence};
use crate::core::{AttemptOutcome, Carries, Ending, Obs, Op};
use sim::{Actor, ActorId, Ctx, US_PER_MS};
use std::marker::PhantomData;

const SITUATIONS: ClientSituations = ClientSituations {
    retried: sit::REQUEST_RETRIED,
    dead_lettered: sit::REQUEST_DEAD_LETTERED,
    recovered: sit::REQUEST_RESUMED_AFTER_RESTART,
};

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
    /// How it reads a 404 answering a DELETE.
    pub delete_404: DeleteNotFound,
    /// Retry a final error (a 404) too: a mistake, it never becomes a success.
    pub retry_final_errors: bool,
    /// Sorted by id.
    pub requests: Vec<RequestSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// What a request's current attempt waits for.
pub enum Phase {
    /// Waiting for the answer to the request itself.
    Request,
    /// An edit waiting for its GET.
    Read,
    /// An edit waiting for its PUT.
    Write,
}

/// Volatile: the open connection of each request's current attempt.
#[derive(Clone, Debug, Default)]
pub struct ClientState {
    /// Per request: the attempt and phase whose answer is awaited.
    pub awaiting: Vec<Option<(u32, Phase)>>,
    /// The last attempt of an edit ended in a 412: the next one reads again.
    pub after_412: Vec<bool>,
}

client_op::client_timers!(
    /// The client's timers, one pair per request.
    ClientTimer,
    Requests,
    REQUEST
);

/// An HTTP client making its requests, retrying them by its policy.
pub struct Client<W> {
    /// Its configuration.
    pub cfg: ClientConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Client<W> {
    /// A client with configuration `cfg`.
    pub fn new(cfg: ClientConfig) -> Self {
        Client {
            cfg,
            wire: PhantomData,
        }
    }

    fn timeout(&self, i: usize) -> ClientTimer {
        OpTimer::timeout(i, self.cfg.requests[i].id)
    }

    fn index_of(&self, op: Op) -> Option<usize> {
        if op.space != &REQUEST {
            return None;
        }
        self.cfg
            .requests
            .binary_search_by_key(&op.id, |r| r.id)
            .ok()
    }
}

/// One request an attempt sends: the phase of the attempt it is (an
/// edit's read or its write), its method and body, and what an edit's
/// write was computed from.
#[derive(Clone, Copy)]
struct Outgoing {
    attempt: u32,
    phase: Phase,
    method: Method,
    body: u32,
    read: Option<Read>,
}

/// The answer to the request an attempt waits on, as the client reads it.
#[derive(Clone, Copy)]
struct Answer {
    attempt: u32,
    phase: Phase,
    status: Status,
    value: u32,
    etag: u32,
}

impl<W: Carries<Msg>> Client<W> {
    fn send(&self, st: &mut ClientState, i: usize, out: Outgoing, ctx: &mut impl Ctx<Self>) {
        let Outgoing {
            attempt,
            phase,
            method,
            body,
            read,
        } = out;
        let spec = self.cfg.requests[i];
        let request = Msg::Request(Request {
            op: spec.op(),
            attempt,
            method,
            resource: spec.resource,
            body,
            key: self.cfg.idempotency_key && method != Method::Get,
            read,
        });
        st.awaiting[i] = Some((attempt, phase));
        ctx.send(self.cfg.server, W::wrap(request));
        let timeout_us = self.cfg.persistence.timeout_ms.saturating_mul(US_PER_MS);
        ctx.set_timer(self.timeout(i), timeout_us);
    }

    fn send_attempt(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let spec = self.cfg.requests[i];
        let window_ms = self.cfg.persistence.retry.window_ms;
        let attempt =
            s.ops[i].begin_attempt(spec.op(), spec.payload(), window_ms, &SITUATIONS, ctx);
        let (phase, method) = match spec.action {
            Action::Create => (Phase::Request, Method::Post),
            Action::Replace => (Phase::Request, Method::Put),
            Action::Delete => (Phase::Request, Method::Delete),
            Action::Increment => (Phase::Request, Method::Patch),
            Action::Edit => {
                if std::mem::take(&mut st.after_412[i]) {
                    ctx.reached(sit::REREAD_AFTER_412);
                }
                (Phase::Read, Method::Get)
            }
        };
        let body = if method == Method::Get { 0 } else { spec.value };
        let out = Outgoing {
            attempt,
            phase,
            method,
            body,
            read: None,
        };
        self.send(st, i, out, ctx);
    }

    fn retry_or_give_up(&self, s: &mut ClientStorage, i: usize, ctx: &mut impl Ctx<Self>) {
        let op = self.cfg.requests[i].op();
        s.ops[i].retry_or_give_up(i, op, &self.cfg.persistence, &SITUATIONS, ctx);
    }

    /// A final answer that is not success: the request cannot succeed by retrying.
    fn final_error(&self, s: &mut ClientStorage, i: usize, attempt: u32, ctx: &mut impl Ctx<Self>) {
        let op = self.cfg.requests[i].op();
        s.ops[i].attempt_ended(op, attempt, AttemptOutcome::Rejected, ctx);
        if self.cfg.retry_final_errors {
            self.retry_or_give_up(s, i, ctx);
        } else {
            s.ops[i].give_up(op, self.cfg.persistence.dead_letter, &SITUATIONS, ctx);
        }
    }

    fn on_response(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        answer: Answer,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Answer {
            attempt,
            phase,
            status,
            value,
            etag,
        } = answer;
        let spec = self.cfg.requests[i];
        let op = spec.op();
        if phase == Phase::Read && status == Status::Ok {
            // The read is in: now the write, computed from it.
            let read = Read {
                version: etag,
                value,
                if_match: self.cfg.if_match,
            };
            let body = value.saturating_add(spec.value);
            let write = Outgoing {
                attempt,
                phase: Phase::Write,
                method: Method::Put,
                body,
                read: Some(read),
            };
            self.send(st, i, write, ctx);
            return;
        }
        st.awaiting[i] = None;
        ctx.cancel_timer(self.timeout(i));
        match status {
            Status::Ok | Status::Created | Status::NoContent => {
                s.ops[i].done(op, attempt, spec.payload(), &SITUATIONS, ctx);
            }
            Status::NotFound if spec.action == Action::Delete => match self.cfg.delete_404 {
                DeleteNotFound::Done => {
                    s.ops[i].done(op, attempt, spec.payload(), &SITUATIONS, ctx)
                }
                DeleteNotFound::Failed => {
                    s.ops[i].attempt_ended(op, attempt, AttemptOutcome::Rejected, ctx);
                    // The mistake is to be sure nothing was deleted, even
                    // after an attempt whose answer never came: "failed",
                    // not "unknown". But a client that keeps no dead
                    // letters has nowhere to write that; it drops the
                    // request as it drops any other it gives up.
                    let ending = if self.cfg.persistence.dead_letter {
                        Ending::Failed
                    } else {
                        Ending::Abandoned
                    };
                    s.ops[i].end(op, ending, &SITUATIONS, ctx);
                }
            },
            Status::NotFound => self.final_error(s, i, attempt, ctx),
            Status::PreconditionFailed => {
                // Someone wrote since the read: nothing was written; read again.
                st.after_412[i] = true;
                s.ops[i].attempt_ended(op, attempt, AttemptOutcome::Fail, ctx);
                self.retry_or_give_up(s, i, ctx);
            }
        }
    }
}

impl<W> crate::core::Ends for Client<W> {
    const ROLES: &'static [&'static str] = &["client"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("get", "server"),
        ("post", "server"),
        ("put", "server"),
        ("patch", "server"),
        ("delete", "server"),
    ];

    /// The methods its requests use: an edit reads with GET and writes
    /// with PUT.
    fn sends(&self, kind: &str, _role: &str) -> bool {
        self.cfg.requests.iter().any(|r| match r.action {
            Action::Create => kind == "post",
            Action::Replace => kind == "put",
            Action::Delete => kind == "delete",
            Action::Increment => kind == "patch",
            Action::Edit => kind == "get" || kind == "put",
        })
    }
}

impl<W: Carries<Msg>> Actor for Client<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ClientTimer;
    type State = ClientState;
    type Storage = ClientStorage;

    fn reset(
        &self,
        state: sim::Fresh<'_, ClientState>,
        storage: Option<sim::Fresh<'_, ClientStorage>>,
    ) {
        let n = self.cfg.requests.len();
        let st = client_op::reset_client(state, storage, n);
        client_op::refill(&mut st.awaiting, n, None);
        client_op::refill(&mut st.after_412, n, false);
    }

    fn on_start(&self, _: &mut ClientState, s: &mut ClientStorage, ctx: &mut impl Ctx<Self>) {
        let spec = |i: usize| (self.cfg.requests[i].op(), self.cfg.requests[i].start_ms);
        let p = &self.cfg.persistence;
        client_op::start_ops(&mut s.ops, spec, p, &SITUATIONS, ctx);
    }

    fn on_msg(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        _from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(&Msg::Response {
            op,
            attempt,
            method,
            status,
            value,
            etag,
            ..
        }) = msg.peek()
        else {
            return;
        };
        let Some(i) = self.index_of(op) else {
            return;
        };
        // An answer to an attempt we stopped waiting for arrives on a closed connection.
        let Some((awaited, phase)) = st.awaiting[i] else {
            return;
        };
        // An edit's attempt asks twice: the answer must be to the request it waits on.
        let answers_awaited = (phase == Phase::Read) == (method == Method::Get);
        if awaited != attempt || !answers_awaited || s.ops[i].status != OpStatus::Pending {
            return;
        }
        let answer = Answer {
            attempt,
            phase,
            status,
            value,
            etag,
        };
        self.on_response(st, s, i, answer, ctx);
    }

    fn on_timer(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        timer: ClientTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        let i = timer.i as usize;
        match timer.kind {
            // This client has no reconciliation job.
            OpTimerKind::Reconcile => {}
            OpTimerKind::NextAttempt => {
                if s.ops[i].status != OpStatus::Done {
                    self.send_attempt(st, s, i, ctx);
                }
            }
            OpTimerKind::Timeout => {
                if s.ops[i].status == OpStatus::Done {
                    return;
                }
                let (attempt, phase) = st.awaiting[i]
                    .take()
                    .expect("a timeout belongs to an attempt");
                // Before its write was sent an edit has changed nothing; any
                // other silence leaves the outcome unknown, not failed.
                let outcome = if phase == Phase::Read {
                    AttemptOutcome::Fail
                } else {
                    AttemptOutcome::Unknown
                };
                let op = self.cfg.requests[i].op();
                s.ops[i].attempt_ended(op, attempt, outcome, ctx);
                self.retry_or_give_up(s, i, ctx);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::retry::Jitter;
    use crate::core::retry::RetryPolicy;
    use crate::registry::Msg as World;
    use sim::{Choices, Command, Context};

    type Cmd = Command<World, Obs, ClientTimer>;

    const SERVER: ActorId = 1;

    fn delete_client(delete_404: DeleteNotFound, dead_letter: bool) -> Client<World> {
        Client::new(ClientConfig {
            server: SERVER,
            persistence: Persistence {
                retry: RetryPolicy {
                    max_attempts: 3,
                    base_ms: 0,
                    cap_ms: 0,
                    multiplier: 1,
                    jitter: Jitter::None,
                    window_ms: 0,
                },
                timeout_ms: 10_000,
                dead_letter,
            },
            idempotency_key: false,
            if_match: false,
            delete_404,
            retry_final_errors: false,
            requests: vec![RequestSpec {
                id: 1,
                action: Action::Delete,
                resource: 4711,
                value: 0,
                start_ms: 0,
            }],
        })
    }

    /// A client started, its first request's first attempt sent: its state,
    /// its storage and the decisions it draws from.
    fn sent_first_attempt(c: &Client<World>) -> (ClientState, ClientStorage, Choices) {
        let (mut st, mut s) = (None, None);
        c.reset_state(&mut st);
        c.reset_storage(&mut s);
        let (mut st, mut s) = (st.expect("a state"), s.expect("a storage"));
        let mut choices = Choices::new();
        choices.start_random(0, 1, false);
        let mut out: Vec<Cmd> = Vec::new();
        let mut ctx = Context::detached(0, 0, &mut choices, &mut out);
        c.on_start(&mut st, &mut s, &mut ctx);
        let first = OpTimer::next_attempt(0, 1);
        c.on_timer(&mut st, &mut s, first, &mut ctx);
        assert_eq!(Cmd::sent(&out).count(), 1, "the DELETE is sent");
        (st, s, choices)
    }

    fn endings(out: &[Cmd]) -> Vec<Ending> {
        out.iter()
            .filter_map(|c| match c {
                Command::Observe(Obs::Ended { ending, .. }) => Some(*ending),
                _ => None,
            })
            .collect()
    }

    /// A client that reads a DELETE's 404 as a failure, and keeps no dead
    /// letters (`dead_letter = false`), gives the request up as it gives
    /// up any other: silently. It records no "failed" it does not keep,
    /// which the ledger would judge as a false failure.
    #[test]
    fn a_404_read_as_failure_without_dead_letters_is_given_up_silently() {
        let c = delete_client(DeleteNotFound::Failed, false);
        let (mut st, mut s, mut choices) = sent_first_attempt(&c);
        let mut out: Vec<Cmd> = Vec::new();
        let mut ctx = Context::detached(1_000, 0, &mut choices, &mut out);
        let not_found = Msg::Response {
            op: c.cfg.requests[0].op(),
            attempt: 1,
            method: Method::Delete,
            status: Status::NotFound,
            resource: 4711,
            value: 0,
            etag: 2,
            replayed: false,
        };
        c.on_msg(&mut st, &mut s, SERVER, World::wrap(not_found), &mut ctx);
        assert_eq!(endings(&out), [Ending::Abandoned]);
        assert!(!Cmd::reaches(&out, sit::REQUEST_DEAD_LETTERED));

        // With dead letters, the mistake is recorded as "failed".
        let c = delete_client(DeleteNotFound::Failed, true);
        let (mut st, mut s, mut choices) = sent_first_attempt(&c);
        let mut out: Vec<Cmd> = Vec::new();
        let mut ctx = Context::detached(1_000, 0, &mut choices, &mut out);
        c.on_msg(&mut st, &mut s, SERVER, World::wrap(not_found), &mut ctx);
        assert_eq!(endings(&out), [Ending::Failed]);
        assert!(Cmd::reaches(&out, sit::REQUEST_DEAD_LETTERED));
    }
}
