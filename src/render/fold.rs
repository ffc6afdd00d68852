//! Folding: long runs of steps that repeat (a retry loop against a
//! partition) shrink to their first and last round and one line between, so
//! a trace stays on one screen. One plan ([`plan`]) serves every format: the
//! text and Mermaid traces print it, the HTML report draws it with a control
//! that unfolds it.

use super::items::{Trace, What};
use std::fmt::Write;
use std::ops::Range;

/// Runs shorter than this many rounds are shown whole.
const MIN_REPEATS: usize = 4;
/// The longest period, in steps, a repetition is looked for with.
const MAX_PERIOD: usize = 8;

/// The lines one engine step printed, for a caller that keeps them (the
/// HTML report); the text trace formats lines again instead of keeping them.
pub struct Block {
    /// The engine step.
    pub step: u64,
    /// Its lines, as the text trace prints them.
    pub lines: Vec<String>,
    /// The items the lines show, one per line.
    pub items: Vec<usize>,
    /// Never folded: effects, the point of no return, the healing marker.
    pub pinned: bool,
}

impl Block {
    /// An empty block of step `step`.
    pub fn new(step: u64) -> Block {
        Block {
            step,
            lines: Vec::new(),
            items: Vec::new(),
            pinned: false,
        }
    }

    fn shape(&self) -> u64 {
        let mut h = FNV_START;
        for l in &self.lines {
            hash_shape(&mut h, l);
        }
        h
    }
}

/// A stretch of blocks in a folded rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Blocks shown as they are.
    Shown(Range<usize>),
    /// `repeats` repetitions of a period of `period` blocks, hidden between
    /// the first period and the last (both shown, as `Shown` around it).
    Folded {
        /// The hidden blocks.
        blocks: Range<usize>,
        /// How many periods are hidden.
        repeats: usize,
        /// Blocks per period.
        period: usize,
    },
}

/// Whether item `i` keeps its step from being folded.
pub fn pinned<M, T>(t: &Trace<M, T>, i: usize) -> bool {
    t.end.turn == Some(i)
        || matches!(
            t.items[i].what,
            What::Effect { .. } | What::Healing {} | What::Elided { .. }
        )
}

/// The folding plan (see `plan`) for blocks whose lines are kept.
pub fn fold_plan(blocks: &[Block]) -> Vec<Segment> {
    let shapes: Vec<u64> = blocks.iter().map(Block::shape).collect();
    let pinned: Vec<bool> = blocks.iter().map(|b| b.pinned).collect();
    plan(&shapes, &pinned)
}

/// Where runs of at least `MIN_REPEATS` repetitions of a period of 1 to
/// `MAX_PERIOD` blocks are folded: the first period and the last stay, the
/// ones between are hidden. Blocks compare by shape (a hash of their lines
/// with numbers collapsed); pinned blocks are never folded. Linear in the
/// number of blocks: each start either folds a run and jumps past it or
/// moves on by one after a bounded look.
pub fn plan(shapes: &[u64], pinned: &[bool]) -> Vec<Segment> {
    debug_assert_eq!(shapes.len(), pinned.len());
    let n = shapes.len();
    let free = |i: usize| !pinned[i];
    let mut out = Vec::new();
    let mut shown_from = 0;
    let mut i = 0;
    while i < n {
        let mut best = (0, 0);
        for p in 1..=MAX_PERIOD {
            let mut k = 1;
            while i + (k + 1) * p <= n
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
    out.push(Segment::Shown(shown_from..n));
    out.retain(|s| !matches!(s, Segment::Shown(r) if r.is_empty()));
    out
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over the shape of a line: digits (and dots between them) become one
/// `0`, runs of spaces one space, so the rounds of a loop look alike whatever
/// their times and counters.
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

/// The items one engine step shows, `shown[lo..hi]`, without their lines:
/// a long trace is formatted one line at a time, twice, instead of kept.
struct Span {
    step: u64,
    lo: usize,
    hi: usize,
}

/// Prints the items `shows` keeps, one `line(item, first of its step)` each,
/// folded by [`plan`] with one `summary(repeats, period, first hidden step,
/// last hidden step)` line per fold.
pub fn folded<M, T>(
    t: &Trace<M, T>,
    shows: impl Fn(usize) -> bool,
    line: impl Fn(usize, bool) -> String,
    out: &mut String,
    summary: impl Fn(usize, usize, u64, u64) -> String,
) {
    let mut shown: Vec<usize> = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    let mut pins: Vec<bool> = Vec::new();
    for (i, it) in t.items.iter().enumerate() {
        if !shows(i) {
            continue;
        }
        if spans.last().is_none_or(|b| b.step != it.step) {
            spans.push(Span {
                step: it.step,
                lo: shown.len(),
                hi: shown.len(),
            });
            pins.push(false);
        }
        shown.push(i);
        spans.last_mut().expect("a span per step").hi = shown.len();
        *pins.last_mut().expect("a pin per step") |= pinned(t, i);
    }
    let shapes: Vec<u64> = spans
        .iter()
        .map(|b| {
            let mut h = FNV_START;
            for (k, &item) in shown[b.lo..b.hi].iter().enumerate() {
                hash_shape(&mut h, &line(item, k == 0));
            }
            h
        })
        .collect();
    let emit = |b: &Span, out: &mut String| {
        for (k, &item) in shown[b.lo..b.hi].iter().enumerate() {
            let _ = writeln!(out, "{}", line(item, k == 0));
        }
    };
    for segment in plan(&shapes, &pins) {
        match segment {
            Segment::Shown(r) => {
                for b in &spans[r] {
                    emit(b, out);
                }
            }
            Segment::Folded {
                blocks,
                repeats,
                period,
            } => {
                let (a, b) = (spans[blocks.start].step, spans[blocks.end - 1].step);
                let _ = writeln!(out, "{}", summary(repeats, period, a, b));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{plan, Segment};

    #[test]
    fn four_rounds_fold_to_the_first_and_last_and_pins_break_a_run() {
        // a b b b b b c: five rounds of b fold; the first and last stay.
        let shapes = [1, 2, 2, 2, 2, 2, 3];
        let free = [false; 7];
        assert_eq!(
            plan(&shapes, &free),
            vec![
                Segment::Shown(0..2),
                Segment::Folded {
                    blocks: 2..5,
                    repeats: 3,
                    period: 1
                },
                Segment::Shown(5..7),
            ]
        );
        // A pinned round in the middle leaves two runs too short to fold.
        let mut pinned = free;
        pinned[3] = true;
        assert_eq!(plan(&shapes, &pinned), vec![Segment::Shown(0..7)]);
    }

    /// A redelivery loop of five steps a round (timeout, deliver, process,
    /// commit, answer cut) folds like a one-step loop; one of nine does not.
    #[test]
    fn rounds_of_up_to_eight_steps_fold() {
        let round = |p: u64| (0..p).map(|j| 10 + j);
        for (p, folds) in [(5u64, true), (8, true), (9, false)] {
            let mut shapes = vec![1];
            for _ in 0..6 {
                shapes.extend(round(p));
            }
            shapes.push(2);
            let pinned = vec![false; shapes.len()];
            let plan = plan(&shapes, &pinned);
            let folded = plan.iter().any(
                |s| matches!(s, Segment::Folded { repeats: 4, period, .. } if *period as u64 == p),
            );
            assert_eq!(folded, folds, "period {p}: {plan:?}");
        }
    }
}
