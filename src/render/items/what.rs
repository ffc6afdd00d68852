//! What an engine entry is, as an item: the actor it belongs to and its
//! `What`, with names resolved and effects numbered per operation. The
//! recorder (`recorder.rs`) decides which items a trace keeps.

use super::types::{Name, What};
use models::core::wire::WorldMessage;
use models::registry;
use models::Obs;
use sim::{DropReason, TraceKind};

type KindOf<M, T> = TraceKind<M, Obs, T>;

/// One operation's effects so far in a trace: (its key, how many, the
/// version a rolled-out actor named for its next effect, 0: none).
pub(super) type Counted = (u64, u32, u8);

/// The actor an entry belongs to and what it is; `effects` counts each
/// operation's effects so far.
pub(super) fn what_of<M: WorldMessage, T: Clone>(
    kind: &KindOf<M, T>,
    names: &[Name],
    effects: &mut Vec<Counted>,
) -> (u32, What<M, T>) {
    match kind {
        TraceKind::LinkMix { .. } | TraceKind::CrashMix { .. } | TraceKind::PartitionMix { .. } => {
            mix_of(kind, names)
        }
        TraceKind::Send { .. } | TraceKind::Drop { .. } | TraceKind::Deliver { .. } => {
            message_of(kind, names)
        }
        TraceKind::Start { actor } => (*actor, What::Start {}),
        TraceKind::Restart { actor } => (*actor, What::Restart {}),
        TraceKind::Crash { actor } => (*actor, What::Crash {}),
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
        TraceKind::TimerFired { actor, timer } => (
            *actor,
            What::TimerFired {
                timer: timer.clone(),
            },
        ),
        TraceKind::Observe { actor, obs } => (*actor, observed(obs, effects)),
        TraceKind::Reached { actor, situation } => (
            *actor,
            What::Situation {
                name: registry::situation_name(*situation),
            },
        ),
        TraceKind::HealingStarts => (0, What::Healing {}),
    }
}

/// A swarm mix entry: what the run's faults are set to.
fn mix_of<M, T>(kind: &KindOf<M, T>, names: &[Name]) -> (u32, What<M, T>) {
    let name = |a: u32| names[a as usize].clone();
    match kind {
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
        _ => unreachable!("not a mix entry"),
    }
}

/// A message sent, dropped or delivered.
fn message_of<M: WorldMessage, T>(kind: &KindOf<M, T>, names: &[Name]) -> (u32, What<M, T>) {
    let name = |a: u32| names[a as usize].clone();
    match kind {
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
        } => (
            *to,
            What::Deliver {
                from: name(*from),
                from_id: *from,
                msg: msg.clone(),
                msg_id: *msg_id,
                duplicate: *duplicate,
                note: None,
            },
        ),
        _ => unreachable!("not a message entry"),
    }
}

/// An observation as an item: effects numbered per operation, attempts
/// apart, the rest as the observation's own sentence.
fn observed<M, T>(obs: &Obs, effects: &mut Vec<Counted>) -> What<M, T> {
    match *obs {
        Obs::Effect { site, op, payload } => {
            let key = op.key();
            let (n, version) = match effects.iter_mut().find(|(o, ..)| *o == key) {
                Some((_, n, v)) => {
                    *n += 1;
                    (*n, std::mem::take(v))
                }
                None => {
                    effects.push((key, 1, 0));
                    (1, 0)
                }
            };
            What::Effect {
                site: site.name,
                operation: op.to_string(),
                payload,
                unit: op.space.unit,
                n,
                version: (version != 0).then_some(version),
                op_key: key,
            }
        }
        Obs::EffectBy { op, version } => {
            let key = op.key();
            match effects.iter_mut().find(|(o, ..)| *o == key) {
                Some((.., v)) => *v = version,
                None => effects.push((key, 0, version)),
            }
            What::Observe {
                text: obs.to_string(),
                quiet: false,
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
