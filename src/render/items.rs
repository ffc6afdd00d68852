//! The one model of a trace every format is derived from: the engine's raw
//! entries, resolved to names and annotated from the effect ledger's
//! observations. `json` prints these items as they are; `text`, `mermaid`,
//! `dot` and `chrome` read nothing else. The words come from the models:
//! messages, observations and timers describe themselves.

use super::EntryOf;
use models::core::wire::WorldMessage;
use models::registry;
use models::{Msg, NodeTimer, Obs};
use serde::{Serialize, Serializer};
use sim::{DropReason, Outcome, RunReport, TraceKind, Turn, World};
use std::collections::BTreeMap;
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

/// What the entries of one engine step did; a delivery's note depends on
/// what else its step did (an effect landed, which messages it sent), and
/// the model of the message writes it.
struct StepFacts<M> {
    /// An effect was observed in this step.
    effect: bool,
    /// The messages this step sent (or tried to send).
    sent: Vec<M>,
}

impl<M: WorldMessage> StepFacts<M> {
    fn new() -> Self {
        StepFacts {
            effect: false,
            sent: Vec::new(),
        }
    }

    fn see<T>(&mut self, e: &EntryOf<M, T>) {
        match &e.kind {
            TraceKind::Observe {
                obs: Obs::Effect { .. } | Obs::ValueWritten { .. },
                ..
            } => self.effect = true,
            TraceKind::Send { msg, .. } | TraceKind::Drop { msg, .. } => {
                self.sent.push(msg.clone())
            }
            _ => {}
        }
    }

    /// The note of a delivery of `msg` in a step that did these things.
    fn note(&self, msg: &M) -> Option<&'static str> {
        msg.delivery_note(self.effect, &self.sent)
    }

    fn clear(&mut self) {
        self.effect = false;
        self.sent.clear();
    }
}

/// Turns trace entries into items as a run records them, so a long replay
/// never holds its raw entries and its items at once: memory stays one item
/// per entry, and time linear (a step's deliveries get their notes when the
/// step ends). Item `i` is entry `i`.
pub struct ItemRecorder<M = Msg, T = NodeTimer> {
    names: Vec<Name>,
    /// The items so far.
    pub items: Vec<Item<M, T>>,
    effects: Vec<(u64, u32)>,
    /// Each operation's name, the first time an observation names it.
    ops: BTreeMap<u64, String>,
    step: u64,
    facts: StepFacts<M>,
    /// Deliveries of the current step, waiting for their notes.
    pending: Vec<usize>,
}

impl<M: WorldMessage, T: Clone> ItemRecorder<M, T> {
    /// A recorder for a run of `world` (its actors' names).
    pub fn new(world: &World) -> Self {
        ItemRecorder {
            names: world
                .actor_names
                .iter()
                .map(|n| Name::from(n.as_str()))
                .collect(),
            items: Vec::new(),
            effects: Vec::new(),
            ops: BTreeMap::new(),
            step: 0,
            facts: StepFacts::new(),
            pending: Vec::new(),
        }
    }

    fn close_step(&mut self) {
        for i in self.pending.drain(..) {
            if let What::Deliver { msg, note, .. } = &mut self.items[i].what {
                *note = self.facts.note(msg);
            }
        }
        self.facts.clear();
    }

    /// The items, every step closed, and the operations' names by key.
    pub fn finish(mut self) -> (Vec<Item<M, T>>, BTreeMap<u64, String>) {
        self.close_step();
        (self.items, self.ops)
    }

    fn push(&mut self, e: EntryOf<M, T>) {
        if e.step != self.step {
            self.close_step();
            self.step = e.step;
        }
        // Step 0 (the mix and the starts) is not a handler's step: no notes.
        if e.step > 0 {
            self.facts.see(&e);
        }
        let names = &self.names;
        let name = |a: u32| names[a as usize].clone();
        let effects = &mut self.effects;
        let (actor, what) = match &e.kind {
            TraceKind::LinkMix {
                from,
                to,
                loss_per_mille,
                duplicate_per_mille,
            } => (
                *from,
                What::Mix {
                    text: format!(
                        "swarm mix: link to {} loses {loss_per_mille}‰, duplicates {duplicate_per_mille}‰",
                        name(*to)
                    ),
                    // A link from an actor to itself carries no message.
                    quiet: from == to || (*loss_per_mille == 0 && *duplicate_per_mille == 0),
                },
            ),
            TraceKind::CrashMix {
                actor,
                crash_per_mille,
            } => (
                *actor,
                What::Mix {
                    text: format!("swarm mix: crashes {crash_per_mille}‰ per step"),
                    quiet: *crash_per_mille == 0,
                },
            ),
            TraceKind::PartitionMix {
                a,
                b,
                start_us,
                end_us,
            } => (
                *a,
                What::Mix {
                    text: format!(
                        "swarm mix: cut off from {} from {} until {}",
                        name(*b),
                        super::time(*start_us).trim(),
                        super::time(*end_us).trim()
                    ),
                    quiet: false,
                },
            ),
            TraceKind::Start { actor } => (*actor, What::Start {}),
            TraceKind::Restart { actor } => (*actor, What::Restart {}),
            TraceKind::Crash { actor } => (*actor, What::Crash {}),
            TraceKind::Send {
                from,
                to,
                msg,
                msg_id,
                copies,
                deliver_at_us,
            } => (
                *from,
                What::Send {
                    to: name(*to),
                    to_id: *to,
                    msg: msg.clone(),
                    msg_id: *msg_id,
                    copies: *copies,
                    deliver_at_us: *deliver_at_us,
                },
            ),
            TraceKind::Drop {
                from,
                to,
                msg,
                msg_id,
                reason,
            } => {
                let note = match reason {
                    DropReason::Lost if msg.is_reply() => "reply lost",
                    DropReason::Lost => "message lost",
                    DropReason::Partitioned => "cut off by a partition",
                    DropReason::ReceiverDown => "receiver is down",
                };
                (
                    *from,
                    What::Drop {
                        to: name(*to),
                        to_id: *to,
                        msg: msg.clone(),
                        msg_id: *msg_id,
                        reason: reason.as_str(),
                        note,
                    },
                )
            }
            TraceKind::Deliver {
                from,
                to,
                msg,
                msg_id,
                duplicate,
            } => {
                if e.step > 0 {
                    self.pending.push(self.items.len());
                }
                (
                    *to,
                    What::Deliver {
                        from: name(*from),
                        from_id: *from,
                        msg: msg.clone(),
                        msg_id: *msg_id,
                        duplicate: *duplicate,
                        note: None,
                    },
                )
            }
            TraceKind::TimerSet {
                actor,
                timer,
                at_us,
            } => (
                *actor,
                What::TimerSet {
                    timer: timer.clone(),
                    at_us: *at_us,
                },
            ),
            TraceKind::TimerFired { actor, timer } => {
                (*actor, What::TimerFired { timer: timer.clone() })
            }
            TraceKind::Observe { actor, obs } => {
                if let Some(op) = obs.op() {
                    self.ops.entry(op.key()).or_insert_with(|| op.to_string());
                }
                (*actor, observed(obs, effects))
            }
            TraceKind::Reached { actor, situation } => (
                *actor,
                What::Situation {
                    name: registry::situation_name(*situation),
                },
            ),
            TraceKind::HealingStarts => (0, What::Healing {}),
        };
        let item = Item {
            step: e.step,
            time_us: e.time_us,
            actor: name(actor),
            actor_id: actor,
            what,
        };
        self.items.push(item);
    }
}

/// An observation as an item: effects numbered per operation, attempts
/// apart, the rest as the observation's own sentence.
fn observed<M, T>(obs: &Obs, effects: &mut Vec<(u64, u32)>) -> What<M, T> {
    match *obs {
        Obs::Effect { site, op, payload } => {
            let key = op.key();
            let n = match effects.iter_mut().find(|(o, _)| *o == key) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    effects.push((key, 1));
                    1
                }
            };
            What::Effect {
                site: site.name,
                operation: op.to_string(),
                payload,
                unit: op.space.unit,
                n,
                op_key: key,
            }
        }
        Obs::Attempt {
            op,
            attempt,
            outcome,
        } => What::Attempt {
            operation: op.to_string(),
            attempt,
            outcome: outcome.as_str(),
        },
        other => What::Observe {
            text: other.to_string(),
            quiet: matches!(other, Obs::AttemptSent { .. } | Obs::Received { .. }),
        },
    }
}

impl<M: WorldMessage, T: Clone> sim::Tracer<M, Obs, T> for ItemRecorder<M, T> {
    const ENABLED: bool = true;
    fn record(&mut self, entry: EntryOf<M, T>) {
        self.push(entry);
    }
}

/// Resolves raw entries; item `i` is raw entry `i`, so indices carry over.
pub fn items<M: WorldMessage, T: Clone>(
    world: &World,
    entries: &[EntryOf<M, T>],
) -> Vec<Item<M, T>> {
    let mut r = ItemRecorder::new(world);
    r.items.reserve(entries.len());
    for e in entries {
        r.push(e.clone());
    }
    r.finish().0
}

fn payload_text(payload: u32, unit: Option<&str>) -> String {
    match unit {
        Some(u) => format!("{payload} {u}"),
        None => format!("value {payload}"),
    }
}

/// One line of an item for people, without time and actor.
pub fn describe<M: Display, T: Display>(item: &Item<M, T>) -> String {
    match &item.what {
        What::Mix { text, .. } => text.clone(),
        What::Start {} => "start".into(),
        What::Restart {} => "restart: state rebuilt from storage".into(),
        What::Crash {} => "CRASH: volatile state lost, storage kept".into(),
        What::Send {
            to, msg, copies, ..
        } => {
            let dup = if *copies > 1 {
                "  (the network duplicates it)"
            } else {
                ""
            };
            format!("→ {to}  {msg}{dup}")
        }
        What::Drop { to, msg, note, .. } => format!("→ {to}  ✗ {note}: {msg}"),
        What::Deliver {
            from,
            msg,
            duplicate,
            note,
            ..
        } => {
            let dup = if *duplicate {
                "  (network duplicate)"
            } else {
                ""
            };
            let note = note.map(|n| format!("  ← {n}")).unwrap_or_default();
            format!("← {from}  {msg}{dup}{note}")
        }
        What::TimerSet { timer, at_us } => {
            format!("timer set: {timer} at {}", super::time(*at_us))
        }
        What::TimerFired { timer } => format!("timer: {timer}"),
        What::Effect {
            site,
            operation,
            payload,
            unit,
            n,
            ..
        } => format!(
            "• EFFECT {site} of {}  ← {site} #{n} for {operation}",
            payload_text(*payload, *unit)
        ),
        What::Attempt {
            operation,
            attempt,
            outcome,
        } => format!("• attempt {attempt} for {operation}: {outcome}"),
        What::Observe { text, .. } => format!("• {text}"),
        What::Situation { name } => format!("◦ situation: {name}"),
        What::Healing {} => "── healing phase: faults stop, crashed actors restart ──".into(),
    }
}

/// Builds the whole trace from raw entries a tracer kept (the HTML report's
/// tracer keeps them for its state snapshots).
pub fn trace<M: WorldMessage + Display, T: Clone + Display>(
    world: &World,
    header: Header,
    entries: &[EntryOf<M, T>],
    report: &RunReport,
    turn: Option<&Turn>,
) -> Trace<M, T> {
    let mut r = ItemRecorder::new(world);
    r.items.reserve(entries.len());
    for e in entries {
        r.push(e.clone());
    }
    trace_of_items(header, r.finish(), report, turn)
}

/// Builds the whole trace (header, items, the ending with its sentence) from
/// the items an [`ItemRecorder`] made.
pub fn trace_of_items<M: Display, T: Display>(
    header: Header,
    (items, ops): (Vec<Item<M, T>>, BTreeMap<u64, String>),
    report: &RunReport,
    turn: Option<&Turn>,
) -> Trace<M, T> {
    let end = end(&items, &ops, report, turn);
    Trace { header, items, end }
}

fn end<M: Display, T: Display>(
    items: &[Item<M, T>],
    ops: &BTreeMap<u64, String>,
    report: &RunReport,
    turn: Option<&Turn>,
) -> End {
    let (verdict, invariant, op_key, message) = match &report.outcome {
        Outcome::Holds => ("holds", None, None, "every invariant holds".to_string()),
        Outcome::Violation(v) => (
            "violation",
            Some(v.invariant),
            Some(v.operation),
            v.message.clone(),
        ),
        Outcome::Inconclusive(l) => (
            "inconclusive",
            None,
            None,
            format!("the run hit its {} limit", l.as_str()),
        ),
        Outcome::Panicked(_) => (
            "panic",
            None,
            None,
            crate::render::outcome_sentence(&report.outcome),
        ),
    };
    let effects: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, it)| matches!(it.what, What::Effect { op_key: k, .. } if Some(k) == op_key))
        .map(|(i, _)| i)
        .collect();
    let turn_item = turn.map(|t| t.entry.min(items.len().saturating_sub(1)));
    let operation = op_key.and_then(|k| ops.get(&k).cloned());
    let sentence = match invariant {
        Some(inv) => {
            let effect_list = if effects.is_empty() {
                "no effect at all".to_string()
            } else {
                let list: Vec<String> = effects
                    .iter()
                    .map(|&i| {
                        let it = &items[i];
                        let site = match &it.what {
                            What::Effect { site, n, .. } => format!("{site} #{n}"),
                            _ => unreachable!("effects are effect items"),
                        };
                        format!("{site} at {} (step {})", super::time(it.time_us), it.step)
                    })
                    .collect();
                format!("effects {}", list.join(", "))
            };
            let when = match (turn, turn_item) {
                (Some(t), Some(i)) => {
                    let it = &items[i];
                    format!(
                        "; it could no longer be avoided after step {} ({}, {}: {})",
                        t.step,
                        super::time(it.time_us),
                        it.actor,
                        describe(it)
                    )
                }
                _ => "; no single different decision avoids it".to_string(),
            };
            let on = operation
                .as_ref()
                .map(|o| format!(" on {o}"))
                .unwrap_or_default();
            format!("Violation of {inv}{on}: {message}; {effect_list}{when}.")
        }
        None => format!("{verdict}: {message}."),
    };
    End {
        verdict,
        invariant,
        operation,
        message,
        effects,
        turn: turn_item,
        turn_step: turn.map(|t| t.step),
        turn_search: None,
        sentence,
    }
}
