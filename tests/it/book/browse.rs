//! The built book in headless Chromium, as a reader meets it: the front
//! page opens, the sidebar lists the chapters and a click on one opens it
//! with its diagrams drawn and its figure loaded,
//! and every run report a page links loads without an error.

use super::links;
use crate::support::browser;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The chapter the sidebar check clicks its way to.
const CHAPTER: &str = "learn/03-idempotency-keys.html";

/// Every report (`reports/*.html`) some page of the book links, by its
/// path inside the book.
pub fn reports_linked(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for (page, p) in links::pages(dir) {
        let here = page.parent().unwrap_or(Path::new("")).to_path_buf();
        for link in &p.links {
            let file = link.split('#').next().unwrap_or_default();
            if !file.contains("reports/") || file.contains("://") {
                continue;
            }
            let mut path = here.clone();
            for part in file.split('/') {
                match part {
                    ".." => {
                        path.pop();
                    }
                    "." | "" => {}
                    name => path.push(name),
                }
            }
            out.insert(path);
        }
    }
    out
}

pub fn open_and_follow(dir: &Path) {
    let link = format!("#mdbook-sidebar a[href$=\"{CHAPTER}\"]");
    let page = browser::open(
        &dir.join("index.html"),
        json!([
            {"eval": "document.title"},
            {"eval": "document.querySelectorAll('#mdbook-sidebar a[href$=\".html\"]').length"},
            {"eval": format!("(() => {{ const a = document.querySelector({link:?}); return a !== null && a.offsetParent !== null; }})()")},
            {"click": link, "navigates": true},
            {"eval": "location.pathname"},
            {"eval": "document.querySelector('main h1').textContent"},
            // The chapter's Mermaid blocks drawn by the mermaid.js beside
            // the book (asynchronously: wait up to 5 s), and its figure.
            {"eval": "new Promise((r) => { let n = 0; const t = () => { const k = document.querySelectorAll('div.mermaid svg').length; if (k > 0 || n++ > 100) r(k); else setTimeout(t, 50); }; t(); })"},
            {"eval": "document.querySelector('img[src$=\"figures/key-states.svg\"]').naturalWidth"},
        ]),
    );
    assert!(
        page.errors.is_empty(),
        "the book's pages: {:?}",
        page.errors
    );
    let r = &page.results;
    assert!(
        r[0].as_str().is_some_and(|t| t.contains("idemsim")),
        "the front page's title: {}",
        r[0]
    );
    assert!(
        r[1].as_u64().is_some_and(|n| n >= 40),
        "the sidebar lists the chapters: {}",
        r[1]
    );
    assert_eq!(r[2], true, "chapter 03 is visible in the sidebar");
    assert!(
        r[3].as_str().is_some_and(|p| p.ends_with(CHAPTER)),
        "the click opened {}",
        r[3]
    );
    assert!(
        r[4].as_str().is_some_and(|h| h.starts_with("03 ")),
        "chapter 03's heading: {}",
        r[4]
    );
    assert!(
        r[5].as_u64().is_some_and(|n| n >= 1),
        "chapter 03's Mermaid blocks are drawn: {}",
        r[5]
    );
    assert!(
        r[6].as_u64().is_some_and(|w| w > 0),
        "the key's state figure loads: {}",
        r[6]
    );
    let reports = reports_linked(dir);
    assert!(
        reports.len() >= 10,
        "the book links the reports: {reports:?}"
    );
    for report in reports {
        let page = browser::open(
            &dir.join(&report),
            json!([
                {"eval": "document.title"},
                {"eval": "document.querySelectorAll('#diagram line.arrow').length"},
            ]),
        );
        assert!(
            page.errors.is_empty(),
            "{}: {:?}",
            report.display(),
            page.errors
        );
        assert!(
            page.results[1].as_u64().is_some_and(|n| n > 0),
            "{} draws its diagram",
            report.display()
        );
    }
}
