//! Turning traces and summaries into text and JSON for people and programs.

use models::ledger::Obs;
use models::situation;
use models::Msg;
use sim::{Outcome, TraceEntry, TraceKind, World};
use std::fmt::Write;

pub type Entry = TraceEntry<Msg, Obs>;

pub fn time(us: u64) -> String {
    let s = us / 1_000_000;
    let ms = (us % 1_000_000) / 1000;
    if s >= 86_400 {
        format!(
            "{}d {:02}:{:02}:{:02}.{ms:03}",
            s / 86_400,
            s % 86_400 / 3600,
            s % 3600 / 60,
            s % 60
        )
    } else {
        format!("{s}.{ms:03} s")
    }
}

/// The outcome in one sentence, with the invariant's name first.
pub fn outcome_sentence(o: &Outcome) -> String {
    match o {
        Outcome::Holds => "every invariant holds".into(),
        Outcome::Violation(v) => format!("violation of {}: {}", v.invariant, v.message),
        Outcome::Inconclusive(l) => format!("inconclusive: the run hit its {} limit", l.as_str()),
        Outcome::Panicked(m) => format!("a model panicked: {m}"),
    }
}

/// A human-readable timeline with annotations from the effect ledger.
pub fn text(world: &World, entries: &[Entry]) -> String {
    let name = |a: u32| world.actor_names[a as usize].as_str();
    let width = world.actor_names.iter().map(|n| n.len()).max().unwrap_or(6);
    let mut out = String::new();
    let mut effects: Vec<(u32, u32)> = Vec::new();
    for e in entries {
        let (actor, what) = match &e.kind {
            TraceKind::LinkMix {
                from,
                to,
                loss_per_mille,
                duplicate_per_mille,
            } => (
                *from,
                format!(
                    "swarm mix: link to {} loses {loss_per_mille}‰, duplicates {duplicate_per_mille}‰",
                    name(*to)
                ),
            ),
            TraceKind::CrashMix {
                actor,
                crash_per_mille,
            } => (*actor, format!("swarm mix: crashes {crash_per_mille}‰ per step")),
            TraceKind::PartitionMix { a, b, start_us, end_us } => (
                *a,
                format!(
                    "swarm mix: cut off from {} from {} until {}",
                    name(*b),
                    time(*start_us).trim(),
                    time(*end_us).trim()
                ),
            ),
            TraceKind::Start { actor } => (*actor, "start".into()),
            TraceKind::Send {
                from,
                to,
                msg,
                copies,
                ..
            } => {
                let dup = if *copies > 1 { "  (the network duplicates it)" } else { "" };
                (*from, format!("→ {:<width$}  {msg}{dup}", name(*to)))
            }
            TraceKind::Drop {
                from,
                to,
                msg,
                reason,
                ..
            } => {
                let what = match reason {
                    sim::DropReason::Lost if matches!(msg, Msg::PayReply { .. } | Msg::TransferDone { .. }) => "reply lost",
                    sim::DropReason::Lost => "message lost",
                    sim::DropReason::Partitioned => "cut off by a partition",
                    sim::DropReason::ReceiverDown => "receiver is down",
                };
                (*from, format!("→ {:<width$}  ✗ {what}: {msg}", name(*to)))
            }
            TraceKind::Deliver {
                from,
                to,
                msg,
                duplicate,
                ..
            } => {
                let dup = if *duplicate { "  (network duplicate)" } else { "" };
                (*to, format!("← {:<width$}  {msg}{dup}", name(*from)))
            }
            TraceKind::TimerSet { .. } => continue,
            TraceKind::TimerFired { actor, tag } => (*actor, format!("timer {tag} fires")),
            TraceKind::Crash { actor } => (*actor, "CRASH: volatile state lost, storage kept".into()),
            TraceKind::Restart { actor } => (*actor, "restart: state rebuilt from storage".into()),
            TraceKind::Observe { actor, obs } => {
                let text = match obs {
                    Obs::Effect { op, .. } => {
                        let n = match effects.iter_mut().find(|(o, _)| o == op) {
                            Some((_, n)) => {
                                *n += 1;
                                *n
                            }
                            None => {
                                effects.push((*op, 1));
                                1
                            }
                        };
                        format!("{obs}  ← effect #{n} for claim {op}")
                    }
                    _ => obs.to_string(),
                };
                (*actor, format!("• {text}"))
            }
            TraceKind::Reached { actor, situation } => {
                (*actor, format!("◦ situation: {}", situation::name(*situation)))
            }
            TraceKind::HealingStarts => {
                let _ = writeln!(out, "{:>14}  ── healing phase: faults stop, crashed actors restart ──", time(e.time_us));
                continue;
            }
        };
        let _ = writeln!(
            out,
            "{:>14}  {:<width$}  {what}",
            time(e.time_us),
            name(actor)
        );
    }
    out
}

/// JSON Lines envelope: `{"type": ..., "data": ...}`.
pub fn json_line(kind: &str, data: serde_json::Value) -> String {
    serde_json::json!({ "type": kind, "data": data }).to_string()
}
