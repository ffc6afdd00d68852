//! Observations: what actors tell the effect ledger. They are the ledger's
//! whole vocabulary, shared by every model: where an operation starts, what
//! landed in the outside world, and what each client was finally told.

mod display;
mod outcome;
#[cfg(test)]
pub(crate) mod tests;

pub use outcome::{AttemptOutcome, Change, Ending};

use super::op::{Key, Op};

/// Where an effect lands in the outside world.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site {
    /// "transfer", "booking in accounting".
    pub name: &'static str,
}

/// A layer of the system that receives requests: the per-layer counts show
/// how retries at several layers multiply (client 3 × service 3 = 9 at the bank).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Layer {
    /// Index into the ledger's per-layer counters (below the ledger's `MAX_LAYERS`);
    /// unique per layer. A built-in model writes `registry::layer_index`'s,
    /// so the registry numbers its layers after the previous model's.
    pub index: u8,
    /// "service", "bank".
    pub name: &'static str,
    /// What its counts are per. In the chain, where claims and events both
    /// run, a count per "operation or event" would halve the bank's and the
    /// consumer's alike.
    pub per: Per,
}

/// What a load figure is per: the sweep's LAYER/op columns, check's `load:`
/// line and `[expect] max_load` all divide by it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// A client's business operation (a request of a service, a bank, a server).
    Operation,
    /// An event a consumer receives deliveries of.
    Event,
}

impl Per {
    /// `operation` or `event`, as the figures say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Per::Operation => "operation",
            Per::Event => "event",
        }
    }
}

/// Most layers a world counts requests at.
pub(crate) const MAX_LAYERS: usize = 8;

/// The one list of observation kinds: each is declared here once, with its
/// fields and their docs, and everything that goes by kind is derived from
/// it: [`Obs`], [`ObsKind`], [`Obs::is_bookkeeping`] (the
/// kinds marked `[bookkeeping]`), and the invariants' dispatch by kind. It
/// hands the list to `$callback!`, after `($args)`, so a module that needs
/// one more thing per kind derives it where it is used.
macro_rules! observations {
    ($callback:ident!($($args:tt)*)) => {
        $callback! { ($($args)*)
            /// A client starts a business operation: `payload` once, ending within
            /// `window_ms` (0: no window).
            Intent {
                /// The operation.
                op: Op,
                /// What it asks for (an amount), once.
                payload: u32,
                /// It must end within this (0: no window).
                window_ms: u64,
            },
            /// A client sends attempt `attempt` of `op`.
            [bookkeeping]
            AttemptSent {
                /// The operation.
                op: Op,
                /// The attempt's number, from 1.
                attempt: u32,
            },
            /// A layer received a request for `op`, carrying `key`.
            [bookkeeping]
            Received {
                /// The layer that received it.
                layer: &'static Layer,
                /// The operation.
                op: Op,
                /// The idempotency key it carries.
                key: Key,
            },
            /// An effect in the outside world, with its payload.
            Effect {
                /// Where it landed.
                site: &'static Site,
                /// The operation it is for.
                op: Op,
                /// What it did (an amount).
                payload: u32,
            },
            /// The outside world was observed already holding the state `op` asks
            /// for, by the actor producing the answer to attempt `attempt` (a DELETE
            /// that found its resource absent and answers 404, a replacing PUT that
            /// found its body already the representation). Not an effect: it counts
            /// toward no effect and no duplicate. It is what makes a "done" that
            /// answers this attempt true for an operation judged by the state it
            /// asks for, and a "failed" false. The state held at `version` of
            /// `entity`: a write computed from an older read replaces it as it
            /// replaces that version (`no-lost-update`).
            StateHeld {
                /// The operation whose target state holds.
                op: Op,
                /// The attempt whose answer was produced while it held.
                attempt: u32,
                /// The resource whose state it is.
                entity: Op,
                /// The version of `entity` that held it (0: none, as for a
                /// resource that never existed).
                version: u32,
            },
            /// A client finished one attempt and concluded this.
            Attempt {
                /// The operation.
                op: Op,
                /// The attempt's number.
                attempt: u32,
                /// What the client concluded.
                outcome: AttemptOutcome,
            },
            /// A client was told `op` is done, in answer to an attempt that asked for
            /// `payload`. The service's echo of what it did is not part of this: the
            /// ledger compares the asked payload with the effect that landed.
            ToldDone {
                /// The operation.
                op: Op,
                /// The payload the answered attempt asked for.
                payload: u32,
            },
            /// The operation ended at its client.
            Ended {
                /// The operation.
                op: Op,
                /// How it ended.
                ending: Ending,
            },
            /// A producer committed a state change of `entity`, so the event `op`
            /// is owed: it must take effect once, or reach a dead-letter queue.
            Committed {
                /// The event owed.
                op: Op,
                /// The entity the change is about.
                entity: Op,
                /// The entity's new value.
                value: u32,
                /// The entity's version after the change.
                version: u32,
            },
            /// A broker stored the event `op` in its queue.
            Accepted {
                /// The event.
                op: Op,
            },
            /// A broker moved the event `op` to its dead-letter queue: visible, not lost.
            DeadLettered {
                /// The event.
                op: Op,
            },
            /// A set-value write of the event `op` landed: `entity` holds `value`.
            ValueWritten {
                /// The event whose write landed.
                op: Op,
                /// The entity written.
                entity: Op,
                /// The value it holds now.
                value: u32,
                /// Its version.
                version: u32,
            },
            /// A versioned write of the event `op` was refused: `entity` already holds
            /// a newer version, which supersedes it.
            Superseded {
                /// The event refused.
                op: Op,
            },
            /// A write of `op` made `entity` version `version` (its ETag), holding
            /// `value`; `change` says how the write arrived at it. Whether a write
            /// computed from an older read lost another's update depends on the
            /// values as well as the versions (`no-lost-update`).
            NewVersion {
                /// The request whose write it is.
                op: Op,
                /// The resource written.
                entity: Op,
                /// The version the write made.
                version: u32,
                /// The value the resource holds at that version (none after a
                /// deletion: see `change`).
                value: u32,
                /// How the write arrived at `value`.
                change: Change,
            },
            /// A service instance starts executing the request bound to `key` (it
            /// passed the dedup check, claimed the key or took it over).
            [bookkeeping]
            ExecStart {
                /// The key the request is bound to.
                key: Key,
            },
            /// That execution finished or gave up.
            [bookkeeping]
            ExecEnd {
                /// The key the request is bound to.
                key: Key,
            },
            /// The reporting actor restarted: every execution it ran died with it.
            [bookkeeping]
            ExecutorsLost,
            /// The dedup store holds `keys` live records; `bound` is its capacity (0: none).
            [bookkeeping]
            DedupStore {
                /// Live records now.
                keys: u32,
                /// Its capacity (0: none).
                bound: u32,
            },
            /// A worker of `layer` (a service with a capacity) takes attempt
            /// `attempt` of `op`. `recover_ms` is how long after the faults stop the
            /// layer promises to be back to normal (0: no promise).
            [bookkeeping]
            Work {
                /// The layer.
                layer: &'static Layer,
                /// The operation.
                op: Op,
                /// The attempt taken.
                attempt: u32,
                /// The layer's promise to recover, in ms after the faults stop.
                recover_ms: u32,
            },
            /// `layer` refused a request for `op` because it was full (a 503 before
            /// any work); `recover_ms` as for [`Obs::Work`].
            [bookkeeping]
            Shed {
                /// The layer.
                layer: &'static Layer,
                /// The operation.
                op: Op,
                /// The layer's promise to recover, in ms after the faults stop.
                recover_ms: u32,
            },
            /// A client's retry budget held too few tokens: no retry of `op`, which
            /// the client gives up.
            RetryDenied {
                /// The operation given up.
                op: Op,
            },
            /// A client's open circuit breaker refused an attempt of `op`: not sent,
            /// and the client gives the operation up.
            FastFailed {
                /// The operation given up.
                op: Op,
            },
            // Last, so the older kinds keep their numbers.
            /// A rollout's version of the reporting actor takes over: it
            /// handles what arrives from now on (`version`: 1 is the first,
            /// 2 the first rollout's, and so on).
            [bookkeeping]
            Deployed {
                /// The version now running, counted from 1.
                version: u8,
            },
            /// An effect of `op` taken back where it landed (a refund of a
            /// transfer): a compensation, counted against the effects, so
            /// the ledger judges what is left, the net effect, against what
            /// the client was told.
            Reversal {
                /// Where it landed: the site of the effect it takes back.
                site: &'static Site,
                /// The operation whose effect it takes back.
                op: Op,
                /// How much of it (an amount).
                payload: u32,
            },
            /// Version `version` (counted from 1) of a rolled-out actor takes
            /// attempt `attempt` of `op` (for a consumer, its delivery). Only an
            /// actor with rollouts reports it, so a run without one has none.
            [bookkeeping]
            Handled {
                /// The operation.
                op: Op,
                /// The client's attempt; 0 for a consumer's delivery.
                attempt: u32,
                /// The version that handles it, counted from 1.
                version: u8,
            },
            /// The effect about to be observed for `op` comes from version `version`
            /// of a rolled-out actor: the one that sent the transfer or the write.
            /// Its site reports it right before the effect (a duplicate effect ends
            /// the run), only when the request named a version.
            [bookkeeping]
            EffectBy {
                /// The operation.
                op: Op,
                /// The version whose request made the effect, counted from 1.
                version: u8,
            },
        }
    };
}
pub(crate) use observations;

/// Declares [`Obs`] and what comes with it from the list of
/// [`observations!`].
macro_rules! declare {
    (() $(
        $(#[$doc:meta])*
        $([$flag:ident])?
        $kind:ident $({ $($(#[$field_doc:meta])* $field:ident: $ty:ty),+ $(,)? })?
    ),+ $(,)?) => {
        /// Observations actors push; the ledger judges them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Obs {
            $($(#[$doc])* $kind $({ $($(#[$field_doc])* $field: $ty),+ })?),+
        }

        /// Which variant of [`Obs`] an observation is, without its fields:
        /// the invariants say by it which observations they judge, so the
        /// ledger calls only those.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub(crate) enum ObsKind {
            $(#[doc = concat!("[`Obs::", stringify!($kind), "`].")] $kind),+
        }

        /// How many kinds of observation there are.
        pub(crate) const KINDS: usize = [$(ObsKind::$kind),+].len();

        /// Every kind, in the order of the list.
        #[cfg(test)]
        pub(crate) const ALL_KINDS: &[ObsKind] = &[$(ObsKind::$kind),+];

        impl Obs {
            /// Which kind of observation this is.
            #[inline(always)]
            pub(crate) const fn kind(&self) -> ObsKind {
                match self {
                    $(Obs::$kind { .. } => ObsKind::$kind),+
                }
            }

            /// Bookkeeping that one design reports and another does not (an
            /// execution's start, the dedup store's size): `diff` hides it, so
            /// two runs do not look parted before their behaviour differs.
            pub const fn is_bookkeeping(&self) -> bool {
                match self {
                    $(Obs::$kind { .. } => declare!(@bookkeeping $($flag)?)),+
                }
            }
        }
    };
    (@bookkeeping bookkeeping) => { true };
    (@bookkeeping) => { false };
}

observations!(declare!());

impl Obs {
    /// The operation this observation is about, if it names one.
    pub fn op(&self) -> Option<Op> {
        match *self {
            Obs::Intent { op, .. }
            | Obs::AttemptSent { op, .. }
            | Obs::Received { op, .. }
            | Obs::Effect { op, .. }
            | Obs::StateHeld { op, .. }
            | Obs::Attempt { op, .. }
            | Obs::ToldDone { op, .. }
            | Obs::Ended { op, .. }
            | Obs::Committed { op, .. }
            | Obs::Accepted { op }
            | Obs::DeadLettered { op }
            | Obs::ValueWritten { op, .. }
            | Obs::Superseded { op }
            | Obs::NewVersion { op, .. }
            | Obs::Work { op, .. }
            | Obs::Shed { op, .. }
            | Obs::RetryDenied { op }
            | Obs::FastFailed { op }
            | Obs::Reversal { op, .. }
            | Obs::Handled { op, .. }
            | Obs::EffectBy { op, .. } => Some(op),
            Obs::ExecStart { key } | Obs::ExecEnd { key } => match key {
                Key::Op { op, .. } => Some(op),
                Key::Time { .. } | Key::None => None,
            },
            Obs::ExecutorsLost | Obs::Deployed { .. } | Obs::DedupStore { .. } => None,
        }
    }
}
