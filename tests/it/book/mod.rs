//! The documentation as a book (`book.toml`, `docs/SUMMARY.md`): built with
//! the real mdBook, every internal link and anchor of the built HTML
//! resolves, every page of `docs/` is in it, the run reports are copied in
//! beside the chapters that link them, and headless Chromium opens the book,
//! follows its sidebar to a chapter and loads every report the book links;
//! and chapter 11's table sends each row to a page that shows its scenario.
//!
//! The tests install nothing: `.ci/run` installs mdBook (`cargo install
//! mdbook --locked --version 0.5.4 --no-default-features`) and Chromium.
//! Without them they fail in CI and print one SKIPPED line elsewhere.

mod browse;
mod checklist;
mod figures;
mod links;
mod mistakes;

use crate::support::{self, tools};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Builds the book once per test run into a scratch folder, with mermaid.js
/// beside it when the pinned parser package is installed (`.ci/run` copies
/// it into target/book the same way), and returns the folder.
fn built() -> &'static PathBuf {
    static BOOK: OnceLock<PathBuf> = OnceLock::new();
    BOOK.get_or_init(|| {
        let dir = support::scratch("book").join("html");
        let mdbook = tools::mdbook_path().expect("checked by require");
        let out = Command::new(mdbook)
            .arg("build")
            .arg(support::root())
            .arg("--dest-dir")
            .arg(&dir)
            .output()
            .expect("mdbook runs");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "mdbook build failed:\n{log}");
        // mdBook's own warnings (a missing file, a bad SUMMARY entry, a
        // heading it cannot place) count as failures too.
        let warnings: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            .collect();
        assert!(
            warnings.is_empty(),
            "mdbook warned:\n{}",
            warnings.join("\n")
        );
        let mermaid = tools::parsers_dir().join("node_modules/mermaid/dist/mermaid.min.js");
        if mermaid.is_file() {
            std::fs::copy(&mermaid, dir.join("mermaid.min.js")).expect("copy mermaid.js");
        }
        dir
    })
}

fn summary() -> String {
    std::fs::read_to_string(support::root().join("docs/SUMMARY.md")).expect("docs/SUMMARY.md")
}

/// Every Markdown page of `docs/` but the summary itself, relative to `docs/`.
fn doc_pages() -> Vec<PathBuf> {
    let docs = support::root().join("docs");
    let mut files = Vec::new();
    crate::support::docs::markdown_under(&docs, &mut files);
    let mut pages: Vec<PathBuf> = files
        .into_iter()
        .map(|f| f.strip_prefix(&docs).expect("under docs").to_path_buf())
        .filter(|p| p != Path::new("SUMMARY.md"))
        .collect();
    pages.sort();
    pages
}

#[test]
fn every_page_of_the_docs_is_in_the_summary() {
    let summary = summary();
    let missing: Vec<String> = doc_pages()
        .iter()
        .map(|p| p.display().to_string())
        .filter(|p| !summary.contains(&format!("]({p})")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/SUMMARY.md leaves out {missing:?}: the book would not show them"
    );
}

#[test]
fn every_internal_link_and_anchor_of_the_built_book_resolves() {
    if !tools::require("the book's links", &[&tools::MDBOOK]) {
        return;
    }
    let dir = built();
    for page in doc_pages() {
        let html = dir.join(page.with_extension("html"));
        assert!(html.is_file(), "{} was not built", html.display());
    }
    let pages = links::pages(dir);
    let checked: usize = pages.values().map(|p| p.links.len()).sum();
    // Not vacuous: the chapters link each other, their anchors, the
    // references and the reports by the thousand.
    assert!(checked > 2000, "only {checked} links found in the book");
    let broken = links::broken(dir);
    assert!(
        broken.is_empty(),
        "{} broken links in the built book:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn every_report_opens_in_place_from_the_book() {
    if !tools::require("the book's reports", &[&tools::MDBOOK]) {
        return;
    }
    let dir = built();
    let linked = browse::reports_linked(dir);
    let shipped: Vec<PathBuf> = std::fs::read_dir(support::root().join("docs/reports"))
        .expect("docs/reports")
        .map(|e| PathBuf::from("reports").join(e.expect("an entry").file_name()))
        .collect();
    for report in &shipped {
        assert!(
            dir.join(report).is_file(),
            "{} not copied",
            report.display()
        );
        assert!(
            linked.contains(report),
            "no page of the book links {}",
            report.display()
        );
    }
}

#[test]
fn the_link_checker_finds_a_missing_page_and_a_missing_anchor() {
    let dir = support::scratch("book-checker");
    std::fs::create_dir_all(dir.join("learn")).unwrap();
    std::fs::write(
        dir.join("learn/a.html"),
        r##"<h2 id="here">x</h2><a href="b.html#there">ok</a> <a href="b.html#gone">anchor</a>
           <a href="../c.html">page</a> <a href="../../out.html">out</a> <a href="#here">self</a>
           <a href="https://example.org/x">web</a> <code>&lt;a href=&quot;nowhere.html&quot;&gt;</code>"##,
    )
    .unwrap();
    std::fs::write(dir.join("learn/b.html"), r#"<p id="there">y</p>"#).unwrap();
    let mut broken = links::broken(&dir);
    broken.sort();
    assert_eq!(
        broken,
        [
            "learn/a.html: ../../out.html (leaves the book)",
            "learn/a.html: ../c.html (no such file in the book)",
            "learn/a.html: b.html#gone (no id \"gone\" on learn/b.html)",
        ]
    );
}

#[test]
fn the_book_opens_its_sidebar_reaches_a_chapter_and_every_report_loads() {
    if !tools::require(
        "the book in Chromium",
        &[
            &tools::MDBOOK,
            &tools::CHROMIUM,
            &tools::NODE,
            &tools::MERMAID,
        ],
    ) {
        return;
    }
    browse::open_and_follow(built());
}
