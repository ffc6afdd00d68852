//! The concept figures of the learning path (`docs/figures/*.dot`): text
//! diagrams that Graphviz, the real parser the trace graphs are checked
//! with, must render; each committed `.svg` must show what its source
//! says (the same texts, in order), and some page must show it.
//! `IDEMSIM_BLESS_DOCS=1` renders the pictures again.

use crate::support::{self, tools};
use std::path::{Path, PathBuf};
use std::process::Command;

fn figures() -> Vec<PathBuf> {
    let dir = support::root().join("docs/figures");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("docs/figures")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "dot"))
        .collect();
    out.sort();
    out
}

/// Graphviz's SVG of `source`, or its complaint.
fn render(source: &Path) -> Result<String, String> {
    let out = Command::new("dot")
        .arg("-Tsvg")
        .arg(source)
        .output()
        .expect("dot runs");
    if out.status.success() && out.stderr.is_empty() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The texts an SVG draws, in order: what a reader sees, whatever the
/// coordinates a Graphviz version lays them out at.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once("</text>")))
        .map(|(t, _)| t.to_string())
        .collect()
}

#[test]
fn every_figure_parses_in_graphviz_and_its_picture_is_current() {
    if !tools::require("the figures", &[&tools::DOT]) {
        return;
    }
    let bless = std::env::var_os("IDEMSIM_BLESS_DOCS").is_some();
    let figures = figures();
    assert!(figures.len() >= 4, "the four concept figures: {figures:?}");
    let mut stale = Vec::new();
    for dot in &figures {
        let fresh = render(dot).unwrap_or_else(|e| panic!("{}: {e}", dot.display()));
        let svg = dot.with_extension("svg");
        let committed = std::fs::read_to_string(&svg).unwrap_or_default();
        if texts(&committed) != texts(&fresh) || texts(&fresh).is_empty() {
            if bless {
                std::fs::write(&svg, &fresh).expect("write the picture");
            } else {
                stale.push(svg.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale figures {stale:?}: run `IDEMSIM_BLESS_DOCS=1 cargo test --test it book::` and review the diff"
    );
}

#[test]
fn graphviz_refuses_a_broken_figure() {
    if !tools::require("the figures", &[&tools::DOT]) {
        return;
    }
    let dir = support::scratch("book-figures");
    let broken = dir.join("broken.dot");
    std::fs::write(&broken, "digraph x { a -> ; }\n").unwrap();
    assert!(render(&broken).is_err(), "a syntax error must fail");
}

#[test]
fn every_figure_is_shown_by_a_page() {
    let mut pages = Vec::new();
    support::docs::markdown_under(&support::root().join("docs"), &mut pages);
    let text: String = pages
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("a page"))
        .collect();
    for dot in figures() {
        let svg = dot
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .replace(".dot", ".svg");
        assert!(
            text.contains(&format!("figures/{svg})")),
            "no page shows docs/figures/{svg}"
        );
    }
}
