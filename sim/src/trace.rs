//! Traces, kept only where they are needed (replay, failures, tests).
//!
//! The engine is generic over a [`Tracer`]; a sweep uses [`NoTrace`], whose
//! `ENABLED` is false, so every trace call compiles away on the hot path.

use crate::actor::{ActorId, TimeUs};
use crate::situation::SituationId;

/// Why a message did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    Lost,
    Partitioned,
    ReceiverDown,
}

impl DropReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Lost => "lost",
            DropReason::Partitioned => "partitioned",
            DropReason::ReceiverDown => "receiver down",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceKind<M, O, T> {
    /// The fault mix this seed drew (swarm testing): per link and actor.
    LinkMix {
        from: ActorId,
        to: ActorId,
        loss_per_mille: u32,
        duplicate_per_mille: u32,
    },
    CrashMix {
        actor: ActorId,
        crash_per_mille: u32,
    },
    /// The random partition this seed drew: `a` and `b` are cut off from each
    /// other from `start_us` until `end_us`.
    PartitionMix {
        a: ActorId,
        b: ActorId,
        start_us: TimeUs,
        end_us: TimeUs,
    },
    Start {
        actor: ActorId,
    },
    /// `msg_id` identifies one send; a network duplicate shares it.
    Send {
        from: ActorId,
        to: ActorId,
        msg: M,
        msg_id: u32,
        copies: u8,
        deliver_at_us: TimeUs,
    },
    Drop {
        from: ActorId,
        to: ActorId,
        msg: M,
        msg_id: u32,
        reason: DropReason,
    },
    Deliver {
        from: ActorId,
        to: ActorId,
        msg: M,
        msg_id: u32,
        duplicate: bool,
    },
    TimerSet {
        actor: ActorId,
        timer: T,
        at_us: TimeUs,
    },
    TimerFired {
        actor: ActorId,
        timer: T,
    },
    Crash {
        actor: ActorId,
    },
    Restart {
        actor: ActorId,
    },
    Observe {
        actor: ActorId,
        obs: O,
    },
    Reached {
        actor: ActorId,
        situation: SituationId,
    },
    HealingStarts,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEntry<M, O, T> {
    pub time_us: TimeUs,
    /// The engine step (popped event) this entry belongs to.
    pub step: u64,
    pub kind: TraceKind<M, O, T>,
}

pub trait Tracer<M, O, T> {
    const ENABLED: bool;
    /// Whether [`snapshot`](Tracer::snapshot) wants the actors' state; off
    /// unless a tracer asks, so ordinary traces pay nothing for it.
    const SNAPSHOTS: bool = false;
    fn record(&mut self, entry: TraceEntry<M, O, T>);

    /// After each step of `actor` (at engine step `step`): its volatile
    /// state (`None` while it is down) and its durable storage, as the
    /// step left them. Reports use it to show what each actor holds.
    fn snapshot(
        &mut self,
        step: u64,
        actor: ActorId,
        state: Option<&dyn std::fmt::Debug>,
        storage: &dyn std::fmt::Debug,
    ) {
        let _ = (step, actor, state, storage);
    }
}

/// The sweep's tracer: records nothing, costs nothing.
pub struct NoTrace;

impl<M, O, T> Tracer<M, O, T> for NoTrace {
    const ENABLED: bool = false;
    #[inline(always)]
    fn record(&mut self, _entry: TraceEntry<M, O, T>) {}
}

/// Keeps every entry, for replays and failing seeds.
pub struct Recorder<M, O, T> {
    pub entries: Vec<TraceEntry<M, O, T>>,
}

impl<M, O, T> Default for Recorder<M, O, T> {
    fn default() -> Self {
        Recorder {
            entries: Vec::new(),
        }
    }
}

impl<M, O, T> Tracer<M, O, T> for Recorder<M, O, T> {
    const ENABLED: bool = true;
    fn record(&mut self, entry: TraceEntry<M, O, T>) {
        self.entries.push(entry);
    }
}
