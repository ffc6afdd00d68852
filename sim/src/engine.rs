//! The event loop: virtual time, the (time, sequence) ordered queue, the lossy
//! network, crashes, the two phases, limits and the oracle's checks.

use crate::actor::{Actor, ActorId, Command, Context, Message, TimeUs, Timer};
use crate::choice::{Choices, Record, StreamLayout};
use crate::situation::SituationSet;
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
    /// The observations it judges.
    type Obs;
    /// Forgets the previous run: called before each run.
    fn reset(&mut self);
    /// Judges one observation the moment `actor` reports it; a violation ends the run.
    fn observe(&mut self, now_us: TimeUs, actor: ActorId, obs: &Self::Obs) -> Option<Violation>;
    /// Judges the end of the run (after the healing phase): liveness.
    fn finish(&mut self, now_us: TimeUs) -> Option<Violation>;

    /// Numbers a sweep adds up over its runs (operations that ended unknown,
    /// attempts, a histogram of times to effect): named here, filled by [`count`](Oracle::count).
    fn counters(&self) -> &'static [Counter] {
        &[]
    }

    /// Adds this run's numbers to `into`: the counters' slots laid end to end,
    /// in the order of [`counters`](Oracle::counters).
    fn count(&self, outcome: &Outcome, into: &mut [u64]) {
        let _ = (outcome, into);
    }
}

/// How two tallies combine one counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    /// Counts add up over runs.
    Sum,
    /// The largest value over runs wins.
    Max,
}

/// A named number (or array of numbers, such as a histogram's buckets) an
/// oracle reports per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    /// Its stable name (the column `sweep` shows).
    pub name: &'static str,
    /// How two tallies combine it.
    pub merge: Merge,
    /// Slots this counter takes: 1 for a number, the bucket count of a histogram.
    pub len: usize,
}

impl Counter {
    /// The slots all `counters` take together.
    pub fn total_len(counters: &[Counter]) -> usize {
        counters.iter().map(|c| c.len).sum()
    }
}

/// A world with its actors and its oracle.
pub trait Model {
    /// The actor type: usually an enum over kinds made with [`compose!`](crate::compose).
    type Node: Actor;
    /// The judge of the actors' observations.
    type Oracle: Oracle<Obs = <Self::Node as Actor>::Obs>;
    /// The engine's configuration: actor names, links, crashes, phases, limits.
    fn world(&self) -> &World;
    /// One actor per name in [`World::actor_names`], in the same order.
    fn nodes(&self) -> &[Self::Node];
    /// A fresh oracle for one simulator (reset before each run).
    fn new_oracle(&self) -> Self::Oracle;
}

/// The world message type of model `M`.
pub type MsgOf<M> = <<M as Model>::Node as Actor>::Msg;
/// The observation type of model `M`.
pub type ObsOf<M> = <<M as Model>::Node as Actor>::Obs;
/// The timer type of model `M`.
pub type TimerOf<M> = <<M as Model>::Node as Actor>::Timer;
/// A trace entry of model `M`.
pub type EntryOf<M> = TraceEntry<MsgOf<M>, ObsOf<M>, TimerOf<M>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A limit on a run; hitting one ends it as [`Outcome::Inconclusive`].
pub enum Limit {
    /// [`Limits::max_steps`](crate::Limits::max_steps): engine events.
    Steps,
    /// [`Limits::max_time_us`](crate::Limits::max_time_us): virtual time.
    Time,
    /// [`Limits::max_queue`](crate::Limits::max_queue): pending events.
    Queue,
}

impl Limit {
    /// The name of its scenario key, `max_steps`, `max_time` or `max_queue`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Steps => "max_steps",
            Limit::Time => "max_time",
            Limit::Queue => "max_queue",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// How a run ended.
pub enum Outcome {
    /// Every invariant held, through the healing phase.
    Holds,
    /// An invariant broke.
    Violation(Violation),
    /// The run hit a limit before it could be judged.
    Inconclusive(Limit),
    /// A model panicked: reported as a failure with its seed, not a crash of the sweep.
    Panicked(String),
}

impl Outcome {
    /// A violation or a panic: what sweeps look for and shrinking keeps.
    pub fn is_failure(&self) -> bool {
        matches!(self, Outcome::Violation(_) | Outcome::Panicked(_))
    }
}

/// Which faults fired in a run: a "holds" verdict is only worth something if they did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    // u64: sweeps add these up over billions of runs.
    /// Messages the network lost.
    pub lost: u64,
    /// Messages the network duplicated.
    pub duplicated: u64,
    /// Messages a partition dropped.
    pub partitioned: u64,
    /// Crashes of actors.
    pub crashed: u64,
    /// Messages dropped because their receiver was down (a consequence, not a fault of its own).
    pub dropped_at_down_actor: u64,
}

impl FaultCounts {
    /// Adds `o`'s counts.
    pub fn add(&mut self, o: &FaultCounts) {
        self.lost += o.lost;
        self.duplicated += o.duplicated;
        self.partitioned += o.partitioned;
        self.crashed += o.crashed;
        self.dropped_at_down_actor += o.dropped_at_down_actor;
    }

    /// Faults injected: lost, duplicated, partitioned and crashes.
    pub fn total(&self) -> u64 {
        self.lost + self.duplicated + self.partitioned + self.crashed
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// What one run gave.
pub struct RunReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Events the engine handled (deliveries, timers, restarts, drops).
    pub events: u64,
    /// Virtual time when it ended.
    pub end_time_us: TimeUs,
    /// The faults that fired.
    pub faults: FaultCounts,
    /// The situations actors reported.
    pub situations: SituationSet,
}

impl RunReport {
    /// The report of a run whose model panicked.
    pub fn panicked(message: String) -> RunReport {
        RunReport {
            outcome: Outcome::Panicked(message),
            events: 0,
            end_time_us: 0,
            faults: FaultCounts::default(),
            situations: SituationSet::EMPTY,
        }
    }
}

#[derive(Clone, Debug)]
enum EventKind<M, T> {
    Deliver {
        from: ActorId,
        to: ActorId,
        msg: M,
        msg_id: u32,
        duplicate: bool,
    },
    Timer {
        actor: ActorId,
        timer: T,
        /// Index into the world's timer generations.
        slot: u32,
        generation: u32,
    },
    Restart {
        actor: ActorId,
    },
    /// A free slab entry.
    Vacant,
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

struct Event<M, T> {
    time_us: TimeUs,
    kind: EventKind<M, T>,
}

/// The event queue: a heap of small keys over a slab of payloads whose free
/// slots are reused, so neither allocates once a run has warmed them up.
struct EventQueue<M, T> {
    heap: BinaryHeap<Slot>,
    slab: Vec<EventKind<M, T>>,
    free: Vec<u32>,
}

impl<M, T> EventQueue<M, T> {
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
    fn push(&mut self, time_us: TimeUs, seq: u64, kind: EventKind<M, T>) {
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
    fn pop(&mut self) -> Option<Event<M, T>> {
        let slot = self.heap.pop()?;
        self.free.push(slot.index);
        let kind = std::mem::replace(&mut self.slab[slot.index as usize], EventKind::Vacant);
        debug_assert!(
            !matches!(kind, EventKind::Vacant),
            "a queued event is never vacant"
        );
        Some(Event {
            time_us: slot.time_us,
            kind,
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
    /// The recorded source of decisions; after a recording run, its record (`take_recorded`).
    pub choices: Choices,
    queue: EventQueue<MsgOf<M>, TimerOf<M>>,
    out: Vec<Command<MsgOf<M>, ObsOf<M>, TimerOf<M>>>,
    states: Vec<Option<NodeState<M>>>,
    storages: Vec<Option<NodeStorage<M>>>,
    /// Where each actor's timer slots start in `timer_gen`, and their count.
    timer_base: Vec<u32>,
    timer_slots: Vec<u32>,
    timer_gen: Vec<u32>,
    loss_pm: Vec<u32>,
    dup_pm: Vec<u32>,
    crash_pm: Vec<u32>,
    /// Per link: some message kinds have faults of their own.
    link_has_kinds: Vec<bool>,
    /// This seed's loss and duplication for each of `world.kind_faults`.
    kind_pm: Vec<(u32, u32)>,
    /// Links whose loss or duplication is a swarm range, drawn per seed; the
    /// others keep the rates set once in [`Sim::new`].
    swarm_links: Vec<u32>,
    /// This seed's random partition, if the scenario allows one and the seed drew it.
    random_partition: Option<Partition>,
    oracle: M::Oracle,
    seq: u64,
    next_msg_id: u32,
}

/// How a run gets its decisions.
pub enum Source<'r> {
    /// From a seed: ChaCha8 streams keyed by it.
    Seed {
        /// The seed.
        seed: u64,
        /// Keep the decisions made, for `choices.take_recorded()`.
        record: bool,
    },
    /// From a record: its values, zeros past its end.
    Replay {
        /// The decisions to replay.
        record: &'r Record,
        /// Log each decision point met (for exhaustive search and the point of no return).
        log_points: bool,
    },
}

impl<M: Model> Sim<M> {
    /// A simulator for `model` (checks its world; panics on one validation should have refused).
    pub fn new(model: &M) -> Self {
        let world = model.world();
        world.check();
        assert_eq!(
            world.actor_names.len(),
            model.nodes().len(),
            "one node per actor name"
        );
        let n = world.actor_count() as usize;
        let timer_slots: Vec<u32> = model.nodes().iter().map(Actor::timer_slots).collect();
        let mut timer_base = Vec::with_capacity(n);
        let mut total = 0u32;
        for &k in &timer_slots {
            timer_base.push(total);
            total = total
                .checked_add(k)
                .expect("fewer than 2^32 timer slots in a world");
        }
        let mut link_has_kinds = vec![false; n * n];
        for k in &world.kind_faults {
            link_has_kinds[k.from as usize * n + k.to as usize] = true;
        }
        let mut loss_pm = vec![0; n * n];
        let mut dup_pm = vec![0; n * n];
        let mut swarm_links = Vec::new();
        for (i, l) in world.links.iter().enumerate() {
            let (loss, dup) = (l.loss_per_mille, l.duplicate_per_mille);
            if loss.lo != loss.hi || dup.lo != dup.hi {
                swarm_links.push(i as u32);
            }
            loss_pm[i] = loss.lo;
            dup_pm[i] = dup.lo;
        }
        Sim {
            layout: StreamLayout {
                actors: world.actor_count(),
            },
            choices: Choices::new(),
            queue: EventQueue::with_capacity(64),
            out: Vec::with_capacity(16),
            states: (0..n).map(|_| None).collect(),
            storages: (0..n).map(|_| None).collect(),
            timer_base,
            timer_slots,
            timer_gen: vec![0; total as usize],
            loss_pm,
            dup_pm,
            crash_pm: vec![0; n],
            link_has_kinds,
            kind_pm: vec![(0, 0); world.kind_faults.len()],
            swarm_links,
            random_partition: None,
            oracle: model.new_oracle(),
            seq: 0,
            next_msg_id: 0,
        }
    }

    /// Which stream belongs to which link or actor in this model's world.
    pub fn layout(&self) -> StreamLayout {
        self.layout
    }

    /// An actor's durable storage as the last run left it: lets a metrics pass
    /// read end-of-run numbers without a trace.
    pub fn storage(&self, actor: ActorId) -> Option<&<M::Node as Actor>::Storage> {
        self.storages.get(actor as usize).and_then(Option::as_ref)
    }

    /// The oracle as the last run left it.
    pub fn oracle(&self) -> &M::Oracle {
        &self.oracle
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

    /// Runs the model once, from `source`, handing every trace entry to `tracer`.
    pub fn run<T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>>(
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
            situations: SituationSet::EMPTY,
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
    let put = |out: &mut Vec<u64>, lo: u32, hi: u32| {
        if hi > lo {
            out.push(u64::from(hi - lo));
        }
    };
    for from in 0..n {
        for to in 0..n {
            let l = world.link(from, to);
            put(&mut out, l.loss_per_mille.lo, l.loss_per_mille.hi);
            put(&mut out, l.duplicate_per_mille.lo, l.duplicate_per_mille.hi);
        }
    }
    for c in &world.crashes {
        put(&mut out, c.crash_per_mille.lo, c.crash_per_mille.hi);
    }
    let rp = &world.random_partition;
    if rp.enabled() {
        // At its maximum probability the partition happens (a decision only
        // below 1000 per mille), between the last two actors, for its longest
        // duration, from the start of the run.
        put(&mut out, rp.per_mille.lo, rp.per_mille.hi);
        if rp.per_mille.hi < 1000 {
            out.push(1);
        }
        out.push(u64::from(n - 1));
        if n > 2 {
            out.push(u64::from(n - 2));
        }
        if rp.duration_us_max > rp.duration_us_min {
            out.push(rp.duration_us_max - rp.duration_us_min);
        }
        if world.fault_phase_us > rp.duration_us_max {
            out.push(0);
        }
    }
    for k in &world.kind_faults {
        put(&mut out, k.loss_per_mille.lo, k.loss_per_mille.hi);
        put(&mut out, k.duplicate_per_mille.lo, k.duplicate_per_mille.hi);
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
    situations: SituationSet,
}

impl<M: Model, T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>> Run<'_, '_, '_, M, T> {
    #[inline(always)]
    fn trace(&mut self, kind: TraceKind<MsgOf<M>, ObsOf<M>, TimerOf<M>>) {
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
                    if self.sim.states[actor as usize].is_none() {
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
        // Links in row-major order, as always; a fixed link draws nothing.
        for k in 0..self.sim.swarm_links.len() {
            let i = self.sim.swarm_links[k];
            let (from, to) = (i / n, i % n);
            let l = world.link(from, to);
            let (loss, dup) = (l.loss_per_mille, l.duplicate_per_mille);
            let choices = &mut self.sim.choices;
            let lp = choices.range(swarm, u64::from(loss.lo), u64::from(loss.hi)) as u32;
            let dp = choices.range(swarm, u64::from(dup.lo), u64::from(dup.hi)) as u32;
            self.sim.loss_pm[i as usize] = lp;
            self.sim.dup_pm[i as usize] = dp;
            self.trace(TraceKind::LinkMix {
                from,
                to,
                loss_per_mille: lp,
                duplicate_per_mille: dp,
            });
        }
        for actor in 0..n {
            let c = world.crashes[actor as usize].crash_per_mille;
            let p = self
                .sim
                .choices
                .range(swarm, u64::from(c.lo), u64::from(c.hi)) as u32;
            self.sim.crash_pm[actor as usize] = p;
            if c.lo != c.hi {
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
                // The whole cut lies inside the fault phase: validation keeps
                // the longest duration within it, so no cut is silently shortened.
                let duration_us = choices.range(swarm, rp.duration_us_min, rp.duration_us_max);
                let latest_start_us = world.fault_phase_us.saturating_sub(duration_us);
                let start_us = choices.range(swarm, 0, latest_start_us);
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
        for (i, k) in world.kind_faults.iter().enumerate() {
            let choices = &mut self.sim.choices;
            let (loss, dup) = (k.loss_per_mille, k.duplicate_per_mille);
            let lp = choices.range(swarm, u64::from(loss.lo), u64::from(loss.hi)) as u32;
            let dp = choices.range(swarm, u64::from(dup.lo), u64::from(dup.hi)) as u32;
            self.sim.kind_pm[i] = (lp, dp);
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
                if let Some(v) = self.start(actor, true) {
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
        let base = self.sim.timer_base[actor as usize] as usize;
        let count = self.sim.timer_slots[actor as usize] as usize;
        for g in &mut self.sim.timer_gen[base..base + count] {
            *g = g.wrapping_add(1);
        }
        self.faults.crashed += 1;
        self.trace(TraceKind::Crash { actor });
        self.snapshot(actor);
        let delay = self
            .sim
            .choices
            .range(stream, c.restart_us_min, c.restart_us_max);
        self.push(
            self.now_us.saturating_add(delay),
            EventKind::Restart { actor },
        );
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
        if self.sim.states[to as usize].is_none() || self.crash_roll(to) {
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
        debug_assert!(
            self.sim.states[actor as usize].is_some(),
            "timers die with a crash"
        );
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

    fn start(&mut self, actor: ActorId, restarted: bool) -> Option<Violation> {
        debug_assert!(self.sim.states[actor as usize].is_none());
        if restarted {
            self.trace(TraceKind::Restart { actor });
        } else {
            self.trace(TraceKind::Start { actor });
        }
        let node = &self.model.nodes()[actor as usize];
        let sim = &mut *self.sim;
        let storage = sim.storages[actor as usize]
            .as_mut()
            .expect("storage exists");
        let mut ctx = Context::<M::Node> {
            now_us: self.now_us,
            me: actor,
            restarted,
            stream: sim.layout.actor(actor),
            choices: &mut sim.choices,
            out: &mut sim.out,
        };
        let state = node.on_start(storage, &mut ctx);
        sim.states[actor as usize] = Some(state);
        self.apply(actor)
    }

    fn push(&mut self, time_us: TimeUs, kind: EventKind<MsgOf<M>, TimerOf<M>>) {
        let seq = self.sim.seq;
        self.sim.seq += 1;
        self.sim.queue.push(time_us, seq, kind);
    }

    /// The index of `timer` of `actor` in the world's timer generations.
    #[inline]
    fn timer_slot(&self, actor: ActorId, timer: &TimerOf<M>) -> u32 {
        let slot = timer.slot();
        assert!(
            slot < self.sim.timer_slots[actor as usize],
            "timer {timer} of actor {actor} has slot {slot}, over the actor's timer_slots"
        );
        self.sim.timer_base[actor as usize] + slot
    }

    /// Hands the tracer what `actor` holds after its step, if it asks.
    #[inline(always)]
    fn snapshot(&mut self, actor: ActorId) {
        if T::SNAPSHOTS {
            let i = actor as usize;
            let state = self.sim.states[i]
                .as_ref()
                .map(|s| s as &dyn std::fmt::Debug);
            let storage = self.sim.storages[i].as_ref().expect("storage exists");
            self.tracer.snapshot(self.step, actor, state, storage);
        }
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
                Command::SetTimer { timer, after_us } => {
                    let slot = self.timer_slot(actor, &timer);
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
                Command::CancelTimer { timer } => {
                    let slot = self.timer_slot(actor, &timer) as usize;
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

    /// This seed's loss and duplication for `msg` on the link `from → to`.
    #[inline]
    fn fault_rates(&self, from: ActorId, to: ActorId, msg: &MsgOf<M>) -> (u32, u32) {
        let world = self.model.world();
        let i = (from * world.actor_count() + to) as usize;
        if self.sim.link_has_kinds[i] {
            let kind = msg.kind();
            if let Some(k) = world
                .kind_faults
                .iter()
                .position(|k| k.from == from && k.to == to && k.kind == kind)
            {
                return self.sim.kind_pm[k];
            }
        }
        (self.sim.loss_pm[i], self.sim.dup_pm[i])
    }

    fn send(&mut self, from: ActorId, to: ActorId, msg: MsgOf<M>) {
        let world = self.model.world();
        assert!(to < world.actor_count(), "send to unknown actor {to}");
        let msg_id = self.sim.next_msg_id;
        self.sim.next_msg_id = self.sim.next_msg_id.wrapping_add(1);
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
            let (loss_pm, dup_pm) = self.fault_rates(from, to, &msg);
            if self.sim.choices.chance(stream, loss_pm) {
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
            if self.sim.choices.chance(stream, dup_pm) {
                self.faults.duplicated += 1;
                copies = 2;
            }
        }
        let delay = |run: &mut Self| {
            run.sim
                .choices
                .range(stream, link.delay_us_min, link.delay_us_max)
        };
        let first_at = self.now_us.saturating_add(delay(self));
        if T::ENABLED {
            self.trace(TraceKind::Send {
                from,
                to,
                msg: msg.clone(),
                msg_id,
                copies,
                deliver_at_us: first_at,
            });
        }
        if copies == 2 {
            let second_at = self.now_us.saturating_add(delay(self));
            let copy = msg.clone();
            self.push(
                first_at,
                EventKind::Deliver {
                    from,
                    to,
                    msg: copy,
                    msg_id,
                    duplicate: false,
                },
            );
            self.push(
                second_at,
                EventKind::Deliver {
                    from,
                    to,
                    msg,
                    msg_id,
                    duplicate: true,
                },
            );
        } else {
            self.push(
                first_at,
                EventKind::Deliver {
                    from,
                    to,
                    msg,
                    msg_id,
                    duplicate: false,
                },
            );
        }
    }
}
