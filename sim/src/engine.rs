//! The event loop: virtual time, the (time, sequence) ordered queue, the lossy
//! network, crashes, the two phases, limits and the oracle's checks.

use crate::actor::{Actor, ActorId, Command, Ctx, TimeUs, MAX_TIMER_TAGS};
use crate::choice::{Choices, Record, StreamLayout};
use crate::trace::{DropReason, NoTrace, TraceEntry, TraceKind, Tracer};
use crate::world::{Partition, World};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A broken invariant: data, not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The invariant's stable name, e.g. `no-duplicate-effect`.
    pub invariant: &'static str,
    /// The business operation it concerns; with the invariant it is the
    /// failure's signature, which shrinking keeps.
    pub operation: u64,
    /// One sentence for a person.
    pub message: String,
}

/// Judges observations against the domain's invariants.
///
/// `observe` runs the moment an effect is recorded (safety); `finish` runs at
/// the end of the healing phase (liveness).
pub trait Oracle {
    type Obs;
    fn reset(&mut self);
    fn observe(&mut self, now_us: TimeUs, actor: ActorId, obs: &Self::Obs) -> Option<Violation>;
    fn finish(&mut self, now_us: TimeUs) -> Option<Violation>;
}

/// A world with its actors and its oracle.
pub trait Model {
    type Node: Actor;
    type Oracle: Oracle<Obs = <Self::Node as Actor>::Obs>;
    fn world(&self) -> &World;
    fn nodes(&self) -> &[Self::Node];
    fn new_oracle(&self) -> Self::Oracle;
}

pub type MsgOf<M> = <<M as Model>::Node as Actor>::Msg;
pub type ObsOf<M> = <<M as Model>::Node as Actor>::Obs;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Steps,
    Time,
    Queue,
}

impl Limit {
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Steps => "max_steps",
            Limit::Time => "max_time",
            Limit::Queue => "max_queue",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Holds,
    Violation(Violation),
    Inconclusive(Limit),
    /// A model panicked: reported as a failure with its seed, not a crash of the sweep.
    Panicked(String),
}

impl Outcome {
    pub fn is_failure(&self) -> bool {
        matches!(self, Outcome::Violation(_) | Outcome::Panicked(_))
    }
}

/// Which faults fired in a run: a "holds" verdict is only worth something if they did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    // u64: sweeps add these up over billions of runs.
    pub lost: u64,
    pub duplicated: u64,
    pub partitioned: u64,
    pub crashed: u64,
    pub dropped_at_down_actor: u64,
}

impl FaultCounts {
    pub fn add(&mut self, o: &FaultCounts) {
        self.lost += o.lost;
        self.duplicated += o.duplicated;
        self.partitioned += o.partitioned;
        self.crashed += o.crashed;
        self.dropped_at_down_actor += o.dropped_at_down_actor;
    }

    pub fn total(&self) -> u64 {
        self.lost + self.duplicated + self.partitioned + self.crashed
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunReport {
    pub outcome: Outcome,
    /// Events the engine handled (deliveries, timers, restarts, drops).
    pub events: u64,
    pub end_time_us: TimeUs,
    pub faults: FaultCounts,
    /// Bit set of the situations actors reported.
    pub situations: u64,
}

#[derive(Clone, Copy, Debug)]
enum EventKind<M> {
    Deliver {
        from: ActorId,
        to: ActorId,
        msg: M,
        msg_id: u32,
        duplicate: bool,
    },
    Timer {
        actor: ActorId,
        tag: u32,
        generation: u32,
    },
    Restart {
        actor: ActorId,
    },
}

/// The heap's element: only the ordering key and where the payload lives, so a
/// sift moves 24 bytes instead of a whole message.
#[derive(Clone, Copy)]
struct Slot {
    time_us: TimeUs,
    seq: u64,
    index: u32,
}

// Ordered by (time, seq) only, reversed so BinaryHeap pops the earliest;
// seq is unique per run, so the pop order is total and the same for any heap.
impl PartialEq for Slot {
    fn eq(&self, o: &Self) -> bool {
        self.time_us == o.time_us && self.seq == o.seq
    }
}
impl Eq for Slot {}
impl PartialOrd for Slot {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Slot {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time_us, o.seq).cmp(&(self.time_us, self.seq))
    }
}

struct Event<M> {
    time_us: TimeUs,
    kind: EventKind<M>,
}

/// The event queue: a heap of small keys over a slab of payloads whose free
/// slots are reused, so neither allocates once a run has warmed them up.
struct EventQueue<M> {
    heap: BinaryHeap<Slot>,
    slab: Vec<EventKind<M>>,
    free: Vec<u32>,
}

impl<M: Copy> EventQueue<M> {
    fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            slab: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
        }
    }

    fn clear(&mut self) {
        self.heap.clear();
        self.slab.clear();
        self.free.clear();
    }

    #[inline]
    fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    fn peek_time(&self) -> Option<TimeUs> {
        self.heap.peek().map(|s| s.time_us)
    }

    #[inline]
    fn push(&mut self, time_us: TimeUs, seq: u64, kind: EventKind<M>) {
        let index = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = kind;
                i
            }
            None => {
                self.slab.push(kind);
                u32::try_from(self.slab.len() - 1).expect("fewer than 2^32 pending events")
            }
        };
        self.heap.push(Slot {
            time_us,
            seq,
            index,
        });
    }

    #[inline]
    fn pop(&mut self) -> Option<Event<M>> {
        let slot = self.heap.pop()?;
        self.free.push(slot.index);
        Some(Event {
            time_us: slot.time_us,
            kind: self.slab[slot.index as usize],
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Fault,
    Healing,
}

type NodeState<M> = <<M as Model>::Node as Actor>::State;
type NodeStorage<M> = <<M as Model>::Node as Actor>::Storage;

/// One simulator per thread; all buffers are reused from run to run.
pub struct Sim<M: Model> {
    layout: StreamLayout,
    pub choices: Choices,
    queue: EventQueue<MsgOf<M>>,
    out: Vec<Command<MsgOf<M>, ObsOf<M>>>,
    states: Vec<Option<NodeState<M>>>,
    storages: Vec<Option<NodeStorage<M>>>,
    timer_gen: Vec<u32>,
    loss_pm: Vec<u32>,
    dup_pm: Vec<u32>,
    crash_pm: Vec<u32>,
    /// This seed's random partition, if the scenario allows one and the seed drew it.
    random_partition: Option<Partition>,
    oracle: M::Oracle,
    seq: u64,
    next_msg_id: u32,
}

/// How a run gets its decisions.
pub enum Source<'r> {
    Seed {
        seed: u64,
        record: bool,
    },
    Replay {
        record: &'r Record,
        log_points: bool,
    },
}

impl<M: Model> Sim<M> {
    pub fn new(model: &M) -> Self {
        let world = model.world();
        world.check();
        assert_eq!(
            world.actor_names.len(),
            model.nodes().len(),
            "one node per actor name"
        );
        let n = world.actor_count() as usize;
        Sim {
            layout: StreamLayout {
                actors: world.actor_count(),
            },
            choices: Choices::new(),
            queue: EventQueue::with_capacity(64),
            out: Vec::with_capacity(16),
            states: (0..n).map(|_| None).collect(),
            storages: (0..n).map(|_| None).collect(),
            timer_gen: vec![0; n * MAX_TIMER_TAGS as usize],
            loss_pm: vec![0; n * n],
            dup_pm: vec![0; n * n],
            crash_pm: vec![0; n],
            random_partition: None,
            oracle: model.new_oracle(),
            seq: 0,
            next_msg_id: 0,
        }
    }

    pub fn layout(&self) -> StreamLayout {
        self.layout
    }

    /// An actor's durable storage as the last run left it: lets a metrics pass
    /// read end-of-run numbers (a dedup table's size) without a trace.
    pub fn storage(&self, actor: ActorId) -> Option<&<M::Node as Actor>::Storage> {
        self.storages.get(actor as usize).and_then(Option::as_ref)
    }

    /// A sweep's run: no trace, no record.
    pub fn run_seed(&mut self, model: &M, seed: u64) -> RunReport {
        self.run(
            model,
            Source::Seed {
                seed,
                record: false,
            },
            &mut NoTrace,
        )
    }

    pub fn run<T: Tracer<MsgOf<M>, ObsOf<M>>>(
        &mut self,
        model: &M,
        source: Source<'_>,
        tracer: &mut T,
    ) -> RunReport {
        let stream_count = self.layout.count();
        match source {
            Source::Seed { seed, record } => self.choices.start_random(seed, stream_count, record),
            Source::Replay { record, log_points } => {
                self.choices.start_replay(record, stream_count, log_points)
            }
        }
        let mut run = Run {
            sim: self,
            model,
            tracer,
            now_us: 0,
            step: 0,
            phase: Phase::Fault,
            faults: FaultCounts::default(),
            situations: 0,
        };
        run.execute()
    }
}

/// The swarm stream's decisions that pick every range at its maximum: what
/// exhaustive mode replays so that each fault the scenario allows "may happen".
/// Mirrors the order of draws in `draw_swarm_mix`; ranges with `lo == hi` are
/// no decision and take no place in the stream.
pub fn swarm_max_decisions(world: &World) -> Vec<u64> {
    let n = world.actor_count();
    let mut out = Vec::new();
    let mut put = |lo: u32, hi: u32| {
        if hi > lo {
            out.push(u64::from(hi - lo));
        }
    };
    for from in 0..n {
        for to in 0..n {
            let l = world.link(from, to);
            put(l.loss_per_mille.lo, l.loss_per_mille.hi);
            put(l.duplicate_per_mille.lo, l.duplicate_per_mille.hi);
        }
    }
    for c in &world.crashes {
        put(c.crash_per_mille.lo, c.crash_per_mille.hi);
    }
    let rp = &world.random_partition;
    if rp.enabled() {
        // At its maximum probability the partition happens (a decision only
        // below 1000 per mille), between the last two actors, from the start
        // of the run for its longest duration.
        put(rp.per_mille.lo, rp.per_mille.hi);
        if rp.per_mille.hi < 1000 {
            out.push(1);
        }
        out.push(u64::from(n - 1));
        if n > 2 {
            out.push(u64::from(n - 2));
        }
        if world.fault_phase_us > 0 {
            out.push(0);
        }
        if rp.duration_us_max > rp.duration_us_min {
            out.push(rp.duration_us_max - rp.duration_us_min);
        }
    }
    out
}

struct Run<'s, 'm, 't, M: Model, T> {
    sim: &'s mut Sim<M>,
    model: &'m M,
    tracer: &'t mut T,
    now_us: TimeUs,
    step: u64,
    phase: Phase,
    faults: FaultCounts,
    situations: u64,
}

impl<M: Model, T: Tracer<MsgOf<M>, ObsOf<M>>> Run<'_, '_, '_, M, T> {
    #[inline(always)]
    fn trace(&mut self, kind: TraceKind<MsgOf<M>, ObsOf<M>>) {
        if T::ENABLED {
            self.tracer.record(TraceEntry {
                time_us: self.now_us,
                step: self.step,
                kind,
            });
        }
    }

    fn report(&self, outcome: Outcome) -> RunReport {
        RunReport {
            outcome,
            events: self.step,
            end_time_us: self.now_us,
            faults: self.faults,
            situations: self.situations,
        }
    }

    fn execute(&mut self) -> RunReport {
        let world = self.model.world();
        let n = world.actor_count();
        self.reset(world);
        self.draw_swarm_mix(world);
        for actor in 0..n {
            if let Some(v) = self.start(actor) {
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
                    tag,
                    generation,
                } => {
                    let slot = (actor * MAX_TIMER_TAGS + tag) as usize;
                    if self.sim.timer_gen[slot] != generation {
                        continue; // cancelled, replaced or from before a crash
                    }
                    self.step += 1;
                    self.fire(actor, tag)
                }
                EventKind::Restart { actor } => {
                    self.step += 1;
                    if self.sim.states[actor as usize].is_none() {
                        self.start(actor)
                    } else {
                        None
                    }
                }
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
            sim.states[i] = None;
            node.reset_storage(&mut sim.storages[i]);
            assert!(
                sim.storages[i].is_some(),
                "reset_storage must provide storage"
            );
        }
        debug_assert_eq!(sim.states.len(), world.actor_names.len());
    }

    /// Swarm testing: each seed draws its own fault mix within the scenario's ranges.
    fn draw_swarm_mix(&mut self, world: &World) {
        let n = world.actor_count();
        let swarm = StreamLayout::SWARM;
        for from in 0..n {
            for to in 0..n {
                let l = world.link(from, to);
                let i = (from * n + to) as usize;
                let loss = l.loss_per_mille;
                let dup = l.duplicate_per_mille;
                let lp = self
                    .sim
                    .choices
                    .range(swarm, u64::from(loss.lo), u64::from(loss.hi));
                let dp = self
                    .sim
                    .choices
                    .range(swarm, u64::from(dup.lo), u64::from(dup.hi));
                self.sim.loss_pm[i] = lp as u32;
                self.sim.dup_pm[i] = dp as u32;
                if (loss.lo != loss.hi || dup.lo != dup.hi) && T::ENABLED {
                    self.trace(TraceKind::LinkMix {
                        from,
                        to,
                        loss_per_mille: lp as u32,
                        duplicate_per_mille: dp as u32,
                    });
                }
            }
        }
        for actor in 0..n {
            let c = world.crashes[actor as usize].crash_per_mille;
            let p = self
                .sim
                .choices
                .range(swarm, u64::from(c.lo), u64::from(c.hi)) as u32;
            self.sim.crash_pm[actor as usize] = p;
            if c.lo != c.hi && T::ENABLED {
                self.trace(TraceKind::CrashMix {
                    actor,
                    crash_per_mille: p,
                });
            }
        }
        self.sim.random_partition = None;
        // Drawn after everything else, and only when asked for, so that the
        // swarm streams of scenarios without it stay as they were.
        let rp = world.random_partition;
        if rp.enabled() {
            debug_assert!(n >= 2);
            let choices = &mut self.sim.choices;
            let p = choices.range(
                swarm,
                u64::from(rp.per_mille.lo),
                u64::from(rp.per_mille.hi),
            );
            if choices.chance(swarm, p as u32) {
                let a = choices.choose(swarm, u64::from(n)) as ActorId;
                let b = (a + 1 + choices.choose(swarm, u64::from(n - 1)) as ActorId) % n;
                let start_us = choices.range(swarm, 0, world.fault_phase_us);
                let duration_us = choices.range(swarm, rp.duration_us_min, rp.duration_us_max);
                let cut = Partition {
                    a,
                    b,
                    both_ways: true,
                    start_us,
                    end_us: start_us.saturating_add(duration_us),
                };
                self.sim.random_partition = Some(cut);
                self.trace(TraceKind::PartitionMix {
                    a,
                    b,
                    start_us: cut.start_us,
                    end_us: cut.end_us,
                });
            }
        }
    }

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
            if self.sim.states[actor as usize].is_none() {
                self.step += 1;
                if let Some(v) = self.start(actor) {
                    return Some(v);
                }
            }
        }
        None
    }

    fn crash_roll(&mut self, actor: ActorId) -> bool {
        if self.phase != Phase::Fault {
            return false;
        }
        let p = self.sim.crash_pm[actor as usize];
        let stream = self.sim.layout.crash(actor);
        if !self.sim.choices.chance(stream, p) {
            return false;
        }
        let world = self.model.world();
        let c = &world.crashes[actor as usize];
        self.sim.states[actor as usize] = None;
        let base = (actor * MAX_TIMER_TAGS) as usize;
        for g in &mut self.sim.timer_gen[base..base + MAX_TIMER_TAGS as usize] {
            *g = g.wrapping_add(1);
        }
        self.faults.crashed += 1;
        self.trace(TraceKind::Crash { actor });
        let delay = self
            .sim
            .choices
            .range(stream, c.restart_us_min, c.restart_us_max);
        self.push(self.now_us + delay, EventKind::Restart { actor });
        true
    }

    fn deliver(
        &mut self,
        from: ActorId,
        to: ActorId,
        msg: MsgOf<M>,
        msg_id: u32,
        duplicate: bool,
    ) -> Option<Violation> {
        if self.sim.states[to as usize].is_none() {
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
        if self.crash_roll(to) {
            // The receiver died before it could take this step; the message dies with it.
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
        self.trace(TraceKind::Deliver {
            from,
            to,
            msg,
            msg_id,
            duplicate,
        });
        let node = &self.model.nodes()[to as usize];
        let sim = &mut *self.sim;
        let state = sim.states[to as usize].as_mut().expect("receiver is up");
        let storage = sim.storages[to as usize].as_mut().expect("storage exists");
        let mut ctx = Ctx {
            now_us: self.now_us,
            me: to,
            stream: sim.layout.actor(to),
            choices: &mut sim.choices,
            out: &mut sim.out,
        };
        node.on_msg(state, storage, from, msg, &mut ctx);
        self.apply(to)
    }

    fn fire(&mut self, actor: ActorId, tag: u32) -> Option<Violation> {
        debug_assert!(
            self.sim.states[actor as usize].is_some(),
            "timers die with a crash"
        );
        if self.crash_roll(actor) {
            return None;
        }
        self.trace(TraceKind::TimerFired { actor, tag });
        let node = &self.model.nodes()[actor as usize];
        let sim = &mut *self.sim;
        let state = sim.states[actor as usize].as_mut().expect("actor is up");
        let storage = sim.storages[actor as usize]
            .as_mut()
            .expect("storage exists");
        let mut ctx = Ctx {
            now_us: self.now_us,
            me: actor,
            stream: sim.layout.actor(actor),
            choices: &mut sim.choices,
            out: &mut sim.out,
        };
        node.on_timer(state, storage, tag, &mut ctx);
        self.apply(actor)
    }

    fn start(&mut self, actor: ActorId) -> Option<Violation> {
        debug_assert!(self.sim.states[actor as usize].is_none());
        if self.now_us > 0 {
            self.trace(TraceKind::Restart { actor });
        } else {
            self.trace(TraceKind::Start { actor });
        }
        let node = &self.model.nodes()[actor as usize];
        let sim = &mut *self.sim;
        let storage = sim.storages[actor as usize]
            .as_mut()
            .expect("storage exists");
        let mut ctx = Ctx {
            now_us: self.now_us,
            me: actor,
            stream: sim.layout.actor(actor),
            choices: &mut sim.choices,
            out: &mut sim.out,
        };
        let state = node.on_start(storage, &mut ctx);
        sim.states[actor as usize] = Some(state);
        self.apply(actor)
    }

    fn push(&mut self, time_us: TimeUs, kind: EventKind<MsgOf<M>>) {
        let seq = self.sim.seq;
        self.sim.seq += 1;
        self.sim.queue.push(time_us, seq, kind);
    }

    /// Applies a handler's commands in the order it pushed them.
    fn apply(&mut self, actor: ActorId) -> Option<Violation> {
        let mut out = std::mem::take(&mut self.sim.out);
        let mut violation = None;
        for cmd in out.drain(..) {
            if violation.is_some() {
                continue;
            }
            match cmd {
                Command::Send { to, msg } => self.send(actor, to, msg),
                Command::SetTimer { tag, after_us } => {
                    let slot = (actor * MAX_TIMER_TAGS + tag) as usize;
                    self.sim.timer_gen[slot] = self.sim.timer_gen[slot].wrapping_add(1);
                    let generation = self.sim.timer_gen[slot];
                    self.trace(TraceKind::TimerSet {
                        actor,
                        tag,
                        at_us: self.now_us + after_us,
                    });
                    self.push(
                        self.now_us + after_us,
                        EventKind::Timer {
                            actor,
                            tag,
                            generation,
                        },
                    );
                }
                Command::CancelTimer { tag } => {
                    let slot = (actor * MAX_TIMER_TAGS + tag) as usize;
                    self.sim.timer_gen[slot] = self.sim.timer_gen[slot].wrapping_add(1);
                }
                Command::Observe(obs) => {
                    self.trace(TraceKind::Observe { actor, obs });
                    violation = self.sim.oracle.observe(self.now_us, actor, &obs);
                }
                Command::Reached(situation) => {
                    if T::ENABLED && self.situations & (1 << situation) == 0 {
                        self.trace(TraceKind::Reached { actor, situation });
                    }
                    self.situations |= 1 << situation;
                }
            }
        }
        self.sim.out = out;
        violation
    }

    fn send(&mut self, from: ActorId, to: ActorId, msg: MsgOf<M>) {
        let world = self.model.world();
        let n = world.actor_count();
        assert!(to < n, "send to unknown actor {to}");
        let msg_id = self.sim.next_msg_id;
        self.sim.next_msg_id += 1;
        let link = world.link(from, to);
        let stream = self.sim.layout.link(from, to);
        let mut copies = 1u8;
        if self.phase == Phase::Fault {
            let now_us = self.now_us;
            if world.partitions.iter().any(|p| p.cuts(from, to, now_us))
                || self
                    .sim
                    .random_partition
                    .is_some_and(|p| p.cuts(from, to, now_us))
            {
                self.faults.partitioned += 1;
                self.trace(TraceKind::Drop {
                    from,
                    to,
                    msg,
                    msg_id,
                    reason: DropReason::Partitioned,
                });
                return;
            }
            let i = (from * n + to) as usize;
            if self.sim.choices.chance(stream, self.sim.loss_pm[i]) {
                self.faults.lost += 1;
                self.trace(TraceKind::Drop {
                    from,
                    to,
                    msg,
                    msg_id,
                    reason: DropReason::Lost,
                });
                return;
            }
            if self.sim.choices.chance(stream, self.sim.dup_pm[i]) {
                self.faults.duplicated += 1;
                copies = 2;
            }
        }
        for copy in 0..copies {
            let delay = self
                .sim
                .choices
                .range(stream, link.delay_us_min, link.delay_us_max);
            let at = self.now_us + delay;
            if copy == 0 {
                self.trace(TraceKind::Send {
                    from,
                    to,
                    msg,
                    msg_id,
                    copies,
                    deliver_at_us: at,
                });
            }
            self.push(
                at,
                EventKind::Deliver {
                    from,
                    to,
                    msg,
                    msg_id,
                    duplicate: copy > 0,
                },
            );
        }
    }
}
