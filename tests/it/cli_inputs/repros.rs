//! `replay --repro` and `report --repro`: a repro opens only a built-in
//! scenario or a file in its own folder, and the repros `shrink` and
//! `check` write replay or say how.

use super::helpers::*;
use crate::support::{self, case, scratch};
use serde_json::{json, Value};
use std::path::Path;

#[test]
fn a_repro_opens_only_a_built_in_or_a_file_in_its_own_folder() {
    let dir = scratch("cli_inputs/repro-paths");
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
    let dir = scratch("cli_inputs/repro-writes");
    scenario_file(&dir.join("mine.toml"));
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let built_in_path = text(&support::root().join(format!("scenarios/{FAILING}.toml")));
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
