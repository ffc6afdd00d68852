//! One run: reset, the swarm mix, the starts, the loop over events in both
//! phases, and the calls into the actors' handlers and the oracle.

use super::queue::{Due, EventKind};
use super::{
    Actors, FaultCounts, Held, Limit, Model, MsgOf, ObsOf, Oracle, Outcome, Phase, RunReport, Sim,
    TimerOf, Violation,
};
use crate::actor::{Actor, ActorId, Command, Context, Fresh, TimeUs};
use crate::situation::{SituationId, SituationSet};
use crate::trace::{DropReason, TraceEntry, TraceKind, Tracer};
use crate::world::World;

/// How a handler's commands reach the engine: a generic run buffers them and
/// applies them once the handler returns (`way::Buffered`); a sweep's run applies
/// each where the handler asks for it (`way::Direct`). Both give the same run.
/// Either way they are applied by the time the call returns.
pub(super) trait Way<M: Model, T> {
    fn on_start(
        run: &mut Run<'_, '_, '_, M, T>,
        actors: &mut Actors<M>,
        actor: ActorId,
        restarted: bool,
    );
    fn on_msg(
        run: &mut Run<'_, '_, '_, M, T>,
        actors: &mut Actors<M>,
        to: ActorId,
        from: ActorId,
        msg: MsgOf<M>,
    );
    fn on_timer(
        run: &mut Run<'_, '_, '_, M, T>,
        actors: &mut Actors<M>,
        actor: ActorId,
        timer: TimerOf<M>,
    );
}

pub(super) struct Run<'s, 'm, 't, M: Model, T> {
    pub sim: &'s mut Sim<M>,
    pub model: &'m M,
    pub tracer: &'t mut T,
    pub now_us: TimeUs,
    pub step: u64,
    pub phase: Phase,
    pub faults: FaultCounts,
    pub situations: SituationSet,
    /// The first violation of the step under way: the commands after it are
    /// not applied, and the run ends once the handler returns.
    pub violation: Option<Violation>,
    /// The latest time of the void events dropped at the queue limit, which
    /// the clock reaches by the end of the run as if they had been popped.
    pub void_until_us: TimeUs,
}

impl<M: Model, T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>> Run<'_, '_, '_, M, T> {
    #[inline(always)]
    pub(super) fn trace(&mut self, kind: TraceKind<MsgOf<M>, ObsOf<M>, TimerOf<M>>) {
        if T::ENABLED {
            self.tracer.record(TraceEntry {
                time_us: self.now_us,
                step: self.step,
                kind,
            });
        }
    }

    pub(super) fn report(&self, outcome: Outcome) -> RunReport {
        RunReport {
            outcome,
            events: self.step,
            end_time_us: self.now_us,
            faults: self.faults,
            situations: self.situations,
        }
    }

    pub(super) fn execute<W: Way<M, T>>(&mut self, actors: &mut Actors<M>) -> RunReport {
        let world = self.model.world();
        let n = world.actor_count();
        self.reset(actors, world);
        self.draw_swarm_mix(world);
        // Faults happen before `fault_phase_us` only: with no fault phase at
        // all, the starts' sends at time 0 already fall in the healing phase,
        // as every step at `fault_phase_us` does. Nobody is down to restart.
        if world.fault_phase_us == 0 {
            self.phase = Phase::Healing;
            self.trace(TraceKind::HealingStarts);
        }
        for actor in 0..n {
            if self.start::<W>(actors, actor, false) {
                return self.report_violation();
            }
        }
        loop {
            let next = if self.phase == Phase::Fault {
                // The fault phase ends at the first event due at or after
                // its end, or when no event is left.
                let next = self.sim.queue.pop_before(world.fault_phase_us);
                if next.is_none() {
                    if let Some(outcome) = self.start_healing::<W>(actors, world) {
                        return self.report(outcome);
                    }
                    continue;
                }
                next
            } else {
                self.sim.queue.pop()
            };
            let Some(due) = next else {
                // Void events dropped at the queue limit would have been
                // popped last and moved the clock this far.
                self.now_us = self.now_us.max(self.void_until_us);
                break;
            };
            debug_assert!(due.time_us >= self.now_us, "time never goes backwards");
            // Judged where it lies in the slab: a void timer is never copied.
            if is_void(&self.sim.timer_gen, &self.sim.up, self.sim.queue.kind(&due)) {
                // No step, so no limit: a run with nothing left to do would
                // otherwise end inconclusive. It moves the clock as before,
                // but never past the time limit.
                if due.time_us <= world.limits.max_time_us {
                    self.now_us = due.time_us;
                }
                continue;
            }
            if due.time_us > world.limits.max_time_us {
                return self.report(Outcome::Inconclusive(Limit::Time));
            }
            if self.step >= world.limits.max_steps {
                return self.report(Outcome::Inconclusive(Limit::Steps));
            }
            self.now_us = due.time_us;
            if self.handle::<W>(actors, due) {
                return self.report_violation();
            }
            if self.sim.queue.len() > world.limits.max_queue && self.over_queue_limit(world) {
                return self.report(Outcome::Inconclusive(Limit::Queue));
            }
        }
        debug_assert!(self.phase == Phase::Healing);
        match self.sim.oracle.finish(self.now_us) {
            Some(v) => self.report(Outcome::Violation(v)),
            None => self.report(Outcome::Holds),
        }
    }

    /// The report of a run whose step just broke an invariant.
    #[cold]
    #[inline(never)]
    fn report_violation(&mut self) -> RunReport {
        let v = self
            .violation
            .take()
            .expect("a step that broke an invariant left its violation");
        self.report(Outcome::Violation(v))
    }

    /// One event, a step: a delivery, a timer firing or a restart. True if
    /// it broke an invariant, whose violation then waits in `violation`
    /// (a flag, not the violation itself, so that every step does not move
    /// an `Option<Violation>` out and back). Its payload is read where it
    /// lies in the queue's slab, and a message or a timer moved out of it
    /// only where its handler is called (once, not into the loop's frame
    /// first), and always before the step pushes anything: the slab entry
    /// is free for the next push.
    #[inline(always)]
    fn handle<W: Way<M, T>>(&mut self, actors: &mut Actors<M>, due: Due) -> bool {
        self.step += 1;
        match *self.sim.queue.kind(&due) {
            EventKind::Deliver {
                from,
                to,
                msg_id,
                duplicate,
                ..
            } => self.deliver::<W>(actors, due, (from, to), msg_id, duplicate),
            EventKind::Timer { actor, .. } => self.fire::<W>(actors, due, actor),
            EventKind::Restart { actor } => {
                self.sim.queue.take(due);
                self.start::<W>(actors, actor, true)
            }
            EventKind::Vacant => unreachable!("a queued event is never vacant"),
        }
    }

    /// The message of the delivery `due`, moved out of the slab.
    #[inline(always)]
    fn take_msg(&mut self, due: Due) -> MsgOf<M> {
        match self.sim.queue.take(due) {
            EventKind::Deliver { msg, .. } => msg,
            _ => unreachable!("the event is a delivery"),
        }
    }

    /// The timer of the firing `due`, moved out of the slab.
    #[inline(always)]
    fn take_timer(&mut self, due: Due) -> TimerOf<M> {
        match self.sim.queue.take(due) {
            EventKind::Timer { timer, .. } => timer,
            _ => unreachable!("the event is a timer"),
        }
    }

    /// Whether the events still to happen are more than `max_queue`. Cancelled
    /// or replaced timers and restarts that find their actor up stay queued
    /// until their time and then do nothing; they are no load on the system
    /// the limit is about, so they are dropped here before counting. Popped,
    /// they would only have moved the clock; the latest of them within the
    /// time limit is kept in `void_until_us` for a run that ends with its
    /// queue empty, which would have reached it. Not exactly the same as
    /// popping them: a run that later ends at the step or time limit keeps
    /// the clock of its last real event, where a popped void event due
    /// after it would have moved the clock on. Kept so, since changing it
    /// would change such runs' reported end times.
    #[cold]
    #[inline(never)]
    fn over_queue_limit(&mut self, world: &World) -> bool {
        let sim = &mut *self.sim;
        let (generations, up) = (&sim.timer_gen, &sim.up);
        let mut latest_us = self.void_until_us;
        sim.queue.retain(|time_us, kind| {
            let void = is_void(generations, up, kind);
            if void && time_us <= world.limits.max_time_us {
                latest_us = latest_us.max(time_us);
            }
            !void
        });
        self.void_until_us = latest_us;
        sim.queue.len() > world.limits.max_queue
    }

    fn reset(&mut self, actors: &mut Actors<M>, world: &World) {
        let sim = &mut *self.sim;
        sim.queue.clear();
        sim.out.clear();
        sim.seq = 0;
        sim.next_msg_id = 0;
        // The timers' generations are not set back to 0: the queue, cleared
        // above, holds no timer of an earlier run, and a generation is only
        // ever compared for equality with the one its pending timer took, so
        // any value a slot starts from gives the same run. It spared a memset
        // call per actor and run.
        sim.oracle.reset();
        self.violation = None;
        self.void_until_us = 0;
        // Every actor's state and storage, as new, before any starts: the
        // first start needs no reset of its own, a restart resets the state.
        // Made new the first time (or after a panic lost them).
        let nodes = self.model.nodes();
        sim.up.fill(false);
        if actors.held.len() == nodes.len() {
            for (node, held) in nodes.iter().zip(&mut actors.held) {
                let (state, storage) = (&mut held.state, &mut held.storage);
                node.reset(Fresh::Kept(state), Some(Fresh::Kept(storage)));
            }
        } else {
            actors.held.clear();
            actors.held.extend(nodes.iter().map(new_held::<M>));
        }
        debug_assert_eq!(actors.held.len(), world.actor_names.len());
    }

    /// The end of the fault phase: every actor that is down restarts now,
    /// or, if it crashed less than its `restart_us_min` ago, once that much
    /// time has passed since the crash. Healing stops faults, so a restart
    /// drawn longer than the shortest is cut short; but a restart is never
    /// faster than the shortest the scenario says one takes, whenever the
    /// crash came (the design warnings count on `restart_ms_min`).
    fn start_healing<W: Way<M, T>>(
        &mut self,
        actors: &mut Actors<M>,
        world: &World,
    ) -> Option<Outcome> {
        debug_assert!(self.phase == Phase::Fault);
        self.phase = Phase::Healing;
        self.now_us = self.now_us.max(
            world
                .fault_phase_us
                .min(self.sim.queue.peek_time().unwrap_or(world.fault_phase_us)),
        );
        self.trace(TraceKind::HealingStarts);
        for actor in 0..world.actor_count() {
            let i = actor as usize;
            if !self.sim.up[i] {
                let soonest =
                    self.sim.down_since[i].saturating_add(world.crashes[i].restart_us_min);
                if soonest > self.now_us {
                    // The restart drawn at the crash is at least this late:
                    // whichever comes first restarts it, the other finds it up.
                    self.push(soonest, EventKind::Restart { actor });
                    continue;
                }
                // A restart is a step like any other, under the same limit.
                if self.step >= world.limits.max_steps {
                    return Some(Outcome::Inconclusive(Limit::Steps));
                }
                self.step += 1;
                if self.start::<W>(actors, actor, true) {
                    let v = self.violation.take().expect("the restart's violation");
                    return Some(Outcome::Violation(v));
                }
            }
        }
        None
    }

    fn deliver<W: Way<M, T>>(
        &mut self,
        actors: &mut Actors<M>,
        due: Due,
        (from, to): (ActorId, ActorId),
        msg_id: u32,
        duplicate: bool,
    ) -> bool {
        let down = !self.sim.up[to as usize];
        if down || self.crash_rolled(to) {
            // A down receiver, or one that dies before it can take this step:
            // the message dies with it. Taken before the crash queues the
            // restart, which may take its slab entry.
            let msg = self.take_msg(due);
            if !down {
                self.crash(to);
                self.interrupted(actors, to);
                self.snapshot(actors, to);
            }
            self.faults.dropped_at_down_actor += 1;
            self.trace(TraceKind::Drop {
                from,
                to,
                msg,
                msg_id,
                reason: DropReason::ReceiverDown,
            });
            return false;
        }
        let msg = self.take_msg(due);
        if T::ENABLED {
            self.trace(TraceKind::Deliver {
                from,
                to,
                msg: msg.clone(),
                msg_id,
                duplicate,
            });
        }
        W::on_msg(self, actors, to, from, msg);
        self.violation.is_some()
    }

    fn fire<W: Way<M, T>>(&mut self, actors: &mut Actors<M>, due: Due, actor: ActorId) -> bool {
        debug_assert!(self.sim.up[actor as usize], "timers die with a crash");
        if self.crash_rolled(actor) {
            // The timer dies with the actor; its slab entry is freed before
            // the crash queues the restart.
            self.take_timer(due);
            self.crash(actor);
            self.interrupted(actors, actor);
            self.snapshot(actors, actor);
            return false;
        }
        let timer = self.take_timer(due);
        self.trace(TraceKind::TimerFired { actor, timer });
        W::on_timer(self, actors, actor, timer);
        self.violation.is_some()
    }

    /// What the crash of `actor`, just now, interrupted: the situations its
    /// state, kept in place until the restart, tells of.
    #[cold]
    #[inline(never)]
    fn interrupted(&mut self, actors: &Actors<M>, actor: ActorId) {
        let i = actor as usize;
        let model = self.model;
        let held = actors.get(actor);
        model.nodes()[i].on_crash(&held.state, &held.storage, &mut |s| self.reached(actor, s));
    }

    /// Starts `actor` (again, if `restarted`); true if its start broke an
    /// invariant, whose violation then waits in `violation`.
    pub(super) fn start<W: Way<M, T>>(
        &mut self,
        actors: &mut Actors<M>,
        actor: ActorId,
        restarted: bool,
    ) -> bool {
        debug_assert!(!self.sim.up[actor as usize]);
        if restarted {
            self.trace(TraceKind::Restart { actor });
        } else {
            self.trace(TraceKind::Start { actor });
        }
        let i = actor as usize;
        if restarted {
            // A fresh state in the allocations of the one the crash dropped
            // (a first start's was reset with the run).
            let state = &mut actors.held[i].state;
            self.model.nodes()[i].reset(Fresh::Kept(state), None);
        }
        // Up before its handler runs, so that a tracer's snapshot after it
        // shows the state; nothing a handler's commands do reads it.
        self.sim.up[i] = true;
        W::on_start(self, actors, actor, restarted);
        self.violation.is_some()
    }

    /// The context of a buffered handler call of `actor`.
    #[inline(always)]
    pub(super) fn buffer(&mut self, actor: ActorId, restarted: bool) -> Context<'_, M::Node> {
        let sim = &mut *self.sim;
        Context {
            now_us: self.now_us,
            me: actor,
            restarted,
            stream: sim.layout.actor(actor),
            choices: &mut sim.choices,
            out: &mut sim.out,
        }
    }

    // Inlined so that an event is built in place in the queue's slab, not
    // built, moved into the call and copied again.
    #[inline(always)]
    pub(super) fn push(&mut self, time_us: TimeUs, kind: EventKind<MsgOf<M>, TimerOf<M>>) {
        let seq = self.sim.seq;
        self.sim.seq += 1;
        self.sim.queue.push(time_us, seq, kind);
    }

    /// The generation of `timer`'s `slot` at `actor`, the slot made on its
    /// first use (a world's slots are known only as its actors set them).
    #[inline(always)]
    fn timer_gen(&mut self, actor: ActorId, slot: u32, timer: &TimerOf<M>) -> &mut u32 {
        let generations = &mut self.sim.timer_gen[actor as usize];
        let i = slot as usize;
        if i < generations.len() {
            // Checked once: the index below needs no second bounds check.
            return &mut generations[i];
        }
        grow_timer_slots(generations, slot, &|| format!("{timer} of actor {actor}"));
        &mut generations[i]
    }

    /// Hands the tracer what `actor` holds after its step, if it asks.
    #[inline(always)]
    pub(super) fn snapshot(&mut self, actors: &Actors<M>, actor: ActorId) {
        if T::SNAPSHOTS {
            let held = actors.get(actor);
            let state = (self.sim.up[actor as usize]).then_some(&held.state);
            let state = state.map(|s| s as &dyn crate::trace::Held);
            self.tracer.snapshot(self.step, actor, state, &held.storage);
        }
    }

    /// Applies a buffered handler's commands in the order it pushed them.
    #[inline(always)]
    pub(super) fn apply(&mut self, actors: &Actors<M>, actor: ActorId) {
        let mut out = std::mem::take(&mut self.sim.out);
        for cmd in out.drain(..) {
            if self.violation.is_some() {
                continue;
            }
            match cmd {
                Command::Send { to, msg } => self.send(actor, to, msg),
                Command::SetTimer {
                    timer,
                    slot,
                    after_us,
                } => self.set_timer(actor, timer, slot, after_us),
                Command::CancelTimer { timer, slot } => self.cancel_timer(actor, timer, slot),
                Command::Observe(obs) => self.observe(actor, obs),
                Command::Reached(situation) => self.reached(actor, situation),
            }
        }
        self.sim.out = out;
        self.snapshot(actors, actor);
    }

    #[inline(always)]
    pub(super) fn set_timer(
        &mut self,
        actor: ActorId,
        timer: TimerOf<M>,
        slot: u32,
        after_us: TimeUs,
    ) {
        let g = self.timer_gen(actor, slot, &timer);
        *g = g.wrapping_add(1);
        let generation = *g;
        let at_us = self.now_us.saturating_add(after_us);
        self.trace(TraceKind::TimerSet {
            actor,
            timer,
            at_us,
        });
        self.push(
            at_us,
            EventKind::Timer {
                actor,
                timer,
                slot,
                generation,
            },
        );
    }

    #[inline(always)]
    pub(super) fn cancel_timer(&mut self, actor: ActorId, timer: TimerOf<M>, slot: u32) {
        let g = self.timer_gen(actor, slot, &timer);
        *g = g.wrapping_add(1);
    }

    /// The oracle judges `obs` now; a violation ends the step.
    #[inline(always)]
    pub(super) fn observe(&mut self, actor: ActorId, obs: ObsOf<M>) {
        // Only a step with no violation yet observes, so there is nothing
        // to drop, and the usual `None` is not copied in.
        debug_assert!(self.violation.is_none());
        if let Some(v) = self.sim.oracle.observe(self.now_us, actor, &obs) {
            self.violation = Some(v);
        }
        self.trace(TraceKind::Observe { actor, obs });
    }

    #[inline(always)]
    pub(super) fn reached(&mut self, actor: ActorId, situation: SituationId) {
        if self.situations.insert(situation) {
            self.trace(TraceKind::Reached { actor, situation });
        }
    }
}

/// Whether a queued event will do nothing: a timer cancelled, replaced or
/// set before a crash (its slot's generation moved on), or a restart of an
/// actor that healing restarted first.
#[inline(always)]
fn is_void<Msg, Tm>(timer_gen: &[Vec<u32>], up: &[bool], kind: &EventKind<Msg, Tm>) -> bool {
    match *kind {
        EventKind::Timer {
            actor,
            slot,
            generation,
            ..
        } => timer_gen[actor as usize][slot as usize] != generation,
        EventKind::Restart { actor } => up[actor as usize],
        _ => false,
    }
}

/// The most timer slots one actor may use: a slot past it is a model's bug
/// (an index never bounded), caught before it costs the memory.
pub(super) const MAX_TIMER_SLOTS: u32 = 1 << 20;

/// Makes `generations` long enough for `slot`, new slots at generation 0 as
/// if they had been there from the start of the run.
#[cold]
#[inline(never)]
fn grow_timer_slots(generations: &mut Vec<u32>, slot: u32, timer: &dyn Fn() -> String) {
    assert!(
        slot < MAX_TIMER_SLOTS,
        "timer {} has slot {slot}, over the {MAX_TIMER_SLOTS} an actor may use",
        timer()
    );
    generations.resize(slot as usize + 1, 0);
}

/// A new state and storage for `node`, made by its reset from nothing.
fn new_held<M: Model>(node: &M::Node) -> Held<M> {
    let (mut state, mut storage) = (None, None);
    node.reset(Fresh::New(&mut state), Some(Fresh::New(&mut storage)));
    Held {
        state: state.expect("reset must fill a new state"),
        storage: storage.expect("reset must fill a new storage"),
    }
}
