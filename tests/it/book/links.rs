//! A link checker over the built book's HTML: every `href` and `src` that
//! stays inside the book must name a file the build wrote, and every
//! `#anchor` an `id` on that page. External links are not fetched.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// One page of the built book: the ids it declares and the links it makes.
pub struct Page {
    pub ids: Vec<String>,
    pub links: Vec<String>,
}

/// Every `.html` file under `dir`, by its path inside the book.
pub fn pages(dir: &Path) -> BTreeMap<PathBuf, Page> {
    let mut files = Vec::new();
    html_under(dir, &mut files);
    files
        .into_iter()
        .map(|f| {
            let html = std::fs::read_to_string(&f).expect("a page reads");
            let rel = f.strip_prefix(dir).expect("under the book").to_path_buf();
            let page = Page {
                ids: attributes(&html, "id")
                    .into_iter()
                    .chain(attributes(&html, "name"))
                    .collect(),
                links: attributes(&html, "href")
                    .into_iter()
                    .chain(attributes(&html, "src"))
                    .collect(),
            };
            (rel, page)
        })
        .collect()
}

fn html_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the book's folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            html_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
}

/// The values of every ` name="…"` attribute in `html`, entities and
/// percent escapes decoded. Text shown as code has its quotes escaped
/// (`&quot;`), so an attribute quoted in a code block is not one.
pub fn attributes(html: &str, name: &str) -> Vec<String> {
    let needle = format!(" {name}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(&needle) {
        rest = &rest[at + needle.len()..];
        let Some(end) = rest.find('"') else { break };
        out.push(decode(&rest[..end]));
        rest = &rest[end..];
    }
    out
}

fn decode(s: &str) -> String {
    let s = s
        .replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a link leaves the book for the web (not checked) or is none.
fn external(link: &str) -> bool {
    link.is_empty()
        || link.starts_with("javascript:")
        || link.contains("://")
        || link.starts_with("//")
        || link.starts_with("mailto:")
        || link.starts_with("data:")
}

/// `base/rel` with `.` and `..` resolved; `None` when it climbs out of the book.
fn join(base: &Path, rel: &str) -> Option<PathBuf> {
    let mut out: Vec<std::ffi::OsString> = base.iter().map(Into::into).collect();
    for c in Path::new(rel).components() {
        match c {
            Component::ParentDir => {
                out.pop()?;
            }
            Component::Normal(n) => out.push(n.into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(out.iter().collect())
}

/// Every broken link of the book in `dir`, as `page: link (why)`.
pub fn broken(dir: &Path) -> Vec<String> {
    let pages = pages(dir);
    let mut broken = Vec::new();
    for (path, page) in &pages {
        let here = path.parent().unwrap_or(Path::new(""));
        for link in &page.links {
            if external(link) {
                continue;
            }
            let (file, anchor) = match link.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (link.as_str(), None),
            };
            let file = file.split('?').next().unwrap_or_default();
            let target = if file.is_empty() {
                Some(path.clone())
            } else {
                join(here, file)
            };
            let why = match target {
                None => Some("leaves the book".to_string()),
                Some(t) if !dir.join(&t).exists() => Some("no such file in the book".into()),
                Some(t) => match (anchor, pages.get(&t)) {
                    (Some(a), Some(p)) if !a.is_empty() && !p.ids.iter().any(|id| id == a) => {
                        Some(format!("no id \"{a}\" on {}", t.display()))
                    }
                    _ => None,
                },
            };
            if let Some(why) = why {
                broken.push(format!("{}: {link} ({why})", path.display()));
            }
        }
    }
    broken
}
