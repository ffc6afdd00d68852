//! A client's own record of one business operation, shared by every model's
//! clients (the claims system, an HTTP client): it starts once, is attempted
//! within a retry policy, and ends with what the client finally knows (done,
//! failed, or unknown in a dead letter), never more than it was told.

use super::obs::{AttemptOutcome, Ending, Obs};
use super::op::Op;
use super::retry::RetryPolicy;
use sim::{Actor, Ctx, SituationId, TimeUs, US_PER_MS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpStatus {
    NotStarted,
    Pending,
    Done,
}

/// One operation in the client's own database: it survives the client's crashes.
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

/// How a client retries and what it does when it gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Persistence {
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
    pub const NEW: ClientOp = ClientOp {
        status: OpStatus::NotStarted,
        attempts: 0,
        started_us: 0,
        last_backoff_ms: 0,
        uncertain: false,
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

    pub fn end<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        op: Op,
        ending: Ending,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) {
        debug_assert_eq!(self.status, OpStatus::Pending);
        self.status = OpStatus::Done;
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

    /// After an attempt that may be retried: the wait before the next attempt
    /// (the caller sets its timer), or `None` once the policy gives up, which
    /// ends the operation.
    pub fn retry_or_give_up<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        op: Op,
        p: &Persistence,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) -> Option<TimeUs> {
        let now_us = ctx.now_us();
        let next = p.retry.next_ms(
            self.attempts,
            self.last_backoff_ms,
            self.started_us,
            now_us,
            p.timeout_ms,
            |lo, hi| ctx.range(lo, hi),
        );
        match next {
            Some(delay_ms) => {
                self.last_backoff_ms = delay_ms;
                Some(delay_ms.saturating_mul(US_PER_MS))
            }
            None => {
                self.give_up(op, p.dead_letter, sit, ctx);
                None
            }
        }
    }

    /// After a restart with the operation pending: the open connection is
    /// gone, so the last attempt's outcome is unknown; it is retried within
    /// the policy (the wait, as [`retry_or_give_up`](Self::retry_or_give_up)).
    pub fn recover<A: Actor<Obs = Obs> + ?Sized>(
        &mut self,
        op: Op,
        p: &Persistence,
        sit: &ClientSituations,
        ctx: &mut impl Ctx<A>,
    ) -> Option<TimeUs> {
        ctx.reached(sit.recovered);
        self.uncertain = true;
        self.retry_or_give_up(op, p, sit, ctx)
    }
}
