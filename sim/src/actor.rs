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
///
/// Implement it with [`timer_slots!`](crate::timer_slots), which derives each
/// variant's slot from the order of the variants, rather than by hand.
pub trait Timer: Copy + Debug + Display + Eq {
    /// Which pending timer this one replaces: two timers of an actor with the
    /// same slot are one timer. Small numbers, since the engine keeps one
    /// generation per slot up to the largest an actor has set. The default,
    /// 0, is for a type with one timer.
    fn slot(&self) -> u32 {
        0
    }
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

/// A state or a storage for [`Actor::reset`] to make new: the one the engine
/// kept, to reset in place, or an empty place to put a new one in.
pub enum Fresh<'a, T> {
    /// What the engine kept, to reset field by field (reusing its memory).
    Kept(&'a mut T),
    /// Nothing kept yet (a simulator's first run): put a new value here.
    New(&'a mut Option<T>),
}

impl<'a, T> Fresh<'a, T> {
    /// The value in `slot` to reset, or the empty `slot` to fill.
    pub fn of(slot: &'a mut Option<T>) -> Self {
        if slot.is_some() {
            Fresh::Kept(slot.as_mut().expect("checked above"))
        } else {
            Fresh::New(slot)
        }
    }

    /// The value to reset in place: the kept one, or `new()`, put in place.
    /// Reset it afterwards either way; `new()` may leave that to the reset.
    #[inline]
    pub fn or_insert_with(self, new: impl FnOnce() -> T) -> &'a mut T {
        match self {
            Fresh::Kept(value) => value,
            Fresh::New(slot) => slot.insert(new()),
        }
    }

    /// [`or_insert_with`](Fresh::or_insert_with) of `T::default()`.
    #[inline]
    pub fn or_default(self) -> &'a mut T
    where
        T: Default,
    {
        self.or_insert_with(T::default)
    }

    /// Puts `value` in place, over the kept one or into the empty place.
    #[inline]
    pub fn set(self, value: T) {
        match self {
            Fresh::Kept(kept) => *kept = value,
            Fresh::New(slot) => *slot = Some(value),
        }
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
    /// Volatile: lost on a crash. `'static`, so a tracer can read it as
    /// its own type ([`Held`](crate::Held)).
    type State: Debug + 'static;
    /// Durable: survives a crash.
    type Storage: Debug + 'static;

    /// Makes `state` the volatile state of a new process, and `storage`,
    /// when given, the durable storage of a new run, before
    /// [`on_start`](Actor::on_start) runs. `storage` is `None` at a restart
    /// after a crash, since storage survives one.
    ///
    /// Each is what the engine kept ([`Fresh::Kept`]: an earlier run's, or
    /// this process's before the crash), only so that its allocations can be
    /// reused: nothing in it may survive, or a crash would not lose what it
    /// must. The first time there is nothing to keep ([`Fresh::New`]):
    /// [`Fresh::or_insert_with`] covers both. With it, a warm simulator
    /// allocates nothing per run.
    fn reset(&self, state: Fresh<'_, Self::State>, storage: Option<Fresh<'_, Self::Storage>>);

    /// A new process's state and a new run's storage, built by
    /// [`reset`](Actor::reset) from nothing: for an actor that embeds
    /// another, the first time, and for unit tests.
    fn fresh(&self) -> (Self::State, Self::Storage) {
        let (mut state, mut storage) = (None, None);
        self.reset(Fresh::New(&mut state), Some(Fresh::New(&mut storage)));
        (
            state.expect("reset fills a new state"),
            storage.expect("reset fills a new storage"),
        )
    }

    /// [`reset`](Actor::reset) of a state alone, as at a restart, kept in
    /// `state` or made there: for unit tests of one actor.
    fn reset_state(&self, state: &mut Option<Self::State>) {
        self.reset(Fresh::of(state), None);
        assert!(state.is_some(), "reset fills a new state");
    }

    /// [`reset`](Actor::reset) of a storage for a new run, kept in
    /// `storage` or made there: for unit tests of one actor.
    fn reset_storage(&self, storage: &mut Option<Self::Storage>) {
        let mut state = None;
        self.reset(Fresh::New(&mut state), Some(Fresh::of(storage)));
        assert!(storage.is_some(), "reset fills a new storage");
    }

    /// Builds the volatile state from durable storage into `state`, fresh from
    /// [`reset`](Actor::reset), on the first start and after every
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
    #[inline(always)]
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
    // Always inlined: at the handler's call site the kind's timer variant
    // is known, so its slot is a constant or one multiply, not a jump
    // through a table on the variant; what the engine does with the timer
    // is one call, out of line (`way::DirectCtx`).
    #[inline(always)]
    fn set_timer(&mut self, timer: I::Timer, after_us: TimeUs) {
        let (outer, slot) = self.outer::<I>(timer, None);
        self.inner.set_timer_in(outer, slot, after_us);
    }
    #[inline(always)]
    fn cancel_timer(&mut self, timer: I::Timer) {
        let (outer, slot) = self.outer::<I>(timer, None);
        self.inner.cancel_timer_in(outer, slot);
    }
    #[inline(always)]
    fn set_timer_in(&mut self, timer: I::Timer, slot: u32, after_us: TimeUs) {
        let (outer, slot) = self.outer::<I>(timer, Some(slot));
        self.inner.set_timer_in(outer, slot, after_us);
    }
    #[inline(always)]
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
