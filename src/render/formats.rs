//! The trace formats of `replay` and `shrink`, all derived from [`Trace`].

use super::items::{describe, Item, Trace, What};
use super::time;
use petgraph::graph::{DiGraph, NodeIndex};
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A timeline for people: step, virtual time, actor, event, annotations.
    Text,
    /// JSON Lines, one {type, data} per entry: the source of every other format.
    Json,
    /// A Mermaid sequenceDiagram (renders on GitHub).
    Mermaid,
    /// The happens-before graph in Graphviz dot.
    Dot,
    /// Chrome trace-event JSON: open in https://ui.perfetto.dev.
    Chrome,
}

pub fn render(format: Format, t: &Trace) -> String {
    match format {
        Format::Text => text(t),
        Format::Json => json(t),
        Format::Mermaid => mermaid(t),
        Format::Dot => dot(t),
        Format::Chrome => chrome(t),
    }
}

fn header_line(t: &Trace) -> String {
    let h = &t.header;
    let mut s = format!("# {} · {} · {} events", h.scenario, h.source, h.events);
    if let Some(sh) = &h.shrink {
        let _ = write!(
            s,
            " (was {}; {} → {} decisions, {} reruns{})",
            sh.original_events,
            sh.original_decisions,
            sh.shrunk_decisions,
            sh.runs,
            if sh.complete {
                ""
            } else {
                ", rerun bound hit: not minimal"
            }
        );
    }
    s
}

/// Timer sets are left out: the firing shows them where they matter.
pub fn text(t: &Trace) -> String {
    let width = t.header.actors.iter().map(|n| n.len()).max().unwrap_or(6);
    let mut out = header_line(t) + "\n";
    let mut last_step = u64::MAX;
    for (i, it) in t.items.iter().enumerate() {
        if matches!(
            it.what,
            What::TimerSet { .. } | What::Mix { quiet: true, .. }
        ) {
            continue;
        }
        let step = if it.step != last_step {
            last_step = it.step;
            format!("#{}", it.step)
        } else {
            String::new()
        };
        let mark = if t.end.turn == Some(i) {
            "  ◀ point of no return"
        } else {
            ""
        };
        if matches!(it.what, What::Healing {}) {
            let _ = writeln!(out, "{step:>4} {:>12}  {}", time(it.time_us), describe(it));
            continue;
        }
        let _ = writeln!(
            out,
            "{step:>4} {:>12}  {:<width$}  {}{mark}",
            time(it.time_us),
            it.actor,
            describe(it)
        );
    }
    let _ = writeln!(out, "=> {}", t.end.sentence);
    out
}

pub fn json(t: &Trace) -> String {
    let mut out = String::new();
    let line = |kind: &str, data: serde_json::Value| super::json_line(kind, data);
    out += &line(
        "run",
        serde_json::to_value(&t.header).expect("a header serializes"),
    );
    out.push('\n');
    for it in &t.items {
        out += &line(
            it.what.kind(),
            serde_json::to_value(it).expect("an item serializes"),
        );
        out.push('\n');
    }
    out += &line(
        "end",
        serde_json::to_value(&t.end).expect("an ending serializes"),
    );
    out.push('\n');
    out
}

/// Mermaid reads `;` as a statement end and `#` as an entity start.
fn mm(s: &str) -> String {
    s.replace(';', ",").replace('#', "#35;")
}

pub fn mermaid(t: &Trace) -> String {
    let mut out = String::from("sequenceDiagram\n");
    for a in &t.header.actors {
        let _ = writeln!(out, "    participant {a}");
    }
    let all = format!(
        "{},{}",
        t.header.actors.first().map_or("", String::as_str),
        t.header.actors.last().map_or("", String::as_str)
    );
    for (i, it) in t.items.iter().enumerate() {
        let at = time(it.time_us);
        let turn = if t.end.turn == Some(i) {
            " ◀ point of no return"
        } else {
            ""
        };
        let line = match &it.what {
            What::Deliver {
                from,
                msg,
                duplicate,
                note,
                ..
            } => {
                let dup = if *duplicate {
                    " (network duplicate)"
                } else {
                    ""
                };
                let note = note.map(|n| format!(" ← {n}")).unwrap_or_default();
                format!("{from}->>{}: {at} · {msg}{dup}{note}{turn}", it.actor)
            }
            What::Drop { to, msg, note, .. } => {
                format!("{}-x{to}: {at} · ✗ {note}: {msg}{turn}", it.actor)
            }
            What::Crash {} | What::Restart {} | What::Effect { .. } | What::Attempt { .. } => {
                format!("Note over {}: {at} · {}{turn}", it.actor, describe(it))
            }
            What::TimerFired { tag } => {
                format!("Note over {}: {at} · timer {tag} fires{turn}", it.actor)
            }
            What::Observe { text } => format!("Note over {}: {at} · {text}{turn}", it.actor),
            What::Healing {} => format!("Note over {all}: {at} · healing phase: faults stop"),
            // Sends show as arrows when delivered; starts, mixes, timer sets
            // and situations would only crowd the diagram.
            What::Send { .. }
            | What::Start {}
            | What::Mix { .. }
            | What::TimerSet { .. }
            | What::Situation { .. } => continue,
        };
        let _ = writeln!(out, "    {}", mm(&line));
    }
    let _ = writeln!(
        out,
        "    {}",
        mm(&format!("Note over {all}: {}", t.end.sentence))
    );
    out
}

/// A node of the happens-before graph.
struct HbNode {
    label: String,
    color: &'static str,
}

/// Each actor's own order, plus send → receive (and send → loss) edges.
pub fn dot(t: &Trace) -> String {
    let mut g: DiGraph<HbNode, &'static str> = DiGraph::new();
    let mut last: Vec<Option<NodeIndex>> = vec![None; t.header.actors.len()];
    let mut sends: Vec<(u32, NodeIndex)> = Vec::new();
    let mut turn_node = None;
    for (i, it) in t.items.iter().enumerate() {
        if matches!(
            it.what,
            What::Mix { .. } | What::TimerSet { .. } | What::Healing {} | What::Situation { .. }
        ) {
            continue;
        }
        let color = match it.what {
            What::Drop { .. } | What::Crash {} => "red",
            What::Effect { .. } => "blue",
            _ => "black",
        };
        let label = format!(
            "#{} {} {}\n{}",
            it.step,
            time(it.time_us),
            it.actor,
            describe(it)
        );
        let node = g.add_node(HbNode { label, color });
        if t.end.turn == Some(i) {
            turn_node = Some(node);
        }
        let a = it.actor_id as usize;
        if let Some(prev) = last[a] {
            g.add_edge(prev, node, "order");
        }
        last[a] = Some(node);
        match &it.what {
            What::Send { msg_id, .. } => sends.push((*msg_id, node)),
            What::Drop { msg_id, .. } | What::Deliver { msg_id, .. } => {
                if let Some(&(_, from)) = sends.iter().find(|(id, _)| id == msg_id) {
                    g.add_edge(from, node, "message");
                }
            }
            _ => {}
        }
    }
    let mut out = String::from("digraph happens_before {\n    rankdir=TB;\n    node [shape=box, fontname=\"monospace\"];\n");
    for n in g.node_indices() {
        let w = &g[n];
        let extra = if Some(n) == turn_node {
            ", penwidth=3"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "    n{} [label=\"{}\", color={}{extra}];",
            n.index(),
            dot_escape(&w.label),
            w.color
        );
    }
    for e in g.edge_indices() {
        let (a, b) = g.edge_endpoints(e).expect("edge exists");
        let style = if g[e] == "message" {
            "style=dashed, color=gray40"
        } else {
            "style=solid"
        };
        let _ = writeln!(out, "    n{} -> n{} [{style}];", a.index(), b.index());
    }
    let _ = writeln!(out, "    label=\"{}\";\n}}", dot_escape(&t.end.sentence));
    out
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Chrome trace events: one thread per actor (pid 1), instants for what
/// happens at an actor, complete ("X") slices for downtime after a crash and
/// for each message's flight (pid 2, one thread per message).
pub fn chrome(t: &Trace) -> String {
    use serde_json::json;
    let mut ev = Vec::new();
    ev.push(
        json!({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "actors"}}),
    );
    ev.push(json!({"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "messages in flight"}}));
    for (i, a) in t.header.actors.iter().enumerate() {
        ev.push(
            json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": i + 1, "args": {"name": a}}),
        );
    }
    let mut down: Vec<Option<u64>> = vec![None; t.header.actors.len()];
    for it in &t.items {
        let tid = it.actor_id as usize + 1;
        match &it.what {
            What::TimerSet { .. } | What::Mix { .. } => continue,
            What::Crash {} => down[it.actor_id as usize] = Some(it.time_us),
            What::Restart {} => {
                if let Some(from) = down[it.actor_id as usize].take() {
                    ev.push(json!({"ph": "X", "name": "down (crashed)", "cat": "crash", "pid": 1, "tid": tid,
                        "ts": from, "dur": it.time_us - from}));
                }
            }
            What::Send {
                to,
                msg,
                msg_id,
                deliver_at_us,
                ..
            } => {
                ev.push(
                    json!({"ph": "M", "name": "thread_name", "pid": 2, "tid": msg_id + 1,
                    "args": {"name": format!("msg {msg_id}: {} → {to}", it.actor)}}),
                );
                ev.push(
                    json!({"ph": "X", "name": msg, "cat": "message", "pid": 2, "tid": msg_id + 1,
                    "ts": it.time_us, "dur": deliver_at_us - it.time_us,
                    "args": {"from": it.actor, "to": to, "step": it.step}}),
                );
            }
            _ => {}
        }
        ev.push(json!({"ph": "i", "s": "t", "name": describe(it), "cat": it.what.kind(), "pid": 1, "tid": tid,
            "ts": it.time_us, "args": {"step": it.step}}));
    }
    ev.push(
        json!({"ph": "i", "s": "g", "name": t.end.sentence, "cat": "end", "pid": 1, "tid": 1,
        "ts": t.items.last().map_or(0, |i: &Item| i.time_us)}),
    );
    // One event per line: small diffs, and still one JSON document.
    let lines: Vec<String> = ev.iter().map(|e| e.to_string()).collect();
    let other = json!({"scenario": t.header.scenario, "source": t.header.source});
    format!(
        "{{\"displayTimeUnit\": \"ms\", \"otherData\": {other},\n\"traceEvents\": [\n{}\n]}}\n",
        lines.join(",\n")
    )
}
