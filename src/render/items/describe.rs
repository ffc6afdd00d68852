//! An item as one line for people.

use super::types::{Item, What};
use std::fmt::Display;

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
            format!("timer set: {timer} at {}", crate::render::time(*at_us))
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
        What::Elided {
            entries,
            first_step,
            last_step,
        } => format!(
            "⋮ {entries} entries of steps #{first_step} to #{last_step} not kept: the trace of a long run keeps its first and last {} entries, and its effects",
            super::recorder::TRACE_END_ITEMS
        ),
    }
}
