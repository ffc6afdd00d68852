//! `idemsim diff`: one run under two designs, side by side.
//!
//! Run A is the scenario as written, from its seed, with its decisions
//! recorded. Run B is the scenario with `--set` applied, fed A's record. A
//! record holds decision *values* per stream, so B meets the same lost
//! replies, delays and crashes, and any difference comes from the design.

use idemsim::catalog::{self, UsageError};
use idemsim::render;
use models::{Msg, Obs, Scenario};
use sim::{Outcome, Recorder, Sim, Source, TraceKind};

#[derive(clap::Args)]
/// The arguments of `idemsim diff`.
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file.
    scenario: String,
    /// The seed of run A; B replays A's decisions.
    #[arg(long)]
    seed: u64,
    /// The design change for run B, e.g. service.idempotency=claim-same-tx.
    #[arg(long = "set", value_name = "KEY=VALUE", required = true)]
    set: Vec<String>,
    /// A setting for both runs (the common ground the change is made on).
    #[arg(long = "both", value_name = "KEY=VALUE")]
    both: Vec<String>,
    /// Lines shown past the first line where the traces differ.
    #[arg(long, default_value_t = 8)]
    after: usize,
    /// Width of each column in characters; longer lines wrap.
    #[arg(long, default_value_t = 72)]
    width: usize,
}

/// Narrower columns cannot hold a wrapped line's indent; wider ones fit no screen.
const MIN_WIDTH: usize = 20;
const MAX_WIDTH: usize = 1000;

/// One trace line and the trace entry it shows.
struct Line {
    entry: Option<usize>,
    text: String,
}

fn lines(s: &Scenario, entries: &[render::Entry]) -> Vec<Line> {
    let text = render::text(&s.system.world, entries);
    let shown: Vec<usize> = (0..entries.len())
        .filter(|&i| !render::diff_hides(&entries[i]))
        .collect();
    let texts: Vec<&str> = text.lines().collect();
    // `render::text` writes one line per entry except timer settings; should
    // that change, the lines are compared as text instead.
    let aligned = texts.len() == shown.len();
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| Line {
            entry: aligned.then(|| shown[i]),
            text: t.to_string(),
        })
        .collect()
}

fn fit(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        format!("{s}{}", " ".repeat(width - n))
    } else {
        let cut: String = s.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// Splits a line into pieces of at most `width` characters, at spaces where it
/// can; continuation pieces are indented so they read as part of the line above.
fn wrap(s: &str, width: usize) -> Vec<String> {
    const INDENT: usize = 6;
    debug_assert!(width > 2 * INDENT, "columns are at least 20 wide");
    let mut out = Vec::new();
    let mut rest: Vec<char> = s.chars().collect();
    let mut room = width;
    while rest.len() > room {
        // Break at the last space that keeps at least half the line, else mid-word.
        let cut = (room / 2..=room)
            .rev()
            .find(|&i| rest[i] == ' ')
            .unwrap_or(room);
        out.push(
            rest[..cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        let skip = usize::from(rest.get(cut) == Some(&' '));
        rest.drain(..cut + skip);
        room = width - INDENT;
    }
    out.push(rest.iter().collect());
    for piece in out.iter_mut().skip(1) {
        *piece = format!("{}{piece}", " ".repeat(INDENT));
    }
    out
}

/// The same step of the run: same time, same kind of entry, same actors, same
/// kind of message or observation. Payload details (keys, amounts) may differ.
fn same_event(x: &render::Entry, y: &render::Entry) -> bool {
    use std::mem::discriminant as d;
    use TraceKind as K;
    if x.time_us != y.time_us || d(&x.kind) != d(&y.kind) {
        return false;
    }
    match (&x.kind, &y.kind) {
        (
            K::Send {
                from: f1,
                to: t1,
                msg: m1,
                copies: c1,
                ..
            },
            K::Send {
                from: f2,
                to: t2,
                msg: m2,
                copies: c2,
                ..
            },
        ) => (f1, t1, c1) == (f2, t2, c2) && same_msg(m1, m2),
        (
            K::Drop {
                from: f1,
                to: t1,
                msg: m1,
                reason: r1,
                ..
            },
            K::Drop {
                from: f2,
                to: t2,
                msg: m2,
                reason: r2,
                ..
            },
        ) => (f1, t1, r1) == (f2, t2, r2) && same_msg(m1, m2),
        (
            K::Deliver {
                from: f1,
                to: t1,
                msg: m1,
                duplicate: u1,
                ..
            },
            K::Deliver {
                from: f2,
                to: t2,
                msg: m2,
                duplicate: u2,
                ..
            },
        ) => (f1, t1, u1) == (f2, t2, u2) && same_msg(m1, m2),
        (K::Observe { actor: a1, obs: o1 }, K::Observe { actor: a2, obs: o2 }) => {
            a1 == a2
                && match (o1, o2) {
                    (Obs::Intent { .. }, Obs::Intent { .. }) => true,
                    (Obs::Effect { site: s1, .. }, Obs::Effect { site: s2, .. }) => s1 == s2,
                    _ => o1 == o2,
                }
        }
        // Everything else carries no payload worth tolerating: compare it whole.
        _ => x.kind == y.kind,
    }
}

/// The model decides: see `ModelMessage::same_for_diff`.
fn same_msg(x: &Msg, y: &Msg) -> bool {
    x.same_for_diff(y)
}

fn outcome_line(o: &Outcome) -> String {
    render::outcome_sentence(o)
}

/// Most events of a run `diff` compares: it keeps both runs' whole traces
/// (about 300 bytes an event each), and `max_steps` allows a billion. The
/// scenarios' default `max_steps` (100,000) always fits.
pub const MAX_DIFF_EVENTS: u64 = 200_000;

/// The report of one run, unrecorded and untraced (bounded memory): of the
/// seed, or of `record` replayed on `s`.
fn a_run_events(s: &Scenario, seed: u64, record: Option<&sim::Record>) -> sim::RunReport {
    match record {
        Some(r) => {
            let mut sim = Sim::new(&s.system);
            sim::shrink::replay_unrecorded(&mut sim, &s.system, r, false, &mut sim::NoTrace)
        }
        None => idemsim::minimize::unrecorded_run(s, seed),
    }
}

/// Refuses a run longer than [`MAX_DIFF_EVENTS`], naming the way out.
fn too_long(which: &str, report: &sim::RunReport) -> Result<(), UsageError> {
    if report.events <= MAX_DIFF_EVENTS {
        return Ok(());
    }
    Err(UsageError(format!(
        "error: {which} has {} events, more than the {MAX_DIFF_EVENTS} a diff compares (it keeps both traces whole)\nhelp: compare shorter runs of both designs, e.g. with --both run.max_steps={MAX_DIFF_EVENTS}\n",
        report.events
    )))
}

/// Runs `idemsim diff`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    if !(MIN_WIDTH..=MAX_WIDTH).contains(&a.width) {
        return Err(UsageError(format!(
            "error: --width {} is outside {MIN_WIDTH}..={MAX_WIDTH}\nhelp: give each column's width in characters, e.g. --width 72 (the default)\n",
            a.width
        )));
    }
    let (base, other) = load_pair(&a)?;
    let (run_a, run_b) = run_pair(&base, &other, a.seed)?;
    let la = lines(&base, &run_a.entries);
    let lb = lines(&other, &run_b.entries);
    let view = View::of(&la, &lb, &run_a.entries, &run_b.entries, a.after);
    let mut out = String::new();
    out.push_str(&format!(
        "# {} · seed {} · B replays A's recorded decisions: the same losses, delays and crashes\n",
        base.name, a.seed
    ));
    out.push_str("# ~ the same event with other details · ≠ the runs differ from here on\n\n");
    out.push_str(&titles(&a));
    view.rows(
        &la,
        &lb,
        (&run_a.entries, &run_b.entries),
        a.width,
        &mut out,
    );
    out.push('\n');
    out.push_str(&format!("A => {}\n", outcome_line(&run_a.report.outcome)));
    out.push_str(&format!("B => {}\n", outcome_line(&run_b.report.outcome)));
    idemsim::out!("{out}");
    Ok(idemsim::exit::HOLDS)
}

/// The scenario under A's settings (`--both`) and under B's (`--both`, then
/// `--set`); refuses a change of actors, which no record can bridge.
fn load_pair(a: &Args) -> Result<(Scenario, Scenario), UsageError> {
    let common = catalog::parse_overrides(&a.both)?;
    let mut changed = common.clone();
    // Later overrides win, so B's change applies on top of the common ground.
    changed.extend(catalog::parse_overrides(&a.set)?);
    let base = catalog::load(&a.scenario, &common)?;
    let other = catalog::load(&a.scenario, &changed)?;
    if base.system.world.actor_names != other.system.world.actor_names {
        return Err(UsageError(
            "error: the change alters the actors, so a record of one run cannot drive the other\nhelp: diff changes that keep the actors (options of the client, service or bank), or compare the two with `idemsim sweep`\n"
                .into(),
        ));
    }
    Ok((base, other))
}

/// One side of the diff: its trace and how it ended.
struct Side {
    entries: Vec<render::Entry>,
    report: sim::RunReport,
}

/// Run A from the seed, recording its decisions, then run B on A's record.
fn run_pair(base: &Scenario, other: &Scenario, seed: u64) -> Result<(Side, Side), UsageError> {
    too_long("run A", &a_run_events(base, seed, None))?;
    let mut sim_a = Sim::new(&base.system);
    let mut rec_a = Recorder::default();
    // Guarded: an external program's protocol error ends its run (exit 2 below).
    let report_a = sim::guarded(|| {
        sim_a.run(
            &base.system,
            Source::Seed { seed, record: true },
            &mut rec_a,
        )
    })
    .unwrap_or_else(sim::RunReport::panicked);
    let seed_text = format!("seed {seed}");
    idemsim::external::check_outcome(base, &seed_text, &report_a.outcome)?;
    let record = sim_a.choices.take_recorded();
    too_long("run B", &a_run_events(other, seed, Some(&record)))?;
    let mut sim_b = Sim::new(&other.system);
    let mut rec_b = Recorder::default();
    let report_b = sim::guarded(|| {
        sim_b.run(
            &other.system,
            Source::Replay {
                record: &record,
                log_points: false,
            },
            &mut rec_b,
        )
    })
    .unwrap_or_else(sim::RunReport::panicked);
    idemsim::external::check_outcome(other, &seed_text, &report_b.outcome)?;
    let a_side = Side {
        entries: rec_a.entries,
        report: report_a,
    };
    let b_side = Side {
        entries: rec_b.entries,
        report: report_b,
    };
    Ok((a_side, b_side))
}

/// The column titles: A's common settings, B's change, and the rule under them.
fn titles(a: &Args) -> String {
    let sets: Vec<String> = a.set.iter().map(|s| format!("--set {s}")).collect();
    let a_title = if a.both.is_empty() {
        "A: as written".to_string()
    } else {
        let both: Vec<String> = a.both.iter().map(|s| format!("--both {s}")).collect();
        format!("A: {}", both.join(" "))
    };
    let w = a.width;
    let mut out = row(" ", &a_title, &format!("B: A and {}", sets.join(" ")), w);
    out.push_str(&format!("  {}─┼─{}\n", "─".repeat(w), "─".repeat(w)));
    out
}

/// One row of two columns `width` wide, wrapped; `mark` in the margin of its first line.
fn row(mark: &str, x: &str, y: &str, width: usize) -> String {
    let (cx, cy) = (wrap(x, width), wrap(y, width));
    let mut text = String::new();
    for k in 0..cx.len().max(cy.len()) {
        let left = cx.get(k).map_or("", String::as_str);
        let right = cy.get(k).map_or("", String::as_str);
        let m = if k == 0 { mark } else { " " };
        let line = format!("{m} {} │ {right}", fit(left, width));
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// Which lines of the two traces the diff shows.
struct View {
    /// The first line where the runs part, if they do.
    part: Option<usize>,
    /// Lines shown: up to `--after` past the parting, or all.
    shown: usize,
    /// Leading spaces both traces share in the lines shown.
    indent: usize,
}

impl View {
    fn of(
        la: &[Line],
        lb: &[Line],
        ea: &[render::Entry],
        eb: &[render::Entry],
        after: usize,
    ) -> View {
        let n = la.len().max(lb.len());
        // The runs part at the first event that is not the same in both: another
        // kind of step, another actor, another time. A message that only reads
        // differently (another key in it) is the same event with other details.
        let same_event = |i: usize| match (la.get(i), lb.get(i)) {
            (Some(x), Some(y)) => match (x.entry, y.entry) {
                (Some(p), Some(q)) => same_event(&ea[p], &eb[q]),
                _ => x.text == y.text,
            },
            _ => false,
        };
        let part = (0..n).find(|&i| !same_event(i));
        let shown = part.map_or(n, |p| (p + 1).saturating_add(after).min(n));
        // The traces right-align their times; drop the padding both sides share.
        let indent = la
            .iter()
            .take(shown)
            .chain(lb.iter().take(shown))
            .map(|l| l.text.len() - l.text.trim_start().len())
            .min()
            .unwrap_or(0);
        View {
            part,
            shown,
            indent,
        }
    }

    /// The shown lines side by side, the parting marked, then what is left out.
    fn rows(
        &self,
        la: &[Line],
        lb: &[Line],
        (ea, eb): (&[render::Entry], &[render::Entry]),
        width: usize,
        out: &mut String,
    ) {
        let strip =
            |l: Option<&Line>| l.map_or(String::new(), |l| l.text[self.indent..].to_string());
        let same_text = |i: usize| la.get(i).map(|l| &l.text) == lb.get(i).map(|l| &l.text);
        for i in 0..self.shown {
            if Some(i) == self.part {
                let at = la
                    .get(i)
                    .or(lb.get(i))
                    .and_then(|l| l.entry)
                    .map_or(String::new(), |e| {
                        let entries = if la.get(i).is_some() { ea } else { eb };
                        format!(
                            " (step {}, {})",
                            entries[e].step,
                            render::time(entries[e].time_us)
                        )
                    });
                out.push_str(&format!("  ── the runs part here{at} ──\n"));
            }
            let mark = if self.part.is_some_and(|p| i >= p) {
                "≠"
            } else if same_text(i) {
                " "
            } else {
                "~"
            };
            out.push_str(&row(mark, &strip(la.get(i)), &strip(lb.get(i)), width));
        }
        let rest_a = la.len().saturating_sub(self.shown);
        let rest_b = lb.len().saturating_sub(self.shown);
        if rest_a + rest_b > 0 {
            out.push_str(&format!(
                "  … {rest_a} more lines in A, {rest_b} in B (idemsim replay shows a whole run)\n"
            ));
        }
        if self.part.is_none() {
            out.push_str("  the runs do the same: for this seed the change makes no difference\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{row, Line, View};

    fn plain(texts: &[&str]) -> Vec<Line> {
        texts
            .iter()
            .map(|t| Line {
                entry: None,
                text: (*t).to_string(),
            })
            .collect()
    }

    #[test]
    fn the_view_parts_at_the_first_other_line_and_shows_after_it() {
        let la = plain(&["  a", "  b", "  c", "  d", "  e", "  f"]);
        let lb = plain(&["  a", "  b", "  x", "  d", "  e", "  f"]);
        let v = View::of(&la, &lb, &[], &[], 2);
        assert_eq!(v.part, Some(2));
        assert_eq!(v.shown, 5, "the parting line and 2 after it");
        assert_eq!(v.indent, 2, "the padding both sides share");
        let same = View::of(&la, &la, &[], &[], 2);
        assert_eq!((same.part, same.shown), (None, 6));
    }

    #[test]
    fn a_row_wraps_both_columns_and_marks_its_first_line() {
        let text = row("≠", "abcdefghij", "xy", 20);
        assert_eq!(text, "≠ abcdefghij           │ xy\n");
        let wrapped = row("~", "one two three four five six seven", "", 20);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines.len() > 1, "{wrapped}");
        assert!(lines[0].starts_with("~ one two"), "{wrapped}");
        assert!(
            lines[1..].iter().all(|l| l.starts_with("        ")),
            "{wrapped}"
        );
    }
}
