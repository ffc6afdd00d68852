//! Actors are plain state machines: a handler gets its state, one input and a
//! context, pushes commands into the context's output buffer, and returns.
//!
//! Durable storage (a database, a log) and volatile state are separate types:
//! a crash drops the state and keeps the storage, and `on_start` rebuilds the
//! state from the storage. One handler call is one atomic step; an operation
//! that is two transactions in the real system must be two steps here (use
//! [`Ctx::continue_with`]), because a crash can fall between any two steps.

use crate::choice::{Choices, StreamId};
use std::fmt::Debug;

/// Index of an actor in its world.
pub type ActorId = u32;

/// Virtual time, in microseconds since the start of the run.
pub type TimeUs = u64;

pub const US_PER_MS: u64 = 1_000;
pub const US_PER_S: u64 = 1_000_000;

/// Timer tags per actor; a small fixed bound keeps timers allocation-free.
pub const MAX_TIMER_TAGS: u32 = 64;

/// What a handler asks the engine to do once it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command<M, O> {
    Send {
        to: ActorId,
        msg: M,
    },
    SetTimer {
        tag: u32,
        after_us: TimeUs,
    },
    CancelTimer {
        tag: u32,
    },
    /// Something happened in the outside world, or a client learned an outcome:
    /// the oracle judges it.
    Observe(O),
    /// A named situation of interest was reached (for coverage).
    Reached(u32),
}

/// The handler's window on the engine: time, identity, decisions and outputs.
pub struct Ctx<'a, M, O> {
    pub(crate) now_us: TimeUs,
    pub(crate) me: ActorId,
    pub(crate) stream: StreamId,
    pub(crate) choices: &'a mut Choices,
    pub(crate) out: &'a mut Vec<Command<M, O>>,
}

impl<'a, M, O> Ctx<'a, M, O> {
    /// A context outside the engine, for unit tests of a single actor.
    pub fn detached(
        now_us: TimeUs,
        me: ActorId,
        choices: &'a mut Choices,
        out: &'a mut Vec<Command<M, O>>,
    ) -> Self {
        Ctx {
            now_us,
            me,
            stream: 0,
            choices,
            out,
        }
    }

    pub fn now_us(&self) -> TimeUs {
        self.now_us
    }

    pub fn me(&self) -> ActorId {
        self.me
    }

    pub fn send(&mut self, to: ActorId, msg: M) {
        self.out.push(Command::Send { to, msg });
    }

    pub fn set_timer(&mut self, tag: u32, after_us: TimeUs) {
        assert!(tag < MAX_TIMER_TAGS, "timer tag {tag} over the bound");
        self.out.push(Command::SetTimer { tag, after_us });
    }

    pub fn cancel_timer(&mut self, tag: u32) {
        assert!(tag < MAX_TIMER_TAGS, "timer tag {tag} over the bound");
        self.out.push(Command::CancelTimer { tag });
    }

    /// Ends this atomic step and continues with the timer `tag` at once.
    /// A crash may fall in between, which is the point.
    pub fn continue_with(&mut self, tag: u32) {
        self.set_timer(tag, 0);
    }

    pub fn observe(&mut self, obs: O) {
        self.out.push(Command::Observe(obs));
    }

    pub fn reached(&mut self, situation: u32) {
        assert!(situation < 64, "situation ids fit a u64 bit set");
        self.out.push(Command::Reached(situation));
    }

    /// The actor's own recorded decision: a value in `0..arity`.
    pub fn choose(&mut self, arity: u64) -> u64 {
        self.choices.choose(self.stream, arity)
    }

    /// The actor's own recorded decision: a value in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        self.choices.range(self.stream, lo, hi)
    }

    /// The actor's own recorded decision: true with `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u32) -> bool {
        self.choices.chance(self.stream, per_mille)
    }
}

/// A plain state machine. Dispatch over several kinds of actor goes through an
/// enum in the model, not `Box<dyn>`, so the hot path stays monomorphic.
pub trait Actor {
    type Msg: Copy + Debug;
    type Obs: Copy + Debug;
    /// Volatile: lost on a crash.
    type State: Debug;
    /// Durable: survives a crash.
    type Storage: Debug;

    /// The storage of a fresh run. Reuses `storage`'s allocations where it can.
    fn reset_storage(&self, storage: &mut Option<Self::Storage>);

    /// Builds the volatile state from durable storage, on the first start and
    /// after every restart.
    fn on_start(
        &self,
        storage: &mut Self::Storage,
        ctx: &mut Ctx<'_, Self::Msg, Self::Obs>,
    ) -> Self::State;

    fn on_msg(
        &self,
        state: &mut Self::State,
        storage: &mut Self::Storage,
        from: ActorId,
        msg: Self::Msg,
        ctx: &mut Ctx<'_, Self::Msg, Self::Obs>,
    );

    fn on_timer(
        &self,
        state: &mut Self::State,
        storage: &mut Self::Storage,
        tag: u32,
        ctx: &mut Ctx<'_, Self::Msg, Self::Obs>,
    );
}
