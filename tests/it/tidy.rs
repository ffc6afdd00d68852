//! docs/ARCHITECTURE.md stays a true map: every source file of the three
//! crates is named in it, and every file or folder it names exists. A file
//! moved, added or renamed without its line in the map fails here, with the
//! names to add or fix. And no Rust file of the checkout is over 600
//! lines: a file that grows past it is split by concern.

use crate::support::root;
use std::path::{Path, PathBuf};

const MAP: &str = "docs/ARCHITECTURE.md";

/// The source folders whose every file the map must name.
const SOURCES: &[&str] = &["sim/src", "models/src", "src", "cli/src"];

/// The most lines a Rust file may have (the house rule).
const MAX_FILE_LINES: usize = 600;

/// Folders whose Rust files the line cap covers: the crates, the tests,
/// the examples and the comparison programs.
const CAPPED: &[&str] = &[
    "sim", "models", "src", "cli", "tests", "examples", "compare",
];

/// Folders the map may name that are not in the checkout: the regression
/// folder is made by `check` in a user's project.
const MADE_AT_RUN_TIME: &[&str] = &[".idemsim/regressions/"];

/// The spans between backticks: where the map names code.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The files and folders the map names: a span ending in `.rs`, or a path
/// ending in `/` (no spaces, no wildcards).
fn named_paths(text: &str) -> Vec<&str> {
    let mut v: Vec<&str> = backticked(text)
        .into_iter()
        .filter(|s| !s.contains([' ', '*', '<', '>', ':']))
        .filter(|s| s.ends_with(".rs") || (s.ends_with('/') && s.len() > 1))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Every file under `dir` (relative to the checkout), folders skipped
/// unless `folders`.
fn walk(dir: &Path, folders: bool, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
        return;
    };
    for e in entries {
        let path = dir.join(e.expect("a readable entry").file_name());
        if root().join(&path).is_dir() {
            if folders {
                into.push(path.clone());
            }
            walk(&path, folders, into);
        } else {
            into.push(path);
        }
    }
}

/// Whether `name` (`x.rs`, `dir/x.rs`, `dir/`) names `path`: it is the
/// path's end, whole components only.
fn names(name: &str, path: &Path) -> bool {
    let name = name.trim_end_matches('/');
    let path = path.to_string_lossy();
    path == name || path.ends_with(&format!("/{name}"))
}

/// Whether the map names the source file `path`: by its own name with any
/// part of its folder path, or, for a module's root, by the module's folder
/// (`engine/` names `engine/mod.rs`, `render/` names `render.rs`).
fn is_named(path: &Path, names_in_map: &[&str]) -> bool {
    let by_name = names_in_map
        .iter()
        .any(|n| n.ends_with(".rs") && names(n, path));
    let module_folder = match path.file_name() {
        Some(f) if f == "mod.rs" => path.parent().map(Path::to_path_buf),
        _ => Some(path.with_extension("")).filter(|dir| root().join(dir).is_dir()),
    };
    let by_folder = module_folder.is_some_and(|dir| {
        names_in_map
            .iter()
            .any(|n| n.ends_with('/') && names(n, &dir))
    });
    by_name || by_folder
}

/// The source files of `SOURCES` the map does not name.
fn unnamed_sources(map: &str) -> Vec<String> {
    let names_in_map = named_paths(map);
    let mut files = Vec::new();
    for dir in SOURCES {
        walk(Path::new(dir), false, &mut files);
    }
    files.sort();
    files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| !is_named(p, &names_in_map))
        .map(|p| p.display().to_string())
        .collect()
}

/// The names in the map that no file or folder of the checkout ends with.
fn missing_paths(map: &str) -> Vec<String> {
    let mut all = Vec::new();
    for top in [
        "sim", "models", "src", "cli", "tests", "examples", "compare", "docs", "scripts",
    ] {
        all.push(PathBuf::from(top));
        walk(Path::new(top), true, &mut all);
    }
    all.push(PathBuf::from("build.rs"));
    named_paths(map)
        .into_iter()
        .filter(|n| !MADE_AT_RUN_TIME.contains(n))
        .filter(|n| !all.iter().any(|p| names(n, p)))
        .map(str::to_string)
        .collect()
}

fn map() -> String {
    std::fs::read_to_string(root().join(MAP)).expect("the architecture map")
}

#[test]
fn every_source_file_is_named_in_the_architecture_map() {
    let unnamed = unnamed_sources(&map());
    assert!(
        unnamed.is_empty(),
        "{MAP} names none of {unnamed:?}: add each to the line of its folder \
         (`file.rs`: what it holds), or name its folder (`dir/`) for a mod.rs"
    );
}

#[test]
fn every_path_the_architecture_map_names_exists() {
    let missing = missing_paths(&map());
    assert!(
        missing.is_empty(),
        "{MAP} names {missing:?}, which no file or folder of the checkout is: \
         fix the name, or drop the line of what was removed"
    );
}

/// The checks read what they should: a map without a file's name fails,
/// and so does a map naming a file that is not there.
#[test]
fn the_map_checks_fail_on_a_missing_or_a_stale_name() {
    let map = map();
    assert!(map.contains("`situation.rs`"), "the map names situation.rs");
    let without = map.replace("`situation.rs`", "`situation`");
    assert_eq!(unnamed_sources(&without), ["sim/src/situation.rs"]);
    let stale = format!("{map}\n- `sim/src/no_such_file.rs`: gone.\n");
    assert_eq!(missing_paths(&stale), ["sim/src/no_such_file.rs"]);
    assert!(names("engine/", Path::new("sim/src/engine")));
    assert!(!names("ngine/", Path::new("sim/src/engine")));
    assert!(names("check/args.rs", Path::new("src/cmd/check/args.rs")));
}

/// `path (N lines)` for each Rust file under `dirs` over `max_lines`.
fn files_over(dirs: &[&str], max_lines: usize) -> Vec<String> {
    let mut files = Vec::new();
    for dir in dirs {
        walk(Path::new(dir), false, &mut files);
    }
    files.sort();
    files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| !p.components().any(|c| c.as_os_str() == "target"))
        .filter_map(|p| {
            let text = std::fs::read_to_string(root().join(p)).expect("a readable source");
            let n = text.lines().count();
            (n > max_lines).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect()
}

#[test]
fn no_rust_file_is_over_the_line_cap() {
    let long = files_over(CAPPED, MAX_FILE_LINES);
    assert!(
        long.is_empty(),
        "{long:?} over {MAX_FILE_LINES} lines: split each by concern (a module per \
         concern, named in {MAP}), not by size"
    );
}

/// The cap's check reads the files: with a lower cap, the longest file
/// of the engine (its `mod.rs`, at the cap) is found.
#[test]
fn the_line_cap_check_finds_a_long_file() {
    let long = files_over(&["sim/src/engine"], 500);
    assert!(
        long.iter()
            .any(|f| f.starts_with("sim/src/engine/mod.rs (")),
        "{long:?}"
    );
}
