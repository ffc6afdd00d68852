//! The items and the trace they make up: what every format reads.

use models::{Msg, NodeTimer};
use serde::{Serialize, Serializer};
use std::fmt::Display;
use std::sync::Arc;

/// An actor's name, shared by every item that names it (a long trace holds
/// hundreds of thousands of items, so one string each would add up).
pub type Name = Arc<str>;

/// A message or timer is kept as it is and written out as its sentence.
fn as_text<S: Serializer, D: Display>(value: &D, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// What a trace is of, for headers.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    /// The scenario's (or model's) name.
    pub scenario: String,
    /// "seed 2", "shrunk from seed 2", "repro file repro.json".
    pub source: String,
    /// Engine events (handled deliveries, timers, restarts; see docs/shrinking.md).
    pub events: u64,
    /// The actors' names, in world order.
    pub actors: Vec<String>,
    /// The `--set` overrides the run was made under, as `key=value`: a
    /// variant's trace must say it is not the file's design.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The shrink's figures, for a shrunk run.
    pub shrink: Option<ShrinkInfo>,
}

#[derive(Clone, Copy, Debug, Serialize)]
/// What shrinking did, for a trace's header.
pub struct ShrinkInfo {
    /// Events of the run shrinking started from.
    pub original_events: u64,
    /// Events of the shrunk run.
    pub shrunk_events: u64,
    /// Nonzero decisions before.
    pub original_decisions: usize,
    /// Nonzero decisions after.
    pub shrunk_decisions: usize,
    /// Candidate reruns spent.
    pub runs: u32,
    /// Locally minimal (the passes reached a fixpoint within the budget).
    pub complete: bool,
    /// What stopped shrinking early, when something did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<&'static str>,
}

/// One trace entry, resolved. `M` and `T` are the world's message and timer
/// types: the built-in models' by default, a user's own otherwise.
#[derive(Clone, Debug, Serialize)]
#[serde(bound(serialize = "M: Display, T: Display"))]
pub struct Item<M = Msg, T = NodeTimer> {
    /// The engine step it belongs to.
    pub step: u64,
    /// Virtual time.
    pub time_us: u64,
    /// The actor it is about (the sender of a send, the receiver of a delivery).
    pub actor: Name,
    #[serde(skip)]
    /// That actor's id.
    pub actor_id: u32,
    #[serde(flatten)]
    /// What happened.
    pub what: What<M, T>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(untagged, bound(serialize = "M: Display, T: Display"))]
/// What a trace item says happened.
pub enum What<M = Msg, T = NodeTimer> {
    /// The fault mix a seed drew (swarm testing).
    Mix {
        /// It, in words.
        text: String,
        /// Drew no fault at all: left out of the text trace.
        #[serde(skip)]
        quiet: bool,
    },
    /// An actor starts.
    Start {},
    /// A crashed actor restarts, rebuilding its state from storage.
    Restart {},
    /// An actor crashes.
    Crash {},
    /// A message is sent.
    Send {
        /// The receiver's name.
        to: Name,
        #[serde(skip)]
        /// The receiver's id.
        to_id: u32,
        #[serde(serialize_with = "as_text")]
        /// The message.
        msg: M,
        /// The send's id (a network duplicate shares it).
        msg_id: u32,
        /// 2 when the network duplicates it.
        copies: u8,
        /// When the first copy arrives.
        deliver_at_us: u64,
    },
    /// A message is dropped.
    Drop {
        /// The receiver's name.
        to: Name,
        #[serde(skip)]
        /// The receiver's id.
        to_id: u32,
        #[serde(serialize_with = "as_text")]
        /// The message.
        msg: M,
        /// The send's id.
        msg_id: u32,
        /// `lost`, `partitioned` or `receiver down`.
        reason: &'static str,
        /// "reply lost", "message lost", "cut off by a partition", "receiver is down".
        note: &'static str,
    },
    /// A message is delivered and handled.
    Deliver {
        /// The sender's name.
        from: Name,
        #[serde(skip)]
        /// The sender's id.
        from_id: u32,
        #[serde(serialize_with = "as_text")]
        /// The message.
        msg: M,
        /// The send's id.
        msg_id: u32,
        /// This copy is the network's duplicate.
        duplicate: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        /// What the step did with it, when the model says ("dedup hit: no second transfer").
        note: Option<&'static str>,
    },
    /// A timer is set.
    TimerSet {
        #[serde(serialize_with = "as_text")]
        /// The timer.
        timer: T,
        /// When it fires.
        at_us: u64,
    },
    /// A timer fires.
    TimerFired {
        #[serde(serialize_with = "as_text")]
        /// The timer.
        timer: T,
    },
    /// An effect in the outside world; `n` counts effects of this operation.
    Effect {
        /// Where it landed.
        site: &'static str,
        /// The operation, as the model names it.
        operation: String,
        /// Its payload.
        payload: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        /// The payload's unit, if any.
        unit: Option<&'static str>,
        /// Which effect of this operation it is (1, 2, ...).
        n: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        /// The version of a rolled-out actor whose request made it
        /// (`Obs::EffectBy`); only in runs with rollouts.
        version: Option<u8>,
        #[serde(skip)]
        /// The operation's key, to find the effects of a violated operation.
        op_key: u64,
    },
    /// A client's conclusion from one attempt.
    Attempt {
        /// The operation.
        operation: String,
        /// The attempt's number.
        attempt: u32,
        /// What the client concluded.
        outcome: &'static str,
    },
    /// Any other observation.
    Observe {
        /// It, in the model's words.
        text: String,
        /// Says again what a send or delivery line shows (an attempt sent, a
        /// request received): kept in JSON, left out of the drawn traces.
        #[serde(skip)]
        quiet: bool,
    },
    /// A situation is reached for the first time in the run.
    Situation {
        /// Its stable name.
        name: &'static str,
    },
    /// The fault phase ends: faults stop, crashed actors restart.
    Healing {},
    /// Entries of a long run the trace left out (it keeps the first and the
    /// last `TRACE_END_ITEMS` items, and the effects between them).
    Elided {
        /// How many entries were left out here.
        entries: u64,
        /// The engine step of the first of them.
        first_step: u64,
        /// The engine step of the last of them.
        last_step: u64,
    },
}

impl<M, T> What<M, T> {
    /// The `type` of the JSON Lines envelope.
    pub fn kind(&self) -> &'static str {
        match self {
            What::Mix { .. } => "mix",
            What::Start {} => "start",
            What::Restart {} => "restart",
            What::Crash {} => "crash",
            What::Send { .. } => "send",
            What::Drop { .. } => "drop",
            What::Deliver { .. } => "deliver",
            What::TimerSet { .. } => "timer_set",
            What::TimerFired { .. } => "timer_fired",
            What::Effect { .. } => "effect",
            What::Attempt { .. } => "attempt",
            What::Observe { .. } => "observe",
            What::Situation { .. } => "situation",
            What::Healing {} => "healing",
            What::Elided { .. } => "elided",
        }
    }
}

/// How the run ended, with the one-sentence explanation.
#[derive(Clone, Debug, Serialize)]
pub struct End {
    /// `holds`, `violation`, `inconclusive` or `panic`.
    pub verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The invariant broken, for a violation.
    pub invariant: Option<&'static str>,
    /// The operation the violation concerns, as the model names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The oracle's message.
    pub message: String,
    /// Indices into the items of the effects of the violated operation.
    pub effects: Vec<usize>,
    /// The item after whose step the violation could no longer be avoided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The engine step of the point of no return.
    pub turn_step: Option<u64>,
    /// Set when the search for the point of no return tried only the last
    /// decisions of a long run: `searched` of `decisions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_search: Option<TurnSearchNote>,
    /// Set when the run was too long to search for its point of no return
    /// at all: the most events the search may replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_unsearched_over_events: Option<u64>,
    /// The whole ending in one sentence for people.
    pub sentence: String,
}

#[derive(Clone, Copy, Debug, Serialize)]
/// How much of a long run the search for the point of no return covered.
pub struct TurnSearchNote {
    /// Decisions tried (the last ones).
    pub searched: usize,
    /// Decisions the run met.
    pub decisions: usize,
}

impl End {
    /// Says in the ending that the point of no return was not searched: the
    /// failing run alone has more than `max_events` events.
    pub fn note_unsearched(&mut self, max_events: u64) {
        self.turn_unsearched_over_events = Some(max_events);
        if self.invariant.is_some() {
            // Nothing was tried, so nothing can be said of single decisions.
            let base = self.sentence.trim_end_matches('.');
            let base = base
                .strip_suffix("; no single different decision avoids it")
                .unwrap_or(base);
            self.sentence = format!(
                "{base} (the point of no return was not searched: the run has more than the {max_events} events the search may replay)."
            );
        }
    }

    /// Says in the ending that the point of no return was searched among the
    /// last `searched` of `decisions` decisions only.
    pub fn note_bounded_search(&mut self, searched: usize, decisions: usize) {
        self.turn_search = Some(TurnSearchNote {
            searched,
            decisions,
        });
        if self.invariant.is_some() {
            let base = self.sentence.trim_end_matches('.');
            self.sentence = format!(
                "{base} (the point of no return was searched among the last {searched} of {decisions} decisions only: the run is long)."
            );
        }
    }
}

#[derive(Clone, Debug)]
/// A whole trace: the header, one item per engine trace entry, and the ending.
pub struct Trace<M = Msg, T = NodeTimer> {
    /// What the trace is of.
    pub header: Header,
    /// One item per trace entry, in order.
    pub items: Vec<Item<M, T>>,
    /// How the run ended, with its sentence.
    pub end: End,
}
