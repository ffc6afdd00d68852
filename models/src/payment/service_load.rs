//! The service's capacity: a fixed number of workers, each busy with one
//! request from the moment it takes it until the request is answered (its
//! processing and its bank call included), and a first-in-first-out queue
//! of requests waiting for a worker. A request that finds every worker busy
//! and the queue full is shed with 503 before anything is done for it.
//!
//! Queueing delay grows with the queue, and a queued request is still
//! worked on after its client has given up on it (timed out and retried):
//! the service spends its capacity on work for nobody, which is how a retry
//! storm outlives its trigger. Unless the service drops expired work: the
//! request carries the client's timeout (as gRPC carries `grpc-timeout`),
//! and with `drop_expired` a worker skips a request whose deadline passed.

use super::{Service, ServiceState, ServiceStorage, ServiceTimer, MAX_WORKERS};
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::situations as sit;
use crate::payment::SERVICE_LAYER;
use sim::{ActorId, Ctx, TimeUs, US_PER_MS};

/// A request as it waits for a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// The client and the attempt the answer goes to.
    pub caller: (ActorId, u32),
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
    /// After this its client no longer waits: its arrival plus the timeout
    /// the request carries.
    pub deadline_us: TimeUs,
}

impl<W: Carries<Msg>> Service<W> {
    /// Workers the service has: its configured number, or all its slots.
    fn workers(&self) -> usize {
        match self.cfg.workers {
            0 => MAX_WORKERS as usize,
            n => n as usize,
        }
    }

    /// Workers busy now: every bank call and pending step belongs to a request
    /// being worked on (or to a recovery, which takes a worker too).
    fn busy(&self, st: &ServiceState) -> usize {
        st.calls.busy() + st.steps.busy()
    }

    /// The request that just arrived, with its deadline.
    pub(super) fn queued(
        &self,
        caller: (ActorId, u32),
        op: Op,
        key: Key,
        amount_eur: u32,
        timeout_ms: u32,
        ctx: &mut impl Ctx<Self>,
    ) -> Queued {
        let deadline_us = match timeout_ms {
            0 => TimeUs::MAX,
            t => ctx
                .now_us()
                .saturating_add(u64::from(t).saturating_mul(US_PER_MS)),
        };
        Queued {
            caller,
            op,
            key,
            amount_eur,
            deadline_us,
        }
    }

    /// The front door: every request is counted; a free worker takes it at
    /// once (unless others wait before it), else it queues, else it is shed.
    pub(super) fn admit(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        q: Queued,
        ctx: &mut impl Ctx<Self>,
    ) {
        ctx.observe(Obs::Received {
            layer: &SERVICE_LAYER,
            op: q.op,
            key: q.key,
        });
        if st.queue.is_empty() && self.busy(st) < self.workers() {
            self.take(st, s, q, ctx);
        } else if st.queue.len() < self.cfg.queue_max as usize {
            ctx.reached(sit::QUEUED);
            st.queue.push_back(q);
        } else {
            // Shed before the key is looked at: nothing was executed and
            // the client knows it.
            self.shed(q.caller, q.op, ctx);
        }
    }

    /// A worker takes request `q`.
    fn take(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        q: Queued,
        ctx: &mut impl Ctx<Self>,
    ) {
        // Only a service with a configured capacity reports its work, so the
        // load columns stay empty for the others.
        if self.cfg.workers > 0 {
            ctx.observe(Obs::Work {
                layer: &SERVICE_LAYER,
                op: q.op,
                attempt: q.caller.1,
                recover_ms: self.cfg.recover_ms,
            });
        }
        let (caller, op, key, amount) = (q.caller, q.op, q.key, q.amount_eur);
        self.on_pay(st, s, caller, op, key, amount, ctx);
    }

    /// Refuses a request with 503 because the service is full.
    pub(super) fn shed(&self, caller: (ActorId, u32), op: Op, ctx: &mut impl Ctx<Self>) {
        ctx.reached(sit::OVERLOADED);
        ctx.observe(Obs::Shed {
            layer: &SERVICE_LAYER,
            op,
            recover_ms: self.cfg.recover_ms,
        });
        Self::reply(caller, op, PayStatus::Overloaded, 0, ctx);
    }

    /// Answers a request without calling the bank (a stored result, 409,
    /// 422), once its processing is done: until then it holds its worker.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answer(
        &self,
        st: &mut ServiceState,
        caller: (ActorId, u32),
        op: Op,
        key: Key,
        status: PayStatus,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let step = super::Step {
            kind: super::StepKind::Answer(status),
            op,
            key,
            amount_eur,
            client: caller,
        };
        if self.cfg.processing_us == 0 || !self.schedule(st, step, ctx) {
            Self::reply(caller, op, status, amount_eur, ctx);
        }
    }

    /// After every step: a free worker and a waiting request make the next
    /// step take it. Its own step, so a crash can fall in between.
    pub(super) fn pump(&self, st: &ServiceState, ctx: &mut impl Ctx<Self>) {
        if !st.queue.is_empty() && self.busy(st) < self.workers() {
            ctx.continue_with(ServiceTimer::Dequeue);
        }
    }

    /// A free worker takes the oldest queued request, skipping the expired
    /// ones when the service drops expired work.
    pub(super) fn dequeue(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        ctx: &mut impl Ctx<Self>,
    ) {
        if self.busy(st) >= self.workers() {
            return;
        }
        let now = ctx.now_us();
        while let Some(q) = st.queue.pop_front() {
            if now < q.deadline_us {
                return self.take(st, s, q, ctx);
            }
            if self.cfg.drop_expired {
                ctx.reached(sit::EXPIRED_DROPPED);
                continue;
            }
            ctx.reached(sit::WORKED_AFTER_DEADLINE);
            return self.take(st, s, q, ctx);
        }
    }
}
