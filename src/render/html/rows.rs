//! The rows of a run's report: each shown item of the trace as a short
//! array of numbers, its texts in the page's string table, steps and times
//! as deltas from the row before, and messages pointing back to their send.

use super::super::items::{Item, Trace, What};
use super::super::Entry;
use super::Strings;
use serde_json::{json, Value};
use sim::{Timer, TraceKind};
use std::collections::BTreeMap;

/// Row kinds, in the order the script's `K` numbers them.
fn kind(w: &What) -> u8 {
    match w {
        What::Mix { .. } => 0,
        What::Start {} => 1,
        What::Restart {} => 2,
        What::Crash {} => 3,
        What::Send { .. } => 4,
        What::Drop { .. } => 5,
        What::Deliver { .. } => 6,
        What::TimerSet { .. } => 7,
        What::TimerFired { .. } => 8,
        What::Effect { .. } => 9,
        What::Attempt { .. } => 10,
        What::Observe { .. } => 11,
        What::Situation { .. } => 12,
        What::Healing {} => 13,
        // The report keeps every item (`report.rs` bounds its runs instead);
        // should one get here, it reads as a note.
        What::Elided { .. } => 11,
    }
}

/// Entry index of each timer firing → the step its timer was set at: the
/// latest setting of its slot fires.
pub(super) fn timer_set_steps(entries: &[Entry]) -> BTreeMap<usize, u64> {
    let mut set_at: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    let mut timer_set_step: BTreeMap<usize, u64> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        match &e.kind {
            TraceKind::TimerSet { actor, timer, .. } => {
                set_at.insert((*actor, timer.slot()), e.step);
            }
            TraceKind::TimerFired { actor, timer } => {
                if let Some(&step) = set_at.get(&(*actor, timer.slot())) {
                    timer_set_step.insert(i, step);
                }
            }
            _ => {}
        }
    }
    timer_set_step
}

/// Each shown item as `[kind, step delta, time delta, actor, fields...]`.
pub(super) fn rows(
    t: &Trace,
    shown: &[usize],
    timer_set_step: &BTreeMap<usize, u64>,
    s: &mut Strings,
) -> Vec<Value> {
    let mut sent_row: BTreeMap<u32, usize> = BTreeMap::new();
    let mut rows: Vec<Value> = Vec::with_capacity(shown.len());
    let (mut step, mut time) = (0u64, 0u64);
    for (row, &i) in shown.iter().enumerate() {
        let it = &t.items[i];
        let mut r: Vec<Value> = vec![
            json!(kind(&it.what)),
            json!(it.step.wrapping_sub(step) as i64),
            json!(it.time_us as i64 - time as i64),
            json!(it.actor_id),
        ];
        (step, time) = (it.step, it.time_us);
        let at = RowAt {
            row,
            set_step: timer_set_step.get(&i).copied(),
        };
        if !message_fields(it, at, &mut sent_row, s, &mut r) {
            other_fields(it, at, s, &mut r);
        }
        rows.push(Value::Array(r));
    }
    rows
}

/// Where a row is: its index, and for a timer firing the step its timer was set at.
#[derive(Clone, Copy)]
struct RowAt {
    row: usize,
    set_step: Option<u64>,
}

/// The fields of a send, drop or delivery (false for any other item); a
/// drop or delivery points back to its send by rows.
fn message_fields(
    it: &Item,
    at: RowAt,
    sent_row: &mut BTreeMap<u32, usize>,
    s: &mut Strings,
    r: &mut Vec<Value>,
) -> bool {
    let row = at.row;
    let back = |sent_row: &BTreeMap<u32, usize>, id: &u32| sent_row.get(id).map_or(0, |&r| row - r);
    match &it.what {
        What::Send {
            to_id,
            msg,
            msg_id,
            copies,
            ..
        } => {
            sent_row.insert(*msg_id, row);
            r.extend([json!(to_id), json!(s.id_of(msg))]);
            if *copies > 1 {
                r.push(json!(copies));
            }
        }
        What::Drop {
            to_id,
            msg,
            msg_id,
            note,
            ..
        } => r.extend([
            json!(to_id),
            json!(s.id_of(msg)),
            json!(s.id(note)),
            json!(back(sent_row, msg_id)),
        ]),
        // [msg, rows back to the send, duplicate, note, sender]: the
        // last ones only when they say something (most rows of a long
        // run are plain deliveries).
        What::Deliver {
            from_id,
            msg,
            msg_id,
            duplicate,
            note,
            ..
        } => {
            let b = back(sent_row, msg_id);
            r.extend([json!(s.id_of(msg)), json!(b)]);
            let note = note.map_or(-1, |n| s.id(n) as i64);
            if b == 0 {
                r.extend([json!(u8::from(*duplicate)), json!(note), json!(from_id)]);
            } else if note >= 0 {
                r.extend([json!(u8::from(*duplicate)), json!(note)]);
            } else if *duplicate {
                r.push(json!(1));
            }
        }
        _ => return false,
    }
    true
}

/// The fields of every item but a message's.
fn other_fields(it: &Item, at: RowAt, s: &mut Strings, r: &mut Vec<Value>) {
    match &it.what {
        What::Mix { text, .. } => r.push(json!(s.id(text))),
        What::Start {}
        | What::Restart {}
        | What::Crash {}
        | What::Healing {}
        | What::Send { .. }
        | What::Drop { .. }
        | What::Deliver { .. } => {}
        What::Elided { .. } => r.push(json!(s.id(&crate::render::items::describe(it)))),
        What::TimerSet { timer, at_us } => r.extend([json!(s.id_of(timer)), json!(at_us)]),
        What::TimerFired { timer } => r.extend([
            json!(s.id_of(timer)),
            // Steps back to where it was set.
            json!(at.set_step.map_or(-1, |x| (it.step - x) as i64)),
        ]),
        What::Effect {
            site,
            operation,
            payload,
            unit,
            n,
            ..
        } => {
            let p = match unit {
                Some(u) => format!("{payload} {u}"),
                None => format!("value {payload}"),
            };
            r.extend([
                json!(s.id(site)),
                json!(s.id(operation)),
                json!(s.id(&p)),
                json!(n),
            ]);
        }
        What::Attempt {
            operation,
            attempt,
            outcome,
        } => r.extend([json!(s.id(operation)), json!(attempt), json!(s.id(outcome))]),
        What::Observe { text, .. } => r.push(json!(s.id(text))),
        What::Situation { name } => r.push(json!(s.id(name))),
    }
}
