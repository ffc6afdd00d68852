//! The claims system: it starts each payment once, retries it within its
//! policy, and records what it finally knows: paid, failed, or unknown (a dead
//! letter a person reconciles), never more than it was told.

use super::msg::{Msg, PayStatus};
use super::situations as sit;
use super::CLAIM;
use crate::core::retry::RetryPolicy;
use crate::core::{AttemptOutcome, Carries, Ending, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx, TimeUs, Timer, US_PER_MS};
use std::fmt;
use std::marker::PhantomData;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPolicy {
    /// One key per business operation, reused on every retry.
    Stable,
    /// A fresh key per attempt: the key protects nothing.
    PerAttempt,
    /// Derived from the clock, bucketed: operations started together collide.
    Timestamp {
        bucket_ms: u64,
    },
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSpec {
    pub claim: u32,
    pub amount_eur: u32,
    pub start_ms: u64,
    /// A retry that sends another amount under the same key (a client bug).
    pub retry_amount_eur: Option<u32>,
}

impl OpSpec {
    pub fn op(&self) -> Op {
        Op::new(&CLAIM, self.claim)
    }

    /// What attempt `attempt` asks to pay.
    pub fn amount_for(&self, attempt: u32) -> u32 {
        match self.retry_amount_eur {
            Some(a) if attempt > 1 => a,
            _ => self.amount_eur,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    pub service: ActorId,
    pub timeout_ms: u64,
    pub key: KeyPolicy,
    pub retry: RetryPolicy,
    /// Retry a final error too (a mistake: a rejected input never becomes valid).
    pub retry_final_errors: bool,
    /// Record what was given up, or drop it silently (a mistake).
    pub dead_letter: bool,
    /// Read a timeout as "failed, nothing happened" (a mistake: the request
    /// may have been executed and only the answer lost).
    pub timeout_means_failed: bool,
    pub ops: Vec<OpSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpStatus {
    NotStarted,
    Pending,
    Done,
}

/// One operation in the claims system's own database.
#[derive(Clone, Copy, Debug)]
pub struct ClientOp {
    pub status: OpStatus,
    pub attempts: u32,
    pub started_us: TimeUs,
    pub last_backoff_ms: u64,
    /// Some attempt's outcome was unknown (a timeout, 409, 504): if the
    /// operation is given up, nobody knows whether it happened.
    pub uncertain: bool,
}

/// The claims system's database: survives its crashes.
#[derive(Clone, Debug, Default)]
pub struct ClientStorage {
    pub ops: Vec<ClientOp>,
}

/// Volatile: which attempt each operation waits on (its open connection).
#[derive(Clone, Debug, Default)]
pub struct ClientState {
    pub awaiting: Vec<Option<u32>>,
}

/// The client's timers, one pair per operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// No answer to the current attempt in time.
    Timeout { i: u32, claim: u32 },
    /// The operation's first attempt, or the next after a backoff.
    NextAttempt { i: u32, claim: u32 },
}

impl fmt::Display for ClientTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ClientTimer::Timeout { claim, .. } => write!(f, "attempt timeout (claim {claim})"),
            ClientTimer::NextAttempt { claim, .. } => write!(f, "next attempt (claim {claim})"),
        }
    }
}

impl Timer for ClientTimer {
    fn slot(&self) -> u32 {
        match *self {
            ClientTimer::Timeout { i, .. } => 2 * i,
            ClientTimer::NextAttempt { i, .. } => 2 * i + 1,
        }
    }
}

pub struct Client<W> {
    pub cfg: ClientConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Client<W> {
    pub fn new(cfg: ClientConfig) -> Self {
        Client {
            cfg,
            wire: PhantomData,
        }
    }

    fn timeout(&self, i: usize) -> ClientTimer {
        ClientTimer::Timeout {
            i: i as u32,
            claim: self.cfg.ops[i].claim,
        }
    }

    fn next_attempt(&self, i: usize) -> ClientTimer {
        ClientTimer::NextAttempt {
            i: i as u32,
            claim: self.cfg.ops[i].claim,
        }
    }

    pub fn key_for(&self, i: usize, attempt: u32, started_us: TimeUs) -> Key {
        let op = self.cfg.ops[i].op();
        match self.cfg.key {
            KeyPolicy::Stable => Key::Op { op, n: 1 },
            KeyPolicy::PerAttempt => Key::Op { op, n: attempt },
            KeyPolicy::Timestamp { bucket_ms } => Key::Time {
                bucket: started_us / bucket_ms.max(1).saturating_mul(US_PER_MS),
            },
            KeyPolicy::None => Key::None,
        }
    }
}

impl<W: Carries<Msg>> Client<W> {
    fn send_attempt(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let spec = self.cfg.ops[i];
        let op = &mut s.ops[i];
        if op.status == OpStatus::NotStarted {
            op.status = OpStatus::Pending;
            op.started_us = ctx.now_us();
            ctx.observe(Obs::Intent {
                op: spec.op(),
                payload: spec.amount_eur,
                window_ms: self.cfg.retry.window_ms,
            });
        } else {
            ctx.reached(sit::CLIENT_RETRIED);
        }
        debug_assert_eq!(op.status, OpStatus::Pending);
        op.attempts += 1;
        let attempt = op.attempts;
        let key = self.key_for(i, attempt, op.started_us);
        st.awaiting[i] = Some(attempt);
        ctx.observe(Obs::AttemptSent {
            op: spec.op(),
            attempt,
        });
        let pay = Msg::Pay {
            op: spec.op(),
            attempt,
            key,
            amount_eur: spec.amount_for(attempt),
        };
        ctx.send(self.cfg.service, W::wrap(pay));
        ctx.set_timer(
            self.timeout(i),
            self.cfg.timeout_ms.saturating_mul(US_PER_MS),
        );
    }

    fn end(&self, s: &mut ClientStorage, i: usize, ending: Ending, ctx: &mut impl Ctx<Self>) {
        debug_assert_eq!(s.ops[i].status, OpStatus::Pending);
        s.ops[i].status = OpStatus::Done;
        if matches!(ending, Ending::Failed | Ending::Unknown) {
            ctx.reached(sit::CLIENT_DEAD_LETTERED);
        }
        ctx.observe(Obs::Ended {
            op: self.cfg.ops[i].op(),
            ending,
        });
    }

    /// Gives the operation up: in a dead letter saying whether its outcome is
    /// known, or silently.
    fn give_up(&self, s: &mut ClientStorage, i: usize, ctx: &mut impl Ctx<Self>) {
        let ending = match (self.cfg.dead_letter, s.ops[i].uncertain) {
            (false, _) => Ending::Abandoned,
            (true, true) => Ending::Unknown,
            (true, false) => Ending::Failed,
        };
        self.end(s, i, ending, ctx);
    }

    /// After an attempt that may be retried: retry within the policy or give up.
    fn retry_or_give_up(&self, s: &mut ClientStorage, i: usize, ctx: &mut impl Ctx<Self>) {
        let op = s.ops[i];
        let now_us = ctx.now_us();
        let next = self.cfg.retry.next_ms(
            op.attempts,
            op.last_backoff_ms,
            op.started_us,
            now_us,
            self.cfg.timeout_ms,
            |lo, hi| ctx.range(lo, hi),
        );
        match next {
            Some(delay_ms) => {
                s.ops[i].last_backoff_ms = delay_ms;
                ctx.set_timer(self.next_attempt(i), delay_ms.saturating_mul(US_PER_MS));
            }
            None => self.give_up(s, i, ctx),
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
        s.ops[i].uncertain |= outcome == AttemptOutcome::Unknown;
        ctx.observe(Obs::Attempt {
            op: self.cfg.ops[i].op(),
            attempt,
            outcome,
        });
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
        match status {
            PayStatus::Paid => {
                self.attempt_ended(s, i, attempt, AttemptOutcome::Ok, ctx);
                let spec = self.cfg.ops[i];
                ctx.observe(Obs::ToldDone {
                    op: spec.op(),
                    payload: spec.amount_for(attempt),
                });
                self.end(s, i, Ending::Done, ctx);
            }
            PayStatus::Overloaded => {
                self.attempt_ended(s, i, attempt, AttemptOutcome::Fail, ctx);
                self.retry_or_give_up(s, i, ctx);
            }
            PayStatus::InProgress | PayStatus::GatewayTimeout => {
                self.attempt_ended(s, i, attempt, AttemptOutcome::Unknown, ctx);
                self.retry_or_give_up(s, i, ctx);
            }
            PayStatus::Mismatch => {
                self.attempt_ended(s, i, attempt, AttemptOutcome::Rejected, ctx);
                if self.cfg.retry_final_errors {
                    self.retry_or_give_up(s, i, ctx);
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

impl<W: Carries<Msg>> Actor for Client<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ClientTimer;
    type State = ClientState;
    type Storage = ClientStorage;

    fn timer_slots(&self) -> u32 {
        2 * self.cfg.ops.len() as u32
    }

    fn reset_storage(&self, storage: &mut Option<ClientStorage>) {
        let s = storage.get_or_insert_with(ClientStorage::default);
        s.ops.clear();
        s.ops.extend(self.cfg.ops.iter().map(|_| ClientOp {
            status: OpStatus::NotStarted,
            attempts: 0,
            started_us: 0,
            last_backoff_ms: 0,
            uncertain: false,
        }));
    }

    fn reset_state(&self, state: &mut Option<ClientState>) {
        let st = state.get_or_insert_with(ClientState::default);
        st.awaiting.clear();
        st.awaiting.resize(self.cfg.ops.len(), None);
    }

    fn on_start(&self, _: &mut ClientState, s: &mut ClientStorage, ctx: &mut impl Ctx<Self>) {
        debug_assert_eq!(s.ops.len(), self.cfg.ops.len());
        let now_us = ctx.now_us();
        for (i, spec) in self.cfg.ops.iter().enumerate() {
            if s.ops[i].status == OpStatus::NotStarted {
                let at_us = spec.start_ms.saturating_mul(US_PER_MS);
                ctx.set_timer(self.next_attempt(i), at_us.saturating_sub(now_us));
            }
        }
        // After a restart the open connections are gone: the last attempts'
        // outcomes are unknown, so they are retried within the policy.
        for i in 0..s.ops.len() {
            if s.ops[i].status == OpStatus::Pending {
                ctx.reached(sit::CLIENT_RECOVERED_AFTER_RESTART);
                s.ops[i].uncertain = true;
                self.retry_or_give_up(s, i, ctx);
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
        let Some(&Msg::PayReply {
            op,
            attempt,
            status,
            ..
        }) = msg.peek()
        else {
            return;
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
        match timer {
            ClientTimer::NextAttempt { i, .. } => {
                let i = i as usize;
                if s.ops[i].status != OpStatus::Done {
                    self.send_attempt(st, s, i, ctx);
                }
            }
            ClientTimer::Timeout { i, .. } => {
                let i = i as usize;
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
                self.retry_or_give_up(s, i, ctx);
            }
        }
    }
}
