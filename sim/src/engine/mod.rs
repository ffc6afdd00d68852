//! The event loop: virtual time, the (time, sequence) ordered queue, the lossy
//! network, crashes, the two phases, limits and the oracle's checks.
//!
//! - this module: the types a model and a sweep see, and [`Sim`], one per thread;
//! - `queue`: the event queue;
//! - `run`: one run, from reset to the oracle's last word, and the handler calls;
//! - `way`: how a handler's commands reach the run: buffered, or applied at once;
//! - `faults`: the swarm mix, crashes, and the network's loss, duplication,
//!   partitions and delays.

mod delay;
mod faults;
mod queue;
mod run;
mod way;

pub use faults::swarm_max_decisions;

use crate::actor::{Actor, ActorId, Command, TimeUs};
use crate::choice::{Choices, Odds, Record, StreamLayout};
use crate::situation::SituationSet;
use crate::trace::{NoTrace, TraceEntry, Tracer};
use crate::world::{Partition, World};
use queue::EventQueue;
use run::Run;
use way::{Buffered, Direct};

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

impl Violation {
    /// A violation of `invariant` by `operation`, told in `message`.
    pub fn new(invariant: &'static str, operation: u64, message: String) -> Self {
        Violation {
            invariant,
            operation,
            message,
        }
    }
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
    /// Judges the end of the run (after the healing phase): liveness. The
    /// default judges nothing, for an oracle of safety alone.
    fn finish(&mut self, now_us: TimeUs) -> Option<Violation> {
        let _ = now_us;
        None
    }

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

    /// What the last run reached, as numbers for coverage-guided search
    /// ([`crate::coverage`]): each distinct end state of an operation (its
    /// ending, its effects, what its client was told) gives one number, so a
    /// run that gets one somewhere new is kept and mutated first. Equal
    /// states must give equal numbers; the default gives none.
    fn features(&self, out: &mut dyn FnMut(u64)) {
        let _ = out;
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

/// A limit on a run; hitting one ends it as [`Outcome::Inconclusive`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// What one run gave.
#[derive(Clone, Debug, PartialEq, Eq)]
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

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Fault,
    Healing,
}

type NodeState<M> = <<M as Model>::Node as Actor>::State;
type NodeStorage<M> = <<M as Model>::Node as Actor>::Storage;

/// One directed link as this seed has it, in one place because every send
/// reads all of it: the fault rates (set once, or drawn per seed by the swarm
/// mix) and the delays.
#[derive(Clone, Copy)]
struct LinkNow {
    // Per mille, at most 1000: 16 bits each leave room for `ready` in the
    // same 40 bytes.
    loss_pm: u16,
    dup_pm: u16,
    /// At or above [`Sim::mix_now`] when a send may take this record as it
    /// is: no kind on the link has faults of its own (those make it 0) and
    /// its rates are set once ([`FIXED_RATES`]) or this run's (the stamp
    /// of the run that drew them, as in `Sim::link_draws`). Below it, the
    /// send takes the way round (`Run::link_round`). One comparison for both.
    ready: u32,
    /// The message kinds with faults of their own on this link: a run of
    /// `kinds_len` entries of `kind_index` from `kinds_start` (none: 0).
    kinds_start: u32,
    kinds_len: u32,
    delay_us_min: TimeUs,
    delay_us_max: TimeUs,
    /// [`LinkConfig::delay_sd_us`](crate::world::LinkConfig::delay_sd_us):
    /// 0 for a uniform delay.
    delay_sd_us: TimeUs,
}

/// The stamp of a link whose rates are set once: never behind.
const FIXED_RATES: u32 = u32::MAX;

/// What a send of one kind with faults of its own reads in place of its
/// link's [`LinkNow`]: this seed's loss and duplication, and its delays.
#[derive(Clone, Copy)]
struct KindNow {
    loss_pm: u16,
    dup_pm: u16,
    delay_us_min: TimeUs,
    delay_us_max: TimeUs,
}

impl KindNow {
    /// `k`'s delays; its rates are drawn per seed (`draw_swarm_mix`).
    fn of(k: &crate::world::KindFault, world: &World) -> Self {
        let (delay_us_min, delay_us_max) = k.delays_us(world.link(k.from, k.to));
        KindNow {
            loss_pm: 0,
            dup_pm: 0,
            delay_us_min,
            delay_us_max,
        }
    }
}

/// Each actor's volatile state and durable storage. A run holds them apart
/// from the rest of the simulator, so that a handler can borrow its own while
/// its context borrows the engine.
pub(super) struct Actors<M: Model> {
    /// One per actor once a run has reset them, none before (or after a
    /// model panicked in a run). Kept while an actor is down (and from run
    /// to run) only for [`Actor::reset`] to reuse its allocations. No
    /// `Option` around them: a handler's call finds its state and storage
    /// with one bounds check and nothing else to test.
    held: Vec<Held<M>>,
}

/// One actor's state and storage, side by side.
pub(super) struct Held<M: Model> {
    pub state: NodeState<M>,
    pub storage: NodeStorage<M>,
}

impl<M: Model> Actors<M> {
    /// None yet: the first run's reset makes them.
    fn new() -> Self {
        Actors { held: Vec::new() }
    }

    /// `actor`'s state and storage; every actor has them during a run.
    #[inline(always)]
    pub(super) fn get(&self, actor: ActorId) -> &Held<M> {
        &self.held[actor as usize]
    }

    /// What a handler of `actor` (which is up) is called on: its node in
    /// `model`, its state and its storage.
    #[inline(always)]
    fn handler<'m>(
        &mut self,
        model: &'m M,
        actor: ActorId,
    ) -> (&'m M::Node, &mut NodeState<M>, &mut NodeStorage<M>) {
        let i = actor as usize;
        let held = &mut self.held[i];
        (&model.nodes()[i], &mut held.state, &mut held.storage)
    }
}

/// One simulator per thread; all buffers are reused from run to run.
pub struct Sim<M: Model> {
    layout: StreamLayout,
    /// The recorded source of decisions; after a recording run, its record (`take_recorded`).
    pub choices: Choices,
    queue: EventQueue<MsgOf<M>, TimerOf<M>>,
    out: Vec<Command<MsgOf<M>, ObsOf<M>, TimerOf<M>>>,
    /// Empty while a run is under way (the run holds them), and after a
    /// model panicked in one; the next run then starts from fresh ones.
    actors: Actors<M>,
    /// Whether each actor is running: a crash sets it false until the restart.
    up: Vec<bool>,
    /// When each actor last crashed: the end of the fault phase restarts a
    /// down actor no sooner than its `restart_us_min` after that.
    down_since: Vec<TimeUs>,
    /// Per actor, the generation of each timer slot it has set (a pending
    /// timer fires only if its slot's generation is still its own). Grown on
    /// an actor's first timer in a slot past its end and kept from run to
    /// run, so the slots need no count declared up front.
    timer_gen: Vec<Vec<u32>>,
    /// Per directed link, row-major: what every send on it reads.
    links: Vec<LinkNow>,
    /// Each actor's crash roll for this seed: its rate, drawn by the swarm
    /// mix, and its crash stream, set up once per run for every roll.
    crash_odds: Vec<Odds>,
    /// This seed's loss and duplication for each of `world.kind_faults`,
    /// with its delays (set once in [`Sim::new`]).
    kind_now: Vec<KindNow>,
    /// `(link, kind, index into world.kind_faults)`, sorted: a send on a link
    /// with kinds of its own scans only its link's run of entries (a few
    /// kinds), however many links an entry without `from` or `to` reached.
    kind_index: Vec<(u32, u16, u32)>,
    /// Links whose loss or duplication is a swarm range, drawn per seed; the
    /// others keep the rates set once in [`Sim::new`].
    swarm_links: Vec<u32>,
    /// Per link, row-major, where its rates sit among `swarm_words`, how
    /// each is scaled, and the stamp of the run whose rates it holds; and the links seen.
    link_draws: faults::LinkDraws,
    /// This run's words of the swarm stream for the links' rates, one per
    /// rate that is a range, in a sweep's run that draws its links' rates
    /// at their first use; two more, never drawn, so that every link can
    /// read two words from its first.
    swarm_words: Vec<u64>,
    /// This run's stamp: the count of runs, from 1 (see `Sim::link_now`).
    mix_now: u32,
    /// The last stamp handed out; back to 1 after clearing every stamp.
    mix_runs: u32,
    /// This seed's random partition, if the scenario allows one and the seed drew it.
    random_partition: Option<Partition>,
    oracle: M::Oracle,
    seq: u64,
    next_msg_id: u32,
}

/// `(link, kind, index into world.kind_faults)` of `world`'s kinds with
/// faults of their own, sorted, with each link's run of them marked in
/// `links` (and the link never `ready`: its sends look up their kind).
fn index_kinds(world: &World, links: &mut [LinkNow]) -> Vec<(u32, u16, u32)> {
    let n = world.actor_count() as usize;
    let mut kind_index = Vec::with_capacity(world.kind_faults.len());
    for (i, k) in world.kind_faults.iter().enumerate() {
        let link = k.from as usize * n + k.to as usize;
        kind_index.push((link as u32, k.kind, i as u32));
    }
    kind_index.sort_unstable();
    for (at, &(link, _, _)) in kind_index.iter().enumerate() {
        let l = &mut links[link as usize];
        if l.kinds_len == 0 {
            l.kinds_start = at as u32;
        }
        l.kinds_len += 1;
        l.ready = 0;
    }
    kind_index
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
        let mut swarm_links = Vec::new();
        let mut links: Vec<LinkNow> = world
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (loss, dup) = (l.loss_per_mille, l.duplicate_per_mille);
                let swarm = loss.lo != loss.hi || dup.lo != dup.hi;
                if swarm {
                    swarm_links.push(i as u32);
                }
                LinkNow {
                    // Validation keeps every rate at most 1000.
                    loss_pm: loss.lo as u16,
                    dup_pm: dup.lo as u16,
                    // A link with kinds of its own is set to 0 below.
                    ready: if swarm { 0 } else { FIXED_RATES },
                    kinds_start: 0,
                    kinds_len: 0,
                    delay_us_min: l.delay_us_min,
                    delay_us_max: l.delay_us_max,
                    delay_sd_us: l.delay_sd_us,
                }
            })
            .collect();
        debug_assert_eq!(links.len(), n * n);
        let kind_index = index_kinds(world, &mut links);
        let (link_draws, words) = faults::link_draws(world);
        Sim {
            layout: StreamLayout {
                actors: world.actor_count(),
            },
            choices: Choices::new(),
            queue: EventQueue::with_capacity(64),
            out: Vec::with_capacity(16),
            actors: Actors::new(),
            up: vec![false; n],
            down_since: vec![0; n],
            timer_gen: vec![Vec::new(); n],
            links,
            crash_odds: vec![Odds::default(); n],
            kind_now: world
                .kind_faults
                .iter()
                .map(|k| KindNow::of(k, world))
                .collect(),
            kind_index,
            swarm_links,
            link_draws,
            swarm_words: vec![0; words + 2],
            mix_now: 0,
            mix_runs: 0,
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
        self.actors.held.get(actor as usize).map(|h| &h.storage)
    }

    /// An actor's volatile state as the last run left it, if it was up.
    pub fn state(&self, actor: ActorId) -> Option<&<M::Node as Actor>::State> {
        let i = actor as usize;
        if *self.up.get(i)? {
            self.actors.held.get(i).map(|h| &h.state)
        } else {
            None
        }
    }

    /// The oracle as the last run left it.
    pub fn oracle(&self) -> &M::Oracle {
        &self.oracle
    }

    /// A sweep's run: no trace, no record. Its handlers' commands take
    /// effect where they are given, with no buffer in between; the run is the
    /// one [`run`](Sim::run) gives for the same seed.
    // Never inlined, so that an instruction count (scripts/instructions.sh)
    // finds a sweep's runs under this name; one call per run costs nothing.
    #[inline(never)]
    pub fn run_seed(&mut self, model: &M, seed: u64) -> RunReport {
        let stream_count = self.layout.count();
        self.choices.start_random(seed, stream_count, false);
        self.execute::<Direct, _>(model, &mut NoTrace)
    }

    /// One run from the choice source as started, its handlers' commands
    /// applied in `W`'s way. The run holds the actors' states and storages
    /// meanwhile; fresh ones are made if a panic in the last run lost them.
    #[inline(always)]
    fn execute<W, T>(&mut self, model: &M, tracer: &mut T) -> RunReport
    where
        W: run::Way<M, T>,
        T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>,
    {
        // Its reset makes them anew if there are none (a first run, or a
        // panic in the last one lost them).
        let mut actors = std::mem::replace(&mut self.actors, Actors::new());
        let report = Run {
            sim: &mut *self,
            model,
            tracer,
            now_us: 0,
            step: 0,
            phase: Phase::Fault,
            faults: FaultCounts::default(),
            situations: SituationSet::EMPTY,
            violation: None,
            void_until_us: 0,
        }
        .execute::<W>(&mut actors);
        // The empty placeholder is forgotten, not dropped: it holds no
        // allocation, and its drop was a call per run.
        let placeholder = std::mem::replace(&mut self.actors, actors);
        debug_assert!(placeholder.held.is_empty() && placeholder.held.capacity() == 0);
        std::mem::forget(placeholder);
        report
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
        self.execute::<Buffered, T>(model, tracer)
    }
}
