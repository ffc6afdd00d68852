//! `merge`: summaries of other runs are refused with the files named, and
//! a shard's scenario file is opened only below the current folder.

use super::helpers::*;
use crate::support::{case, root, scratch};
use serde_json::json;

#[test]
fn merge_refuses_summaries_of_other_runs_and_names_the_files() {
    let dir = scratch("cli_inputs/merge");
    let [a, b] = shards(&dir, FAILING, 1);
    let renamed = edited_shard(&dir, &b, "renamed.jsonl", |d| {
        d["scenario"] = json!("payment-stable-key")
    });
    let other_sets = edited_shard(&dir, &b, "other-sets.jsonl", |d| {
        d["sets"] = json!(["client.key=none"])
    });
    let no_hash = edited_shard(&dir, &b, "no-hash.jsonl", |d| {
        d.as_object_mut().unwrap().remove("scenario_hash");
    });
    let other_layers = edited_shard(&dir, &b, "other-layers.jsonl", |d| {
        d["load"]["received"][0]["layer"] = json!("consumer")
    });
    let unknown_key = edited_shard(&dir, &b, "unknown-key.jsonl", |d| d["shrunk"] = json!(true));
    let bad_sets = [&a, &b].map(|f| {
        edited_shard(&dir, f, &format!("bad-sets-{f}"), |d| {
            d["sets"] = json!(["nonsense"])
        })
    });
    let holding_seed = edited_shard(&dir, &a, "holding-seed.jsonl", |d| {
        d["failure"]["seed"] = json!(0)
    });
    let renamed_invariant = edited_shard(&dir, &a, "renamed-invariant.jsonl", |d| {
        d["failure"]["invariant"] = json!("no-lost-effect")
    });
    // A holding sweep, where an interrupted one would end with exit 130.
    let [ha, hb] = shards(&dir, "payment-stable-key", 0);
    let late_stop = edited_shard(&dir, &ha, "late-stop.jsonl", |d| {
        d["interrupted"] = json!(true);
        d["verdict"] = json!("interrupted")
    });
    // A file that states the coverage-guided search: its summary is no shard.
    let searched = root()
        .join("tests/fixtures/strategy/coverage-low-loss.toml")
        .to_string_lossy()
        .into_owned();
    let (coverage, _) = check(
        &case(
            "a coverage-guided search",
            &["check", &searched, "--json", "--no-shrink"],
        )
        .code(1)
        .cwd(&dir),
        &[],
    );
    std::fs::write(dir.join("coverage.jsonl"), coverage).unwrap();
    let coverage = "coverage.jsonl".to_string();
    let another = "a summary of another run than";
    let cases = [
        case("the shards merge", &["merge", &a, &b, "--no-shrink"])
            .code(1)
            .out("violation over 60 schedules (seeds 0..60)"),
        case("a shard that names another scenario", &["merge", &a, &renamed, "--no-shrink"])
            .code(2)
            .err(&format!("error: renamed.jsonl:1: {another} {a}:1: scenario \"payment-stable-key\" instead of \"{FAILING}\""))
            .err("help: merge only the shards of one"),
        case("a shard under other overrides", &["merge", &a, &other_sets, "--no-shrink"])
            .code(2)
            .err(&format!("other-sets.jsonl:1: {another}"))
            .err("--set overrides [\"client.key=none\"] instead of []"),
        case("a shard with no scenario hash beside one with", &["merge", &a, &no_hash, "--no-shrink"])
            .code(2)
            .err("no-hash.jsonl:1")
            .err("scenario hash None instead of Some("),
        case("a shard of another model's layers", &["merge", &a, &other_layers, "--no-shrink"])
            .code(2)
            .err("other-layers.jsonl:1")
            .err("load (attempts counted, layers)"),
        case("an unknown key", &["merge", &a, &unknown_key, "--no-shrink"])
            .code(2)
            .err("unknown-key.jsonl:1: not a summary line")
            .err("unknown field `shrunk`"),
        case("a failing seed that does not fail is not shrunk", &["merge", &holding_seed, &b])
            .code(2)
            .err("holding-seed.jsonl:1: its lowest failing seed 0 broke no-duplicate-effect in the shard, but run again it does not fail"),
        case("nor written as a repro file", &["merge", &holding_seed, &b, "--no-shrink", "--repro-out", "r.json"])
            .code(2)
            .err("holding-seed.jsonl:1: its lowest failing seed 0"),
        case("a failure of another invariant", &["merge", &renamed_invariant, &b])
            .code(2)
            .err("renamed-invariant.jsonl:1: its lowest failing seed 2 broke no-lost-effect in the shard, but run again it breaks no-duplicate-effect"),
        case("a Ctrl-C after a shard's last seed leaves the merge complete", &["merge", &late_stop, &hb])
            .code(0)
            .out("holds over 60 schedules (seeds 0..60)"),
        case("a coverage-guided search has no shards", &["merge", &coverage])
            .code(2)
            .err("coverage.jsonl:1: the summary of a coverage-guided search")
            .err("--strategy seeds --shard I/N --json"),
        case("a file with no summary line", &["merge", "/dev/null"])
            .code(2)
            .err("error: no summary line in /dev/null"),
        case("a missing shard names the files given", &["merge", &b, "--no-shrink"])
            .code(2)
            .err(&format!("shard 0/2 is not among the files: seeds 0..30 are missing (given: {b}:1 is shard 1/2)")),
        case("the shards' recorded overrides are theirs", &["merge", &bad_sets[0], &bad_sets[1]])
            .code(2)
            .err(&format!("{}:1: its recorded --set `nonsense` is not KEY=VALUE", bad_sets[0])),
    ];
    for c in cases {
        check(&c.cwd(&dir), &[]);
    }
}

/// A shard names the scenario file `check` ran. `merge` needs it only to
/// shrink, and opens it only in the current folder or below it (where
/// `check` ran), so an edited shard cannot make it open and quote another
/// file; `--scenario` names the scenario instead.
#[test]
fn merge_opens_a_shards_scenario_file_only_below_the_current_folder() {
    let root = scratch("cli_inputs/merge-file");
    let dir = root.join("work");
    scenario_file(&dir.join("mine.toml"));
    std::fs::write(root.join("secret.toml"), format!("{SECRET}\n")).unwrap();
    let secret = text(&root.join("secret.toml"));
    let [a, b] = shards(&dir, "mine.toml", 1);
    let edit = |to: &str, file: &str| {
        [&a, &b].map(|f| {
            edited_shard(&dir, f, &format!("{to}-{f}"), |d| {
                d["scenario_file"] = json!(file)
            })
        })
    };
    let absolute = edit("absolute", &secret);
    let escape = edit("escape", "../secret.toml");
    let inside = "is not a path inside the current folder";
    let cases = [
        case(
            "the shards of a file shrink where check ran",
            &["merge", &a, &b],
        )
        .code(1)
        .out("shrunk"),
        case(
            "a shard naming a file elsewhere is refused",
            &["merge", &absolute[0], &absolute[1]],
        )
        .code(2)
        .err("leads out of the current folder")
        .err("`idemsim merge --scenario SCENARIO FILE...`"),
        case(
            "so is one leading out of the folder",
            &["merge", &escape[0], &escape[1]],
        )
        .code(2)
        .err(&format!("`../secret.toml` {inside}")),
        case(
            "--scenario names it instead",
            &["merge", &escape[0], &escape[1], "--scenario", "mine.toml"],
        )
        .code(1)
        .out("shrunk"),
        case(
            "a scenario of other text is refused by its hash",
            &[
                "merge",
                &escape[0],
                &escape[1],
                "--scenario",
                "payment-stable-key",
            ],
        )
        .code(2)
        .err("now hashes to"),
        case(
            "without shrinking the file is not needed",
            &["merge", &escape[0], &escape[1], "--no-shrink"],
        )
        .code(1),
    ];
    for c in cases {
        check(&c.cwd(&dir), &[SECRET]);
    }
}
