//! Embeds the shipped catalog (`scenarios/*.toml`) in the binary, so that
//! `cargo install` gives an `idemsim` that lists and checks its scenarios from
//! any directory, with no checkout beside it.
//!
//! A generated list of `include_str!` keeps this free of dependencies (the
//! `include_dir` crate would do the same with a proc macro and more to build),
//! and cargo reruns it when a file in `scenarios/` is added, removed or edited.

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = root.join("scenarios");
    println!("cargo:rerun-if-changed=scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ beside Cargo.toml")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    // By name, as the catalog lists them: by path, `x-low.toml` would sort before `x.toml`.
    files.sort_by(|a, b| a.file_stem().cmp(&b.file_stem()));
    let mut out = String::from(
        "/// The shipped scenarios, (name, TOML text), sorted by name.\npub const BUILT_IN: &[(&str, &str)] = &[\n",
    );
    for path in &files {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 file name");
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.to_str().expect("a UTF-8 path")
        )
        .expect("writing to a string");
    }
    out.push_str("];\n");
    let target = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("catalog.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
