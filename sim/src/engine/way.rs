//! How a handler's commands reach the engine: buffered and applied after
//! the handler ([`Buffered`], for traced, recording and replayed runs), or
//! applied where the handler gives them ([`Direct`], a sweep's run), through
//! a context that holds the run itself ([`DirectCtx`]). The trait they
//! implement, [`Way`], lives with the run that is generic over it, so the
//! dependency points one way: this module uses the run, never the reverse.

use super::run::{Run, Way};
use super::{Actors, Model, MsgOf, ObsOf, TimerOf};
use crate::actor::{Actor, ActorId, Ctx, TimeUs};
use crate::choice::StreamId;
use crate::situation::SituationId;
use crate::trace::{NoTrace, Tracer};

/// Commands go into the `Command` buffer and are applied in order after the
/// handler: what traces, snapshots and exhaustive search's log of decision
/// points need, since a send's draws then come after all of the handler's.
pub(super) struct Buffered;

/// Each command takes effect at once: no buffer to fill and drain. Only for a
/// run that traces nothing and logs no decision points. A send draws from its
/// link's stream and a handler from its actor's, so each stream's draws, and
/// with them the whole run, are the same as under [`Buffered`]; only the
/// order of draws across streams differs, which nothing in such a run sees.
pub(super) struct Direct;

impl<M: Model, T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>> Way<M, T> for Buffered {
    #[inline(always)]
    fn on_start(
        run: &mut Run<'_, '_, '_, M, T>,
        actors: &mut Actors<M>,
        actor: ActorId,
        restarted: bool,
    ) {
        let (node, state, storage) = actors.handler(run.model, actor);
        node.on_start(state, storage, &mut run.buffer(actor, restarted));
        run.apply(actors, actor);
    }

    #[inline(always)]
    fn on_msg(
        run: &mut Run<'_, '_, '_, M, T>,
        actors: &mut Actors<M>,
        to: ActorId,
        from: ActorId,
        msg: MsgOf<M>,
    ) {
        let (node, state, storage) = actors.handler(run.model, to);
        node.on_msg(state, storage, from, msg, &mut run.buffer(to, false));
        run.apply(actors, to);
    }

    #[inline(always)]
    fn on_timer(
        run: &mut Run<'_, '_, '_, M, T>,
        actors: &mut Actors<M>,
        actor: ActorId,
        timer: TimerOf<M>,
    ) {
        let (node, state, storage) = actors.handler(run.model, actor);
        node.on_timer(state, storage, timer, &mut run.buffer(actor, false));
        run.apply(actors, actor);
    }
}

impl<M: Model> Way<M, NoTrace> for Direct {
    #[inline(always)]
    fn on_start(
        run: &mut Run<'_, '_, '_, M, NoTrace>,
        actors: &mut Actors<M>,
        actor: ActorId,
        restarted: bool,
    ) {
        let (node, state, storage) = actors.handler(run.model, actor);
        node.on_start(state, storage, &mut DirectCtx::new(run, actor, restarted));
    }

    #[inline(always)]
    fn on_msg(
        run: &mut Run<'_, '_, '_, M, NoTrace>,
        actors: &mut Actors<M>,
        to: ActorId,
        from: ActorId,
        msg: MsgOf<M>,
    ) {
        let (node, state, storage) = actors.handler(run.model, to);
        node.on_msg(
            state,
            storage,
            from,
            msg,
            &mut DirectCtx::new(run, to, false),
        );
    }

    #[inline(always)]
    fn on_timer(
        run: &mut Run<'_, '_, '_, M, NoTrace>,
        actors: &mut Actors<M>,
        actor: ActorId,
        timer: TimerOf<M>,
    ) {
        let (node, state, storage) = actors.handler(run.model, actor);
        node.on_timer(
            state,
            storage,
            timer,
            &mut DirectCtx::new(run, actor, false),
        );
    }
}

/// A handler's context under [`Direct`]: it holds the run itself.
pub(super) struct DirectCtx<'c, 's, 'm, 't, M: Model> {
    run: &'c mut Run<'s, 'm, 't, M, NoTrace>,
    me: ActorId,
    restarted: bool,
}

impl<'c, 's, 'm, 't, M: Model> DirectCtx<'c, 's, 'm, 't, M> {
    #[inline(always)]
    fn new(run: &'c mut Run<'s, 'm, 't, M, NoTrace>, me: ActorId, restarted: bool) -> Self {
        DirectCtx { run, me, restarted }
    }

    /// The actor's own stream, worked out where it draws: most steps draw
    /// nothing of their own, and a context made for every step paid for it.
    #[inline(always)]
    fn stream(&self) -> StreamId {
        self.run.sim.layout.actor(self.me)
    }
}

impl<M: Model> Ctx<M::Node> for DirectCtx<'_, '_, '_, '_, M> {
    #[inline(always)]
    fn now_us(&self) -> TimeUs {
        self.run.now_us
    }
    #[inline(always)]
    fn me(&self) -> ActorId {
        self.me
    }
    #[inline(always)]
    fn restarted(&self) -> bool {
        self.restarted
    }
    #[inline(always)]
    fn send(&mut self, to: ActorId, msg: MsgOf<M>) {
        if self.run.violation.is_none() {
            self.run.send(self.me, to, msg);
        }
    }
    #[inline(always)]
    fn set_timer_in(&mut self, timer: TimerOf<M>, slot: u32, after_us: TimeUs) {
        debug_assert_eq!(slot, crate::actor::Timer::slot(&timer));
        set_timer_now(self.run, self.me, timer, slot, after_us);
    }
    #[inline(always)]
    fn cancel_timer_in(&mut self, timer: TimerOf<M>, slot: u32) {
        debug_assert_eq!(slot, crate::actor::Timer::slot(&timer));
        if self.run.violation.is_none() {
            self.run.cancel_timer(self.me, timer, slot);
        }
    }
    #[inline(always)]
    fn observe(&mut self, obs: ObsOf<M>) {
        if self.run.violation.is_none() {
            self.run.observe(self.me, obs);
        }
    }
    #[inline(always)]
    fn reached(&mut self, situation: SituationId) {
        if self.run.violation.is_none() {
            self.run.reached(self.me, situation);
        }
    }
    #[inline(always)]
    fn choose(&mut self, arity: u64) -> u64 {
        let stream = self.stream();
        self.run.sim.choices.choose(stream, arity)
    }
    #[inline(always)]
    fn chance(&mut self, per_mille: u32) -> bool {
        let stream = self.stream();
        self.run.sim.choices.chance(stream, per_mille)
    }
}

/// A timer set by a handler under [`Direct`]: one function per model, out
/// of line, called with the timer, its slot and its delay in registers. The
/// handler's side of the call ([`Narrow`](crate::actor::Narrow), always
/// inlined) wraps the kind's timer and knows its slot where it is set; the
/// queue's insertion, inlined into every handler's timer set instead, was
/// one copy per kind and the frame to match.
#[inline(never)]
fn set_timer_now<M: Model>(
    run: &mut Run<'_, '_, '_, M, NoTrace>,
    me: ActorId,
    timer: TimerOf<M>,
    slot: u32,
    after_us: TimeUs,
) {
    if run.violation.is_none() {
        run.set_timer(me, timer, slot, after_us);
    }
}
