//! The trace formats of `replay` and `shrink`, all derived from [`Trace`].

use super::items::{describe, Item, Trace, What};
use super::time;
use petgraph::graph::{DiGraph, NodeIndex};
use sim::DropReason;
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
/// Long runs of steps that repeat (a retry loop against a partition) are
/// folded, so a shrunk trace stays on one screen.
pub fn text(t: &Trace) -> String {
    let mut out = header_line(t) + "\n";
    for line in fold(text_blocks(t, false), |n, p, a, b| {
        format!(
            "     {:>12}  ⋮ … {n} more times the {p} step(s) above, #{a} to #{b} …",
            ""
        )
    }) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "=> {}", t.end.sentence);
    out
}

/// The text trace's lines, one block per engine step, with the items each
/// line shows. Timer sets, quiet swarm mixes and quiet observations are left
/// out; with `show_turn`, the point of no return is kept even when it is one
/// of those (the HTML report must not hide the decisive moment).
pub fn text_blocks(t: &Trace, show_turn: bool) -> Vec<Block> {
    let width = t.header.actors.iter().map(|n| n.len()).max().unwrap_or(6);
    let mut blocks: Vec<Block> = Vec::new();
    for (i, it) in t.items.iter().enumerate() {
        let is_turn = t.end.turn == Some(i);
        if matches!(
            it.what,
            What::TimerSet { .. }
                | What::Mix { quiet: true, .. }
                | What::Observe { quiet: true, .. }
        ) && !(show_turn && is_turn)
        {
            continue;
        }
        let first = blocks.last().is_none_or(|b| b.step != it.step);
        if first {
            blocks.push(Block::new(it.step));
        }
        let step = if first {
            format!("#{}", it.step)
        } else {
            String::new()
        };
        let block = blocks.last_mut().expect("a block per step");
        let mark = if is_turn {
            block.pinned = true;
            "  ◀ point of no return"
        } else {
            ""
        };
        block.pinned |= matches!(it.what, What::Effect { .. } | What::Healing {});
        let line = if matches!(it.what, What::Healing {}) {
            format!("{step:>4} {:>12}  {}", time(it.time_us), describe(it))
        } else {
            format!(
                "{step:>4} {:>12}  {:<width$}  {}{mark}",
                time(it.time_us),
                it.actor,
                describe(it)
            )
        };
        block.lines.push(line);
        block.items.push(i);
    }
    blocks
}

/// The lines one engine step printed.
pub struct Block {
    pub step: u64,
    pub lines: Vec<String>,
    /// The items the lines show, one per line (empty in Mermaid's blocks).
    pub items: Vec<usize>,
    /// Never folded: effects, the point of no return, the healing marker.
    pub pinned: bool,
}

impl Block {
    fn new(step: u64) -> Block {
        Block {
            step,
            lines: Vec::new(),
            items: Vec::new(),
            pinned: false,
        }
    }

    /// The block with every number and every run of spaces collapsed, so
    /// the rounds of a loop look alike whatever their times and counters.
    fn shape(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            let mut prev = '\n';
            for c in line.chars() {
                let c = match c {
                    '0'..='9' | '.' if prev == '0' || c != '.' => '0',
                    ' ' => ' ',
                    c => c,
                };
                if !(c == prev && (c == '0' || c == ' ')) {
                    out.push(c);
                }
                prev = c;
            }
            out.push('\n');
        }
        out
    }
}

/// A stretch of blocks in a folded rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Blocks shown as they are.
    Shown(std::ops::Range<usize>),
    /// `repeats` repetitions of a period of `period` blocks, hidden between
    /// the first period and the last (both shown, as `Shown` around it).
    Folded {
        blocks: std::ops::Range<usize>,
        repeats: usize,
        period: usize,
    },
}

/// Where runs of at least four repetitions of a period of 1 to 3 blocks
/// are folded: the first period and the last stay, the ones between are
/// hidden. Blocks are compared by their [`Block::shape`]; pinned blocks are
/// never folded. The text and Mermaid traces print this plan, and the HTML
/// report draws it with a control that unfolds it.
pub fn fold_plan(blocks: &[Block]) -> Vec<Segment> {
    const MIN_REPEATS: usize = 4;
    let shapes: Vec<String> = blocks.iter().map(Block::shape).collect();
    let free = |i: usize| !blocks[i].pinned;
    let mut out = Vec::new();
    let mut shown_from = 0;
    let mut i = 0;
    while i < blocks.len() {
        let mut best = (0, 0);
        for p in 1..=3 {
            let mut k = 1;
            while i + (k + 1) * p <= blocks.len()
                && (0..p).all(|j| {
                    let a = i + j;
                    let b = i + k * p + j;
                    free(a) && free(b) && shapes[a] == shapes[b]
                })
            {
                k += 1;
            }
            if k >= MIN_REPEATS && k * p > best.0 * best.1 {
                best = (k, p);
            }
        }
        let (k, p) = best;
        if k == 0 {
            i += 1;
            continue;
        }
        out.push(Segment::Shown(shown_from..i + p));
        out.push(Segment::Folded {
            blocks: i + p..i + (k - 1) * p,
            repeats: k - 2,
            period: p,
        });
        shown_from = i + (k - 1) * p;
        i += k * p;
    }
    out.push(Segment::Shown(shown_from..blocks.len()));
    out.retain(|s| !matches!(s, Segment::Shown(r) if r.is_empty()));
    out
}

/// The lines of `blocks` with [`fold_plan`]'s folds replaced by one summary
/// line, made by `summary(repeats, period, first hidden step, last hidden step)`.
fn fold(blocks: Vec<Block>, summary: impl Fn(usize, usize, u64, u64) -> String) -> Vec<String> {
    let mut out = Vec::new();
    for segment in fold_plan(&blocks) {
        match segment {
            Segment::Shown(r) => {
                for b in &blocks[r] {
                    out.extend(b.lines.iter().cloned());
                }
            }
            Segment::Folded {
                blocks: r,
                repeats,
                period,
            } => out.push(summary(
                repeats,
                period,
                blocks[r.start].step,
                blocks[r.end - 1].step,
            )),
        }
    }
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
    let mut blocks: Vec<Block> = Vec::new();
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
            What::TimerFired { timer } => {
                format!("Note over {}: {at} · timer: {timer}{turn}", it.actor)
            }
            What::Observe { quiet: true, .. } if turn.is_empty() => continue,
            What::Observe { text, .. } => format!("Note over {}: {at} · {text}{turn}", it.actor),
            What::Healing {} => format!("Note over {all}: {at} · healing phase: faults stop"),
            // Sends show as arrows when delivered; starts, mixes, timer sets
            // and situations would only crowd the diagram. Unless one of them
            // is the point of no return (a send that commits to an order, a
            // failed commit that has no other entry): hiding it would hide
            // the decisive moment.
            What::Send { .. }
            | What::Start {}
            | What::Mix { .. }
            | What::TimerSet { .. }
            | What::Situation { .. } => {
                if turn.is_empty() {
                    continue;
                }
                format!("Note over {}: {at} · {}{turn}", it.actor, describe(it))
            }
        };
        if blocks.last().is_none_or(|b| b.step != it.step) {
            blocks.push(Block::new(it.step));
        }
        let block = blocks.last_mut().expect("a block per step");
        block.pinned |=
            !turn.is_empty() || matches!(it.what, What::Effect { .. } | What::Healing {});
        block.lines.push(format!("    {}", mm(&line)));
    }
    for line in fold(blocks, |n, p, a, b| {
        format!("    Note over {all}: … {n} more times the {p} step(s) above, #{a} to #{b} …")
    }) {
        let _ = writeln!(out, "{line}");
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
        let shown_situation = matches!(it.what, What::Situation { .. }) && t.end.turn == Some(i);
        if !shown_situation
            && matches!(
                it.what,
                What::Mix { .. }
                    | What::TimerSet { .. }
                    | What::Healing {}
                    | What::Situation { .. }
                    | What::Observe { quiet: true, .. }
            )
        {
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

/// Chrome trace events, for https://ui.perfetto.dev or chrome://tracing: one
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
pub fn chrome(t: &Trace) -> String {
    use serde_json::json;
    let n = t.header.actors.len();
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
    // The slice of each step of each actor: its start and its items.
    struct Slice {
        actor: usize,
        ts: u64,
        items: Vec<usize>,
    }
    let mut slices: Vec<Slice> = Vec::new();
    let mut free_from = vec![0u64; n];
    let mut slice_of = vec![usize::MAX; t.items.len()];
    let mut current: Option<(u64, u32)> = None;
    for (i, it) in t.items.iter().enumerate() {
        let own = match &it.what {
            What::Mix { .. } | What::Healing {} => false,
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
    let mut down: Vec<Option<u64>> = vec![None; n];
    for s in &slices {
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
    // Flows and instants, in item order.
    let mut sent: Vec<(u32, usize)> = Vec::new();
    let mut flow = 0u64;
    for (i, it) in t.items.iter().enumerate() {
        match &it.what {
            What::Send { msg_id, .. } => sent.push((*msg_id, slice_of[i])),
            What::Deliver { msg_id, msg, .. } => {
                let Some(&(_, from)) = sent.iter().rev().find(|(id, _)| id == msg_id) else {
                    continue;
                };
                let to = &slices[slice_of[i]];
                let from = &slices[from];
                flow += 1;
                ev.push(
                    json!({"ph": "s", "id": flow, "name": msg, "cat": "message", "pid": 1,
                    "tid": from.actor + 1, "ts": from.ts as f64 + 0.5}),
                );
                ev.push(json!({"ph": "f", "bp": "e", "id": flow, "name": msg, "cat": "message", "pid": 1,
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
            What::Healing {} => ev.push(
                json!({"ph": "i", "s": "g", "name": describe(it), "cat": "healing",
                "pid": 1, "tid": 1, "ts": it.time_us}),
            ),
            _ => {}
        }
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
