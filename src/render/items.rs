//! The one model of a trace every format is derived from: the engine's raw
//! entries, resolved to names and annotated from the effect ledger's
//! observations. `json` prints these items as they are; `text`, `mermaid`,
//! `dot` and `chrome` read nothing else. The words come from the models:
//! messages, observations and timers describe themselves.

use super::Entry;
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
    pub scenario: String,
    /// "seed 2", "shrunk from seed 2", "repro file repro.json".
    pub source: String,
    /// Engine events (handled deliveries, timers, restarts; see docs/shrinking.md).
    pub events: u64,
    pub actors: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shrink: Option<ShrinkInfo>,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct ShrinkInfo {
    pub original_events: u64,
    pub shrunk_events: u64,
    pub original_decisions: usize,
    pub shrunk_decisions: usize,
    pub runs: u32,
    /// Locally minimal (the passes reached a fixpoint within the budget).
    pub complete: bool,
    /// What stopped shrinking early, when something did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<&'static str>,
}

/// One trace entry, resolved.
#[derive(Clone, Debug, Serialize)]
pub struct Item {
    pub step: u64,
    pub time_us: u64,
    pub actor: Name,
    #[serde(skip)]
    pub actor_id: u32,
    #[serde(flatten)]
    pub what: What,
}

#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum What {
    Mix {
        text: String,
        /// Drew no fault at all: left out of the text trace.
        #[serde(skip)]
        quiet: bool,
    },
    Start {},
    Restart {},
    Crash {},
    Send {
        to: Name,
        #[serde(skip)]
        to_id: u32,
        #[serde(serialize_with = "as_text")]
        msg: Msg,
        msg_id: u32,
        copies: u8,
        deliver_at_us: u64,
    },
    Drop {
        to: Name,
        #[serde(skip)]
        to_id: u32,
        #[serde(serialize_with = "as_text")]
        msg: Msg,
        msg_id: u32,
        reason: &'static str,
        /// "reply lost", "message lost", "cut off by a partition", "receiver is down".
        note: &'static str,
    },
    Deliver {
        from: Name,
        #[serde(skip)]
        from_id: u32,
        #[serde(serialize_with = "as_text")]
        msg: Msg,
        msg_id: u32,
        duplicate: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<&'static str>,
    },
    TimerSet {
        #[serde(serialize_with = "as_text")]
        timer: NodeTimer,
        at_us: u64,
    },
    TimerFired {
        #[serde(serialize_with = "as_text")]
        timer: NodeTimer,
    },
    /// An effect in the outside world; `n` counts effects of this operation.
    Effect {
        site: &'static str,
        operation: String,
        payload: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        unit: Option<&'static str>,
        n: u32,
        #[serde(skip)]
        op_key: u64,
    },
    /// A client's conclusion from one attempt.
    Attempt {
        operation: String,
        attempt: u32,
        outcome: &'static str,
    },
    Observe {
        text: String,
        /// Says again what a send or delivery line shows (an attempt sent, a
        /// request received): kept in JSON, left out of the drawn traces.
        #[serde(skip)]
        quiet: bool,
    },
    Situation {
        name: &'static str,
    },
    Healing {},
}

impl What {
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
    pub verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invariant: Option<&'static str>,
    /// The operation the violation concerns, as the model names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    pub message: String,
    /// Indices into the items of the effects of the violated operation.
    pub effects: Vec<usize>,
    /// The item after whose step the violation could no longer be avoided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_step: Option<u64>,
    /// Set when the search for the point of no return tried only the last
    /// decisions of a long run: `searched` of `decisions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_search: Option<TurnSearchNote>,
    pub sentence: String,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct TurnSearchNote {
    pub searched: usize,
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
pub struct Trace {
    pub header: Header,
    pub items: Vec<Item>,
    pub end: End,
}

/// What the entries of one engine step did; a delivery's note depends on
/// what else its step did (an effect landed, which messages it sent), and
/// the model of the message writes it.
#[derive(Default)]
struct StepFacts {
    /// An effect was observed in this step.
    effect: bool,
    /// The messages this step sent (or tried to send).
    sent: Vec<Msg>,
}

impl StepFacts {
    fn see(&mut self, e: &Entry) {
        match &e.kind {
            TraceKind::Observe {
                obs: Obs::Effect { .. } | Obs::ValueWritten { .. },
                ..
            } => self.effect = true,
            TraceKind::Send { msg, .. } | TraceKind::Drop { msg, .. } => self.sent.push(*msg),
            _ => {}
        }
    }

    /// The note of a delivery of `msg` in a step that did these things.
    fn note(&self, msg: &Msg) -> Option<&'static str> {
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
pub struct ItemRecorder {
    names: Vec<Name>,
    pub items: Vec<Item>,
    effects: Vec<(u64, u32)>,
    /// Each operation's name, the first time an observation names it.
    ops: BTreeMap<u64, String>,
    step: u64,
    facts: StepFacts,
    /// Deliveries of the current step, waiting for their notes.
    pending: Vec<usize>,
}

impl ItemRecorder {
    pub fn new(world: &World) -> ItemRecorder {
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
            facts: StepFacts::default(),
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
    pub fn finish(mut self) -> (Vec<Item>, BTreeMap<u64, String>) {
        self.close_step();
        (self.items, self.ops)
    }

    fn push(&mut self, e: Entry) {
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
                    quiet: *loss_per_mille == 0 && *duplicate_per_mille == 0,
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
                    msg: *msg,
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
                        msg: *msg,
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
                        msg: *msg,
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
                    timer: *timer,
                    at_us: *at_us,
                },
            ),
            TraceKind::TimerFired { actor, timer } => {
                (*actor, What::TimerFired { timer: *timer })
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
fn observed(obs: &Obs, effects: &mut Vec<(u64, u32)>) -> What {
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

impl sim::Tracer<Msg, Obs, NodeTimer> for ItemRecorder {
    const ENABLED: bool = true;
    fn record(&mut self, entry: Entry) {
        self.push(entry);
    }
}

/// Resolves raw entries; item `i` is raw entry `i`, so indices carry over.
pub fn items(world: &World, entries: &[Entry]) -> Vec<Item> {
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
pub fn describe(item: &Item) -> String {
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

/// Builds the whole trace (header, items, the ending with its sentence) from
/// the items an [`ItemRecorder`] made.
pub fn trace_of_items(
    header: Header,
    (items, ops): (Vec<Item>, BTreeMap<u64, String>),
    report: &RunReport,
    turn: Option<&Turn>,
) -> Trace {
    let end = end(&items, &ops, report, turn);
    Trace { header, items, end }
}

fn end(
    items: &[Item],
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
