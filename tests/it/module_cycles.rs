//! No module imports, through others, a module that imports it back.
//!
//! A cycle makes modules one unit in disguise: none can be read, tested or
//! moved without the rest (the library and its commands were one such knot,
//! `{cmd, external, regressions, render, repro, scenarios}`). This reads the
//! `crate::`, `super::` and `self::` paths of every source file, builds the
//! graph of sibling modules (an edge from `a` to `b` when code inside `a`
//! names something inside its sibling `b`, at every level of nesting), and
//! fails on a strongly connected component of more than one module in any
//! crate of [`CRATES`], except the cycles [`KNOWN`] names with their reason
//! (which fail too once they are gone, so that list only shrinks).
//!
//! A parent and its child are not a cycle (a child's `super::` is how it
//! reaches what its parent shares), and code in `#[cfg(test)]` is left out:
//! a test may reach anything. Crates cannot form cycles at all: cargo
//! refuses them.

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate's source folder: none may have a module cycle beyond [`KNOWN`].
const CRATES: &[&str] = &["src", "cli/src", "models/src", "sim/src"];

/// The cycles still to take apart, each with why it is there. A new cycle
/// fails; so does one of these once it is gone, so the list only shrinks.
const KNOWN: &[(&str, &str)] = &[];

#[test]
fn no_module_cycles_but_the_known_ones() {
    let found: Vec<String> = CRATES
        .iter()
        .flat_map(|dir| {
            cycles_in(dir)
                .into_iter()
                .map(move |c| format!("{dir}: {}", c.join(" -> ")))
        })
        .collect();
    let new: Vec<&String> = found
        .iter()
        .filter(|c| !KNOWN.iter().any(|(k, _)| k == c))
        .collect();
    assert!(
        new.is_empty(),
        "module cycles (each module imports, through the others, the first back):\n{}",
        new.iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let gone: Vec<&str> = KNOWN
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !found.iter().any(|c| c == k))
        .collect();
    assert!(gone.is_empty(), "taken apart, drop from KNOWN: {gone:?}");
}

/// The check itself finds a cycle it is shown, and only that one.
#[test]
fn a_deliberate_cycle_is_found() {
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        ("b/mod.rs", "mod inner;\nuse super::c;\n"),
        (
            "b/inner.rs",
            "use crate::{c::{Y, W}};\nuse super::super::c::Z;\n",
        ),
        ("c.rs", "pub fn f() { crate::a::g() }\n"),
    ];
    let sources: Vec<(PathBuf, String)> = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), t.to_string()))
        .collect();
    assert_eq!(cycles(&sources), vec![vec!["a", "b", "c"]]);
    // Without c's call back into a, nothing cycles.
    let acyclic: Vec<(PathBuf, String)> = sources
        .into_iter()
        .map(|(p, t)| {
            let t = if p == Path::new("c.rs") {
                String::new()
            } else {
                t
            };
            (p, t)
        })
        .collect();
    assert!(cycles(&acyclic).is_empty());
}

#[test]
fn parents_children_tests_and_comments_are_not_edges() {
    let files = [
        ("lib.rs", "mod a;\nuse a::x;\n"),
        ("a/mod.rs", "mod x;\n// crate::b is only talked about\n"),
        (
            "a/x.rs",
            "use super::y;\n#[cfg(test)]\nmod tests { use crate::b; }\n",
        ),
        ("a/y.rs", "use super::x;\n"),
        ("b.rs", "use crate::a;\n"),
    ];
    let sources: Vec<(PathBuf, String)> = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), t.to_string()))
        .collect();
    assert_eq!(cycles(&sources), vec![vec!["a::x", "a::y"]]);
}

/// The cycles of the crate whose sources are under `dir` (from the checkout's root).
fn cycles_in(dir: &str) -> Vec<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut sources = Vec::new();
    read_sources(&root, &root, &mut sources);
    assert!(!sources.is_empty(), "no Rust sources under {dir}");
    cycles(&sources)
}

fn read_sources(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a readable entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a UTF-8 source file");
            let rel = path.strip_prefix(root).expect("under root").to_path_buf();
            out.push((rel, text));
        }
    }
}

/// The module a file defines, as path segments from the crate root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut segments: Vec<String> = rel
        .iter()
        .map(|s| s.to_str().expect("a UTF-8 path").to_string())
        .collect();
    let file = segments.pop().expect("a file name");
    match file.as_str() {
        "mod.rs" | "lib.rs" | "main.rs" => {}
        other => segments.push(other.trim_end_matches(".rs").to_string()),
    }
    segments
}

/// Every strongly connected component of more than one sibling module, each
/// sorted, in order.
fn cycles(sources: &[(PathBuf, String)]) -> Vec<Vec<String>> {
    let tests = test_only_modules(sources);
    let sources: Vec<&(PathBuf, String)> = sources
        .iter()
        .filter(|(p, _)| !tests.iter().any(|t| module_of(p).starts_with(t)))
        .collect();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|(p, _)| module_of(p)).collect();
    let mut graph = DiGraph::<String, ()>::new();
    let mut nodes: BTreeMap<Vec<String>, NodeIndex> = BTreeMap::new();
    let mut node = |graph: &mut DiGraph<String, ()>, m: &[String]| {
        *nodes
            .entry(m.to_vec())
            .or_insert_with(|| graph.add_node(m.join("::")))
    };
    for (path, text) in sources {
        let from = module_of(path);
        for target in referenced_paths(&from, text) {
            let Some(to) = longest_module(&modules, &target) else {
                continue;
            };
            if let Some((a, b)) = sibling_edge(&from, &to) {
                let (a, b) = (node(&mut graph, &a), node(&mut graph, &b));
                graph.update_edge(a, b, ());
            }
        }
    }
    let mut found: Vec<Vec<String>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| {
            let mut names: Vec<String> = scc.iter().map(|&i| graph[i].clone()).collect();
            names.sort();
            names
        })
        .collect();
    found.sort();
    found
}

/// The longest prefix of `path` that is a module of the crate.
fn longest_module(modules: &BTreeSet<Vec<String>>, path: &[String]) -> Option<Vec<String>> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| modules.contains(prefix))
}

/// The edge between the two siblings that hold `from` and `to` below their
/// lowest common ancestor; none when one contains the other.
fn sibling_edge(from: &[String], to: &[String]) -> Option<(Vec<String>, Vec<String>)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common == from.len() || common == to.len() {
        return None;
    }
    Some((from[..=common].to_vec(), to[..=common].to_vec()))
}

/// The absolute module paths that `text`, the source of module `from`,
/// names through `crate::`, `super::` or `self::`, outside comments and
/// `#[cfg(test)]` items (see [`without_test_items`]).
fn referenced_paths(from: &[String], text: &str) -> Vec<Vec<String>> {
    let code = without_test_items(text);
    let mut out = Vec::new();
    for tree in path_trees(&code) {
        for path in expand_tree(&tree) {
            if let Some(abs) = absolute(from, &path) {
                out.push(abs);
            }
        }
    }
    out
}

/// `text` without comments and without the item after each `#[cfg(test)]`:
/// one line when it ends there (`mod tests;`, a `use`), else up to the brace
/// that closes it (`mod tests { … }`).
fn without_test_items(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            skip_item(&mut lines);
            continue;
        }
        code.push_str(line.split("//").next().unwrap_or(""));
        code.push('\n');
    }
    code
}

/// Skips the item that starts at the next line: through its closing brace
/// when it opens one, else that line alone.
fn skip_item<'a>(lines: &mut impl Iterator<Item = &'a str>) {
    let mut depth = 0i32;
    for line in lines.by_ref() {
        let code = line.split("//").next().unwrap_or("");
        depth += code.matches('{').count() as i32 - code.matches('}').count() as i32;
        if depth <= 0 && (code.trim_end().ends_with(';') || code.contains('}')) {
            return;
        }
    }
}

/// The modules declared `#[cfg(test)] mod name;` (their files are tests:
/// `tests.rs`, a test harness), as paths from the crate root.
fn test_only_modules(sources: &[(PathBuf, String)]) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for (path, text) in sources {
        let mut lines = text.lines().map(str::trim);
        while let Some(line) = lines.next() {
            if line != "#[cfg(test)]" {
                continue;
            }
            let Some(next) = lines.next() else { break };
            let decl = next
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                let mut m = module_of(path);
                m.push(name.to_string());
                out.insert(m);
            }
        }
    }
    out
}

/// Each path that starts with `crate`, `super` or `self`, with any
/// `{…}` group after it, as written (`crate::{a::X, b}`).
fn path_trees(code: &str) -> Vec<String> {
    let bytes = code.as_bytes();
    let mut trees = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let rest = &code[i..];
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|p| rest.starts_with(p));
        // `$crate::` is a macro's own crate, named the same from anywhere.
        let in_macro = i > 0 && bytes[i - 1] == b'$';
        if !(word_start && starts) || in_macro {
            i += 1;
            continue;
        }
        let mut depth = 0usize;
        let mut end = i;
        for (k, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => break,
                _ => {}
            }
            end = i + k + c.len_utf8();
        }
        trees.push(code[i..end].to_string());
        i = end.max(i + 1);
    }
    trees
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand_tree(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        return vec![tree.trim_end_matches(':').to_string()];
    };
    let prefix = &tree[..open];
    let inner = tree[open + 1..].trim_end_matches('}');
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand_tree(&format!("{prefix}{p}")))
        .map(|p| p.trim_end_matches("::self").to_string())
        .collect()
}

/// `path` (starting with `crate`, `super` or `self`) from module `from`, as
/// segments from the crate root.
fn absolute(from: &[String], path: &str) -> Option<Vec<String>> {
    let mut segments = path.split("::").filter(|s| !s.is_empty());
    let mut abs: Vec<String> = match segments.next()? {
        "crate" => Vec::new(),
        "self" => from.to_vec(),
        "super" => from[..from.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    for s in segments {
        if s == "super" {
            abs.pop()?;
        } else {
            abs.push(s.trim().to_string());
        }
    }
    Some(abs)
}
