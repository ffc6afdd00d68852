//! Bad input files for `replay --repro`, `report --repro`, `merge` and
//! `diff`, found by fuzzing them: each case is a file a user may really hold
//! (edited, truncated, from another run, from someone else), with the exit
//! code and the words it must produce. Every case runs through the shared
//! `common::run_case`, which also fails on a panic, on a hang, and on an
//! exit-2 message without a fix; [`check`] adds the words it must not show.

mod common;

use common::{case, run_case, Case};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const FAILING: &str = "payment-retry-without-key";

/// A line of a file outside every folder a repro may name: it must never
/// reach the output.
const SECRET: &str = "secret-line-that-must-not-be-shown";

/// Runs `c` and checks that stderr and stdout show none of `lacks`.
#[track_caller]
fn check(c: &Case, lacks: &[&str]) -> (String, String) {
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

/// A fresh folder for one test's files, outside the checkout.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("idemsim-inputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp folder");
    dir
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The built-in failing scenario as a file of the user's, at `path`.
fn scenario_file(path: &Path) {
    let from = common::root().join(format!("scenarios/{FAILING}.toml"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(from, path).unwrap();
}

/// `repro` with its JSON edited by `f`, written to `dir/name`.
fn edited_repro(dir: &Path, repro: &Path, name: &str, f: impl Fn(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(repro).unwrap()).unwrap();
    f(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    text(&path)
}

#[test]
fn a_repro_opens_only_a_built_in_or_a_file_in_its_own_folder() {
    let dir = scratch("repro-paths");
    let repros = dir.join("repros");
    scenario_file(&repros.join("scen/mine.toml"));
    // A scenario-looking file with a secret, outside the repros' folder.
    let outside = dir.join("outside.toml");
    std::fs::write(&outside, format!("{SECRET} = \n")).unwrap();
    std::os::unix::fs::symlink(&outside, repros.join("link.toml")).unwrap();
    let good = text(&repros.join("good.json"));
    check(
        &case(
            "shrink writes the scenario's path relative to the repro's folder",
            &[
                "shrink",
                "repros/scen/mine.toml",
                "--seed",
                "2",
                "--out",
                "repros/good.json",
            ],
        )
        .code(1)
        .cwd(&dir)
        .err("replay it with `idemsim replay --repro repros/good.json`"),
        &[],
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    assert_eq!(written["file"], "scen/mine.toml", "{written}");
    let secret = text(&outside);
    let absolute = edited_repro(&repros, Path::new(&good), "absolute.json", |v| {
        v["file"] = json!(secret)
    });
    let escape = edited_repro(&repros, Path::new(&good), "escape.json", |v| {
        v["file"] = json!("../outside.toml")
    });
    let dotdot = edited_repro(&repros, Path::new(&good), "dotdot.json", |v| {
        v["file"] = json!("scen/../../outside.toml")
    });
    let link = edited_repro(&repros, Path::new(&good), "link.json", |v| {
        v["file"] = json!("link.toml")
    });
    let device = edited_repro(&repros, Path::new(&good), "device.json", |v| {
        v["file"] = json!("/dev/zero")
    });
    let path_name = edited_repro(&repros, Path::new(&good), "path-name.json", |v| {
        v.as_object_mut().unwrap().remove("file");
        v["scenario"] = json!(secret);
    });
    let unknown_name = edited_repro(&repros, Path::new(&good), "unknown-name.json", |v| {
        v.as_object_mut().unwrap().remove("file");
        v["scenario"] = json!("mine");
    });
    let gone = edited_repro(&repros, Path::new(&good), "gone.json", |v| {
        v["file"] = json!("scen/gone.toml")
    });
    let bad_sets = edited_repro(&repros, Path::new(&good), "bad-sets.json", |v| {
        v["sets"] = json!(["nonsense"])
    });
    let unknown_key = edited_repro(&repros, Path::new(&good), "unknown-key.json", |v| {
        v["scenario_file"] = json!("scen/mine.toml")
    });
    let refused = "idemsim opens a recorded scenario file only there or below it";
    let cases = [
        case("it replays from anywhere", &["replay", "--repro", &good])
            .code(1)
            .out("# mine"),
        case("an absolute path is refused", &["replay", "--repro", &absolute])
            .code(2)
            .err("absolute.json: the scenario file")
            .err(refused)
            .err(&format!("help: give the scenario on the command line (a name from `idemsim list` or a path to its .toml file): `idemsim replay {secret} --repro {absolute}`")),
        case("so is a path out of the folder", &["replay", "--repro", &escape])
            .code(2)
            .err("escape.json: the scenario file `../outside.toml` is not a path inside the repro's folder")
            .err(refused),
        case("and one that leaves it on the way", &["replay", "--repro", &dotdot])
            .code(2)
            .err("dotdot.json")
            .err(refused),
        case("and a link out of the folder", &["replay", "--repro", &link])
            .code(2)
            .err("link.json: the scenario file `link.toml` leads out of the repro's folder"),
        case("and a device", &["replay", "--repro", &device])
            .code(2)
            .err("device.json")
            .err(refused),
        case("a path as the scenario's name is no name", &["replay", "--repro", &path_name])
            .code(2)
            .err("path-name.json: the repro's scenario")
            .err("is not a scenario name"),
        case("a name no catalog has names the repro file", &["replay", "--repro", &unknown_name])
            .code(2)
            .err("unknown-name.json: the repro's scenario `mine` is neither built in nor in a --scenarios folder")
            .err("`idemsim replay mine --repro"),
        case("a file that is not there", &["replay", "--repro", &gone])
            .code(2)
            .err("gone.json: the scenario file `scen/gone.toml` is not there"),
        case("report refuses the same and says how to name it", &["report", "--repro", &escape, "-o", "r.html"])
            .code(2)
            .err(refused)
            .err("`idemsim report ../outside.toml --repro")
            .err("-o REPORT.html`"),
        case("the recorded overrides' mistakes are the repro file's", &["replay", "--repro", &bad_sets])
            .code(2)
            .err("bad-sets.json: its recorded --set `nonsense` is not KEY=VALUE"),
        case("an unknown key is refused, not ignored", &["replay", "--repro", &unknown_key])
            .code(2)
            .err("unknown-key.json:")
            .err("unknown field `scenario_file`"),
    ];
    for c in cases {
        check(&c.cwd(&dir), &[SECRET]);
    }
    // The scenario named on the command line is the user's choice: it is opened.
    let mine = text(&repros.join("scen/mine.toml"));
    let explicit = [
        case(
            "an explicit scenario replays a refused repro",
            &["replay", &mine, "--repro", &absolute],
        )
        .code(1)
        .out("# mine"),
        case(
            "also through a path out of the folder",
            &["replay", "repros/scen/mine.toml", "--repro", &escape],
        )
        .code(1),
        case("and by name", &["replay", FAILING, "--repro", &path_name]).code(1),
        case(
            "report too",
            &["report", &mine, "--repro", &link, "-o", "r.html"],
        )
        .code(1)
        .err("wrote r.html"),
    ];
    for c in explicit {
        check(&c.cwd(&dir), &[]);
    }
}

#[test]
fn the_repros_shrink_and_check_write_replay_or_say_how() {
    let dir = scratch("repro-writes");
    scenario_file(&dir.join("mine.toml"));
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let built_in_path = text(&common::root().join(format!("scenarios/{FAILING}.toml")));
    let setup = [
        case(
            "a scenario outside the repro's folder: shrink says how to replay it",
            &[
                "shrink",
                "mine.toml",
                "--seed",
                "2",
                "--out",
                "out/outside.json",
            ],
        )
        .code(1)
        .err("replay it with `idemsim replay mine.toml --repro out/outside.json`"),
        case(
            "check --repro-out says so too",
            &[
                "check",
                "mine.toml",
                "--runs",
                "50",
                "--no-shrink",
                "--repro-out",
                "out/check.json",
            ],
        )
        .code(1)
        .err("note: the scenario file mine.toml is not in the folder of out/check.json or below it")
        .err("`idemsim replay mine.toml --repro out/check.json`"),
        case(
            "a file with a built-in's text is written as that built-in",
            &[
                "shrink",
                &built_in_path,
                "--seed",
                "2",
                "--out",
                "out/built-in.json",
            ],
        )
        .code(1)
        .err("replay it with `idemsim replay --repro out/built-in.json`"),
    ];
    for c in setup {
        check(&c.cwd(&dir), &[]);
    }
    let cases = [
        case(
            "the repro of a scenario outside its folder is refused without the scenario",
            &["replay", "--repro", "out/outside.json"],
        )
        .code(2)
        .err("out/outside.json: the scenario file")
        .err("/mine.toml --repro out/outside.json`"),
        case(
            "and replays with it",
            &["replay", "mine.toml", "--repro", "out/outside.json"],
        )
        .code(1)
        .out("# mine"),
        case(
            "the built-in's replays by name from anywhere",
            &["replay", "--repro", "built-in.json"],
        )
        .code(1)
        .out(&format!("# {FAILING}")),
    ];
    for (i, c) in cases.into_iter().enumerate() {
        let at = if i < 2 { dir.clone() } else { dir.join("out") };
        check(&c.cwd(&at), &[]);
    }
    // A relative path kept from the command line would be read from the
    // repro's folder, where another file of that name may be: never written.
    scenario_file(&dir.join("out/mine.toml"));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/outside.json")).unwrap())
            .unwrap();
    let file = written["file"].as_str().expect("a file");
    assert!(Path::new(file).is_absolute(), "{written}");
}

/// Shards of `scenario` (`check --json --shard I/2`) in `dir`.
fn shards(dir: &Path, scenario: &str, code: i32) -> [String; 2] {
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
fn edited_shard(dir: &Path, name: &str, to: &str, f: impl Fn(&mut Value)) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let mut v: Value = serde_json::from_str(text.trim()).expect("one JSON line");
    f(&mut v["data"]);
    std::fs::write(dir.join(to), format!("{v}\n")).unwrap();
    to.to_string()
}

#[test]
fn merge_refuses_summaries_of_other_runs_and_names_the_files() {
    let dir = scratch("merge");
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
    let (coverage, _) = check(
        &case(
            "a coverage-guided search",
            &[
                "check",
                "payment-give-up-silently-low-loss",
                "--json",
                "--no-shrink",
            ],
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

#[test]
fn a_scenario_missing_a_key_is_the_files_mistake_not_the_overrides() {
    let dir = scratch("truncated");
    let full =
        std::fs::read_to_string(common::root().join(format!("scenarios/{FAILING}.toml"))).unwrap();
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

/// A shard names the scenario file `check` ran. `merge` needs it only to
/// shrink, and opens it only in the current folder or below it (where
/// `check` ran), so an edited shard cannot make it open and quote another
/// file; `--scenario` names the scenario instead.
#[test]
fn merge_opens_a_shards_scenario_file_only_below_the_current_folder() {
    let root = scratch("merge-file");
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
        .err(inside)
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

/// The failing scenario without its `[expect]`: each failure of it is a
/// regression, recorded in the database.
fn unexpected_scenario(path: &Path) {
    let from = common::root().join(format!("scenarios/{FAILING}.toml"));
    let text = std::fs::read_to_string(from).unwrap().replace(
        "[expect]\nverdict = \"violation\"\ninvariant = \"no-duplicate-effect\"\n",
        "",
    );
    assert!(!text.contains("[expect]"));
    std::fs::write(path, text).unwrap();
}

/// A damaged file of the regression database stops `check` and `verify` with
/// its name, its place and the fix, before any seed runs; it is never skipped
/// and never written over. A folder that is no folder is refused up front.
#[test]
fn a_damaged_regression_is_an_error_never_skipped_or_overwritten() {
    let dir = scratch("regressions");
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
