//! The engine's configuration of a world: actors' names, links, crashes,
//! phases and limits. Validated values only: integer microseconds and per-mille.

use crate::actor::{ActorId, TimeUs};

/// A closed range of per-mille probabilities that a seed draws from (swarm
/// testing). `lo == hi` is a fixed probability.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PerMilleRange {
    pub lo: u32,
    pub hi: u32,
}

impl PerMilleRange {
    pub const ZERO: PerMilleRange = PerMilleRange { lo: 0, hi: 0 };

    pub fn fixed(p: u32) -> Self {
        PerMilleRange { lo: p, hi: p }
    }

    pub fn check(&self) {
        assert!(
            self.lo <= self.hi && self.hi <= 1000,
            "bad per-mille range {self:?}"
        );
    }
}

/// Faults and delays of one directed link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LinkConfig {
    pub loss_per_mille: PerMilleRange,
    pub duplicate_per_mille: PerMilleRange,
    pub delay_us_min: TimeUs,
    pub delay_us_max: TimeUs,
}

/// Loss and duplication for one kind of message on one directed link, in
/// place of the link's own: "duplicate only the status query, never the
/// transfer". Delays stay the link's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindFault {
    pub from: ActorId,
    pub to: ActorId,
    /// The message kind, as [`Message::kind`](crate::Message::kind) numbers it.
    pub kind: u16,
    pub loss_per_mille: PerMilleRange,
    pub duplicate_per_mille: PerMilleRange,
}

/// A time window during which messages between two actors are dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    pub a: ActorId,
    pub b: ActorId,
    /// Both directions, or only from `a` to `b`.
    pub both_ways: bool,
    pub start_us: TimeUs,
    pub end_us: TimeUs,
}

impl Partition {
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
    pub per_mille: PerMilleRange,
    pub duration_us_min: TimeUs,
    pub duration_us_max: TimeUs,
}

impl RandomPartition {
    pub fn enabled(&self) -> bool {
        self.per_mille.hi > 0
    }
}

/// Crash behaviour of one actor during the fault phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CrashConfig {
    /// Chance of a crash before each of the actor's steps.
    pub crash_per_mille: PerMilleRange,
    pub restart_us_min: TimeUs,
    pub restart_us_max: TimeUs,
}

/// Bounds on a run. Hitting one is the outcome "inconclusive", never a hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_steps: u64,
    pub max_time_us: TimeUs,
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
pub struct World {
    pub actor_names: Vec<String>,
    /// Row-major `from * n + to`.
    pub links: Vec<LinkConfig>,
    pub partitions: Vec<Partition>,
    /// Per-kind loss and duplication on some links (usually none).
    pub kind_faults: Vec<KindFault>,
    /// Off unless the scenario asks for it; then drawn per seed.
    pub random_partition: RandomPartition,
    pub crashes: Vec<CrashConfig>,
    /// Faults stop at this time; then crashed actors restart and the system
    /// runs until it is quiet, so "eventually exactly once" can be judged.
    pub fault_phase_us: TimeUs,
    pub limits: Limits,
}

impl World {
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

    pub fn actor_count(&self) -> u32 {
        self.actor_names.len() as u32
    }

    pub fn link(&self, from: ActorId, to: ActorId) -> &LinkConfig {
        &self.links[(from * self.actor_count() + to) as usize]
    }

    pub fn link_mut(&mut self, from: ActorId, to: ActorId) -> &mut LinkConfig {
        let n = self.actor_count();
        &mut self.links[(from * n + to) as usize]
    }

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
            k.loss_per_mille.check();
            k.duplicate_per_mille.check();
        }
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
