//! A client of the contended row: each of its writes is a read-modify-write
//! over the network. It reads the row, then writes the value it computed,
//! conditional on the version it read (compare-and-set) unless `cas` is off;
//! a write refused because the row moved on is retried, after a backoff,
//! from a fresh read. Two steps with the network between them, so a race
//! between clients is real: another write can land between a client's read
//! and its write.
//!
//! The backoff follows AWS's backoff simulator to the unit: waits are drawn
//! in microseconds, and the exponent of the first retry is
//! `first_retry_exponent` (the simulator's 1: its first retry waits `2·base`).

use super::msg::Msg;
use super::situations as sit;
use super::WRITE;
use crate::core::client_op::{self, ClientOp, ClientSituations, OpStatus, OpTimer, OpTimerKind};
use crate::core::retry::{AttemptClock, Jitter, RetryPolicy};
use crate::core::{AttemptOutcome, Carries, Obs, Op};
use sim::{Actor, ActorId, Ctx, US_PER_MS};
use std::marker::PhantomData;

const SITUATIONS: ClientSituations = ClientSituations {
    retried: sit::WRITE_RETRIED,
    dead_lettered: sit::WRITE_DEAD_LETTERED,
    recovered: sit::WRITE_RESUMED_AFTER_RESTART,
};

/// What every write adds to the row: one business operation, one increment.
pub const AMOUNT: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
/// A contending client's configuration.
pub struct ClientConfig {
    /// The resource actor it writes to.
    pub resource: ActorId,
    /// Its backoff after a conflict.
    pub retry: RetryPolicy,
    /// An attempt without an answer after this is over; 0: the client waits
    /// for its answers forever (a reliable network, as in the simulator).
    pub timeout_ms: u64,
    /// Record a write given up in a dead letter, or drop it silently.
    pub dead_letter: bool,
    /// The write is conditional on the version read (compare-and-set).
    pub cas: bool,
    /// The write carries its id as a request id, kept with the row.
    pub request_id: bool,
    /// The exponent `n` of the first retry's wait `min(cap, base · 2^n)`;
    /// each later retry adds one.
    pub first_retry_exponent: u32,
    /// This client's writes, in the order it makes them (ascending ids).
    pub writes: Vec<u32>,
}

/// Where the current attempt is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Phase {
    /// Waiting for the row's read.
    Read,
    /// Waiting for the compare-and-set's answer.
    Write,
}

/// Volatile: the attempt waiting for an answer, as (write, attempt, phase).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ClientState {
    /// The attempt waiting for an answer: (write, attempt, phase).
    pub awaiting: Option<(usize, u32, Phase)>,
}

/// The client's database: its writes, and the last wait of each (the
/// decorrelated walk starts from it), surviving its crashes.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ClientStorage {
    /// One record per write.
    pub ops: Vec<ClientOp>,
    /// Per write, the last wait drawn, in µs.
    pub last_wait_us: Vec<u64>,
}

client_op::client_timers!(
    /// The client's timers, one pair per write.
    ClientTimer,
    Writes,
    WRITE
);

/// A client that reads the row and writes it with compare-and-set, backing off on conflict.
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

    fn op(&self, i: usize) -> Op {
        Op::new(&WRITE, self.cfg.writes[i])
    }

    fn index_of(&self, op: Op) -> Option<usize> {
        if op.space != &WRITE {
            return None;
        }
        self.cfg.writes.binary_search(&op.id).ok()
    }

    /// Whether the retry with exponent `exponent` draws from a range the cap
    /// has cut: the backoff stopped growing.
    fn at_cap(&self, exponent: u32, last_wait_us: u64) -> bool {
        let p = &self.cfg.retry;
        if p.multiplier < 2 || p.base_ms == 0 {
            return false;
        }
        let cap_us = p.cap_ms.saturating_mul(US_PER_MS);
        let ceiling_us = match p.jitter {
            Jitter::Decorrelated => last_wait_us
                .max(p.base_ms.saturating_mul(US_PER_MS))
                .saturating_mul(3),
            _ => p
                .base_ms
                .saturating_mul(US_PER_MS)
                .saturating_mul(p.multiplier.saturating_pow(exponent)),
        };
        ceiling_us >= cap_us
    }
}

impl<W: Carries<Msg>> Client<W> {
    fn send(&self, st: &mut ClientState, i: usize, msg: Msg, ctx: &mut impl Ctx<Self>) {
        let (attempt, phase) = match msg {
            Msg::Read { attempt, .. } => (attempt, Phase::Read),
            Msg::Write { attempt, .. } => (attempt, Phase::Write),
            Msg::ReadReply { .. } | Msg::WriteReply { .. } => unreachable!("a client asks"),
        };
        st.awaiting = Some((i, attempt, phase));
        ctx.send(self.cfg.resource, W::wrap(msg));
        if self.cfg.timeout_ms > 0 {
            let timeout = OpTimer::timeout(i, self.cfg.writes[i]);
            ctx.set_timer(timeout, self.cfg.timeout_ms.saturating_mul(US_PER_MS));
        }
    }

    /// A new attempt of write `i`: read the row first.
    fn read(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let op = self.op(i);
        let window_ms = self.cfg.retry.window_ms;
        let attempt = s.ops[i].begin_attempt(op, AMOUNT, window_ms, &SITUATIONS, ctx);
        self.send(st, i, Msg::Read { op, attempt }, ctx);
    }

    /// Write `i` is over (done or given up): the next one starts at once.
    fn next_write(&self, i: usize, ctx: &mut impl Ctx<Self>) {
        if let Some(&id) = self.cfg.writes.get(i + 1) {
            ctx.set_timer(OpTimer::next_attempt(i + 1, id), 0);
        }
    }

    fn done(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        attempt: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        st.awaiting = None;
        if self.cfg.timeout_ms > 0 {
            ctx.cancel_timer(OpTimer::timeout(i, self.cfg.writes[i]));
        }
        s.ops[i].done(self.op(i), attempt, AMOUNT, &SITUATIONS, ctx);
        self.next_write(i, ctx);
    }

    /// After an attempt that did not write: the next one after a backoff,
    /// or, once the policy gives up, a dead letter.
    fn retry(&self, s: &mut ClientStorage, i: usize, ctx: &mut impl Ctx<Self>) {
        let op = self.op(i);
        let o = &mut s.ops[i];
        let exponent = (o.attempts.max(1) - 1).saturating_add(self.cfg.first_retry_exponent);
        let last_us = s.last_wait_us[i];
        let now_us = ctx.now_us();
        let next = self.cfg.retry.next_us(
            o.attempts,
            exponent,
            last_us,
            AttemptClock {
                started_us: o.started_us,
                now_us,
                attempt_timeout_ms: self.cfg.timeout_ms,
            },
            |lo, hi| ctx.range_down(lo, hi),
        );
        match next {
            Some(wait_us) => {
                if self.at_cap(exponent, last_us) {
                    ctx.reached(sit::BACKOFF_AT_CAP);
                }
                s.last_wait_us[i] = wait_us;
                ctx.set_timer(OpTimer::next_attempt(i, op.id), wait_us);
            }
            None => {
                o.give_up(op, self.cfg.dead_letter, &SITUATIONS, ctx);
                self.next_write(i, ctx);
            }
        }
    }
}

impl<W> crate::core::Ends for Client<W> {
    const ROLES: &'static [&'static str] = &["client"];
    const SENDS: &'static [(&'static str, &'static str)] =
        &[("read", "resource"), ("write", "resource")];
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
        if let Some(s) = storage {
            let s = s.or_default();
            let n = self.cfg.writes.len();
            client_op::refill(&mut s.ops, n, ClientOp::NEW);
            client_op::refill(&mut s.last_wait_us, n, 0);
        }
        state.set(ClientState::default());
    }

    fn on_start(&self, _: &mut ClientState, s: &mut ClientStorage, ctx: &mut impl Ctx<Self>) {
        // Writes run one after another: the first that is not over is the current one.
        if let Some(i) = s.ops.iter().position(|o| o.status != OpStatus::Done) {
            match s.ops[i].status {
                OpStatus::NotStarted => {
                    ctx.set_timer(OpTimer::next_attempt(i, self.cfg.writes[i]), 0);
                }
                OpStatus::Pending => {
                    // The open connection died with the process: its answer is unknown.
                    ctx.reached(SITUATIONS.recovered);
                    s.ops[i].uncertain = true;
                    self.retry(s, i, ctx);
                }
                OpStatus::Done => unreachable!("found as not done"),
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
        let Some(&m) = msg.peek() else {
            return;
        };
        let (op, attempt, phase) = match m {
            Msg::ReadReply { op, attempt, .. } => (op, attempt, Phase::Read),
            Msg::WriteReply { op, attempt, .. } => (op, attempt, Phase::Write),
            Msg::Read { .. } | Msg::Write { .. } => return,
        };
        // Only the answer awaited counts: a late one (after a timeout, or a
        // duplicate) arrives on a closed connection.
        let Some(i) = self.index_of(op) else {
            return;
        };
        if st.awaiting != Some((i, attempt, phase)) || s.ops[i].status != OpStatus::Pending {
            return;
        }
        match m {
            Msg::ReadReply {
                value,
                version,
                writer,
                ..
            } => {
                if writer == Some(op) {
                    // An earlier attempt's write landed and its answer was lost.
                    ctx.reached(sit::OWN_WRITE_FOUND);
                    self.done(st, s, i, attempt, ctx);
                    return;
                }
                let write = Msg::Write {
                    op,
                    attempt,
                    read: version,
                    value: value.saturating_add(AMOUNT),
                    amount: AMOUNT,
                    cas: self.cfg.cas,
                    request_id: self.cfg.request_id,
                };
                self.send(st, i, write, ctx);
            }
            Msg::WriteReply { ok: true, .. } => self.done(st, s, i, attempt, ctx),
            Msg::WriteReply { ok: false, .. } => {
                st.awaiting = None;
                if self.cfg.timeout_ms > 0 {
                    ctx.cancel_timer(OpTimer::timeout(i, op.id));
                }
                s.ops[i].attempt_ended(op, attempt, AttemptOutcome::Fail, ctx);
                self.retry(s, i, ctx);
            }
            Msg::Read { .. } | Msg::Write { .. } => {}
        }
    }

    fn on_timer(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        timer: ClientTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        let i = timer.i as usize;
        if s.ops[i].status == OpStatus::Done {
            return;
        }
        match timer.kind {
            // This client has no reconciliation job.
            OpTimerKind::Reconcile | OpTimerKind::Compensate => {}
            OpTimerKind::NextAttempt => self.read(st, s, i, ctx),
            OpTimerKind::Timeout => {
                let Some((_, attempt, phase)) = st.awaiting.take() else {
                    return;
                };
                // A read changes nothing; a write without an answer may have landed.
                let outcome = match phase {
                    Phase::Read => AttemptOutcome::Fail,
                    Phase::Write => AttemptOutcome::Unknown,
                };
                s.ops[i].attempt_ended(self.op(i), attempt, outcome, ctx);
                self.retry(s, i, ctx);
            }
        }
    }
}
