//! What several groups of cases share: the checked run, the failing scenario as a user's file, and edited repros and shards.

use crate::support::{self, case, run_case, Case};
use serde_json::Value;
use std::path::Path;

pub const FAILING: &str = "payment-retry-without-key";

/// A line of a file outside every folder a repro may name: it must never
/// reach the output.
pub const SECRET: &str = "secret-line-that-must-not-be-shown";

/// Runs `c` and checks that stderr and stdout show none of `lacks`.
#[track_caller]
pub fn check(c: &Case, lacks: &[&str]) -> (String, String) {
    let (out, err) = run_case(c);
    for s in lacks {
        assert!(
            !out.contains(s) && !err.contains(s),
            "idemsim {} shows `{s}`\nstdout:\n{out}\nstderr:\n{err}",
            c.args.join(" ")
        );
    }
    (out, err)
}

pub fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The built-in failing scenario as a file of the user's, at `path`.
pub fn scenario_file(path: &Path) {
    let from = support::root().join(format!("scenarios/{FAILING}.toml"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(from, path).unwrap();
}

/// `repro` with its JSON edited by `f`, written to `dir/name`.
pub fn edited_repro(dir: &Path, repro: &Path, name: &str, f: impl Fn(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(repro).unwrap()).unwrap();
    f(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    text(&path)
}

/// Shards of `scenario` (`check --json --shard I/2`) in `dir`.
pub fn shards(dir: &Path, scenario: &str, code: i32) -> [String; 2] {
    [0, 1].map(|i| {
        let shard = format!("{i}/2");
        let args = [
            "check",
            scenario,
            "--runs",
            "60",
            "--shard",
            &shard,
            "--json",
            "--no-shrink",
        ];
        let (out, _) = check(&case("a shard", &args).code(code).cwd(dir), &[]);
        let name = format!("{scenario}-{i}.jsonl");
        std::fs::write(dir.join(&name), out).unwrap();
        name
    })
}

/// The shard file `name` in `dir` with its summary's data edited by `f`,
/// written as `to`.
pub fn edited_shard(dir: &Path, name: &str, to: &str, f: impl Fn(&mut Value)) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let mut v: Value = serde_json::from_str(text.trim()).expect("one JSON line");
    f(&mut v["data"]);
    std::fs::write(dir.join(to), format!("{v}\n")).unwrap();
    to.to_string()
}

/// The failing scenario without its `[expect]`: each failure of it is a
/// regression, recorded in the database.
pub fn unexpected_scenario(path: &Path) {
    let from = support::root().join(format!("scenarios/{FAILING}.toml"));
    let text = std::fs::read_to_string(from).unwrap().replace(
        "[expect]\nverdict = \"violation\"\ninvariant = \"no-duplicate-effect\"\n",
        "",
    );
    assert!(!text.contains("[expect]"));
    std::fs::write(path, text).unwrap();
}
