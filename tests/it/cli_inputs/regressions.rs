//! The regression database: a damaged file stops `check` and `verify`.

use super::helpers::*;
use crate::support::{case, scratch};
use serde_json::{json, Value};

/// A damaged file of the regression database stops `check` and `verify` with
/// its name, its place and the fix, before any seed runs; it is never skipped
/// and never written over. A folder that is no folder is refused up front.
#[test]
fn a_damaged_regression_is_an_error_never_skipped_or_overwritten() {
    let dir = scratch("cli_inputs/regressions");
    unexpected_scenario(&dir.join("mine.toml"));
    let run = |what: &'static str, args: &[&str], code: i32| {
        let mut all = vec!["check", "mine.toml", "--runs", "50", "--no-shrink"];
        all.extend_from_slice(args);
        case(what, &all).code(code).cwd(&dir)
    };
    check(
        &run(
            "the first failure is recorded",
            &["--regressions", "reg"],
            1,
        )
        .out("recorded regression reg/mine-"),
        &[],
    );
    let names: Vec<String> = std::fs::read_dir(dir.join("reg"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let [name] = names.as_slice() else {
        panic!("one regression: {names:?}")
    };
    let file = dir.join("reg").join(name);
    let shown = format!("reg/{name}");
    let good = std::fs::read_to_string(&file).unwrap();
    let edited = |f: &dyn Fn(&mut Value)| {
        let mut v: Value = serde_json::from_str(&good).unwrap();
        f(&mut v);
        serde_json::to_string_pretty(&v).unwrap()
    };
    let fix = "help: delete it, or restore it from version control";
    let unknown = edited(&|v| v["invariant"] = json!("no-such-invariant"));
    let line = unknown[..unknown.find("\"invariant\"").unwrap()]
        .matches('\n')
        .count()
        + 1;
    let damaged = [
        (
            "a truncated file",
            good[..good.len() / 2].to_string(),
            format!("error: {shown}:"),
            "not a regression file: EOF while parsing",
        ),
        (
            "garbage",
            "{ not json".to_string(),
            format!("error: {shown}:1:3: not a regression file"),
            "key must be a string",
        ),
        (
            "an invariant idemsim does not have",
            unknown.clone(),
            format!("error: {shown}:{line}:3: not a regression file"),
            "idemsim has no invariant `no-such-invariant`",
        ),
        (
            "a decision no run of the scenario takes",
            edited(&|v| v["choices"]["swarm"] = json!([u64::MAX])),
            format!("error: {shown}:"),
            "decision 0 of `swarm` is 18446744073709551615, but that decision takes 0 to",
        ),
        (
            "a decision past u64",
            edited(&|v| v["choices"]["swarm"] = json!([-1])),
            format!("error: {shown}:"),
            "invalid value: integer `-1`, expected u64",
        ),
    ];
    for (what, text, place, why) in damaged {
        std::fs::write(&file, &text).unwrap();
        for args in [
            vec!["--regressions", "reg"],
            vec!["--regressions", "reg", "--strategy", "coverage"],
        ] {
            let (out, _) = check(&run(what, &args, 2).err(&place).err(why).err(fix), &[]);
            assert!(!out.contains("schedules"), "{what}: no seed ran\n{out}");
        }
        check(
            &case(
                what,
                &[
                    "verify",
                    "mine.toml",
                    "--runs",
                    "50",
                    "--regressions",
                    "reg",
                ],
            )
            .cwd(&dir)
            .code(2)
            .err(&place)
            .err(why),
            &[],
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            text,
            "{what}: the file is left as it was"
        );
    }
    // A .json file the database did not name is no regression: verify
    // reports it stale, check leaves it alone.
    std::fs::write(&file, &good).unwrap();
    std::fs::write(dir.join("reg/notes.json"), "{ not json").unwrap();
    check(
        &run("the recorded failure replays", &["--regressions", "reg"], 1)
            .out(&format!("regression {shown}: still fails")),
        &[],
    );
    std::fs::write(dir.join("a-file"), "").unwrap();
    let not_a_folder = [
        (
            "/dev/null",
            "error: --regressions /dev/null is not a folder: /dev/null is a device",
        ),
        (
            "a-file",
            "error: --regressions a-file is not a folder: a-file is a file",
        ),
        (
            "a-file/reg",
            "error: --regressions a-file/reg is not a folder: a-file is a file",
        ),
    ];
    for (folder, err) in not_a_folder {
        for args in [
            vec!["--regressions", folder],
            vec!["--regressions", folder, "--shard", "0/2"],
        ] {
            let (out, _) = check(
                &run("a regression folder that is no folder", &args, 2)
                    .err(err)
                    .err("help: give a folder for the regression database"),
                &[],
            );
            assert!(out.is_empty(), "refused before the sweep: {out}");
        }
        check(
            &case(
                "verify too",
                &["verify", "mine.toml", "--regressions", folder],
            )
            .cwd(&dir)
            .code(2)
            .err(err),
            &[],
        );
    }
    check(
        &case(
            "and IDEMSIM_REGRESSIONS",
            &["check", "mine.toml", "--runs", "5"],
        )
        .env("IDEMSIM_REGRESSIONS", "a-file")
        .cwd(&dir)
        .code(2)
        .err("error: IDEMSIM_REGRESSIONS a-file is not a folder"),
        &[],
    );
    assert_eq!(std::fs::read(dir.join("a-file")).unwrap(), b"");
}

/// `check --json` promises the summary as its last line (`tail -1 | jq`),
/// also when the run records a new regression, by a sweep or a search.
#[test]
fn the_summary_stays_last_when_a_regression_is_recorded() {
    let dir = scratch("cli_inputs/summary-last");
    let stable =
        std::fs::read_to_string(crate::support::root().join("scenarios/payment-stable-key.toml"))
            .unwrap();
    let broken = stable.replace("\nkey = \"stable\"", "\nkey = \"none\"");
    assert_ne!(broken, stable, "the scenario sets client.key");
    std::fs::write(dir.join("broken.toml"), broken).unwrap();
    let sweep = ["check", "broken.toml", "--runs", "50", "--json"];
    let search = [
        &sweep[..],
        &["--strategy", "coverage", "--regressions", "search"],
    ]
    .concat();
    for (what, args) in [("a sweep", &sweep[..]), ("a search", &search[..])] {
        let (out, _) = check(&case(what, args).cwd(&dir).code(1), &[]);
        let types: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].clone())
            .collect();
        assert!(out.contains("\"status\":\"recorded\""), "{what}: {out}");
        assert_eq!(types.last(), Some(&json!("summary")), "{what}: {out}");
    }
}

/// A recorded regression that still fails makes `check` exit 1 even when its
/// own seeds hold: the output says so and prints the command that replays
/// the regression, in text and in the JSON summary.
#[test]
fn a_still_failing_regression_is_named_with_its_replay_command() {
    let dir = scratch("cli_inputs/still-failing");
    unexpected_scenario(&dir.join("rwk.toml"));
    check(
        &case("record", &["check", "rwk.toml", "--runs", "10"])
            .cwd(&dir)
            .code(1),
        &[],
    );
    // The seeds alone: the default portfolio's searches find the bug too.
    let holding = [
        "check",
        "rwk.toml",
        "--seeds",
        "0..2",
        "--no-shrink",
        "--strategy",
        "seeds",
    ];
    check(
        &case("text", &holding)
            .cwd(&dir)
            .code(1)
            .out("rwk: holds over 2 schedules")
            .out("repro: idemsim replay rwk.toml --repro .idemsim/regressions/rwk-"),
        &[],
    );
    let json = [&holding[..], &["--json"]].concat();
    let (out, _) = check(&case("json", &json).cwd(&dir).code(1), &[]);
    let summary: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let failing = &summary["data"]["failing_regression"];
    let file = failing["file"]
        .as_str()
        .expect("the failing regression's file");
    assert!(file.starts_with(".idemsim/regressions/rwk-"), "{out}");
    assert_eq!(failing["invariant"], json!("no-duplicate-effect"), "{out}");
    let replay = failing["replay"].as_str().unwrap();
    assert_eq!(replay, format!("idemsim replay rwk.toml --repro {file}"));
    let args: Vec<&str> = replay.split(' ').skip(1).collect();
    check(
        &case("the replay command", &args)
            .cwd(&dir)
            .code(1)
            .out("Violation of no-duplicate-effect"),
        &[],
    );
}
