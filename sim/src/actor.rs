//! Actors are plain state machines: a handler gets its state, one input and a
//! context, pushes commands into the context, and returns.
//!
//! Durable storage (a database, a log) and volatile state are separate types:
//! a crash drops the state and keeps the storage, and `on_start` rebuilds the
//! state from the storage. One handler call is one atomic step; an operation
//! that is two transactions in the real system must be two steps here (use
//! [`Ctx::continue_with`]), because a crash can fall between any two steps.
//!
//! Every kind of actor implements the one [`Actor`] trait. A world of several
//! kinds is an enum over them (see [`compose!`](crate::compose)), which
//! implements [`Actor`] too and hands each kind a [`Narrow`] context: the
//! dispatch stays static, with no `dyn` on the hot path.

use crate::choice::{Choices, StreamId};
use crate::situation::SituationId;
use std::fmt::{Debug, Display};
use std::marker::PhantomData;

/// Index of an actor in its world.
pub type ActorId = u32;

/// Virtual time, in microseconds since the start of the run.
pub type TimeUs = u64;

/// Microseconds per millisecond: virtual time is in µs.
pub const US_PER_MS: u64 = 1_000;
/// Microseconds per second.
pub const US_PER_S: u64 = 1_000_000;

/// A message between actors. Built-in models keep their messages small and
/// `Copy`; a user's model may carry `String` or `Vec` payloads.
pub trait Message: Clone + Debug + Display {
    /// A small index naming the message's kind (a transfer, a status query),
    /// so that link faults can select kinds. `0` when a model has one kind.
    fn kind(&self) -> u16 {
        0
    }
}

/// A timer an actor sets, as a typed value named in traces ("attempt
/// timeout", "relay poll"). Setting a timer replaces the pending one with the
/// same [`slot`](Timer::slot); a crash cancels all of the actor's timers.
pub trait Timer: Copy + Debug + Display + Eq {
    /// Dense index below the actor's [`Actor::timer_slots`].
    fn slot(&self) -> u32;
}

/// The timer type of an actor that sets none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoTimer {}

impl Display for NoTimer {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {}
    }
}

impl Timer for NoTimer {
    fn slot(&self) -> u32 {
        match *self {}
    }
}

/// What a handler asks the engine to do once it returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command<M, O, T> {
    /// Send `msg` to actor `to` over the link between them (faults apply).
    Send {
        /// The receiving actor.
        to: ActorId,
        /// The message.
        msg: M,
    },
    /// Fire `timer` after `after_us`, replacing a pending timer of the same slot.
    SetTimer {
        /// The timer.
        timer: T,
        /// `timer.slot()`, worked out where the timer's own type is known.
        slot: u32,
        /// Delay from now.
        after_us: TimeUs,
    },
    /// Cancel the pending timer of `timer`'s slot, if any.
    CancelTimer {
        /// The timer (its slot is what counts).
        timer: T,
        /// `timer.slot()`, as for [`Command::SetTimer`].
        slot: u32,
    },
    /// Something happened in the outside world, or a client learned an outcome:
    /// the oracle judges it.
    Observe(O),
    /// A named situation of interest was reached (for coverage).
    Reached(SituationId),
}

impl<M, O, T> Command<M, O, T> {
    /// The messages among a handler's commands `out`, in the order it sent
    /// them: what a unit test of one handler (through
    /// [`Context::detached`]) looks at.
    pub fn sent(out: &[Self]) -> impl Iterator<Item = &M> {
        out.iter().filter_map(|c| match c {
            Command::Send { msg, .. } => Some(msg),
            _ => None,
        })
    }

    /// Whether a handler's commands `out` mark `situation` reached.
    pub fn reaches(out: &[Self], situation: SituationId) -> bool {
        out.iter()
            .any(|c| matches!(c, Command::Reached(s) if *s == situation))
    }
}

/// A handler's window on the engine: time, identity, decisions and outputs.
///
/// Handlers take `ctx: &mut impl Ctx<Self>`, so the same code runs under the
/// engine, inside an enum of actors (through [`Narrow`]) and in unit tests
/// (through [`Context::detached`]).
pub trait Ctx<A: Actor + ?Sized> {
    /// Virtual time now, in microseconds since the start of the run.
    fn now_us(&self) -> TimeUs;
    /// This actor's id (its index in the world).
    fn me(&self) -> ActorId;
    /// True in `on_start` after a crash; false on the first start.
    fn restarted(&self) -> bool;
    /// Sends `msg` to actor `to`; the network may lose, duplicate or delay it.
    fn send(&mut self, to: ActorId, msg: A::Msg);
    /// Sets `timer` to fire after `after_us`, replacing one pending in its slot.
    fn set_timer(&mut self, timer: A::Timer, after_us: TimeUs) {
        let slot = timer.slot();
        self.set_timer_in(timer, slot, after_us);
    }
    /// Cancels the pending timer of `timer`'s slot.
    fn cancel_timer(&mut self, timer: A::Timer) {
        let slot = timer.slot();
        self.cancel_timer_in(timer, slot);
    }
    /// [`set_timer`](Ctx::set_timer) with `timer.slot()` already known: an
    /// enum of actors knows it from the kind's own timer type, and need not
    /// dispatch on the enum a second time (a jump the CPU mispredicts).
    fn set_timer_in(&mut self, timer: A::Timer, slot: u32, after_us: TimeUs);
    /// [`cancel_timer`](Ctx::cancel_timer) with `timer.slot()` already known.
    fn cancel_timer_in(&mut self, timer: A::Timer, slot: u32);
    /// Reports an observation to the oracle (the effect ledger), which judges it at once.
    fn observe(&mut self, obs: A::Obs);
    /// Marks a named situation as reached in this run (coverage for "holds").
    fn reached(&mut self, situation: SituationId);
    /// The actor's own recorded decision: a value in `0..arity`.
    fn choose(&mut self, arity: u64) -> u64;
    /// The actor's own recorded decision: true with `per_mille / 1000`.
    fn chance(&mut self, per_mille: u32) -> bool;

    /// The actor's own recorded decision: a value in `lo..=hi`, recorded as
    /// its offset from `lo`, so zero is the smallest.
    #[inline(always)]
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "range {lo}..={hi} is empty");
        match (hi - lo).checked_add(1) {
            Some(arity) => lo + self.choose(arity),
            // The full u64 range has 2^64 values; no scenario draws from it.
            None => panic!("range {lo}..={hi} is too wide to draw from"),
        }
    }

    /// The actor's own recorded decision: a value in `lo..=hi`, recorded as
    /// its distance below `hi`, so zero is the largest. For a wait before a
    /// retry, where the longer wait is the quieter run: shrinking and
    /// exhaustive search lower every decision towards zero, which must be the
    /// least eventful value, not a retry at once.
    #[inline(always)]
    fn range_down(&mut self, lo: u64, hi: u64) -> u64 {
        hi - (self.range(lo, hi) - lo)
    }

    /// Ends this atomic step and continues with `timer` at once.
    /// A crash may fall in between, which is the point.
    fn continue_with(&mut self, timer: A::Timer) {
        self.set_timer(timer, 0);
    }
}

/// A plain state machine. Config lives on `&self`; state and storage are values.
pub trait Actor {
    /// The world's message type, shared by every actor of a world.
    type Msg: Message;
    /// What the actor reports to the oracle.
    type Obs: Clone + Debug;
    /// The actor's timers.
    type Timer: Timer;
    /// Volatile: lost on a crash.
    type State: Debug;
    /// Durable: survives a crash.
    type Storage: Debug;

    /// How many timer slots this actor uses (see [`Timer::slot`]).
    fn timer_slots(&self) -> u32 {
        0
    }

    /// The storage of a fresh run. Reuses `storage`'s allocations where it can.
    fn reset_storage(&self, storage: &mut Option<Self::Storage>);

    /// The volatile state a process has before [`on_start`](Actor::on_start)
    /// runs, as if new. `state` holds what the engine kept (the state of an
    /// earlier run, or of this process before a crash), only so that its
    /// allocations can be reused: nothing in it may survive, or a crash would
    /// not lose what it must. With it, a warm simulator allocates nothing per run.
    fn reset_state(&self, state: &mut Option<Self::State>);

    /// [`reset_storage`](Actor::reset_storage) of a storage an earlier run
    /// left, done in place: true if the actor did it, false (the default) if
    /// it leaves it to `reset_storage`. An enum of actors
    /// ([`compose!`](crate::compose)) asks this first, because the way
    /// through `reset_storage` moves its whole storage enum (as large as its
    /// largest kind's) out of its slot and back, for every actor of every run.
    fn reset_storage_in_place(&self, storage: &mut Self::Storage) -> bool {
        let _ = storage;
        false
    }

    /// [`reset_state`](Actor::reset_state) of a state the engine kept, done
    /// in place; as [`reset_storage_in_place`](Actor::reset_storage_in_place).
    fn reset_state_in_place(&self, state: &mut Self::State) -> bool {
        let _ = state;
        false
    }

    /// Builds the volatile state from durable storage into `state`, fresh from
    /// [`reset_state`](Actor::reset_state), on the first start and after every
    /// restart ([`Ctx::restarted`] tells which).
    fn on_start(
        &self,
        state: &mut Self::State,
        storage: &mut Self::Storage,
        ctx: &mut impl Ctx<Self>,
    );

    /// Handles a message from actor `from`: one atomic step.
    fn on_msg(
        &self,
        state: &mut Self::State,
        storage: &mut Self::Storage,
        from: ActorId,
        msg: Self::Msg,
        ctx: &mut impl Ctx<Self>,
    ) {
        let _ = (state, storage, from, msg, ctx);
    }

    /// Handles one of its timers firing: one atomic step.
    fn on_timer(
        &self,
        state: &mut Self::State,
        storage: &mut Self::Storage,
        timer: Self::Timer,
        ctx: &mut impl Ctx<Self>,
    ) {
        let _ = (state, storage, timer, ctx);
    }

    /// A crash is about to drop `state`: reports, through `reached`, the
    /// situations the crash interrupts (a job acked at the broker whose
    /// commit was never sent). Only a report: the actor can change nothing
    /// and send nothing, since a crash gives a process no last word. It
    /// exists because a gap a crash falls into often leaves no trace a
    /// restarted process could find, so only the moment of the crash can
    /// tell that a run reached it.
    fn on_crash(
        &self,
        state: &Self::State,
        storage: &Self::Storage,
        reached: &mut dyn FnMut(SituationId),
    ) {
        let _ = (state, storage, reached);
    }
}

/// A handler call's context that buffers its commands, which the engine
/// applies in order once the handler returns: the context of traced,
/// recording and replayed runs, and of unit tests ([`Context::detached`]). A
/// sweep's run uses the engine's own context, which applies each command at
/// once and gives the same run.
pub struct Context<'a, A: Actor + ?Sized> {
    pub(crate) now_us: TimeUs,
    pub(crate) me: ActorId,
    pub(crate) restarted: bool,
    pub(crate) stream: StreamId,
    pub(crate) choices: &'a mut Choices,
    pub(crate) out: &'a mut Vec<Command<A::Msg, A::Obs, A::Timer>>,
}

impl<'a, A: Actor + ?Sized> Context<'a, A> {
    /// A context outside the engine, for unit tests of a single actor: its
    /// decisions come from `choices` (stream 0), its commands go to `out`.
    pub fn detached(
        now_us: TimeUs,
        me: ActorId,
        choices: &'a mut Choices,
        out: &'a mut Vec<Command<A::Msg, A::Obs, A::Timer>>,
    ) -> Self {
        Context {
            now_us,
            me,
            restarted: false,
            stream: 0,
            choices,
            out,
        }
    }

    /// The same, as the context of `on_start` after a crash.
    pub fn detached_restart(
        now_us: TimeUs,
        me: ActorId,
        choices: &'a mut Choices,
        out: &'a mut Vec<Command<A::Msg, A::Obs, A::Timer>>,
    ) -> Self {
        Context {
            restarted: true,
            ..Context::detached(now_us, me, choices, out)
        }
    }
}

impl<A: Actor + ?Sized> Ctx<A> for Context<'_, A> {
    #[inline]
    fn now_us(&self) -> TimeUs {
        self.now_us
    }
    #[inline]
    fn me(&self) -> ActorId {
        self.me
    }
    #[inline]
    fn restarted(&self) -> bool {
        self.restarted
    }
    #[inline]
    fn send(&mut self, to: ActorId, msg: A::Msg) {
        self.out.push(Command::Send { to, msg });
    }
    #[inline]
    fn set_timer_in(&mut self, timer: A::Timer, slot: u32, after_us: TimeUs) {
        debug_assert_eq!(slot, timer.slot());
        self.out.push(Command::SetTimer {
            timer,
            slot,
            after_us,
        });
    }
    #[inline]
    fn cancel_timer_in(&mut self, timer: A::Timer, slot: u32) {
        debug_assert_eq!(slot, timer.slot());
        self.out.push(Command::CancelTimer { timer, slot });
    }
    #[inline]
    fn observe(&mut self, obs: A::Obs) {
        self.out.push(Command::Observe(obs));
    }
    #[inline]
    fn reached(&mut self, situation: SituationId) {
        self.out.push(Command::Reached(situation));
    }
    #[inline]
    fn choose(&mut self, arity: u64) -> u64 {
        self.choices.choose(self.stream, arity)
    }
    #[inline]
    fn chance(&mut self, per_mille: u32) -> bool {
        self.choices.chance(self.stream, per_mille)
    }
}

/// The context an enum of actors hands to one of its kinds: the same engine
/// context, with the kind's timers wrapped into the enum's timer type by
/// `wrap` (a constructor such as `NodeTimer::Client`). Everything inlines.
pub struct Narrow<'c, O: ?Sized, C, F> {
    inner: &'c mut C,
    wrap: F,
    /// The enum's slot of a wrapped timer is the kind's own slot (true for
    /// [`compose!`](crate::compose), whose kinds are separate actors): the
    /// slot is known without dispatching on the enum. False where an actor
    /// embeds another at an offset of its slots (a relay inside a service).
    own_slots: bool,
    outer: PhantomData<fn(&O)>,
}

impl<'c, O: ?Sized, C, F> Narrow<'c, O, C, F> {
    /// Wraps `inner`, turning the kind's timers into the enum's with `wrap`;
    /// each timer's slot is the wrapped timer's.
    pub fn new(inner: &'c mut C, wrap: F) -> Self {
        Narrow {
            inner,
            wrap,
            own_slots: false,
            outer: PhantomData,
        }
    }

    /// The enum's timer and its slot: the kind's own slot (`known`, or worked
    /// out on the kind's type) where the enum keeps it, else the wrapped
    /// timer's, computed once.
    #[inline]
    fn outer<I: Actor + ?Sized>(&self, timer: I::Timer, known: Option<u32>) -> (O::Timer, u32)
    where
        O: Actor,
        F: Fn(I::Timer) -> O::Timer,
    {
        let own = self
            .own_slots
            .then(|| known.unwrap_or_else(|| timer.slot()));
        let outer = (self.wrap)(timer);
        let slot = own.unwrap_or_else(|| outer.slot());
        (outer, slot)
    }

    /// As [`new`](Narrow::new), for an enum whose wrapped timers keep the
    /// kind's own slot numbers (what [`compose!`](crate::compose) generates).
    pub fn with_own_slots(inner: &'c mut C, wrap: F) -> Self {
        Narrow {
            inner,
            wrap,
            own_slots: true,
            outer: PhantomData,
        }
    }
}

impl<O, I, C, F> Ctx<I> for Narrow<'_, O, C, F>
where
    O: Actor + ?Sized,
    I: Actor<Msg = O::Msg, Obs = O::Obs> + ?Sized,
    C: Ctx<O>,
    F: Fn(I::Timer) -> O::Timer,
{
    #[inline]
    fn now_us(&self) -> TimeUs {
        self.inner.now_us()
    }
    #[inline]
    fn me(&self) -> ActorId {
        self.inner.me()
    }
    #[inline]
    fn restarted(&self) -> bool {
        self.inner.restarted()
    }
    #[inline]
    fn send(&mut self, to: ActorId, msg: I::Msg) {
        self.inner.send(to, msg);
    }
    #[inline]
    fn set_timer(&mut self, timer: I::Timer, after_us: TimeUs) {
        let (outer, slot) = self.outer::<I>(timer, None);
        self.inner.set_timer_in(outer, slot, after_us);
    }
    #[inline]
    fn cancel_timer(&mut self, timer: I::Timer) {
        let (outer, slot) = self.outer::<I>(timer, None);
        self.inner.cancel_timer_in(outer, slot);
    }
    #[inline]
    fn set_timer_in(&mut self, timer: I::Timer, slot: u32, after_us: TimeUs) {
        let (outer, slot) = self.outer::<I>(timer, Some(slot));
        self.inner.set_timer_in(outer, slot, after_us);
    }
    #[inline]
    fn cancel_timer_in(&mut self, timer: I::Timer, slot: u32) {
        let (outer, slot) = self.outer::<I>(timer, Some(slot));
        self.inner.cancel_timer_in(outer, slot);
    }
    #[inline]
    fn observe(&mut self, obs: I::Obs) {
        self.inner.observe(obs);
    }
    #[inline]
    fn reached(&mut self, situation: SituationId) {
        self.inner.reached(situation);
    }
    #[inline]
    fn choose(&mut self, arity: u64) -> u64 {
        self.inner.choose(arity)
    }
    #[inline]
    fn chance(&mut self, per_mille: u32) -> bool {
        self.inner.chance(per_mille)
    }
}
