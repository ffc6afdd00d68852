//! Numbers in prose cannot go stale either. A paragraph that quotes what a run
//! produced starts with the marker [`CHECKED`]; every figure in it (a number,
//! with its unit when one follows: `4.9 s`, `468 ms`, `3.7%`) must then appear
//! in a table of the same page: a generated block, which the docs test keeps
//! equal to the binary's output, or a markdown table the page records (the
//! reference simulator's numbers). A figure the tables no longer show fails the
//! test with the paragraph's line, so a rerun that moves a number moves the
//! prose with it.
//!
//! Which paragraphs must be checked is a rule too, for the one kind of figure
//! that only a run produces: a share with a decimal part (`0.4%`, `17.0%`).
//! Settings, defaults, RFC sections and chapter numbers are whole numbers
//! (`90%` of the replies lost, a `60 s` timeout, chapter `07`); a rate to a
//! tenth of a percent comes from counting runs. Such a figure in unchecked
//! prose fails [`every_decimal_share_in_prose_is_checked`] unless the page
//! measures the machine rather than a run ([`MEASURED`]).

use crate::support::docs::{doc_files, END, MARK};
use std::collections::BTreeSet;

/// Opens a paragraph whose figures the docs test checks.
pub const CHECKED: &str = "<!-- checked: figures from this page's tables -->";

const UNITS: [&str; 5] = ["ms", "s", "min", "µs", "%"];

/// Every figure in `text`: a number (digits, one optional decimal part) that no
/// letter or digit precedes, with the unit that follows it, if any. Text in
/// backticks and inside links' targets is code or an address, not a figure.
pub fn figures(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut in_link = false;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            in_code = !in_code;
        }
        // A link's target is an address: `(07-payment-end-to-end.md)`.
        if c == '(' && i > 0 && chars[i - 1] == ']' {
            in_link = true;
        } else if c == ')' {
            in_link = false;
        }
        let starts = c.is_ascii_digit()
            && !in_code
            && !in_link
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
        if j + 1 < chars.len() && chars[j] == '.' && chars[j + 1].is_ascii_digit() {
            j += 1;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
        }
        let number: String = chars[i..j].iter().collect();
        // A chapter's number as a link's text, `[07](...)`, is a name.
        let chapter = i > 0 && chars[i - 1] == '[' && chars.get(j) == Some(&']');
        if !chapter {
            out.push(with_unit(number, &chars[j..]));
        }
        i = j;
    }
    out
}

fn with_unit(number: String, rest: &[char]) -> String {
    let rest: String = rest.iter().take(5).collect();
    for unit in UNITS {
        let spaced = if unit == "%" {
            unit.to_string()
        } else {
            format!(" {unit}")
        };
        if let Some(after) = rest.strip_prefix(spaced.as_str()) {
            if !after.starts_with(|c: char| c.is_alphanumeric()) {
                return format!("{number}{spaced}");
            }
        }
    }
    number
}

/// The figures of a page's tables: its generated blocks and its markdown tables.
fn table_figures(text: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let mut in_block = false;
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with(MARK) {
            in_block = true;
            fenced = false;
            continue;
        }
        if in_block {
            if t.starts_with("```") {
                if fenced {
                    in_block = false;
                }
                fenced = !fenced;
                continue;
            }
            if t == END {
                in_block = false;
                continue;
            }
        }
        if in_block || t.starts_with('|') {
            set.extend(figures(line));
        }
    }
    set
}

/// The figures of each checked paragraph that the page's tables do not show,
/// as `(line, figure)`.
pub fn unchecked(text: &str) -> Vec<(usize, String)> {
    let tables = table_figures(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut missing = Vec::new();
    for (at, _) in lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim() == CHECKED)
    {
        for (n, line) in lines[at + 1..].iter().enumerate() {
            if line.trim().is_empty() {
                break;
            }
            for f in figures(line) {
                if !tables.contains(&f) {
                    missing.push((at + n + 2, f));
                }
            }
        }
    }
    missing
}

/// Figures measured on a machine (wall clock, instruction counts), which no
/// run of the docs test reproduces: `(page, figure or "*" for every figure,
/// why)`.
const MEASURED: &[(&str, &str, &str)] = &[
    (
        "docs/performance.md",
        "*",
        "timings and instruction counts of the machine it names",
    ),
    (
        "docs/load.md",
        "1.9%",
        "cachegrind's instruction count before and after the load model",
    ),
    (
        "docs/protocol.md",
        "0.1%",
        "cachegrind's instruction count before and after external programs",
    ),
    (
        "docs/protocol.md",
        "0.2%",
        "cachegrind's instruction count before and after external programs",
    ),
];

/// Every share with a decimal part (`0.4%`) in prose outside a checked
/// paragraph, as `(line, figure)`: prose is what is not a generated block,
/// a fenced block, a table row or an HTML comment.
pub fn unchecked_shares(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut generated, mut fenced_generated, mut fenced, mut checked) =
        (false, false, false, false);
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with(MARK) {
            generated = true;
            fenced_generated = false;
            continue;
        }
        if generated {
            if t.starts_with("```") {
                if fenced_generated {
                    generated = false;
                }
                fenced_generated = !fenced_generated;
            } else if t == END {
                generated = false;
            }
            continue;
        }
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if t.is_empty() {
            checked = false;
        }
        if t == CHECKED {
            checked = true;
        }
        if fenced || checked || t.starts_with('|') || t.starts_with("<!--") {
            continue;
        }
        for f in figures(line) {
            if f.ends_with('%') && f.contains('.') {
                out.push((n + 1, f));
            }
        }
    }
    out
}

#[test]
fn every_decimal_share_in_prose_is_checked() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for file in doc_files() {
        let page = file.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, figure) in unchecked_shares(&text) {
            let measured = MEASURED
                .iter()
                .position(|(p, f, _)| *p == page && (*f == "*" || *f == figure));
            match measured {
                Some(i) => {
                    used.insert(i);
                }
                None => found.push(format!("{page}:{line}: {figure}")),
            }
        }
    }
    assert!(
        found.is_empty(),
        "a share to a decimal is a run's figure: check its paragraph ({CHECKED}, with the figure in a generated block of the page) or say it without the figure:\n{}",
        found.join("\n")
    );
    let stale: Vec<&str> = (0..MEASURED.len())
        .filter(|i| !used.contains(i))
        .map(|i| MEASURED[i].0)
        .collect();
    assert!(
        stale.is_empty(),
        "MEASURED names figures its pages no longer state: {stale:?}"
    );
}

#[test]
fn a_decimal_share_in_unchecked_prose_is_found_and_a_fixed_fact_is_not() {
    let page = format!(
        "{MARK}sweep x -->\n| 0.4% |\n{END}\n\nIt is rare (0.4% of runs).\nA link that loses 90% of replies, in 60 s, RFC 9110.\n\n{CHECKED}\nIt is rare (0.4% of runs).\n\n```text\n1.5%\n```\n| 2.5% |\n"
    );
    assert_eq!(unchecked_shares(&page), [(5, "0.4%".to_string())]);
}

#[test]
fn every_checked_figure_in_the_docs_is_in_a_table_of_its_page() {
    let mut stale = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        checked += text.lines().filter(|l| l.trim() == CHECKED).count();
        for (line, figure) in unchecked(&text) {
            stale.push(format!("{}:{line}: {figure}", file.display()));
        }
    }
    assert!(checked > 0, "some paragraph of the docs is checked");
    assert!(
        stale.is_empty(),
        "figures in checked paragraphs that no table of their page shows (stale prose?):\n{}",
        stale.join("\n")
    );
}

#[test]
fn a_stale_figure_is_caught_and_a_current_one_passes() {
    let page = |prose: &str| {
        format!(
            "{MARK}sweep x -->\n| n | time |\n| 100 | 1.3 s |\n| 25 | 799 |\n{END}\n\n{CHECKED}\n{prose}\n"
        )
    };
    assert!(unchecked(&page("At 100 clients, 799 calls in 1.3 s.")).is_empty());
    let stale = unchecked(&page("At 100 clients, 801 calls in 1.40 s."));
    let figures: Vec<&str> = stale.iter().map(|(_, f)| f.as_str()).collect();
    assert_eq!(figures, ["801", "1.40 s"]);
    // A unit is part of the figure: 1.3 ms is not the table's 1.3 s.
    assert_eq!(unchecked(&page("it took 1.3 ms")).len(), 1);
    // Unmarked prose and code are not checked.
    assert!(unchecked(&page("`range(0, 8)` ok")).is_empty());
    assert!(unchecked("some 801 calls\n").is_empty());
}

#[test]
fn figures_are_read_with_their_units() {
    assert_eq!(
        figures("39/43/38 calls, 4.9 s, 468 ms, 3.7%, 1.2 min, N2 and `7 ms`"),
        ["39", "43", "38", "4.9 s", "468 ms", "3.7%", "1.2 min"]
    );
    // A chapter's number as a link's text and a link's target are names.
    assert_eq!(figures("see [07](07-payment.md), 17.0%"), ["17.0%"]);
}
