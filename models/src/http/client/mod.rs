//! An HTTP client: it sends each of its requests, retries it within its
//! policy after a timeout, and records what it finally knows. An edit is a
//! read-modify-write: GET the resource, then PUT it back with the change
//! applied to what was read, conditional on the ETag read if `if_match`.

use super::msg::{Method, Msg, Precondition, Read, Request, Status};
use super::situations as sit;
use super::REQUEST;
pub use crate::core::client_op::ClientStorage;
use crate::core::client_op::{self, ClientSituations, OpStatus, OpTimer, OpTimerKind};
use crate::core::{AttemptOutcome, Carries, Ending, Obs, Op};
use sim::{Actor, ActorId, Ctx, US_PER_MS};
use std::marker::PhantomData;

mod config;

pub use config::{Action, ClientConfig, DeleteNotFound, RequestSpec, RetryBody};

const SITUATIONS: ClientSituations = ClientSituations {
    retried: sit::REQUEST_RETRIED,
    dead_lettered: sit::REQUEST_DEAD_LETTERED,
    recovered: sit::REQUEST_RESUMED_AFTER_RESTART,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// What a request's current attempt waits for.
#[derive(serde::Serialize)]
pub enum Phase {
    /// Waiting for the answer to the request itself.
    Request,
    /// An edit, or a conditional write before its first attempt, waiting for its GET.
    Read,
    /// An edit waiting for its PUT.
    Write,
}

/// Volatile: the open connection of each request's current attempt.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ClientState {
    /// Per request: the attempt and phase whose answer is awaited.
    pub awaiting: Vec<Option<(u32, Phase)>>,
    /// The last attempt of an edit ended in a 412: the next one reads again.
    pub after_412: Vec<bool>,
    /// A conditional write's precondition, from the read before its first
    /// attempt, kept for every retry: a retry must not read again, or it
    /// would read its own landed write and find its condition true.
    pub cond: Vec<Option<Precondition>>,
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
        let writes = method != Method::Get;
        let new_stamp = writes && self.cfg.retry_body == RetryBody::NewTimestamp;
        if writes && attempt > 1 && (new_stamp || body != spec.value_for(1)) && read.is_none() {
            ctx.reached(sit::RETRY_BODY_CHANGED);
        }
        let request = Msg::Request(Request {
            op: spec.op(),
            attempt,
            method,
            resource: spec.resource,
            body,
            key: self.cfg.idempotency_key && writes,
            read,
            cond: match st.cond[i] {
                Some(c) if writes && read.is_none() => c,
                _ => Precondition::None,
            },
            stamp_ms: new_stamp.then(|| (ctx.now_us() / US_PER_MS).min(u64::from(u32::MAX)) as u32),
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
            // A conditional write reads once, before its first attempt
            // that gets through to the server, for the ETag it carries.
            _ if self.conditional(i) && st.cond[i].is_none() => (Phase::Read, Method::Get),
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
        let body = if method == Method::Get {
            0
        } else {
            spec.value_for(attempt)
        };
        let out = Outgoing {
            attempt,
            phase,
            method,
            body,
            read: None,
        };
        self.send(st, i, out, ctx);
    }

    /// Request `i` is a PUT, PATCH or DELETE made conditional by `client.conditional_writes`.
    fn conditional(&self, i: usize) -> bool {
        let action = self.cfg.requests[i].action;
        self.cfg.conditional_writes && !matches!(action, Action::Create | Action::Edit)
    }

    /// A conditional write's read is in: the precondition its attempts
    /// carry, and its first write. A PATCH of nothing gets none: its read's
    /// 404 is its answer.
    fn after_read(
        &self,
        st: &mut ClientState,
        i: usize,
        answer: Answer,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        let spec = self.cfg.requests[i];
        let (cond, method) = match (answer.status, spec.action) {
            (Status::Ok, Action::Replace) => (Precondition::IfMatch(answer.etag), Method::Put),
            (Status::Ok, Action::Increment) => (Precondition::IfMatch(answer.etag), Method::Patch),
            (Status::Ok, Action::Delete) => (Precondition::IfMatch(answer.etag), Method::Delete),
            // Nothing there: the PUT may only create it.
            (Status::NotFound, Action::Replace) => (Precondition::IfNoneMatchAny, Method::Put),
            // No ETag to match: the DELETE's own 404 says it is still gone.
            (Status::NotFound, Action::Delete) => (Precondition::None, Method::Delete),
            _ => return false,
        };
        st.cond[i] = Some(cond);
        let write = Outgoing {
            attempt: answer.attempt,
            phase: Phase::Request,
            method,
            body: spec.value_for(answer.attempt),
            read: None,
        };
        self.send(st, i, write, ctx);
        true
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

    /// A DELETE's 404, read as `client.delete_404` says.
    fn delete_not_found(
        &self,
        s: &mut ClientStorage,
        i: usize,
        attempt: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let spec = self.cfg.requests[i];
        let op = spec.op();
        match self.cfg.delete_404 {
            DeleteNotFound::Done => s.ops[i].done(op, attempt, spec.payload(), &SITUATIONS, ctx),
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
        if phase == Phase::Read
            && spec.action != Action::Edit
            && self.after_read(st, i, answer, ctx)
        {
            return;
        }
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
                s.ops[i].done(op, attempt, spec.payload_for(attempt), &SITUATIONS, ctx);
            }
            Status::NotFound if spec.action == Action::Delete => {
                self.delete_not_found(s, i, attempt, ctx)
            }
            Status::NotFound => self.final_error(s, i, attempt, ctx),
            // A conditional write's ETag is no longer current: someone
            // wrote since the read, maybe this request's own earlier
            // attempt. Nothing was written now, and a retry would carry
            // the same ETag: a final answer (unknown if an earlier attempt
            // may have landed).
            Status::PreconditionFailed if spec.action != Action::Edit => {
                self.final_error(s, i, attempt, ctx)
            }
            // The key is known with another body: an earlier attempt of
            // this request was executed, with the body it sent then. Not a
            // success for this body, and not a failure: a person has to
            // look (a dead letter marked unknown).
            Status::UnprocessableContent => {
                s.ops[i].uncertain = true;
                self.final_error(s, i, attempt, ctx);
            }
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
        // A conditional write reads first.
        let reads = self.cfg.conditional_writes;
        self.cfg.requests.iter().any(|r| match r.action {
            Action::Create => kind == "post",
            Action::Replace => kind == "put" || (reads && kind == "get"),
            Action::Delete => kind == "delete" || (reads && kind == "get"),
            Action::Increment => kind == "patch" || (reads && kind == "get"),
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
        client_op::refill(&mut st.cond, n, None);
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
            OpTimerKind::Reconcile | OpTimerKind::Compensate => {}
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
mod tests;
