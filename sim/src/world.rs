//! The engine's configuration of a world: actors' names, links, crashes,
//! phases and limits. Validated values only: integer microseconds and per-mille.

use crate::actor::{ActorId, TimeUs};

/// A closed range of per-mille probabilities that a seed draws from (swarm
/// testing). `lo == hi` is a fixed probability.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PerMilleRange {
    /// Lowest per mille a seed may draw.
    pub lo: u32,
    /// Highest per mille a seed may draw.
    pub hi: u32,
}

impl PerMilleRange {
    /// Never.
    pub const ZERO: PerMilleRange = PerMilleRange { lo: 0, hi: 0 };

    /// Always `p` per mille.
    pub fn fixed(p: u32) -> Self {
        PerMilleRange { lo: p, hi: p }
    }

    /// Panics unless `lo <= hi <= 1000`.
    pub fn check(&self) {
        assert!(
            self.lo <= self.hi && self.hi <= 1000,
            "bad per-mille range {self:?}"
        );
    }
}

/// Faults and delays of one directed link.
///
/// `#[non_exhaustive]`: outside `sim` a link is built with
/// [`LinkConfig::uniform`] and its setters (or [`LinkConfig::lossy`]), so a
/// field a later version adds (as `delay_sd_us` was) breaks no user's code.
/// The fields stay public to read and to assign.
///
/// ```
/// use idemsim_sim::{LinkConfig, PerMilleRange, US_PER_MS};
/// let link = LinkConfig::uniform(US_PER_MS, 100 * US_PER_MS)
///     .loss(PerMilleRange { lo: 0, hi: 300 })
///     .duplicate(PerMilleRange::fixed(10));
/// assert_eq!(link.delay_us_max, 100 * US_PER_MS);
/// assert_eq!(link.delay_sd_us, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LinkConfig {
    /// Chance a message is lost, drawn per seed from this range.
    pub loss_per_mille: PerMilleRange,
    /// Chance a message is duplicated, drawn per seed.
    pub duplicate_per_mille: PerMilleRange,
    /// Shortest delay.
    pub delay_us_min: TimeUs,
    /// Longest delay.
    pub delay_us_max: TimeUs,
    /// The delay's standard deviation: 0 draws it uniformly from
    /// `delay_us_min..=delay_us_max`; above 0 draws it from a normal
    /// distribution around the middle of that range with this deviation,
    /// clamped to the range (`|N(10 ms, 2 ms)|` is 0 to 20 ms with 2 ms).
    pub delay_sd_us: TimeUs,
}

impl LinkConfig {
    /// A link that loses and duplicates nothing, each message delayed
    /// uniformly between `delay_us_min` and `delay_us_max`: the start of
    /// every link built outside `sim` (the setters below add the rest).
    pub const fn uniform(delay_us_min: TimeUs, delay_us_max: TimeUs) -> Self {
        assert!(delay_us_min <= delay_us_max, "delay bounds in order");
        LinkConfig {
            loss_per_mille: PerMilleRange::ZERO,
            duplicate_per_mille: PerMilleRange::ZERO,
            delay_us_min,
            delay_us_max,
            delay_sd_us: 0,
        }
    }

    /// The chance a message is lost, drawn per seed from `per_mille`.
    #[must_use]
    pub const fn loss(mut self, per_mille: PerMilleRange) -> Self {
        self.loss_per_mille = per_mille;
        self
    }

    /// The chance a message is duplicated, drawn per seed from `per_mille`.
    #[must_use]
    pub const fn duplicate(mut self, per_mille: PerMilleRange) -> Self {
        self.duplicate_per_mille = per_mille;
        self
    }

    /// Delays drawn from a normal distribution around the middle of the
    /// range with standard deviation `sd_us`, clamped to it (0: uniform).
    #[must_use]
    pub const fn delay_sd_us(mut self, sd_us: TimeUs) -> Self {
        self.delay_sd_us = sd_us;
        self
    }

    /// A lossy link: loss and duplication rates drawn per seed from their
    /// ranges, each message delayed between `delay_us.0` and `delay_us.1`.
    pub fn lossy(
        loss: PerMilleRange,
        duplicate: PerMilleRange,
        delay_us: (TimeUs, TimeUs),
    ) -> Self {
        assert!(
            delay_us.0 <= delay_us.1,
            "delay bounds in order: {delay_us:?}"
        );
        LinkConfig::uniform(delay_us.0, delay_us.1)
            .loss(loss)
            .duplicate(duplicate)
    }
}

/// Loss, duplication and delays for one kind of message on one directed
/// link, in place of the link's own: "duplicate only the status query, never
/// the transfer", "status queries take longer than transfers". What an
/// entry leaves as `None` stays the link's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindFault {
    /// The sender.
    pub from: ActorId,
    /// The receiver.
    pub to: ActorId,
    /// The message kind, as [`Message::kind`](crate::Message::kind) numbers it.
    pub kind: u16,
    /// Chance such a message is lost, instead of the link's; `None`: the
    /// link's, as this seed drew it for every other message on the link.
    pub loss_per_mille: Option<PerMilleRange>,
    /// Chance such a message is duplicated, instead of the link's; `None`:
    /// the link's, as this seed drew it.
    pub duplicate_per_mille: Option<PerMilleRange>,
    /// Shortest delay of such a message, instead of the link's; `None`: the link's.
    pub delay_us_min: Option<TimeUs>,
    /// Longest delay of such a message, instead of the link's; `None`: the link's.
    pub delay_us_max: Option<TimeUs>,
}

impl KindFault {
    /// The delays of this kind on `link`, its own bounds in place of the link's.
    pub fn delays_us(&self, link: &LinkConfig) -> (TimeUs, TimeUs) {
        (
            self.delay_us_min.unwrap_or(link.delay_us_min),
            self.delay_us_max.unwrap_or(link.delay_us_max),
        )
    }
}

/// A time window during which messages between two actors are dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    /// One side.
    pub a: ActorId,
    /// The other side.
    pub b: ActorId,
    /// Both directions, or only from `a` to `b`.
    pub both_ways: bool,
    /// When the cut starts.
    pub start_us: TimeUs,
    /// When it ends (exclusive).
    pub end_us: TimeUs,
}

impl Partition {
    /// Whether a message `from → to` sent at `now_us` is dropped.
    pub fn cuts(&self, from: ActorId, to: ActorId, now_us: TimeUs) -> bool {
        let dir =
            (from == self.a && to == self.b) || (self.both_ways && from == self.b && to == self.a);
        dir && now_us >= self.start_us && now_us < self.end_us
    }
}

/// A partition a seed may draw (swarm testing): with a probability drawn
/// from `per_mille`, two random actors are cut off from each other, both
/// ways, from a random time in the fault phase for a random duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RandomPartition {
    /// Chance the seed draws a partition at all.
    pub per_mille: PerMilleRange,
    /// Shortest cut.
    pub duration_us_min: TimeUs,
    /// Longest cut.
    pub duration_us_max: TimeUs,
}

impl RandomPartition {
    /// Whether a seed may draw a partition.
    pub fn enabled(&self) -> bool {
        self.per_mille.hi > 0
    }
}

/// Crash behaviour of one actor during the fault phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CrashConfig {
    /// Chance of a crash before each of the actor's steps.
    pub crash_per_mille: PerMilleRange,
    /// Shortest time until the restart.
    pub restart_us_min: TimeUs,
    /// Longest time until the restart.
    pub restart_us_max: TimeUs,
}

/// Bounds on a run. Hitting one is the outcome "inconclusive", never a hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Engine events (steps) per run.
    pub max_steps: u64,
    /// Virtual time per run.
    pub max_time_us: TimeUs,
    /// Events still to happen at once; timers cancelled or replaced before
    /// they fire, and restarts that find their actor up, do not count.
    pub max_queue: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 100_000,
            max_time_us: 365 * 24 * 3600 * 1_000_000,
            max_queue: 10_000,
        }
    }
}

/// Most actors in one world: links are a dense `n × n` table.
pub const MAX_ACTORS: usize = 256;

#[derive(Clone, Debug, PartialEq, Eq)]
/// The engine's configuration of a world: validated values only.
pub struct World {
    /// One name per actor; an actor's id is its index here.
    pub actor_names: Vec<String>,
    /// Row-major `from * n + to`.
    pub links: Vec<LinkConfig>,
    /// Fixed partitions (time windows).
    pub partitions: Vec<Partition>,
    /// Per-kind loss, duplication and delays on some links (usually none).
    pub kind_faults: Vec<KindFault>,
    /// Off unless the scenario asks for it; then drawn per seed.
    pub random_partition: RandomPartition,
    /// Crash behaviour per actor, in actor order.
    pub crashes: Vec<CrashConfig>,
    /// Faults stop at this time; then crashed actors restart (none sooner
    /// than its `restart_us_min` after its crash) and the system
    /// runs until it is quiet, so "eventually exactly once" can be judged.
    pub fault_phase_us: TimeUs,
    /// Bounds on a run.
    pub limits: Limits,
}

impl World {
    /// A world of these actors: reliable links with no delay, no crashes, a 60 s fault phase, default limits.
    pub fn new(actor_names: Vec<String>) -> World {
        let n = actor_names.len();
        World {
            links: vec![LinkConfig::default(); n * n],
            crashes: vec![CrashConfig::default(); n],
            actor_names,
            partitions: Vec::new(),
            kind_faults: Vec::new(),
            random_partition: RandomPartition::default(),
            fault_phase_us: 60 * 1_000_000,
            limits: Limits::default(),
        }
    }

    /// How many actors.
    pub fn actor_count(&self) -> u32 {
        self.actor_names.len() as u32
    }

    /// The link `from → to`.
    pub fn link(&self, from: ActorId, to: ActorId) -> &LinkConfig {
        &self.links[(from * self.actor_count() + to) as usize]
    }

    /// The link `from → to`, to change.
    pub fn link_mut(&mut self, from: ActorId, to: ActorId) -> &mut LinkConfig {
        let n = self.actor_count();
        &mut self.links[(from * n + to) as usize]
    }

    /// The id of the actor named `name`.
    pub fn actor_id(&self, name: &str) -> Option<ActorId> {
        self.actor_names
            .iter()
            .position(|n| n == name)
            .map(|i| i as ActorId)
    }

    /// Panics on a configuration that validation should have refused.
    pub fn check(&self) {
        let n = self.actor_names.len();
        assert!(n > 0 && n <= MAX_ACTORS, "1..={MAX_ACTORS} actors");
        assert_eq!(self.links.len(), n * n);
        assert_eq!(self.crashes.len(), n);
        for l in &self.links {
            l.loss_per_mille.check();
            l.duplicate_per_mille.check();
            assert!(l.delay_us_min <= l.delay_us_max, "delay range");
        }
        for c in &self.crashes {
            c.crash_per_mille.check();
            assert!(c.restart_us_min <= c.restart_us_max, "restart range");
        }
        for k in &self.kind_faults {
            assert!(
                (k.from as usize) < n && (k.to as usize) < n,
                "kind fault actor"
            );
            k.loss_per_mille.iter().for_each(PerMilleRange::check);
            k.duplicate_per_mille.iter().for_each(PerMilleRange::check);
            let (lo, hi) = k.delays_us(self.link(k.from, k.to));
            assert!(lo <= hi, "kind fault delay range");
        }
        // One entry per link and kind: with two, a send would read only one.
        let mut keys: Vec<_> = self
            .kind_faults
            .iter()
            .map(|k| (k.from, k.to, k.kind))
            .collect();
        keys.sort_unstable();
        assert!(
            keys.windows(2).all(|w| w[0] != w[1]),
            "two kind faults for one link and kind"
        );
        for p in &self.partitions {
            assert!((p.a as usize) < n && (p.b as usize) < n, "partition actor");
            assert!(p.start_us <= p.end_us, "partition window");
        }
        let rp = &self.random_partition;
        rp.per_mille.check();
        assert!(
            rp.duration_us_min <= rp.duration_us_max,
            "partition duration range"
        );
        assert!(!rp.enabled() || n >= 2, "a partition needs two actors");
        assert!(self.limits.max_steps > 0 && self.limits.max_queue > 0);
    }
}
