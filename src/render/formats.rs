//! The trace formats of `replay` and `shrink`, all derived from [`Trace`].

use super::items::{describe, Item, Trace, What};
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
    /// Chrome trace-event JSON: open in https://ui.perfetto.dev.
    // clap prints the line above as `--format`'s help: a bare URL reads best there.
    #[allow(rustdoc::bare_urls)]
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
    let mut s = format!("# {} · {} · {} events", h.scenario, h.source, h.events);
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

/// Timer sets are left out: the firing shows them where they matter.
/// Long runs of steps that repeat (a retry loop against a partition) are
/// folded, so a shrunk trace stays on one screen.
pub fn text<M: Display, T: Display>(t: &Trace<M, T>) -> String {
    let width = t.header.actors.iter().map(|n| n.len()).max().unwrap_or(6);
    let mut out = header_line(t) + "\n";
    let shows = |i: usize| {
        !matches!(
            t.items[i].what,
            What::TimerSet { .. }
                | What::Mix { quiet: true, .. }
                | What::Observe { quiet: true, .. }
        )
    };
    let line = |i: usize, first: bool| {
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
        if matches!(it.what, What::Healing {}) {
            format!("{step:>4} {:>12}  {}", time(it.time_us), describe(it))
        } else {
            format!(
                "{step:>4} {:>12}  {:<width$}  {}{mark}",
                time(it.time_us),
                it.actor,
                describe(it)
            )
        }
    };
    folded(t, shows, line, &mut out, |n, p, a, b| {
        format!(
            "     {:>12}  ⋮ … {n} more times the {p} step(s) above, #{a} to #{b} …",
            ""
        )
    });
    let _ = writeln!(out, "=> {}", t.end.sentence);
    out
}

/// The items one engine step shows: `shown[lo..hi]`. Lines are not kept but
/// formatted again when printed, so a long trace costs one line at a time.
struct Block {
    step: u64,
    lo: usize,
    hi: usize,
    /// Never folded: effects, the point of no return, the healing marker.
    pinned: bool,
    /// A hash of the block's lines with every number and run of spaces
    /// collapsed, so the rounds of a loop look alike whatever their times and counters.
    shape: u64,
}

/// FNV-1a over the shape of a line: digits (and dots between them) become one
/// `0`, runs of spaces one space.
fn hash_shape(h: &mut u64, line: &str) {
    let mut prev = '\n';
    let mut push = |c: char| {
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            *h ^= u64::from(b);
            *h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for c in line.chars() {
        let c = match c {
            '0'..='9' | '.' if prev == '0' || c != '.' => '0',
            c => c,
        };
        if !(c == prev && (c == '0' || c == ' ')) {
            push(c);
        }
        prev = c;
    }
    push('\n');
}

/// Prints the items `shows` keeps, one `line(item, first of its step)` each,
/// folding runs of at least four repetitions of a period of 1 to 3 steps into
/// the first period, one `summary` line and the last period.
fn folded<M, T>(
    t: &Trace<M, T>,
    shows: impl Fn(usize) -> bool,
    line: impl Fn(usize, bool) -> String,
    out: &mut String,
    summary: impl Fn(usize, usize, u64, u64) -> String,
) {
    const MIN_REPEATS: usize = 4;
    let mut shown: Vec<usize> = Vec::new();
    let mut blocks: Vec<Block> = Vec::new();
    for (i, it) in t.items.iter().enumerate() {
        if !shows(i) {
            continue;
        }
        if blocks.last().is_none_or(|b| b.step != it.step) {
            blocks.push(Block {
                step: it.step,
                lo: shown.len(),
                hi: shown.len(),
                pinned: false,
                shape: 0xcbf2_9ce4_8422_2325,
            });
        }
        shown.push(i);
        let block = blocks.last_mut().expect("a block per step");
        block.hi = shown.len();
        block.pinned |=
            t.end.turn == Some(i) || matches!(it.what, What::Effect { .. } | What::Healing {});
    }
    for b in &mut blocks {
        for (k, &item) in shown[b.lo..b.hi].iter().enumerate() {
            hash_shape(&mut b.shape, &line(item, k == 0));
        }
    }
    let emit = |b: &Block, out: &mut String| {
        for (k, &item) in shown[b.lo..b.hi].iter().enumerate() {
            let _ = writeln!(out, "{}", line(item, k == 0));
        }
    };
    let free = |i: usize| !blocks[i].pinned;
    let mut i = 0;
    while i < blocks.len() {
        let mut best = (0, 0);
        for p in 1..=3 {
            let mut k = 1;
            while i + (k + 1) * p <= blocks.len()
                && (0..p).all(|j| {
                    let a = i + j;
                    let b = i + k * p + j;
                    free(a) && free(b) && blocks[a].shape == blocks[b].shape
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
            emit(&blocks[i], out);
            i += 1;
            continue;
        }
        for b in &blocks[i..i + p] {
            emit(b, out);
        }
        let hidden_first = blocks[i + p].step;
        let hidden_last = blocks[i + (k - 1) * p - 1].step;
        let _ = writeln!(out, "{}", summary(k - 2, p, hidden_first, hidden_last));
        for b in &blocks[i + (k - 1) * p..i + k * p] {
            emit(b, out);
        }
        i += k * p;
    }
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
    for a in &t.header.actors {
        let _ = writeln!(out, "    participant {a}");
    }
    let all = format!(
        "{},{}",
        t.header.actors.first().map_or("", String::as_str),
        t.header.actors.last().map_or("", String::as_str)
    );
    // Sends show as arrows when delivered; starts, mixes, timer sets and
    // situations would only crowd the diagram. Unless one of them is the
    // point of no return (a send that commits to an order, a failed commit
    // that has no other entry): hiding it would hide the decisive moment.
    let shows = |i: usize| {
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
    };
    let line = |i: usize, _first: bool| {
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
            _ => format!(
                "Note over {}: {}",
                it.actor,
                mm(&format!("{at} · {}{turn}", describe(it)))
            ),
        };
        format!("    {line}")
    };
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

/// Mermaid's default `maxTextSize`: a longer diagram renders as an error
/// (GitHub uses the default).
pub const MERMAID_MAX_TEXT: usize = 50_000;

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

/// Each actor's own order, plus send → receive (and send → loss) edges.
pub fn dot<M: Display, T: Display>(t: &Trace<M, T>) -> String {
    let mut g: DiGraph<HbNode, &'static str> = DiGraph::new();
    let mut last: Vec<Option<NodeIndex>> = vec![None; t.header.actors.len()];
    // Message id → the node of its send (the first, should one repeat).
    let mut sends: std::collections::BTreeMap<u32, NodeIndex> = std::collections::BTreeMap::new();
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
pub fn chrome<M: Display, T: Display>(t: &Trace<M, T>) -> String {
    use serde_json::json;
    // Each event is written out as soon as it is made: one line each (small
    // diffs), and still one JSON document, without a tree of the whole trace.
    let mut lines = String::new();
    let mut push = |e: serde_json::Value| {
        if !lines.is_empty() {
            lines.push_str(",\n");
        }
        let _ = write!(lines, "{e}");
    };
    push(
        json!({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "actors"}}),
    );
    push(
        json!({"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "messages in flight"}}),
    );
    for (i, a) in t.header.actors.iter().enumerate() {
        push(
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
                    push(
                        json!({"ph": "X", "name": "down (crashed)", "cat": "crash", "pid": 1, "tid": tid,
                        "ts": from, "dur": it.time_us - from}),
                    );
                }
            }
            What::Send {
                to,
                msg,
                msg_id,
                deliver_at_us,
                ..
            } => {
                push(
                    json!({"ph": "M", "name": "thread_name", "pid": 2, "tid": msg_id + 1,
                    "args": {"name": format!("msg {msg_id}: {} → {to}", it.actor)}}),
                );
                push(
                    json!({"ph": "X", "name": msg.to_string(), "cat": "message", "pid": 2, "tid": msg_id + 1,
                    "ts": it.time_us, "dur": deliver_at_us - it.time_us,
                    "args": {"from": it.actor, "to": to, "step": it.step}}),
                );
            }
            _ => {}
        }
        push(
            json!({"ph": "i", "s": "t", "name": describe(it), "cat": it.what.kind(), "pid": 1, "tid": tid,
            "ts": it.time_us, "args": {"step": it.step}}),
        );
    }
    push(
        json!({"ph": "i", "s": "g", "name": t.end.sentence, "cat": "end", "pid": 1, "tid": 1,
        "ts": t.items.last().map_or(0, |i: &Item<M, T>| i.time_us)}),
    );
    let other = json!({"scenario": t.header.scenario, "source": t.header.source});
    format!("{{\"displayTimeUnit\": \"ms\", \"otherData\": {other},\n\"traceEvents\": [\n{lines}\n]}}\n")
}
