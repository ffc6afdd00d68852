//! Files the command line reads and writes: shard summaries given to
//! `merge`, scenarios found outside the checkout or in a folder of the user's,
//! and repro files checked against the version and the scenario that wrote them.

use super::helpers::{edited, shards, user_scenario};
use crate::support::{case, run_case as check};
use crate::support::{root, scratch};

#[test]
fn merge_refuses_corrupt_and_stale_summaries() {
    let dir = scratch("cli_edges/merge");
    let scenario = dir.join("mine.toml");
    std::fs::copy(
        root().join("scenarios/payment-retry-without-key.toml"),
        &scenario,
    )
    .expect("copy a scenario");
    let [s0, s1] = shards(&dir, "mine.toml");
    let (a, b) = (
        s0.to_string_lossy().into_owned(),
        s1.to_string_lossy().into_owned(),
    );
    let reversed = edited(&dir, &s0, "reversed.jsonl", |d| {
        d["seeds"] = serde_json::json!({"start": 200, "end": 0});
    });
    let unbalanced = edited(&dir, &s0, "unbalanced.jsonl", |d| {
        d["holds"] = serde_json::json!(d["holds"].as_u64().unwrap() + 1);
    });
    let wrapped = edited(&dir, &s0, "wrapped.jsonl", |d| {
        d["events"] = serde_json::json!(u64::MAX);
    });
    let wrapped2 = edited(&dir, &s1, "wrapped2.jsonl", |d| {
        d["events"] = serde_json::json!(u64::MAX);
    });
    let outside = edited(&dir, &s0, "outside.jsonl", |d| {
        d["failure"]["seed"] = serde_json::json!(399);
    });
    let cases = [
        case("the shards merge", &["merge", &a, &b]).code(1).out("violation over 400 schedules (seeds 0..400)"),
        case("a reversed range", &["merge", &reversed, &b])
            .code(2)
            .err("reversed.jsonl:1: corrupt summary: the seed range 200..0 is reversed"),
        case("counts that do not add up", &["merge", &unbalanced, &b])
            .code(2)
            .err("unbalanced.jsonl:1: corrupt summary: holds + violations + panics + inconclusive"),
        case("counts that wrap", &["merge", &wrapped, &wrapped2])
            .code(2)
            .err("corrupt summary: the events add up past 2^64"),
        case("a failing seed outside its shard", &["merge", &outside, &b])
            .code(2)
            .err("outside.jsonl:1: corrupt summary: the failing seed 399 is outside its range 0..200"),
        case("one shard twice", &["merge", &a, &a, &b])
            .code(2)
            .err("shard 0/2 is given twice"),
        case("a missing shard", &["merge", &b])
            .code(2)
            .err("shard 0/2 is not among the files: seeds 0..200 are missing"),
    ];
    for c in cases {
        check(&c.cwd(&dir));
    }
    // The scenario file changes after the shards ran: the merge cannot shrink
    // the shards' failing seed under the new text, and says so.
    let text = std::fs::read_to_string(&scenario).unwrap();
    std::fs::write(&scenario, text + "\n# edited after the shards ran\n").unwrap();
    check(
        &case(
            "the scenario changed after the shards ran",
            &["merge", &a, &b],
        )
        .cwd(&dir)
        .code(2)
        .err("the scenario changed after the shards ran"),
    );
    check(
        &case(
            "--no-shrink merges what the shards saw",
            &["merge", "--no-shrink", &a, &b],
        )
        .cwd(&dir)
        .code(1)
        .out("violation over 400 schedules"),
    );
}

#[test]
fn the_binary_works_outside_the_checkout_and_says_where_scenarios_come_from() {
    let away = scratch("cli_edges/away");
    let mine = away.join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    user_scenario(
        &mine,
        "payment-stable-key",
        "payment-stable-key",
        "My own stable key",
    );
    user_scenario(
        &mine,
        "my-retry",
        "payment-retry-without-key",
        "My retry without a key",
    );
    // Longer than the 40 columns the built-in names fit in.
    let long = "my-retry-without-a-key-and-a-name-far-longer-than-forty-characters";
    user_scenario(&mine, long, "payment-retry-without-key", "A long name");
    let long_then_verdict = format!("{long}  violation (no-duplicate-effect)");
    let mine_s = mine.to_string_lossy().into_owned();
    let cases = [
        case("list with no checkout", &["list"])
            .cwd(&away)
            .out("payment-stable-key")
            .out("built-in")
            .not_out("mine"),
        case(
            "check with no checkout",
            &["check", "payment-retry-without-key", "--runs", "100"],
        )
        .cwd(&away)
        .code(1)
        .out("repro: idemsim replay payment-retry-without-key --seed"),
        case(
            "verify one built-in with no checkout",
            &["verify", "payment-stable-key", "--max-runs", "50"],
        )
        .cwd(&away)
        .out("1 of 1 scenarios match"),
        case(
            "--scenarios adds a folder and reports shadowing",
            &["list", "--scenarios", "mine"],
        )
        .cwd(&away)
        .out("my-retry")
        .out("mine/my-retry.toml")
        .out("My own stable key")
        .out(&long_then_verdict)
        .err("note: mine/payment-stable-key.toml shadows built-in `payment-stable-key`"),
        case("IDEMSIM_SCENARIOS does the same", &["list", "--json"])
            .cwd(&away)
            .env("IDEMSIM_SCENARIOS", &mine_s)
            .out("\"source\":\"")
            .out("my-retry.toml")
            .out("\"shadows\":[\"built-in\"]"),
        case(
            "a user scenario by name is replayed by its path",
            &[
                "check",
                "my-retry",
                "--scenarios",
                "mine",
                "--runs",
                "100",
                "--no-shrink",
            ],
        )
        .cwd(&away)
        .code(1)
        .out("repro: idemsim replay mine/my-retry.toml --seed"),
        case(
            "a scenario given by path is replayed by that path",
            &["check", "mine/payment-stable-key.toml", "--runs", "30"],
        )
        .cwd(&away)
        .out("payment-stable-key: holds"),
        case(
            "a missing --scenarios folder",
            &["list", "--scenarios", "nowhere"],
        )
        .cwd(&away)
        .code(2)
        .err("--scenarios names `nowhere`, which is not a folder"),
        case("a near miss of a name", &["check", "payment-stable-ky"])
            .cwd(&away)
            .code(2)
            .err("did you mean `payment-stable-key`"),
    ];
    for c in &cases {
        check(c);
    }
    // The repro line of a path scenario replays that file, not the built-in of its name.
    let (out, _) = check(
        &case(
            "shadowing path scenario",
            &[
                "check",
                "mine/my-retry.toml",
                "--runs",
                "100",
                "--no-shrink",
            ],
        )
        .cwd(&away)
        .code(1),
    );
    let repro = out
        .lines()
        .find_map(|l| l.strip_prefix("repro: idemsim "))
        .expect("a repro line");
    let args: Vec<&str> = repro.split_whitespace().collect();
    check(
        &case("the repro line replays", &args)
            .cwd(&away)
            .code(1)
            .out("# my-retry"),
    );
}

#[test]
fn repro_files_are_checked_against_version_and_scenario() {
    let dir = scratch("cli_edges/repro");
    let file = dir.join("r.json");
    let f = file.to_string_lossy().into_owned();
    check(
        &case(
            "write a repro",
            &["shrink", "payment-retry-without-key", "--out", &f],
        )
        .cwd(&dir)
        .code(1),
    );
    check(
        &case("it replays", &["replay", "--repro", &f])
            .cwd(&dir)
            .code(1),
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["idemsim"] = serde_json::json!("0.0.1-old");
    let old = dir.join("old.json");
    std::fs::write(&old, v.to_string()).unwrap();
    let o = old.to_string_lossy().into_owned();
    check(
        &case("a repro of another version", &["replay", "--repro", &o])
            .cwd(&dir)
            .code(2)
            .err("written by idemsim 0.0.1-old, and this is idemsim"),
    );
    // The text's hash alone no longer decides: the settings recorded do.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["scenario_hash"] = serde_json::json!("0000000000000000");
    let other_text = dir.join("other-text.json");
    std::fs::write(&other_text, v.to_string()).unwrap();
    let s = other_text.to_string_lossy().into_owned();
    check(
        &case(
            "a repro whose scenario text differs, settings alike",
            &["replay", "--repro", &s],
        )
        .cwd(&dir)
        .code(1),
    );
    v["settings"]["client.timeout_ms"] = serde_json::json!(9000);
    let stale = dir.join("stale.json");
    std::fs::write(&stale, v.to_string()).unwrap();
    let s = stale.to_string_lossy().into_owned();
    check(
        &case(
            "a repro of other settings",
            &["replay", "--repro", &s],
        )
        .cwd(&dir)
        .code(2)
        .err("the settings of scenarios/payment-retry-without-key.toml changed since the repro was recorded: `client.timeout_ms` changed from 9000 to 10000"),
    );
    // A file written before repros recorded settings: its text hash decides.
    v.as_object_mut().unwrap().remove("settings");
    let old_text = dir.join("old-text.json");
    std::fs::write(&old_text, v.to_string()).unwrap();
    let s = old_text.to_string_lossy().into_owned();
    check(
        &case(
            "a repro without settings, of another scenario text",
            &["replay", "--repro", &s],
        )
        .cwd(&dir)
        .code(2)
        .err("was written before idemsim recorded a scenario's settings"),
    );
}

/// A scenario path with a space, as every printed command must name it: quoted,
/// so the line works when pasted into a shell.
#[test]
fn printed_commands_quote_a_scenario_path_with_spaces() {
    let dir = scratch("cli_edges/quoted");
    std::fs::create_dir_all(dir.join("my dir")).unwrap();
    std::fs::create_dir_all(dir.join("out dir")).unwrap();
    let scen = dir.join("my dir/my scen.toml");
    std::fs::copy(
        root().join("scenarios/payment-retry-without-key.toml"),
        &scen,
    )
    .unwrap();
    let quoted = "idemsim replay 'my dir/my scen.toml'";
    let base = ["check", "my dir/my scen.toml", "--runs", "20"];
    let text = [&base[..], &["--no-shrink", "--no-regressions"]].concat();
    check(
        &case("text repro line", &text)
            .cwd(&dir)
            .code(1)
            .out(&format!("repro: {quoted} --seed ")),
    );
    let json = [&base[..], &["--no-shrink", "--no-regressions", "--json"]].concat();
    let (out, _) = check(&case("JSON repro", &json).cwd(&dir).code(1));
    let line: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(line["data"]["replay"], quoted, "{out}");
    let repro = line["data"]["repro"].as_str().unwrap();
    assert!(repro.starts_with(&format!("{quoted} --seed ")), "{repro}");
    let seed = line["data"]["lowest_failing_seed"].to_string();
    let shrink = [
        "shrink",
        "my dir/my scen.toml",
        "--seed",
        &seed,
        "--out",
        "out dir/r.json",
    ];
    let (out, err) = check(&case("shrink --out", &shrink).cwd(&dir).code(1));
    assert!(
        format!("{out}{err}").contains(&format!("{quoted} --repro 'out dir/r.json'")),
        "{out}{err}"
    );
    let report = [
        "report",
        "my dir/my scen.toml",
        "--seed",
        &seed,
        "-o",
        "r.html",
    ];
    check(&case("report", &report).cwd(&dir).code(1));
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(
        !html.contains("replay my dir/"),
        "an unquoted command in the report"
    );
    assert!(html.contains("replay &#39;my dir/my scen.toml&#39;"));
    // A comment changes no setting: the repro still replays.
    let written = std::fs::read_to_string(&scen).unwrap();
    std::fs::write(&scen, written.clone() + "\n# edited\n").unwrap();
    let replay = ["replay", "my dir/my scen.toml", "--repro", "out dir/r.json"];
    check(&case("a comment added", &replay).cwd(&dir).code(1));
    let changed = written.replace("timeout_ms = 10000", "timeout_ms = 9000");
    assert_ne!(changed, written);
    std::fs::write(&scen, changed).unwrap();
    check(
        &case("changed scenario", &replay)
            .cwd(&dir)
            .code(2)
            .err(&format!(
                "`idemsim shrink 'my dir/my scen.toml' --seed {seed} --out 'out dir/r.json'`"
            )),
    );
}
