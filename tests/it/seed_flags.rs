//! `sweep`, `verify` and `advise` take the seeds as `check` does: `--seeds
//! A..B`, `--seeds A..=B` and `--seed N`, parsed by the one parser (so with
//! the same errors), refused beside `--runs`, and named in their JSON the
//! way `check` names them; so a range `check` found failing can be swept,
//! verified and advised on as it is. The completions and man pages, made
//! from the same flags, offer them.

use crate::support::{idemsim, outcome, run, scratch, summary, text};

const SCENARIO: &str = "payment-retry-without-key";

/// The commands that used to take `--runs` alone, each with what it needs
/// beside the seeds (the sweep's one variant is the file's own timeout, so
/// it runs the design `check` runs).
const COMMANDS: [&[&str]; 3] = [
    &["sweep", SCENARIO, "--set", "client.timeout_ms=10000"],
    &["verify", SCENARIO, "--no-regressions"],
    &["advise", SCENARIO, "--max-candidates", "1"],
];

fn with(cmd: &[&str], more: &[&str]) -> Vec<String> {
    cmd.iter().chain(more).map(|s| (*s).to_string()).collect()
}

fn refused(args: &[String]) -> String {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, err) = run(&words, 2);
    err
}

/// clap's first line of an error, which names the value and why.
fn first_line(err: &str) -> &str {
    err.lines().next().unwrap_or_default()
}

#[test]
fn a_bad_range_gets_the_error_check_gives() {
    for bad in [
        "5..3",
        "x..9",
        "7..=6",
        "0..18446744073709551617",
        "0..2000000000000",
    ] {
        let from_check = refused(&with(&["check", SCENARIO], &["--seeds", bad]));
        assert!(
            from_check.contains(&format!("invalid value '{bad}'")),
            "{from_check}"
        );
        for cmd in COMMANDS {
            let err = refused(&with(cmd, &["--seeds", bad]));
            assert_eq!(
                first_line(&err),
                first_line(&from_check),
                "{} {bad}",
                cmd[0]
            );
        }
    }
}

#[test]
fn runs_beside_seeds_or_seed_is_refused() {
    for cmd in COMMANDS {
        let err = refused(&with(cmd, &["--runs", "10", "--seeds", "0..5"]));
        assert!(
            err.contains(
                "error: the argument '--runs <RUNS>' cannot be used with '--seeds <SEEDS>'"
            ),
            "{}: {err}",
            cmd[0]
        );
        let err = refused(&with(cmd, &["--seed", "3", "--runs", "10"]));
        assert!(err.contains("cannot be used with"), "{}: {err}", cmd[0]);
        let err = refused(&with(cmd, &["--seed", "3", "--seeds", "0..5"]));
        assert!(err.contains("cannot be used with"), "{}: {err}", cmd[0]);
    }
    // verify's cap on each scenario's seeds says nothing of a range given.
    let err = refused(&with(COMMANDS[1], &["--max-runs", "10", "--seeds", "0..5"]));
    assert!(err.contains("cannot be used with"), "{err}");
}

/// The `data` of the last JSON line of `args`, which exit with `code`.
fn last_json(args: &[String], code: i32) -> serde_json::Value {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = run(&words, code);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    v["data"].clone()
}

/// The first JSON line of `args` (`sweep`'s head, `advise`'s design).
fn first_json(args: &[String], code: i32) -> serde_json::Value {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = run(&words, code);
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    v["data"].clone()
}

#[test]
fn the_seeds_check_found_failing_are_the_seeds_the_others_run() {
    // A range whose first seed holds: its lowest failing seed is no
    // accident of starting at 0.
    let range = "1001..1051";
    let out = outcome(&["check", SCENARIO, "--seeds", range, "--json", "--no-shrink"]);
    let found = summary(&out)["lowest_failing_seed"].as_u64().unwrap();
    assert!(found > 1001, "{out}");
    let seeds = serde_json::json!({
        "start": 1001, "start_decimal": "1001", "end": 1051, "end_decimal": "1051"
    });

    let sweep = [&["--seeds", range][..], &["--format", "json"]].concat();
    let head = first_json(&with(COMMANDS[0], &sweep), 0);
    assert_eq!(head["seeds"], seeds);
    let row = last_json(&with(COMMANDS[0], &sweep), 0);
    assert_eq!(row["lowest_failing_seed"], found, "{row}");
    assert_eq!(row["schedules"], 50);

    let verify = last_json(&with(COMMANDS[1], &["--seeds", range, "--json"]), 0);
    assert_eq!(verify["judged"], 1, "{verify}");
    let words: Vec<String> = with(COMMANDS[1], &["--seeds", range, "--json"]);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let (out, _) = run(&words, 0);
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(line["data"]["seeds"], seeds);
    assert_eq!(line["data"]["lowest_failing_seed"], found);
    assert_eq!(line["data"]["schedules"], 50);

    // One candidate is no fix here (exit 1); the design's own line says
    // which seeds it ran.
    let advise = first_json(&with(COMMANDS[2], &["--seeds", range, "--json"]), 1);
    assert_eq!(advise["seeds"]["start"], 1001, "{advise}");
    assert_eq!(advise["lowest_failing_seed"], found, "{advise}");
}

#[test]
fn one_seed_alone_runs_that_seed() {
    let found = summary(&outcome(&[
        "check",
        SCENARIO,
        "--seeds",
        "1001..1051",
        "--json",
        "--no-shrink",
    ]))["lowest_failing_seed"]
        .as_u64()
        .unwrap();
    let seed = found.to_string();
    let args = with(COMMANDS[1], &["--seed", &seed, "--json"]);
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = run(&words, 0);
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(line["data"]["found"], "violation", "{out}");
    assert_eq!(line["data"]["schedules"], 1);
    assert_eq!(line["data"]["seeds"]["start"], found);
    // The seed before the range's first failure holds on its own.
    let args = with(COMMANDS[1], &["--seed", "1001", "--json"]);
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = run(&words, 1);
    assert!(out.contains(r#""found":"holds""#), "{out}");
}

#[test]
fn a_range_to_the_last_seed_is_named_as_check_names_it() {
    let top = u64::MAX;
    let range = format!("{}..={top}", top - 3);
    let from_check = summary(&outcome(&[
        "check",
        "payment-stable-key",
        "--seeds",
        &range,
        "--json",
        "--no-shrink",
    ]))["seeds"]
        .clone();
    assert!(from_check["end"].is_null(), "{from_check}");
    let sweep = [
        "sweep",
        "payment-stable-key",
        "--set",
        "client.timeout_ms=100",
        "--seeds",
        &range,
        "--format",
        "json",
    ];
    let head = first_json(&with(&sweep, &[]), 0);
    assert_eq!(head["seeds"], from_check);
    let (table, _) = run(&sweep[..6], 0);
    assert!(table.contains(&format!("each on seeds {range}")), "{table}");
}

#[test]
fn completions_and_man_pages_offer_the_seed_flags() {
    let dir = scratch("seed_flags_man");
    let out = idemsim(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for cmd in ["sweep", "verify", "advise"] {
        let page = std::fs::read_to_string(dir.join(format!("idemsim-{cmd}.1"))).unwrap();
        assert!(page.contains("\\-\\-seeds"), "{cmd}'s page: {page}");
        assert!(page.contains("\\-\\-seed"), "{cmd}'s page");
    }
    let fish = text(&idemsim(&["completions", "fish"]).stdout);
    for cmd in ["sweep", "verify", "advise"] {
        let offered = fish.lines().any(|l| {
            l.contains(&format!("__fish_idemsim_using_subcommand {cmd}")) && l.contains("-l seeds")
        });
        assert!(offered, "fish offers {cmd} --seeds");
    }
}
