//! A client's own record of one business operation, shared by every model's
//! clients (the claims system, an HTTP client): it starts once, is attempted
//! within a retry policy, and ends with what the client finally knows (done,
//! failed, or unknown in a dead letter), never more than it was told.

use super::obs::{AttemptOutcome, Ending, Obs};
use super::op::{Op, Space};
use super::retry::RetryPolicy;
use sim::{Actor, Ctx, SituationId, TimeUs, Timer, US_PER_MS};
use std::fmt;
use std::marker::PhantomData;

/// The namespace of a client's operations, for its timers' names: a marker
/// type (`payment::Claims`), so a timer stays two integers.
pub trait OpSpace: Copy + fmt::Debug + Eq + 'static {
    /// The space the timers' operation ids belong to.
    const SPACE: &'static Space;
}

/// Declares a client's timer type `$timer`, naming its operations with the
/// marker `$marker` for the space `$space`:
/// `client_timers!(ClientTimer, Claims, CLAIM)`.
macro_rules! client_timers {
    ($(#[$meta:meta])* $timer:ident, $marker:ident, $space:path) => {
        /// The operations' space, as the client's timers name it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $marker;

        impl $crate::core::client_op::OpSpace for $marker {
            const SPACE: &'static $crate::core::Space = &$space;
        }

        $(#[$meta])*
        pub type $timer = $crate::core::client_op::OpTimer<$marker>;
    };
}
pub(crate) use client_timers;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Which of an operation's two timers.
#[derive(serde::Serialize)]
pub enum OpTimerKind {
    /// No answer to the current attempt in time.
    Timeout,
    /// The operation's first attempt, or the next after a backoff.
    NextAttempt,
    /// A reconciliation job's next look at an operation given up with an
    /// unknown outcome.
    Reconcile,
    /// A compensation job's next round on an operation given up with an
    /// unknown outcome (the same slot: a client runs one job or the other).
    Compensate,
}

/// A client's two timers of operation `id`, the `i`-th in its list, named in
/// its model's words: "attempt timeout (claim 4711)", "next attempt (request #3)".
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(bound = "")]
pub struct OpTimer<S> {
    /// Which timer.
    pub kind: OpTimerKind,
    /// The operation's index in the client's list.
    pub i: u32,
    /// The operation's id, for traces.
    pub id: u32,
    /// Which part of the id it is (`Op::part`), for traces; a first part's
    /// timer shows as before ids had parts.
    #[serde(skip_serializing_if = "super::shown::is_zero")]
    pub part: u8,
    #[serde(skip)]
    space: PhantomData<fn() -> S>,
}

impl<S> OpTimer<S> {
    /// The attempt timeout of the `i`-th operation, `id`.
    pub fn timeout(i: usize, id: u32) -> Self {
        OpTimer {
            kind: OpTimerKind::Timeout,
            i: i as u32,
            id,
            part: 0,
            space: PhantomData,
        }
    }

    /// The same timer of part `part` of its id (`Op::part`).
    pub fn of_part(self, part: u8) -> Self {
        OpTimer { part, ..self }
    }

    /// The next attempt of the `i`-th operation, `id`.
    pub fn next_attempt(i: usize, id: u32) -> Self {
        OpTimer {
            kind: OpTimerKind::NextAttempt,
            ..Self::timeout(i, id)
        }
    }

    /// The reconciliation job's next round for the `i`-th operation, `id`.
    pub fn reconcile(i: usize, id: u32) -> Self {
        OpTimer {
            kind: OpTimerKind::Reconcile,
            ..Self::timeout(i, id)
        }
    }

    /// The compensation job's next round for the `i`-th operation, `id`.
    pub fn compensate(i: usize, id: u32) -> Self {
        OpTimer {
            kind: OpTimerKind::Compensate,
            ..Self::timeout(i, id)
        }
    }
}

impl<S: OpSpace> fmt::Display for OpTimer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            OpTimerKind::Timeout => "attempt timeout",
            OpTimerKind::NextAttempt => "next attempt",
            OpTimerKind::Reconcile => "reconcile",
            OpTimerKind::Compensate => "compensate",
        };
        write!(f, "{what} ({})", Op::part(S::SPACE, self.id, self.part))
    }
}

impl<S: OpSpace> Timer for OpTimer<S> {
    fn slot(&self) -> u32 {
        match self.kind {
            OpTimerKind::Timeout => 2 * self.i,
            // A job looks only at an operation that has ended, whose
            // attempts set no timer any more: it can share their slot, and
            // every client keeps two slots per operation.
            OpTimerKind::NextAttempt | OpTimerKind::Reconcile | OpTimerKind::Compensate => {
                2 * self.i + 1
            }
        }
    }
}

/// Timer slots of a client with `n` operations.
pub fn timer_slots(n: usize) -> u32 {
    2 * n as u32
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Where an operation stands at its client.
#[derive(serde::Serialize)]
pub enum OpStatus {
    /// Its start time has not come yet.
    NotStarted,
    /// Started, not finished.
    Pending,
    /// Finished (done, failed, unknown or abandoned).
    Done,
}

/// One operation in the client's own database: it survives the client's crashes.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct ClientOp {
    /// Where it stands.
    pub status: OpStatus,
    /// Attempts sent.
    pub attempts: u32,
    /// When it started.
    pub started_us: TimeUs,
    /// The last backoff waited (decorrelated jitter grows from it).
    pub last_backoff_ms: u64,
    /// Some attempt's outcome was unknown (a timeout, 409, 504): if the
    /// operation is given up, nobody knows whether it happened.
    pub uncertain: bool,
    /// An attempt was sent and nothing concluded from it yet. Kept with the
    /// operation because a restart must tell an attempt whose connection
    /// died with the process (its outcome unknown) from a backoff after an
    /// answer already recorded (a definite 503 stays definite).
    pub attempt_open: bool,
}

/// A follow-up job's progress (reconciliation or compensation) on one
/// operation its client gave up with an unknown outcome, kept in the client's database so that the job
/// resumes where it was after a crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Followup {
    /// The operation's index in the client's list.
    pub i: u32,
    /// Rounds started (each one a question, and maybe a re-drive or a
    /// refund).
    pub round: u32,
    /// The last round that re-drove (or refunded) the operation (0: none):
    /// a duplicated or late answer must not act twice in one round.
    pub redriven: u32,
    /// Still looking: neither resolved nor handed over to a person.
    pub open: bool,
}

impl Followup {
    /// The open record of operation `i` among `followups`, if `in_round`
    /// (given the record, says whether it is the round an answer belongs
    /// to) accepts it: the one lookup the reconciliation and compensation
    /// jobs make for every round, answer and time-out.
    pub fn open_of(
        followups: &mut [Followup],
        i: usize,
        in_round: impl Fn(&Followup) -> bool,
    ) -> Option<&mut Followup> {
        followups
            .iter_mut()
            .find(|f| f.i as usize == i && f.open && in_round(f))
    }
}

/// A client's database: its operations, surviving its crashes. A client
/// without a follow-up job shows what it always showed in the state panel:
/// the job's records appear once there are any.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ClientStorage {
    /// One record per operation, in the order of the client's list.
    pub ops: Vec<ClientOp>,
    /// The follow-up job's records, one per operation it took up.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub followups: Vec<Followup>,
}

impl ClientStorage {
    /// The storage of a fresh run with `n` operations, reusing `storage`'s memory.
    pub fn reset(storage: &mut Option<ClientStorage>, n: usize) {
        storage.get_or_insert_with(ClientStorage::default).clear(n);
    }

    /// [`reset`](ClientStorage::reset) of a storage that exists already.
    pub fn clear(&mut self, n: usize) {
        refill(&mut self.ops, n, ClientOp::NEW);
        self.followups.clear();
    }
}

/// Sets `column` to `n` copies of `value` in the memory it has: a fresh
/// run's per-operation column, allocated once per simulator.
pub fn refill<T: Clone>(column: &mut Vec<T>, n: usize, value: T) {
    column.clear();
    column.resize(n, value);
}

/// What every client's `reset` starts with: its storage, kept or made, holds
/// `n` operations not started, and its state, kept or made, is handed back
/// for the client to reset its own fields.
pub fn reset_client<'a, S: Default>(
    state: sim::Fresh<'a, S>,
    storage: Option<sim::Fresh<'_, ClientStorage>>,
    n: usize,
) -> &'a mut S {
    if let Some(s) = storage {
        s.or_default().clear(n);
    }
    state.or_default()
}

/// How a client retries and what it does when it gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Persistence {
    /// When to retry and when to stop.
    pub retry: RetryPolicy,
    /// An attempt without an answer after this is over, its outcome unknown.
    pub timeout_ms: u64,
    /// Record what was given up, or drop it silently (a mistake).
    pub dead_letter: bool,
}

/// The situations a client reports, as its model numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSituations {
    /// A second or later attempt.
    pub retried: SituationId,
    /// Given up into a dead letter a person will see.
    pub dead_lettered: SituationId,
    /// Restarted with the operation pending.
    pub recovered: SituationId,
}

impl ClientOp {
    /// An operation not started yet.
    pub const NEW: ClientOp = ClientOp {
        status: OpStatus::NotStarted,
        attempts: 0,
        started_us: 0,
        last_backoff_ms: 0,
        uncertain: false,
        attempt_open: false,
    };

    /// Counts the next attempt of `op` and reports it; the first one starts
    /// the operation (its intent: `payload`, within `window_ms`). Returns the
    /// attempt's number.
    pub fn begin_attempt<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        op: Op,
        payload: u32,
        window_ms: u64,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) -> u32 {
        if self.status == OpStatus::NotStarted {
            self.status = OpStatus::Pending;
            self.started_us = ctx.now_us();
            ctx.observe(Obs::Intent {
                op,
                payload,
                window_ms,
            });
        } else {
            ctx.reached(sit.retried);
        }
        debug_assert_eq!(self.status, OpStatus::Pending);
        self.attempts += 1;
        self.attempt_open = true;
        ctx.observe(Obs::AttemptSent {
            op,
            attempt: self.attempts,
        });
        self.attempts
    }

    /// What the client concluded from attempt `attempt`.
    pub fn attempt_ended<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        op: Op,
        attempt: u32,
        outcome: AttemptOutcome,
        ctx: &mut impl Ctx<A>,
    ) {
        self.uncertain |= outcome == AttemptOutcome::Unknown;
        self.attempt_open = false;
        ctx.observe(Obs::Attempt {
            op,
            attempt,
            outcome,
        });
    }

    /// Told done, for the payload attempt `attempt` asked for.
    pub fn done<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        op: Op,
        attempt: u32,
        payload: u32,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) {
        self.attempt_ended(op, attempt, AttemptOutcome::Ok, ctx);
        ctx.observe(Obs::ToldDone { op, payload });
        self.end(op, Ending::Done, sit, ctx);
    }

    /// Ends the operation with `ending`, reporting it and the situation it means.
    pub fn end<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        op: Op,
        ending: Ending,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) {
        debug_assert_eq!(self.status, OpStatus::Pending);
        self.status = OpStatus::Done;
        self.attempt_open = false;
        if matches!(ending, Ending::Failed | Ending::Unknown) {
            ctx.reached(sit.dead_lettered);
        }
        ctx.observe(Obs::Ended { op, ending });
    }

    /// Gives the operation up: in a dead letter saying whether its outcome is
    /// known, or silently.
    pub fn give_up<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        op: Op,
        dead_letter: bool,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) {
        let ending = match (dead_letter, self.uncertain) {
            (false, _) => Ending::Abandoned,
            (true, true) => Ending::Unknown,
            (true, false) => Ending::Failed,
        };
        self.end(op, ending, sit, ctx);
    }

    /// After an attempt that may be retried: the next attempt's timer within
    /// the policy, or, once the policy gives up, the operation's end.
    pub fn retry_or_give_up<S: OpSpace, A: Actor<Obs = Obs, Timer = OpTimer<S>> + ?Sized>(
        &mut self,
        i: usize,
        op: Op,
        p: &Persistence,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) {
        self.retry_or_give_up_if(i, op, p, sit, ctx, |_| true);
    }

    /// The same, with a last word for `allow`: a retry the policy would
    /// make goes ahead only if `allow` grants it (a retry budget pays for
    /// it); otherwise the operation ends as if the policy had given up.
    pub fn retry_or_give_up_if<
        S: OpSpace,
        A: Actor<Obs = Obs, Timer = OpTimer<S>> + ?Sized,
        C: Ctx<A>,
    >(
        &mut self,
        i: usize,
        op: Op,
        p: &Persistence,
        sit: &ClientSituations,
        ctx: &mut C,
        allow: impl FnOnce(&mut C) -> bool,
    ) {
        let now_us = ctx.now_us();
        let next = p.retry.next_ms(
            self.attempts,
            self.last_backoff_ms,
            self.started_us,
            now_us,
            p.timeout_ms,
            |lo, hi| ctx.range_down(lo, hi),
        );
        match next {
            Some(delay_ms) if allow(ctx) => {
                self.last_backoff_ms = delay_ms;
                let wait_us = delay_ms.saturating_mul(US_PER_MS);
                ctx.set_timer(OpTimer::next_attempt(i, op.id).of_part(op.part), wait_us);
            }
            _ => self.give_up(op, p.dead_letter, sit, ctx),
        }
    }

    /// An attempt refused before it was sent (an open circuit breaker): the
    /// operation starts if it had not (its intent: `payload`, within
    /// `window_ms`) and is given up at once.
    pub fn fail_fast<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        intent: Intent,
        dead_letter: bool,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) {
        let Intent {
            op,
            payload,
            window_ms,
        } = intent;
        if self.status == OpStatus::NotStarted {
            self.status = OpStatus::Pending;
            self.started_us = ctx.now_us();
            ctx.observe(Obs::Intent {
                op,
                payload,
                window_ms,
            });
        }
        ctx.observe(Obs::FastFailed { op });
        self.give_up(op, dead_letter, sit, ctx);
    }
}

/// An operation's intent as a client declares it: what it is for, its
/// payload, and the window within which it may still be retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intent {
    /// The operation.
    pub op: Op,
    /// Its payload (an amount, a value).
    pub payload: u32,
    /// Its retry window in ms; 0 = none.
    pub window_ms: u64,
}

/// A client's start, first or after a restart: each operation not started
/// yet gets its first attempt at its start time (`spec(i)`: the operation and
/// its start in ms); each one pending is retried within the policy, and if
/// it had an attempt open, that attempt's connection died with the process:
/// its outcome is unknown. One waiting out a backoff keeps what it knew.
pub fn start_ops<S: OpSpace, A: Actor<Obs = Obs, Timer = OpTimer<S>> + ?Sized>(
    ops: &mut [ClientOp],
    spec: impl Fn(usize) -> (Op, u64),
    p: &Persistence,
    sit: &ClientSituations,
    ctx: &mut impl Ctx<A>,
) {
    let now_us = ctx.now_us();
    for (i, o) in ops.iter().enumerate() {
        if o.status == OpStatus::NotStarted {
            let (op, start_ms) = spec(i);
            let at_us = start_ms.saturating_mul(US_PER_MS);
            ctx.set_timer(
                OpTimer::next_attempt(i, op.id).of_part(op.part),
                at_us.saturating_sub(now_us),
            );
        }
    }
    for (i, o) in ops.iter_mut().enumerate() {
        if o.status == OpStatus::Pending {
            ctx.reached(sit.recovered);
            o.uncertain |= o.attempt_open;
            o.attempt_open = false;
            o.retry_or_give_up(i, spec(i).0, p, sit, ctx);
        }
    }
}
