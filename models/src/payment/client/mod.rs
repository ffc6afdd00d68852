//! The claims system: it starts each payment once, retries it within its
//! policy, and records what it finally knows: paid, failed, or unknown (a dead
//! letter a person reconciles), never more than it was told. A follow-up
//! job may take an unknown dead letter up (`followup.rs`): reconciliation
//! (`reconciliation.rs`) or compensation (`compensation.rs`); what the
//! client is configured with is in `config.rs`.

mod compensation;
mod config;
#[cfg(test)]
mod fixture;
mod followup;
mod reconciliation;

pub use config::{ClientConfig, KeyPolicy, OpSpec};

use super::msg::{Msg, PayStatus};
use super::situations as sit;
use super::CLAIM;
use crate::core::breaker::{Breaker, CallResult, Verdict};
use crate::core::budget::TokenBucket;
use crate::core::client_op::{self, ClientSituations, OpTimer, OpTimerKind, Persistence};
pub use crate::core::client_op::{ClientOp, ClientStorage, OpStatus};
use crate::core::{AttemptOutcome, Carries, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx, TimeUs, US_PER_MS};
use std::marker::PhantomData;

const SITUATIONS: ClientSituations = ClientSituations {
    retried: sit::CLIENT_RETRIED,
    dead_lettered: sit::CLIENT_DEAD_LETTERED,
    recovered: sit::CLIENT_RECOVERED_AFTER_RESTART,
};

/// Volatile: which attempt each operation waits on (its open connection),
/// and the client's budget and breaker, which live in its memory: a restart
/// starts them afresh (a full bucket, a closed breaker).
#[derive(Clone, Debug, Default)]
pub struct ClientState {
    /// Per operation, the attempt whose answer it is waiting for.
    pub awaiting: Vec<Option<u32>>,
    /// The retry budget shared by all operations (none: unbounded retries).
    pub tokens: Option<TokenBucket>,
    /// What each operation's last retry took from the bucket (0: none), which
    /// its success puts back.
    pub retry_cost: Vec<u32>,
    /// The circuit breaker in front of every call.
    pub breaker: Breaker,
}

/// The state panel's fields: the budget and the breaker only where they
/// are in play (a client without a budget has no tokens to show, and a
/// closed breaker without recent failures is every breaker's start).
impl serde::Serialize for ClientState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut d = s.serialize_struct("ClientState", 4)?;
        d.serialize_field("awaiting", &self.awaiting)?;
        if let Some(t) = &self.tokens {
            d.serialize_field("tokens", &t.tokens())?;
            d.serialize_field("retry_cost", &self.retry_cost)?;
        }
        if self.breaker != Breaker::new() {
            d.serialize_field("breaker", &self.breaker)?;
        }
        d.end()
    }
}

client_op::client_timers!(
    /// The client's timers, one pair per operation.
    ClientTimer,
    Claims,
    CLAIM
);

/// The claims system: runs operations, retries them, tells the ledger what it concluded.
pub struct Client<W> {
    /// Its configuration.
    pub cfg: ClientConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Client<W> {
    /// A client configured by `cfg`.
    pub fn new(cfg: ClientConfig) -> Self {
        Client {
            cfg,
            wire: PhantomData,
        }
    }

    fn timeout(&self, i: usize) -> ClientTimer {
        let op = self.cfg.ops[i].op();
        OpTimer::timeout(i, op.id).of_part(op.part)
    }

    /// The key attempt `attempt` of operation `i` carries, under the configured policy.
    pub fn key_for(&self, i: usize, attempt: u32, started_us: TimeUs) -> Key {
        let op = self.cfg.ops[i].op();
        match self.cfg.key {
            KeyPolicy::Stable => Key::Op { op, n: 1 },
            KeyPolicy::PerAttempt => Key::Op { op, n: attempt },
            KeyPolicy::Claim => Key::Op {
                op: Op::new(op.space, op.id),
                n: 1,
            },
            KeyPolicy::Timestamp { bucket_ms } => Key::Time {
                bucket: started_us / bucket_ms.max(1).saturating_mul(US_PER_MS),
            },
            KeyPolicy::None => Key::None,
        }
    }
}

impl<W: Carries<Msg>> Client<W> {
    fn persistence(&self) -> Persistence {
        Persistence {
            retry: self.cfg.retry,
            timeout_ms: self.cfg.timeout_ms,
            dead_letter: self.cfg.dead_letter,
        }
    }

    fn send_attempt(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let spec = self.cfg.ops[i];
        let window_ms = self.cfg.retry.window_ms;
        if self.cfg.breaker.is_some() && st.breaker.allow(ctx.now_us()) == Verdict::Refuse {
            // Fail fast: the struggling service never sees this attempt.
            ctx.reached(sit::BREAKER_FAST_FAIL);
            let (op, amount) = (spec.op(), spec.amount_eur);
            let dead_letter = self.cfg.dead_letter;
            let intent = client_op::Intent {
                op,
                payload: amount,
                window_ms,
            };
            s.ops[i].fail_fast(intent, dead_letter, &SITUATIONS, ctx);
            self.take_up(s, i, ctx);
            return;
        }
        let op = &mut s.ops[i];
        let attempt = op.begin_attempt(spec.op(), spec.amount_eur, window_ms, &SITUATIONS, ctx);
        let key = self.key_for(i, attempt, op.started_us);
        st.awaiting[i] = Some(attempt);
        let pay = Msg::Pay {
            op: spec.op(),
            attempt,
            key,
            amount_eur: spec.amount_for(attempt),
            // Validated to at most a day.
            timeout_ms: u32::try_from(self.cfg.timeout_ms).unwrap_or(u32::MAX),
        };
        ctx.send(self.cfg.service, W::wrap(pay));
        ctx.set_timer(
            self.timeout(i),
            self.cfg.timeout_ms.saturating_mul(US_PER_MS),
        );
    }

    fn give_up(&self, s: &mut ClientStorage, i: usize, ctx: &mut impl Ctx<Self>) {
        let op = self.cfg.ops[i].op();
        s.ops[i].give_up(op, self.cfg.dead_letter, &SITUATIONS, ctx);
        self.take_up(s, i, ctx);
    }

    /// After an attempt that may be retried: retry within the policy, if the
    /// budget pays for it, or give up (and the job, if any, takes it up).
    fn retry_or_give_up(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        after_timeout: bool,
        ctx: &mut impl Ctx<Self>,
    ) {
        self.retry_or_end(st, s, i, after_timeout, ctx);
        if s.ops[i].status == OpStatus::Done {
            self.take_up(s, i, ctx);
        }
    }

    fn retry_or_end(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        after_timeout: bool,
        ctx: &mut impl Ctx<Self>,
    ) {
        let op = self.cfg.ops[i].op();
        let p = self.persistence();
        let (Some(budget), Some(tokens)) = (&self.cfg.budget, &mut st.tokens) else {
            return s.ops[i].retry_or_give_up(i, op, &p, &SITUATIONS, ctx);
        };
        let cost = &mut st.retry_cost[i];
        s.ops[i].retry_or_give_up_if(i, op, &p, &SITUATIONS, ctx, |ctx| {
            match tokens.try_retry(budget, after_timeout) {
                Some(c) => {
                    *cost = c;
                    true
                }
                None => {
                    ctx.reached(sit::RETRY_DENIED);
                    ctx.observe(Obs::RetryDenied { op });
                    false
                }
            }
        });
    }

    /// What the breaker makes of an attempt's end.
    fn breaker_saw(&self, st: &mut ClientState, result: CallResult, ctx: &mut impl Ctx<Self>) {
        let Some(cfg) = &self.cfg.breaker else {
            return;
        };
        let was_closed = st.breaker.state() == crate::core::breaker::State::Closed;
        if st.breaker.record(cfg, result, ctx.now_us()) {
            ctx.reached(sit::BREAKER_OPENED);
        } else if !was_closed && st.breaker.state() == crate::core::breaker::State::Closed {
            ctx.reached(sit::BREAKER_CLOSED);
        }
    }

    fn attempt_ended(
        &self,
        s: &mut ClientStorage,
        i: usize,
        attempt: u32,
        outcome: AttemptOutcome,
        ctx: &mut impl Ctx<Self>,
    ) {
        s.ops[i].attempt_ended(self.cfg.ops[i].op(), attempt, outcome, ctx);
    }

    fn on_reply(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        attempt: u32,
        status: PayStatus,
        ctx: &mut impl Ctx<Self>,
    ) {
        st.awaiting[i] = None;
        ctx.cancel_timer(self.timeout(i));
        let health = match status {
            PayStatus::Paid => CallResult::Success,
            PayStatus::Overloaded | PayStatus::GatewayTimeout => CallResult::Failure,
            PayStatus::InProgress | PayStatus::Mismatch => CallResult::Neutral,
        };
        self.breaker_saw(st, health, ctx);
        match status {
            PayStatus::Paid => {
                if let (Some(budget), Some(tokens)) = (&self.cfg.budget, &mut st.tokens) {
                    tokens.on_success(budget, st.retry_cost[i]);
                }
                let spec = self.cfg.ops[i];
                let paid = spec.amount_for(attempt);
                s.ops[i].done(spec.op(), attempt, paid, &SITUATIONS, ctx);
            }
            PayStatus::Overloaded => {
                let outcome = if self.cfg.overloaded_means_unknown {
                    AttemptOutcome::Unknown
                } else {
                    AttemptOutcome::Fail
                };
                self.attempt_ended(s, i, attempt, outcome, ctx);
                self.retry_or_give_up(st, s, i, false, ctx);
            }
            PayStatus::InProgress | PayStatus::GatewayTimeout => {
                self.attempt_ended(s, i, attempt, AttemptOutcome::Unknown, ctx);
                self.retry_or_give_up(st, s, i, false, ctx);
            }
            PayStatus::Mismatch => {
                self.attempt_ended(s, i, attempt, AttemptOutcome::Rejected, ctx);
                if self.cfg.retry_final_errors {
                    self.retry_or_give_up(st, s, i, false, ctx);
                } else {
                    // The key stands for an earlier request that may have
                    // been executed: a person has to look.
                    s.ops[i].uncertain = true;
                    self.give_up(s, i, ctx);
                }
            }
        }
    }
}

impl<W> crate::core::Ends for Client<W> {
    const ROLES: &'static [&'static str] = &["client"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("pay", "service"),
        ("status-query", "service"),
        // Reconciliation may ask the bank itself (chapter 14).
        ("status-query", "bank"),
        // Compensation has the bank refund (a saga's step back).
        ("refund", "bank"),
    ];

    /// Status queries come only from the reconciliation job, to whom it
    /// asks, or from a compensation job that asks before it refunds; refunds
    /// only from a compensation job.
    fn sends(&self, kind: &str, role: &str) -> bool {
        use super::compensate::RefundWhen;
        use super::reconcile::Ask;
        match (kind, role) {
            ("status-query", "service") => {
                self.cfg.reconcile.is_some_and(|r| r.ask == Ask::Service)
            }
            ("status-query", "bank") => {
                self.cfg.reconcile.is_some_and(|r| r.ask == Ask::Bank)
                    || self
                        .cfg
                        .compensate
                        .is_some_and(|c| c.refund_when == RefundWhen::Paid)
            }
            ("refund", _) => self.cfg.compensate.is_some(),
            _ => true,
        }
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
        let n = self.cfg.ops.len();
        let st = client_op::reset_client(state, storage, n);
        client_op::refill(&mut st.awaiting, n, None);
        st.tokens = self.cfg.budget.as_ref().map(TokenBucket::full);
        // Only a budget refunds, so only a budget needs the costs.
        let costs = if self.cfg.budget.is_some() { n } else { 0 };
        client_op::refill(&mut st.retry_cost, costs, 0);
        st.breaker.reset();
    }

    fn on_start(&self, _: &mut ClientState, s: &mut ClientStorage, ctx: &mut impl Ctx<Self>) {
        debug_assert_eq!(s.ops.len(), self.cfg.ops.len());
        let spec = |i: usize| (self.cfg.ops[i].op(), self.cfg.ops[i].start_ms);
        if self.job().is_none() {
            client_op::start_ops(&mut s.ops, spec, &self.persistence(), &SITUATIONS, ctx);
            return;
        }
        // The job's timers died with the process; its records did not.
        self.resume_jobs(&s.followups, ctx);
        // A restart gives some pending operations up: the job takes those up too.
        let pending: Vec<usize> = (0..s.ops.len())
            .filter(|&i| s.ops[i].status == OpStatus::Pending)
            .collect();
        client_op::start_ops(&mut s.ops, spec, &self.persistence(), &SITUATIONS, ctx);
        for i in pending {
            if s.ops[i].status == OpStatus::Done {
                self.take_up(s, i, ctx);
            }
        }
    }

    fn on_msg(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        _from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let (op, attempt, status) = match msg.peek() {
            Some(&Msg::PayReply {
                op,
                attempt,
                status,
                ..
            }) => (op, attempt, status),
            Some(&Msg::StatusReply {
                op,
                question,
                paid_eur,
            }) if self.job().is_some() => {
                if let Some(i) = self.cfg.ops.iter().position(|o| o.op() == op) {
                    self.on_status(s, (i, question), paid_eur, ctx);
                }
                return;
            }
            Some(&Msg::RefundDone { op, round, .. }) => {
                if let Some(i) = self.cfg.ops.iter().position(|o| o.op() == op) {
                    self.on_refund_done(s, (i, round), ctx);
                }
                return;
            }
            _ => return,
        };
        let Some(i) = self.cfg.ops.iter().position(|o| o.op() == op) else {
            return;
        };
        // A reply to an attempt we stopped waiting for arrives on a closed connection.
        if st.awaiting[i] != Some(attempt) || s.ops[i].status != OpStatus::Pending {
            return;
        }
        self.on_reply(st, s, i, attempt, status, ctx);
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
            OpTimerKind::Reconcile | OpTimerKind::Compensate => {
                self.job_round(&mut s.followups, i, ctx)
            }
            OpTimerKind::NextAttempt => {
                if s.ops[i].status != OpStatus::Done {
                    self.send_attempt(st, s, i, ctx);
                }
            }
            OpTimerKind::Timeout => {
                if s.ops[i].status == OpStatus::Done {
                    return;
                }
                // No answer within the timeout: the outcome is unknown, not failed.
                let attempt = st.awaiting[i]
                    .take()
                    .expect("a timeout belongs to an attempt");
                let outcome = if self.cfg.timeout_means_failed {
                    AttemptOutcome::Fail
                } else {
                    AttemptOutcome::Unknown
                };
                self.attempt_ended(s, i, attempt, outcome, ctx);
                self.breaker_saw(st, CallResult::Failure, ctx);
                self.retry_or_give_up(st, s, i, true, ctx);
            }
        }
    }
}

#[cfg(test)]
mod tests;
