//! Raw engine entries to items, as a run records them.

use super::types::{Item, Name, What};
use crate::render::EntryOf;
use models::core::wire::WorldMessage;
use models::registry;
use models::{Msg, NodeTimer, Obs};
use sim::{DropReason, TraceKind, World};
use std::collections::BTreeMap;

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

    pub(super) fn push(&mut self, e: EntryOf<M, T>) {
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
                        crate::render::time(*start_us).trim(),
                        crate::render::time(*end_us).trim()
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
