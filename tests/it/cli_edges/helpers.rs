//! The files the `cli_edges` tests set up: scratch folders, a failing
//! scenario's shards (and edited copies of them), a user's own scenario.
//! Shared by the `cli_edges` groups alone; `crate::support` is the harness
//! every area shares.

use crate::support::{case, root, run_case as check};
use std::path::{Path, PathBuf};

/// Two shards of a failing scenario as JSON Lines files in `dir`.
pub fn shards(dir: &Path, scenario: &str) -> [PathBuf; 2] {
    [0, 1].map(|i| {
        let shard = format!("{i}/2");
        let (out, _) = check(
            &case(
                "a shard",
                &[
                    "check",
                    scenario,
                    "--runs",
                    "400",
                    "--shard",
                    &shard,
                    "--json",
                    "--no-shrink",
                ],
            )
            .code(1)
            .cwd(dir),
        );
        let path = dir.join(format!("shard-{i}.jsonl"));
        std::fs::write(&path, out).expect("write a shard");
        path
    })
}

/// `file` with its summary's data edited by `f`, written as `name`.
pub fn edited(dir: &Path, file: &Path, name: &str, f: impl Fn(&mut serde_json::Value)) -> String {
    let text = std::fs::read_to_string(file).expect("a shard file");
    let mut v: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON line");
    f(&mut v["data"]);
    let path = dir.join(name);
    std::fs::write(&path, format!("{v}\n")).expect("write");
    path.to_string_lossy().into_owned()
}

/// A scenario of the user's, a copy of a built-in with a summary of its own.
pub fn user_scenario(dir: &Path, name: &str, from: &str, summary: &str) -> PathBuf {
    let text = std::fs::read_to_string(root().join(format!("scenarios/{from}.toml"))).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("summary"))
        .expect("a summary line");
    lines[at] = format!("summary = \"{summary}\"");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}
