//! The report of one run: the data the page's script draws from, and the
//! parts of the page that need no script (header, ledger, repro commands).
//!
//! Rows are the lines of the text trace (the same items, the same folds),
//! so the page and `replay --format text` never disagree about what a run
//! did. Each row is a short array of numbers; texts go through one string
//! table, times and steps are deltas from the row before.

use super::super::formats::{fold_plan, text_blocks, Block, Segment};
use super::super::items::Trace;
use super::super::Entry;
use super::ledger::{ledger, OpRow};
use super::rows::{rows, timer_set_steps};
use super::state::{Change, Delta};
use super::{esc, Strings};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Everything one run's report shows.
pub struct RunInput<'a> {
    /// The trace shown.
    pub trace: &'a Trace,
    /// The raw entries the trace was built from (item `i` is entry `i`).
    pub entries: &'a [Entry],
    /// What each actor held after each step (see [`super::state`]).
    pub changes: &'a [Change],
    /// The operation key of the violation, if the run violated an invariant.
    pub violated: Option<u64>,
    /// Commands that reproduce the run, as (what it does, command).
    pub commands: Vec<(String, String)>,
    /// The run as a repro file (JSON), offered for download, with the
    /// command that replays it once downloaded as `repro.json`.
    pub repro: Option<(String, String)>,
    /// The scenario's design warnings, and where this run reached each.
    pub warnings: Vec<WarningRow>,
}

/// A design warning of the scenario as the report shows it.
pub struct WarningRow {
    /// `key-retention-below-retry-span`.
    pub id: &'static str,
    /// What the settings break, with their values.
    pub text: String,
    /// The situation that marks a run reaching the gap, if one does.
    pub situation: Option<&'static str>,
    /// The step at which this run first reached it.
    pub reached_step: Option<u64>,
    /// A catalog scenario that shows the gap failing.
    pub example: &'static str,
}

/// The JSON document the page's script reads.
pub fn data(input: &RunInput) -> Value {
    let t = input.trace;
    let blocks = text_blocks(t, true);
    let layout = Layout::of(&blocks);
    let folds = folds(&blocks, &layout.first_row);
    let timer_set_step = timer_set_steps(input.entries);
    let mut s = Strings::default();
    let rows = rows(t, &layout.shown, &timer_set_step, &mut s);
    // After the rows, so that the string table numbers their texts first.
    let changes = changes(input.changes, &mut s);
    let row_of = &layout.row_of;
    let end = &t.end;
    let (templates, strings) = s.to_json();
    json!({
        "version": 1,
        "header": t.header,
        "actors": t.header.actors,
        "items": rows,
        "folds": folds,
        "end": {
            "verdict": end.verdict,
            "invariant": end.invariant,
            "operation": end.operation,
            "message": end.message,
            "sentence": end.sentence,
            "effects": end.effects.iter().filter_map(|i| row_of.get(i)).collect::<Vec<_>>(),
            "turn": end.turn.and_then(|i| row_of.get(&i)),
            "turn_step": end.turn_step,
        },
        "changes": changes,
        "T": templates,
        "S": strings,
    })
}

/// Which items the page shows as rows, block by block.
struct Layout {
    /// The items shown, in row order.
    shown: Vec<usize>,
    /// Item index → row, for the rows the page shows.
    row_of: BTreeMap<usize, usize>,
    /// Each block's first row, then the row count.
    first_row: Vec<usize>,
}

impl Layout {
    fn of(blocks: &[Block]) -> Layout {
        let mut row_of: BTreeMap<usize, usize> = BTreeMap::new();
        let mut shown: Vec<usize> = Vec::new();
        let mut first_row = Vec::with_capacity(blocks.len() + 1);
        for b in blocks {
            first_row.push(shown.len());
            for &i in &b.items {
                row_of.insert(i, shown.len());
                shown.push(i);
            }
        }
        first_row.push(shown.len());
        Layout {
            shown,
            row_of,
            first_row,
        }
    }
}

/// The folded repeats of the text trace, as `[first row, end row, repeats,
/// period, first step, last step]`.
fn folds(blocks: &[Block], first_row: &[usize]) -> Vec<Value> {
    fold_plan(blocks)
        .into_iter()
        .filter_map(|seg| match seg {
            Segment::Folded {
                blocks: r,
                repeats,
                period,
            } => Some(json!([
                first_row[r.start],
                first_row[r.end],
                repeats,
                period,
                blocks[r.start].step,
                blocks[r.end - 1].step
            ])),
            Segment::Shown(_) => None,
        })
        .collect()
}

/// What each actor held after each step, as `[step delta, actor, state, storage]`.
fn changes(changes: &[Change], s: &mut Strings) -> Vec<Value> {
    let mut last = 0;
    changes
        .iter()
        .map(|c| {
            let d = c.step - last;
            last = c.step;
            json!([d, c.actor, delta(&c.state, s), delta(&c.storage, s)])
        })
        .collect()
}

/// 0: unchanged, 1: down, `[at, remove, line ids...]`: a hunk.
fn delta(d: &Delta, s: &mut Strings) -> Value {
    match d {
        Delta::Same => json!(0),
        Delta::Down => json!(1),
        Delta::Hunk { at, remove, insert } => {
            let mut v = vec![json!(at), json!(remove)];
            v.extend(insert.iter().map(|l| json!(s.id(l))));
            Value::Array(v)
        }
    }
}

const CSS: &str = include_str!("run.css");
const JS: &str = include_str!("run.js");

/// The whole page.
pub fn page(input: &RunInput) -> String {
    let t = input.trace;
    let h = &t.header;
    let mut body = String::new();
    let shrink = h.shrink.map_or(String::new(), |sh| {
        format!(
            " · shrunk: {} → {} events, {} → {} nonzero decisions{}",
            sh.original_events,
            sh.shrunk_events,
            sh.original_decisions,
            sh.shrunk_decisions,
            if sh.complete {
                ""
            } else {
                " (rerun bound hit: not minimal)"
            }
        )
    });
    let _ = write!(
        body,
        "<header class=\"top\">\n<h1>{}</h1>\n<p class=\"sub\">{} · {} events · {} actors{}</p>\n\
         <p id=\"verdict\" class=\"verdict {}\"><b>{}</b> {}</p>\n",
        esc(&h.scenario),
        esc(&h.source),
        h.events,
        h.actors.len(),
        esc(&shrink),
        esc(t.end.verdict),
        esc(t.end.verdict),
        esc(&t.end.sentence),
    );
    if let Some((_, cmd)) = input.commands.first() {
        let _ = writeln!(
            body,
            "<p class=\"repro\">repro: <code>{}</code> <button class=\"copy\" data-copy=\"{}\">copy</button></p>",
            esc(cmd),
            esc(cmd)
        );
    }
    body.push_str("</header>\n");
    body.push_str(
        "<main class=\"run\">\n<section class=\"pane\" aria-label=\"sequence diagram\">\n\
         <div class=\"toolbar\"><span class=\"hint\">← / → step · click a row · click ⋮ to unfold</span>\
         <span id=\"legend\"></span></div>\n\
         <div id=\"lane-head\"></div>\n<div id=\"scroller\" tabindex=\"0\"><svg id=\"diagram\" xmlns=\"http://www.w3.org/2000/svg\"></svg></div>\n\
         </section>\n<aside id=\"side\">\n<div id=\"step-info\"></div>\n<div id=\"states\"></div>\n</aside>\n</main>\n",
    );
    body.push_str(&warnings_html(&input.warnings));
    body.push_str(&ledger_html(&ledger(input.entries, input.violated)));
    body.push_str(&repro_html(input));
    let _ = write!(
        body,
        "<footer>idemsim {} · a report of one seeded run; every number in it comes from the run's trace</footer>",
        env!("CARGO_PKG_VERSION")
    );
    let title = format!("{} · {} · idemsim", h.scenario, h.source);
    super::page(&title, CSS, &body, &data(input), JS)
}

/// A ledger cell: every mention, or for a long list (thousands of attempts
/// in a retry storm) the first and the last ones around a count, so that
/// the page stays small; the diagram has every one of them.
fn mentions(ms: &[super::ledger::Mention]) -> String {
    const HEAD: usize = 4;
    const TAIL: usize = 3;
    let li = |m: &super::ledger::Mention| {
        format!(
            "<li data-step=\"{}\"><span class=\"at\">#{}</span> {}</li>",
            m.step,
            m.step,
            esc(&m.text)
        )
    };
    if ms.is_empty() {
        return "<span class=\"none\">—</span>".into();
    }
    let mut out = String::from("<ul>");
    if ms.len() <= HEAD + TAIL + 1 {
        ms.iter().for_each(|m| out.push_str(&li(m)));
    } else {
        ms[..HEAD].iter().for_each(|m| out.push_str(&li(m)));
        let hidden = &ms[HEAD..ms.len() - TAIL];
        let _ = write!(
            out,
            "<li class=\"more\">… {} more, steps #{} to #{} …</li>",
            hidden.len(),
            hidden[0].step,
            hidden[hidden.len() - 1].step
        );
        ms[ms.len() - TAIL..]
            .iter()
            .for_each(|m| out.push_str(&li(m)));
    }
    out.push_str("</ul>");
    out
}

fn ledger_html(rows: &[OpRow]) -> String {
    let mut out = String::from(
        "<section id=\"ledger-section\">\n<h2>Effect ledger</h2>\n<p class=\"note\">Per business operation: what was asked, \
         what landed in the outside world, and what the client was finally told. The invariants compare these two \
         facts; a service's own records are not evidence. Click an entry to go to its step.</p>\n",
    );
    if rows.is_empty() {
        out.push_str("<p class=\"none\">No operation was observed in this run.</p>\n</section>\n");
        return out;
    }
    out.push_str(
        "<table id=\"ledger\">\n<thead><tr><th>operation</th><th>asked</th><th>landed</th><th>told</th>\
         <th>landed in the world</th><th>the client knows</th></tr></thead>\n<tbody>\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "<tr{}><td class=\"op\">{}{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"sum\">{}</td><td class=\"sum\">{}</td></tr>",
            if r.violated { " class=\"violated\"" } else { "" },
            esc(&r.operation),
            if r.violated {
                "<br><span class=\"badge\">violation</span>"
            } else {
                ""
            },
            mentions(&r.asked),
            mentions(&r.landed),
            mentions(&r.told),
            esc(&r.landed_summary),
            esc(&r.known),
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
    out
}

/// The settings' broken rules, each with whether this run went through the
/// gap: a reader of a holding run must not take it for proof of the rule.
fn warnings_html(rows: &[WarningRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section id=\"warnings-section\">\n<h2>Design warnings</h2>\n<p class=\"note\">Rules of the domain \
         these settings break, read from the settings whether or not this run went there \
         (docs/design-warnings.md).</p>\n<ul id=\"warnings\">\n",
    );
    for w in rows {
        let reach = match (w.situation, w.reached_step) {
            (Some(sit), Some(step)) => format!(
                "<span class=\"reached\" data-step=\"{step}\">this run reached it at step #{step} ({})</span>",
                esc(sit)
            ),
            (Some(sit), None) if w.example.is_empty() => format!(
                "<span class=\"unreached\">this run did not reach it ({})</span>",
                esc(sit)
            ),
            (Some(sit), None) => format!(
                "<span class=\"unreached\">this run did not reach it ({}); {} shows it failing</span>",
                esc(sit),
                esc(w.example)
            ),
            (None, _) if w.example.is_empty() => {
                "<span class=\"unreached\">no run reads it: the runs are the same with this setting or without it</span>".to_string()
            }
            (None, _) => format!(
                "<span class=\"unreached\">no situation marks it; {} shows it failing</span>",
                esc(w.example)
            ),
        };
        let _ = writeln!(
            out,
            "<li><b>{}</b>: {}<br>{reach}</li>",
            esc(w.id),
            esc(&w.text)
        );
    }
    out.push_str("</ul>\n</section>\n");
    out
}

fn repro_html(input: &RunInput) -> String {
    let mut out = String::from(
        "<section id=\"repro-section\">\n<h2>Reproduce</h2>\n<dl class=\"commands\">\n",
    );
    for (what, cmd) in &input.commands {
        let _ = writeln!(
            out,
            "<dt>{}</dt><dd><code>{}</code> <button class=\"copy\" data-copy=\"{}\">copy</button></dd>",
            esc(what),
            esc(cmd),
            esc(cmd)
        );
    }
    out.push_str("</dl>\n");
    if let Some((r, replay)) = &input.repro {
        let _ = writeln!(
            out,
            "<details><summary>The run as a repro file: its recorded decisions \
             (<a id=\"repro-download\" download=\"repro.json\" href=\"#\">download repro.json</a>, \
             then <code>{}</code>)</summary>\n<pre id=\"repro-file\">{}</pre>\n</details>",
            esc(replay),
            esc(r)
        );
    }
    out.push_str("</section>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::{Block, Layout};

    #[test]
    fn rows_follow_the_blocks_items_in_order() {
        let mut a = Block::new(1);
        a.items = vec![0, 1];
        let mut b = Block::new(2);
        b.items = vec![3];
        let l = Layout::of(&[a, b]);
        assert_eq!(l.shown, [0, 1, 3]);
        assert_eq!(
            l.first_row,
            [0, 2, 3],
            "each block's first row, then the count"
        );
        assert_eq!(l.row_of.get(&3), Some(&2));
        assert_eq!(l.row_of.get(&2), None, "item 2 is not shown");
    }
}
