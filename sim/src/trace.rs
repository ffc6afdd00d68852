//! Traces, kept only where they are needed (replay, failures, tests).
//!
//! The engine is generic over a [`Tracer`]; a sweep uses [`NoTrace`], whose
//! `ENABLED` is false, so every trace call compiles away on the hot path.

use crate::actor::{ActorId, TimeUs};
use crate::situation::SituationId;

/// Why a message did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Lost by the network.
    Lost,
    /// Dropped by a partition.
    Partitioned,
    /// Its receiver was down, or crashed before it could take the step.
    ReceiverDown,
}

impl DropReason {
    /// `lost`, `partitioned` or `receiver down`: the words JSON traces use.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Lost => "lost",
            DropReason::Partitioned => "partitioned",
            DropReason::ReceiverDown => "receiver down",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// What one trace entry records; `M`, `O` and `T` are the world's message, observation and timer types.
pub enum TraceKind<M, O, T> {
    /// The fault mix this seed drew (swarm testing): per link and actor.
    LinkMix {
        /// The sender.
        from: ActorId,
        /// The receiver.
        to: ActorId,
        /// Chance of loss this seed drew, in per mille.
        loss_per_mille: u32,
        /// Chance of duplication this seed drew, in per mille.
        duplicate_per_mille: u32,
    },
    /// The crash rate this seed drew for one actor.
    CrashMix {
        /// The actor.
        actor: ActorId,
        /// Chance of a crash before each step, in per mille.
        crash_per_mille: u32,
    },
    /// The random partition this seed drew: `a` and `b` are cut off from each
    /// other from `start_us` until `end_us`.
    PartitionMix {
        /// One side of the cut.
        a: ActorId,
        /// The other side.
        b: ActorId,
        /// When the cut starts.
        start_us: TimeUs,
        /// When it ends.
        end_us: TimeUs,
    },
    /// An actor starts (at time zero).
    Start {
        /// The actor.
        actor: ActorId,
    },
    /// `msg_id` identifies one send; a network duplicate shares it.
    Send {
        /// The sender.
        from: ActorId,
        /// The receiver.
        to: ActorId,
        /// The message.
        msg: M,
        /// The send's id.
        msg_id: u32,
        /// 2 when the network duplicated it.
        copies: u8,
        /// When the first copy arrives.
        deliver_at_us: TimeUs,
    },
    /// A message the network, a partition or a down receiver dropped.
    Drop {
        /// The sender.
        from: ActorId,
        /// The receiver.
        to: ActorId,
        /// The message.
        msg: M,
        /// The send's id.
        msg_id: u32,
        /// Why it did not arrive.
        reason: DropReason,
    },
    /// A message arrives and its receiver handles it.
    Deliver {
        /// The sender.
        from: ActorId,
        /// The receiver.
        to: ActorId,
        /// The message.
        msg: M,
        /// The send's id.
        msg_id: u32,
        /// This copy is the network's duplicate.
        duplicate: bool,
    },
    /// An actor sets a timer.
    TimerSet {
        /// The actor.
        actor: ActorId,
        /// The timer.
        timer: T,
        /// When it fires.
        at_us: TimeUs,
    },
    /// A timer fires and its actor handles it.
    TimerFired {
        /// The actor.
        actor: ActorId,
        /// The timer.
        timer: T,
    },
    /// An actor crashes: its volatile state and timers are gone.
    Crash {
        /// The actor.
        actor: ActorId,
    },
    /// A crashed actor restarts and rebuilds its state from storage.
    Restart {
        /// The actor.
        actor: ActorId,
    },
    /// An actor reports an observation to the oracle.
    Observe {
        /// The actor.
        actor: ActorId,
        /// The observation.
        obs: O,
    },
    /// An actor reaches a named situation for the first time in the run.
    Reached {
        /// The actor.
        actor: ActorId,
        /// The situation.
        situation: SituationId,
    },
    /// The fault phase ends: faults stop and crashed actors restart.
    HealingStarts,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// One entry of a trace.
pub struct TraceEntry<M, O, T> {
    /// Virtual time of the entry.
    pub time_us: TimeUs,
    /// The engine step (popped event) this entry belongs to.
    pub step: u64,
    /// What happened.
    pub kind: TraceKind<M, O, T>,
}

/// Where a run's trace entries go: a sweep's [`NoTrace`] keeps none, a [`Recorder`] every one.
pub trait Tracer<M, O, T> {
    /// False for a tracer that keeps nothing: the engine then skips building entries.
    const ENABLED: bool;
    /// Whether [`snapshot`](Tracer::snapshot) wants the actors' state; off
    /// unless a tracer asks, so ordinary traces pay nothing for it.
    const SNAPSHOTS: bool = false;
    /// Takes one entry.
    fn record(&mut self, entry: TraceEntry<M, O, T>);

    /// After each step of `actor` (at engine step `step`): its volatile
    /// state (`None` while it is down) and its durable storage, as the
    /// step left them. Reports use it to show what each actor holds: a
    /// tracer that knows the model's types reads them as those types
    /// ([`Held::as_any`]), any other prints them.
    fn snapshot(
        &mut self,
        step: u64,
        actor: ActorId,
        state: Option<&dyn Held>,
        storage: &dyn Held,
    ) {
        let _ = (step, actor, state, storage);
    }
}

/// What an actor holds (its state or its storage) as a tracer's
/// [`snapshot`](Tracer::snapshot) gets it: printable, and readable as the
/// model's own type, so a report can show it from its fields rather than
/// from its `Debug` text.
pub trait Held: std::fmt::Debug + std::any::Any {
    /// The value, to downcast to the type the model declared.
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<T: std::fmt::Debug + std::any::Any> Held for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
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
    /// Every entry, in order.
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
