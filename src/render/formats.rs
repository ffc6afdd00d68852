//! The trace formats of `replay` and `shrink`, all derived from [`Trace`].

pub use super::chrome::chrome;
pub use super::fold::{fold_plan, Block, Segment};
use super::fold::{folded, pinned};
use super::items::{describe, Trace, What};
use super::time;
use petgraph::graph::{DiGraph, NodeIndex};
use std::fmt::{Display, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
/// A trace format, as `--format` names it.
pub enum Format {
    /// A timeline for people: step, virtual time, actor, event, annotations.
    Text,
    /// JSON Lines, one {type, data} per entry: the source of every other format.
    Json,
    /// A Mermaid sequenceDiagram (renders on GitHub).
    Mermaid,
    /// The happens-before graph in Graphviz dot.
    Dot,
    #[allow(rustdoc::bare_urls)]
    /// Chrome trace-event JSON: open in https://ui.perfetto.dev.
    Chrome,
}

/// `t` in `format`.
pub fn render<M: Display, T: Display>(format: Format, t: &Trace<M, T>) -> String {
    match format {
        Format::Text => text(t),
        Format::Json => json(t),
        Format::Mermaid => mermaid(t),
        Format::Dot => dot(t),
        Format::Chrome => chrome(t),
    }
}

fn header_line<M, T>(t: &Trace<M, T>) -> String {
    let h = &t.header;
    let mut s = format!("# {}", h.scenario);
    for set in &h.sets {
        let _ = write!(s, " --set {set}");
    }
    let _ = write!(s, " · {} · {} events", h.source, h.events);
    if let Some(sh) = &h.shrink {
        let _ = write!(
            s,
            " (was {}; {} → {} decisions, {} reruns{})",
            sh.original_events,
            sh.original_decisions,
            sh.shrunk_decisions,
            sh.runs,
            match (sh.complete, sh.stopped) {
                (true, _) => String::new(),
                (false, Some(why)) => format!(", {why}: not minimal"),
                (false, None) => ", rerun bound hit: not minimal".to_string(),
            }
        );
    }
    s
}

/// Timer sets are left out: the firing shows them where they matter, unless
/// one is the point of no return (a timer set to fire after the lease ends
/// is the decisive moment). Long runs of steps that repeat (a retry loop
/// against a partition) are folded, so a shrunk trace stays on one screen.
pub fn text<M: Display, T: Display>(t: &Trace<M, T>) -> String {
    let width = widths(t);
    let mut out = header_line(t) + "\n";
    let shows = |i: usize| text_shows(t, i, true);
    let line = |i: usize, first: bool| text_line(t, i, first, width);
    let fold = |n, p, a, b| fold_line(n, p, a, b, width.time);
    folded(t, shows, line, &mut out, fold);
    let _ = writeln!(out, "=> {}", t.end.sentence);
    out
}

/// Column widths of the text trace, in characters.
#[derive(Clone, Copy)]
struct Widths {
    actor: usize,
    /// Room for the latest time: 12 up to a day ("23:59:59.999" right-
    /// aligned with "0.001 s"), more for a run that lasts days, so the
    /// columns stay aligned across the first midnight.
    time: usize,
}

fn widths<M, T>(t: &Trace<M, T>) -> Widths {
    let latest_us = t.items.iter().map(|it| it.time_us).max().unwrap_or(0);
    Widths {
        actor: t.header.actors.iter().map(|n| n.len()).max().unwrap_or(6),
        time: time(latest_us).chars().count().max(12),
    }
}

/// The fold line of the text trace, for a time column `time_width` wide.
fn fold_line(n: usize, p: usize, a: u64, b: u64, time_width: usize) -> String {
    format!(
        "     {:>time_width$}  ⋮ … {n} more times the {p} step(s) above, #{a} to #{b} …",
        ""
    )
}

/// Whether the text trace shows item `i`: timer sets, quiet swarm mixes and
/// quiet observations are left out; with `show_turn`, the point of no return
/// is kept even when it is one of those (a report must not hide the decisive
/// moment).
fn text_shows<M, T>(t: &Trace<M, T>, i: usize, show_turn: bool) -> bool {
    let hidden = matches!(
        t.items[i].what,
        What::TimerSet { .. } | What::Mix { quiet: true, .. } | What::Observe { quiet: true, .. }
    );
    !hidden || (show_turn && t.end.turn == Some(i))
}

/// Item `i`'s line in the text trace; `first` of its step carries the step number.
fn text_line<M: Display, T: Display>(
    t: &Trace<M, T>,
    i: usize,
    first: bool,
    width: Widths,
) -> String {
    let (actor_width, time_width) = (width.actor, width.time);
    let it = &t.items[i];
    let step = if first {
        format!("#{}", it.step)
    } else {
        String::new()
    };
    let mark = if t.end.turn == Some(i) {
        "  ◀ point of no return"
    } else {
        ""
    };
    if matches!(it.what, What::Healing {} | What::Elided { .. }) {
        format!(
            "{step:>4} {:>time_width$}  {}",
            time(it.time_us),
            describe(it)
        )
    } else {
        format!(
            "{step:>4} {:>time_width$}  {:<actor_width$}  {}{mark}",
            time(it.time_us),
            it.actor,
            describe(it)
        )
    }
}

/// The text trace's lines as blocks, one per engine step, with the items each
/// line shows, for a report that draws the folds itself ([`fold_plan`]).
pub fn text_blocks<M: Display, T: Display>(t: &Trace<M, T>, show_turn: bool) -> Vec<Block> {
    let width = widths(t);
    let mut blocks: Vec<Block> = Vec::new();
    for (i, it) in t.items.iter().enumerate() {
        if !text_shows(t, i, show_turn) {
            continue;
        }
        let first = blocks.last().is_none_or(|b| b.step != it.step);
        if first {
            blocks.push(Block::new(it.step));
        }
        let block = blocks.last_mut().expect("a block per step");
        block.pinned |= pinned(t, i);
        block.lines.push(text_line(t, i, first, width));
        block.items.push(i);
    }
    blocks
}

/// JSON Lines: a `run` record, one record per item, and the `end` (docs/json-output.md).
pub fn json<M: Display, T: Display>(t: &Trace<M, T>) -> String {
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

/// The one escape for text in a Mermaid diagram (messages, notes, the fold
/// line, the ending). Mermaid's sequence lexer ends a text at `;` (a statement
/// end) and at `#` (a comment or an entity), a newline ends the statement, and
/// the renderer reads `<...>` as HTML: each becomes an entity code, which
/// Mermaid shows as the character itself.
pub fn mm(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '<' => out.push_str("#60;"),
            '>' => out.push_str("#62;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A Mermaid `sequenceDiagram`, cut to fit GitHub's size limit.
pub fn mermaid<M: Display, T: Display>(t: &Trace<M, T>) -> String {
    let mut out = String::from("sequenceDiagram\n");
    // A variant's diagram names its overrides (a comment, which Mermaid ignores).
    for set in &t.header.sets {
        let _ = writeln!(out, "    %% --set {set}");
    }
    for a in &t.header.actors {
        let _ = writeln!(out, "    participant {a}");
    }
    let all = format!(
        "{},{}",
        t.header.actors.first().map_or("", String::as_str),
        t.header.actors.last().map_or("", String::as_str)
    );
    let shows = |i: usize| mermaid_shows(t, i);
    let line = |i: usize, _first: bool| mermaid_line(t, i, &all);
    let mut body = String::new();
    folded(t, shows, line, &mut body, |n, p, a, b| {
        format!(
            "    Note over {all}: {}",
            mm(&format!(
                "… {n} more times the {p} step(s) above, #{a} to #{b} …"
            ))
        )
    });
    let end = format!("    Note over {all}: {}\n", mm(&t.end.sentence));
    if out.len() + body.len() + end.len() > MERMAID_MAX_TEXT {
        let room = MERMAID_MAX_TEXT.saturating_sub(out.len() + end.len() + 600);
        let (kept, left_out) = cut_middle(&body, room);
        crate::eoutln!(
            "warning: the Mermaid diagram of {} events would have {} characters, over the {MERMAID_MAX_TEXT} that Mermaid (and GitHub) render; {left_out} lines in its middle are left out (--format text shows the whole run)",
            t.header.events,
            out.len() + body.len() + end.len()
        );
        out.insert_str(
            "sequenceDiagram\n".len(),
            &format!("    %% idemsim: {left_out} lines left out of the middle to stay under {MERMAID_MAX_TEXT} characters\n"),
        );
        body = kept.replace(
            CUT_MARK,
            &format!(
                "    Note over {all}: {}",
                mm(&format!(
                    "⋮ {left_out} lines left out here: Mermaid renders at most {MERMAID_MAX_TEXT} characters; idemsim replay --format text shows the whole run"
                ))
            ),
        );
    }
    out.push_str(&body);
    out.push_str(&end);
    out
}

/// Whether item `i` shows. Sends show as arrows when delivered; starts, mixes, timer sets and
/// situations would only crowd the diagram. Unless one of them is the
/// point of no return (a send that commits to an order, a failed commit
/// that has no other entry): hiding it would hide the decisive moment.
fn mermaid_shows<M, T>(t: &Trace<M, T>, i: usize) -> bool {
    let hidden = matches!(
        t.items[i].what,
        What::Send { .. }
            | What::Start {}
            | What::Mix { .. }
            | What::TimerSet { .. }
            | What::Situation { .. }
            | What::Observe { quiet: true, .. }
    );
    !hidden || t.end.turn == Some(i)
}

/// Item `i` as one line of the diagram; `all` spans every participant.
fn mermaid_line<M: Display, T: Display>(t: &Trace<M, T>, i: usize, all: &str) -> String {
    let it = &t.items[i];
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
            format!(
                "{from}->>{}: {}",
                it.actor,
                mm(&format!("{at} · {msg}{dup}{note}{turn}"))
            )
        }
        What::Drop { to, msg, note, .. } => {
            format!(
                "{}-x{to}: {}",
                it.actor,
                mm(&format!("{at} · ✗ {note}: {msg}{turn}"))
            )
        }
        What::TimerFired { timer } => {
            format!(
                "Note over {}: {}",
                it.actor,
                mm(&format!("{at} · timer: {timer}{turn}"))
            )
        }
        What::Observe { text, .. } => {
            format!(
                "Note over {}: {}",
                it.actor,
                mm(&format!("{at} · {text}{turn}"))
            )
        }
        What::Healing {} => format!(
            "Note over {all}: {}",
            mm(&format!("{at} · healing phase: faults stop"))
        ),
        What::Elided { .. } => format!("Note over {all}: {}", mm(&describe(it))),
        _ => format!(
            "Note over {}: {}",
            it.actor,
            mm(&format!("{at} · {}{turn}", describe(it)))
        ),
    };
    format!("    {line}")
}

/// Mermaid's default `maxTextSize`: a longer diagram renders as an error
/// (GitHub uses the default).
pub(crate) const MERMAID_MAX_TEXT: usize = 50_000;

const CUT_MARK: &str = "\u{0}cut\u{0}";

/// Keeps the first and last lines of `body` within `room` characters in all,
/// with [`CUT_MARK`] on a line of its own where the others were; and how many
/// lines were left out.
fn cut_middle(body: &str, room: usize) -> (String, usize) {
    let lines: Vec<&str> = body.lines().collect();
    let half = room / 2;
    let mut head = 0;
    let mut used = 0;
    while head < lines.len() && used + lines[head].len() < half {
        used += lines[head].len() + 1;
        head += 1;
    }
    let mut tail = lines.len();
    let mut used_tail = 0;
    while tail > head && used_tail + lines[tail - 1].len() < half {
        used_tail += lines[tail - 1].len() + 1;
        tail -= 1;
    }
    let mut out = String::with_capacity(used + used_tail + CUT_MARK.len() + 1);
    for l in &lines[..head] {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(CUT_MARK);
    out.push('\n');
    for l in &lines[tail..] {
        out.push_str(l);
        out.push('\n');
    }
    (out, tail - head)
}

/// A node of the happens-before graph.
struct HbNode {
    label: String,
    color: &'static str,
}

/// Most nodes a happens-before graph shows: Graphviz lays out a graph of
/// thousands of events (a run under load) for many minutes, and nobody reads
/// it. A longer run keeps its first and last [`DOT_MAX_NODES`]` / 2` events
/// and one node saying how many were left out between them.
pub(crate) const DOT_MAX_NODES: usize = 400;

/// Each actor's own order, plus send → receive (and send → loss) edges.
pub fn dot<M: Display, T: Display>(t: &Trace<M, T>) -> String {
    let mut g: DiGraph<HbNode, &'static str> = DiGraph::new();
    let mut last: Vec<Option<NodeIndex>> = vec![None; t.header.actors.len()];
    // Message id → the node of its send (the first, should one repeat).
    let mut sends: std::collections::BTreeMap<u32, NodeIndex> = std::collections::BTreeMap::new();
    let mut turn_node = None;
    let shown = |i: usize, it: &super::items::Item<M, T>| dot_shows(t, i, it);
    let total = t
        .items
        .iter()
        .enumerate()
        .filter(|&(i, it)| shown(i, it))
        .count();
    // The shown items with these ranks are left out (none when the run is short).
    let cut = (total > DOT_MAX_NODES).then(|| DOT_MAX_NODES / 2..total - DOT_MAX_NODES / 2);
    let mut rank = 0;
    for (i, it) in t.items.iter().enumerate() {
        if !shown(i, it) {
            continue;
        }
        rank += 1;
        if let Some(cut) = cut.as_ref().filter(|c| c.contains(&(rank - 1))) {
            if rank - 1 == cut.start {
                // One node stands for the middle, in every actor's order.
                let node = g.add_node(HbNode {
                    label: format!(
                        "⋮ {} trace entries left out here\n(--format text shows the whole run)",
                        cut.len()
                    ),
                    color: "gray40",
                });
                for l in last.iter_mut().filter(|l| l.is_some()) {
                    g.add_edge(l.expect("filtered"), node, "order");
                    *l = Some(node);
                }
            }
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
            What::Send { msg_id, .. } => {
                sends.entry(*msg_id).or_insert(node);
            }
            What::Drop { msg_id, .. } | What::Deliver { msg_id, .. } => {
                if let Some(&from) = sends.get(msg_id) {
                    g.add_edge(from, node, "message");
                }
            }
            _ => {}
        }
    }
    dot_text(&g, turn_node, &t.end.sentence)
}

/// Whether item `i` is a node: not the run's setup, healing, gaps, quiet
/// observations or situations, unless a situation is the point of no return.
fn dot_shows<M, T>(t: &Trace<M, T>, i: usize, it: &super::items::Item<M, T>) -> bool {
    let shown_situation = matches!(it.what, What::Situation { .. }) && t.end.turn == Some(i);
    shown_situation
        || !matches!(
            it.what,
            What::Mix { .. }
                | What::TimerSet { .. }
                | What::Healing {}
                | What::Elided { .. }
                | What::Situation { .. }
                | What::Observe { quiet: true, .. }
        )
}

/// The graph in dot's syntax, the point of no return drawn thick and the
/// run's sentence as its label.
fn dot_text(
    g: &DiGraph<HbNode, &'static str>,
    turn_node: Option<NodeIndex>,
    sentence: &str,
) -> String {
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
    let _ = writeln!(out, "    label=\"{}\";\n}}", dot_escape(sentence));
    out
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
