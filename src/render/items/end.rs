//! A whole trace from its items, and its ending in one sentence.

use super::describe::describe;
use super::recorder::{ItemRecorder, Kept};
use super::types::{End, Header, Item, Trace, What};
use crate::render::EntryOf;
use models::core::wire::WorldMessage;
use sim::{Outcome, RunReport, Turn, World};
use std::collections::BTreeMap;
use std::fmt::Display;

/// Builds the whole trace from raw entries a tracer kept (the HTML report's
/// tracer keeps them for its state snapshots).
pub fn trace<M: WorldMessage + Display, T: Clone + Display>(
    world: &World,
    header: Header,
    entries: &[EntryOf<M, T>],
    report: &RunReport,
    turn: Option<&Turn>,
) -> Trace<M, T> {
    let mut r = ItemRecorder::keeping_all(world);
    for e in entries {
        r.push(e.clone());
    }
    trace_of_items(header, r.finish(), report, turn)
}

/// Builds the whole trace (header, items, the ending with its sentence) from
/// the items an [`ItemRecorder`] made.
pub(crate) fn trace_of_items<M: Display, T: Display>(
    header: Header,
    kept: Kept<M, T>,
    report: &RunReport,
    turn: Option<&Turn>,
) -> Trace<M, T> {
    let Kept { items, ops, map } = kept;
    let turn_item = turn.map(|t| map.item(t.entry as u64).min(items.len().saturating_sub(1)));
    let end = end(&items, &ops, report, turn, turn_item);
    Trace { header, items, end }
}

fn end<M: Display, T: Display>(
    items: &[Item<M, T>],
    ops: &BTreeMap<u64, String>,
    report: &RunReport,
    turn: Option<&Turn>,
    turn_item: Option<usize>,
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
    let operation = op_key.and_then(|k| ops.get(&k).cloned());
    let sentence = match invariant {
        Some(inv) => {
            let effect_list = effect_list(items, &effects);
            let when = when_unavoidable(items, turn, turn_item);
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
        turn_unsearched_over_events: None,
        sentence,
    }
}

/// The violated operation's effects, each with its site, time and step.
fn effect_list<M, T>(items: &[Item<M, T>], effects: &[usize]) -> String {
    if effects.is_empty() {
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
                format!(
                    "{site} at {} (step {})",
                    crate::render::time(it.time_us),
                    it.step
                )
            })
            .collect();
        format!("effects {}", list.join(", "))
    }
}

/// From which step on the violation could no longer be avoided, if a
/// search found that step.
fn when_unavoidable<M: Display, T: Display>(
    items: &[Item<M, T>],
    turn: Option<&Turn>,
    turn_item: Option<usize>,
) -> String {
    match (turn, turn_item) {
        (Some(t), Some(i)) => {
            let it = &items[i];
            format!(
                "; it could no longer be avoided after step {} ({}, {}: {})",
                t.step,
                crate::render::time(it.time_us),
                it.actor,
                describe(it)
            )
        }
        _ => "; no single different decision avoids it".to_string(),
    }
}
