//! A scenario file cut short: the file's mistake, not the overrides'.

use super::helpers::*;
use crate::support::{self, case, scratch};

#[test]
fn a_scenario_missing_a_key_is_the_files_mistake_not_the_overrides() {
    let dir = scratch("cli_inputs/truncated");
    let full =
        std::fs::read_to_string(support::root().join(format!("scenarios/{FAILING}.toml"))).unwrap();
    // Cut after its opening comment: every key is missing.
    let head: String = full.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("cut.toml"), head).unwrap();
    std::fs::write(dir.join("empty.toml"), "").unwrap();
    let cases = [
        case(
            "diff of a cut file with an override of a nested key",
            &[
                "diff",
                "cut.toml",
                "--seed",
                "2",
                "--set",
                "client.retry.max_attempts=3",
            ],
        ),
        case(
            "with --both",
            &[
                "diff",
                "cut.toml",
                "--seed",
                "2",
                "--set",
                "client.key=stable",
                "--both",
                "client.retry.max_attempts=5",
            ],
        ),
        case(
            "report of an empty file",
            &[
                "report",
                "empty.toml",
                "--seed",
                "2",
                "--set",
                "client.retry.max_attempts=3",
                "-o",
                "r.html",
            ],
        ),
    ];
    for c in cases {
        let file = if c.args[1] == "empty.toml" {
            "empty.toml"
        } else {
            "cut.toml"
        };
        check(
            &c.cwd(&dir)
                .code(2)
                .err(&format!("error: {file}:1:1: missing field `summary`")),
            &["error: --set"],
        );
    }
}
