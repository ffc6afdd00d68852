//! One run: reset, the swarm mix, the starts, the loop over events in both
//! phases, and the calls into the actors' handlers and the oracle.

use super::queue::EventKind;
use super::{
    FaultCounts, Limit, Model, MsgOf, ObsOf, Oracle, Outcome, Phase, RunReport, Sim, TimerOf,
    Violation,
};
use crate::actor::{Actor, ActorId, Command, Context, TimeUs};
use crate::situation::SituationSet;
use crate::trace::{DropReason, TraceEntry, TraceKind, Tracer};
use crate::world::World;

pub(super) struct Run<'s, 'm, 't, M: Model, T> {
    pub sim: &'s mut Sim<M>,
    pub model: &'m M,
    pub tracer: &'t mut T,
    pub now_us: TimeUs,
    pub step: u64,
    pub phase: Phase,
    pub faults: FaultCounts,
    pub situations: SituationSet,
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

    pub(super) fn execute(&mut self) -> RunReport {
        let world = self.model.world();
        let n = world.actor_count();
        self.reset(world);
        self.draw_swarm_mix(world);
        for actor in 0..n {
            if let Some(v) = self.start(actor, false) {
                return self.report(Outcome::Violation(v));
            }
        }
        loop {
            let next_time = self.sim.queue.peek_time();
            if self.phase == Phase::Fault {
                let heal_now = match next_time {
                    None => true,
                    Some(t) => t >= world.fault_phase_us,
                };
                if heal_now {
                    if let Some(v) = self.start_healing(world) {
                        return self.report(Outcome::Violation(v));
                    }
                    continue;
                }
            }
            let Some(event) = self.sim.queue.pop() else {
                break;
            };
            debug_assert!(event.time_us >= self.now_us, "time never goes backwards");
            if event.time_us > world.limits.max_time_us {
                return self.report(Outcome::Inconclusive(Limit::Time));
            }
            if self.step >= world.limits.max_steps {
                return self.report(Outcome::Inconclusive(Limit::Steps));
            }
            self.now_us = event.time_us;
            let violation = match event.kind {
                EventKind::Deliver {
                    from,
                    to,
                    msg,
                    msg_id,
                    duplicate,
                } => {
                    self.step += 1;
                    self.deliver(from, to, msg, msg_id, duplicate)
                }
                EventKind::Timer {
                    actor,
                    timer,
                    slot,
                    generation,
                } => {
                    if self.sim.timer_gen[slot as usize] != generation {
                        continue; // cancelled, replaced or from before a crash
                    }
                    self.step += 1;
                    self.fire(actor, timer)
                }
                EventKind::Restart { actor } => {
                    self.step += 1;
                    if !self.sim.up[actor as usize] {
                        self.start(actor, true)
                    } else {
                        None
                    }
                }
                EventKind::Vacant => unreachable!("a queued event is never vacant"),
            };
            if let Some(v) = violation {
                return self.report(Outcome::Violation(v));
            }
            if self.sim.queue.len() > world.limits.max_queue {
                return self.report(Outcome::Inconclusive(Limit::Queue));
            }
        }
        debug_assert!(self.phase == Phase::Healing);
        match self.sim.oracle.finish(self.now_us) {
            Some(v) => self.report(Outcome::Violation(v)),
            None => self.report(Outcome::Holds),
        }
    }

    fn reset(&mut self, world: &World) {
        let sim = &mut *self.sim;
        sim.queue.clear();
        sim.out.clear();
        sim.seq = 0;
        sim.next_msg_id = 0;
        sim.timer_gen.iter_mut().for_each(|g| *g = 0);
        sim.oracle.reset();
        for (i, node) in self.model.nodes().iter().enumerate() {
            sim.up[i] = false;
            node.reset_storage(&mut sim.storages[i]);
            assert!(
                sim.storages[i].is_some(),
                "reset_storage must provide storage"
            );
        }
        debug_assert_eq!(sim.states.len(), world.actor_names.len());
    }

    /// The end of the fault phase: every actor that is down restarts now.
    fn start_healing(&mut self, world: &World) -> Option<Violation> {
        debug_assert!(self.phase == Phase::Fault);
        self.phase = Phase::Healing;
        self.now_us = self.now_us.max(
            world
                .fault_phase_us
                .min(self.sim.queue.peek_time().unwrap_or(world.fault_phase_us)),
        );
        self.trace(TraceKind::HealingStarts);
        for actor in 0..world.actor_count() {
            if !self.sim.up[actor as usize] {
                self.step += 1;
                if let Some(v) = self.start(actor, true) {
                    return Some(v);
                }
            }
        }
        None
    }

    fn deliver(
        &mut self,
        from: ActorId,
        to: ActorId,
        msg: MsgOf<M>,
        msg_id: u32,
        duplicate: bool,
    ) -> Option<Violation> {
        if !self.sim.up[to as usize] || self.crash_roll(to) {
            // A down receiver, or one that dies before it can take this step:
            // the message dies with it.
            self.faults.dropped_at_down_actor += 1;
            self.trace(TraceKind::Drop {
                from,
                to,
                msg,
                msg_id,
                reason: DropReason::ReceiverDown,
            });
            return None;
        }
        if T::ENABLED {
            self.trace(TraceKind::Deliver {
                from,
                to,
                msg: msg.clone(),
                msg_id,
                duplicate,
            });
        }
        let node = &self.model.nodes()[to as usize];
        let sim = &mut *self.sim;
        let state = sim.states[to as usize].as_mut().expect("receiver is up");
        let storage = sim.storages[to as usize].as_mut().expect("storage exists");
        let mut ctx = Context::<M::Node> {
            now_us: self.now_us,
            me: to,
            restarted: false,
            stream: sim.layout.actor(to),
            choices: &mut sim.choices,
            out: &mut sim.out,
        };
        node.on_msg(state, storage, from, msg, &mut ctx);
        self.apply(to)
    }

    fn fire(&mut self, actor: ActorId, timer: TimerOf<M>) -> Option<Violation> {
        debug_assert!(self.sim.up[actor as usize], "timers die with a crash");
        if self.crash_roll(actor) {
            return None;
        }
        self.trace(TraceKind::TimerFired { actor, timer });
        let node = &self.model.nodes()[actor as usize];
        let sim = &mut *self.sim;
        let state = sim.states[actor as usize].as_mut().expect("actor is up");
        let storage = sim.storages[actor as usize]
            .as_mut()
            .expect("storage exists");
        let mut ctx = Context::<M::Node> {
            now_us: self.now_us,
            me: actor,
            restarted: false,
            stream: sim.layout.actor(actor),
            choices: &mut sim.choices,
            out: &mut sim.out,
        };
        node.on_timer(state, storage, timer, &mut ctx);
        self.apply(actor)
    }

    pub(super) fn start(&mut self, actor: ActorId, restarted: bool) -> Option<Violation> {
        debug_assert!(!self.sim.up[actor as usize]);
        if restarted {
            self.trace(TraceKind::Restart { actor });
        } else {
            self.trace(TraceKind::Start { actor });
        }
        let node = &self.model.nodes()[actor as usize];
        let sim = &mut *self.sim;
        let i = actor as usize;
        // A fresh state in the allocations of the last one.
        node.reset_state(&mut sim.states[i]);
        let state = sim.states[i]
            .as_mut()
            .expect("reset_state must provide state");
        let storage = sim.storages[i].as_mut().expect("storage exists");
        let mut ctx = Context::<M::Node> {
            now_us: self.now_us,
            me: actor,
            restarted,
            stream: sim.layout.actor(actor),
            choices: &mut sim.choices,
            out: &mut sim.out,
        };
        node.on_start(state, storage, &mut ctx);
        sim.up[i] = true;
        self.apply(actor)
    }

    // Inlined so that an event is built in place in the queue's slab, not
    // built, moved into the call and copied again.
    #[inline(always)]
    pub(super) fn push(&mut self, time_us: TimeUs, kind: EventKind<MsgOf<M>, TimerOf<M>>) {
        let seq = self.sim.seq;
        self.sim.seq += 1;
        self.sim.queue.push(time_us, seq, kind);
    }

    /// The index of `timer` (in its actor's `slot`) in the world's timer generations.
    #[inline]
    fn timer_slot(&self, actor: ActorId, slot: u32, timer: &TimerOf<M>) -> u32 {
        assert!(
            slot < self.sim.timer_slots[actor as usize],
            "timer {timer} of actor {actor} has slot {slot}, over the actor's timer_slots"
        );
        self.sim.timer_base[actor as usize] + slot
    }

    /// Hands the tracer what `actor` holds after its step, if it asks.
    #[inline(always)]
    pub(super) fn snapshot(&mut self, actor: ActorId) {
        if T::SNAPSHOTS {
            let i = actor as usize;
            let state = self.sim.states[i]
                .as_ref()
                .filter(|_| self.sim.up[i])
                .map(|s| s as &dyn std::fmt::Debug);
            let storage = self.sim.storages[i].as_ref().expect("storage exists");
            self.tracer.snapshot(self.step, actor, state, storage);
        }
    }

    /// Applies a handler's commands in the order it pushed them.
    #[inline(always)]
    fn apply(&mut self, actor: ActorId) -> Option<Violation> {
        let mut out = std::mem::take(&mut self.sim.out);
        let mut violation = None;
        for cmd in out.drain(..) {
            if violation.is_some() {
                continue;
            }
            match cmd {
                Command::Send { to, msg } => self.send(actor, to, msg),
                Command::SetTimer {
                    timer,
                    slot,
                    after_us,
                } => {
                    let slot = self.timer_slot(actor, slot, &timer);
                    let g = &mut self.sim.timer_gen[slot as usize];
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
                Command::CancelTimer { timer, slot } => {
                    let slot = self.timer_slot(actor, slot, &timer) as usize;
                    self.sim.timer_gen[slot] = self.sim.timer_gen[slot].wrapping_add(1);
                }
                Command::Observe(obs) => {
                    violation = self.sim.oracle.observe(self.now_us, actor, &obs);
                    self.trace(TraceKind::Observe { actor, obs });
                }
                Command::Reached(situation) => {
                    if self.situations.insert(situation) {
                        self.trace(TraceKind::Reached { actor, situation });
                    }
                }
            }
        }
        self.sim.out = out;
        self.snapshot(actor);
        violation
    }
}
