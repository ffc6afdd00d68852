//! Chrome trace events of a run, for <https://ui.perfetto.dev> or `chrome://tracing`.

use super::items::{describe, Item, Trace, What};
use sim::DropReason;
use std::collections::BTreeMap;
use std::fmt::Display;

/// Chrome trace events, for <https://ui.perfetto.dev> or `chrome://tracing`: one
/// thread per actor (pid 1), and nothing else, so a run of any length has as
/// many lanes as actors.
///
/// Each step an actor takes is a 1 µs slice named after what started it,
/// with every line of the step in its args; steps of one actor at the same
/// virtual time sit one after another. The time an actor is down is a slice
/// of its own. A flow arrow (`ph` "s" in the sending slice, "f" in the
/// receiving one, with one id) links each send to each of its deliveries, a
/// network duplicate included; a lost message, or one that finds its receiver
/// down, is an instant.
pub fn chrome<M: Display, T: Display>(t: &Trace<M, T>) -> String {
    use serde_json::json;
    let mut ev = Vec::new();
    ev.push(
        json!({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "actors"}}),
    );
    for (i, a) in t.header.actors.iter().enumerate() {
        ev.push(
            json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": i + 1, "args": {"name": a}}),
        );
        ev.push(json!({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": i + 1, "args": {"sort_index": i}}));
    }
    let (slices, slice_of) = slices_of(t);
    slice_events(t, &slices, &mut ev);
    flow_events(t, &slices, &slice_of, &mut ev);
    ev.push(
        json!({"ph": "i", "s": "g", "name": t.end.sentence, "cat": "end", "pid": 1, "tid": 1,
        "ts": t.items.last().map_or(0, |i: &Item<M, T>| i.time_us)}),
    );
    // One event per line: small diffs, and still one JSON document.
    let lines: Vec<String> = ev.iter().map(|e| e.to_string()).collect();
    let mut other = json!({"scenario": t.header.scenario, "source": t.header.source});
    // A variant's trace names its overrides.
    if !t.header.sets.is_empty() {
        other["sets"] = json!(t.header.sets);
    }
    format!(
        "{{\"displayTimeUnit\": \"ms\", \"otherData\": {other},\n\"traceEvents\": [\n{}\n]}}\n",
        lines.join(",\n")
    )
}

/// The slice of each step of each actor: its start and its items.
struct Slice {
    actor: usize,
    ts: u64,
    items: Vec<usize>,
}

/// Every actor's steps as slices, one after another at the same virtual
/// time, and the slice of each item (`usize::MAX` for an item of no step).
fn slices_of<M, T>(t: &Trace<M, T>) -> (Vec<Slice>, Vec<usize>) {
    let n = t.header.actors.len();
    let mut slices: Vec<Slice> = Vec::new();
    let mut free_from = vec![0u64; n];
    let mut slice_of = vec![usize::MAX; t.items.len()];
    let mut current: Option<(u64, u32)> = None;
    for (i, it) in t.items.iter().enumerate() {
        let own = match &it.what {
            What::Mix { .. } | What::Healing {} | What::Elided { .. } => false,
            // The receiver was down: no step of the sender's.
            What::Drop { reason, .. } => *reason != DropReason::ReceiverDown.as_str(),
            _ => true,
        };
        if !own {
            continue;
        }
        if current != Some((it.step, it.actor_id)) {
            let a = it.actor_id as usize;
            let ts = it.time_us.max(free_from[a]);
            free_from[a] = ts + 1;
            slices.push(Slice {
                actor: a,
                ts,
                items: Vec::new(),
            });
            current = Some((it.step, it.actor_id));
        }
        let k = slices.len() - 1;
        slices[k].items.push(i);
        slice_of[i] = k;
    }
    (slices, slice_of)
}

/// Each slice as a 1 µs event, and the time an actor was down before a restart.
fn slice_events<M: Display, T: Display>(
    t: &Trace<M, T>,
    slices: &[Slice],
    ev: &mut Vec<serde_json::Value>,
) {
    use serde_json::json;
    let n = t.header.actors.len();
    let mut down: Vec<Option<u64>> = vec![None; n];
    for s in slices {
        let first = &t.items[s.items[0]];
        let main = s
            .items
            .iter()
            .map(|&i| &t.items[i])
            .find(|it| !matches!(it.what, What::TimerSet { .. }))
            .unwrap_or(first);
        let lines: Vec<String> = s
            .items
            .iter()
            .map(|&i| &t.items[i])
            .filter(|it| !matches!(it.what, What::TimerSet { .. }))
            .map(describe)
            .collect();
        let tid = s.actor + 1;
        if matches!(main.what, What::Restart {}) {
            if let Some(from) = down[s.actor].take() {
                if s.ts > from {
                    ev.push(json!({"ph": "X", "name": "down (crashed)", "cat": "crash", "pid": 1, "tid": tid,
                        "ts": from, "dur": s.ts - from}));
                }
            }
        }
        ev.push(json!({"ph": "X", "name": describe(main), "cat": main.what.kind(), "pid": 1, "tid": tid,
            "ts": s.ts, "dur": 1, "args": {"step": first.step, "time_us": first.time_us, "lines": lines}}));
        if s.items
            .iter()
            .any(|&i| matches!(t.items[i].what, What::Crash {}))
        {
            down[s.actor] = Some(s.ts + 1);
        }
    }
}

/// Flows from each send to its deliveries, and the instants (drops,
/// healing, gaps), in item order.
fn flow_events<M: Display, T: Display>(
    t: &Trace<M, T>,
    slices: &[Slice],
    slice_of: &[usize],
    ev: &mut Vec<serde_json::Value>,
) {
    use serde_json::json;
    // Flows and instants, in item order.
    // The slice each message was sent from, by message id.
    let mut sent: BTreeMap<u32, usize> = BTreeMap::new();
    let mut flow = 0u64;
    for (i, it) in t.items.iter().enumerate() {
        match &it.what {
            What::Send { msg_id, .. } => {
                sent.insert(*msg_id, slice_of[i]);
            }
            What::Deliver { msg_id, msg, .. } => {
                let Some(&from) = sent.get(msg_id) else {
                    continue;
                };
                let to = &slices[slice_of[i]];
                let from = &slices[from];
                flow += 1;
                ev.push(
                    json!({"ph": "s", "id": flow, "name": msg.to_string(), "cat": "message", "pid": 1,
                    "tid": from.actor + 1, "ts": from.ts as f64 + 0.5}),
                );
                ev.push(json!({"ph": "f", "bp": "e", "id": flow, "name": msg.to_string(), "cat": "message", "pid": 1,
                    "tid": to.actor + 1, "ts": to.ts as f64 + 0.5}));
            }
            What::Drop { to_id, reason, .. } => {
                let (tid, ts) = if *reason == DropReason::ReceiverDown.as_str() {
                    (*to_id as usize + 1, it.time_us as f64)
                } else {
                    let s = &slices[slice_of[i]];
                    (s.actor + 1, s.ts as f64 + 0.5)
                };
                ev.push(json!({"ph": "i", "s": "t", "name": describe(it), "cat": "drop", "pid": 1, "tid": tid,
                    "ts": ts, "args": {"step": it.step}}));
            }
            What::Healing {} | What::Elided { .. } => ev.push(
                json!({"ph": "i", "s": "g", "name": describe(it), "cat": "healing",
                "pid": 1, "tid": 1, "ts": it.time_us}),
            ),
            _ => {}
        }
    }
}
