//! A holding `check` names the protections its file declares: a "holds" is
//! earned only if removing each one breaks the design, `check` removes none,
//! and its summary says so and names `idemsim verify`, in text and in the
//! JSON summary's `protections`. A file that does not expect to hold, a
//! failing sweep and a `--set` variant print nothing new; a file that
//! expects to hold and names none is told `verify` refuses it. The same
//! holds for `--exhaustive` (the `exhaustive` record) and a coverage-guided
//! search, and `merge` refuses holding shards that name other protections.

use crate::support::{load, root, run, scratch, summary};
use serde_json::Value;

/// Holds on its 20 seeds with one protection that names its invariant.
const SQS: &str = "messaging-sqs-fifo-dedup-inside";

/// The protections `check` names, from its JSON summary.
fn named(s: &Value) -> Vec<(String, Option<String>)> {
    s["protections"]["named"]
        .as_array()
        .unwrap_or_else(|| panic!("no protections.named in {s}"))
        .iter()
        .map(|p| {
            let protection = p["protection"].as_str().expect("a protection").to_string();
            let breaks = p["expected_invariant"].as_str().map(str::to_string);
            (protection, breaks)
        })
        .collect()
}

/// The protections the file declares, as the library loads them.
fn declared(name: &str) -> Vec<(String, Option<String>)> {
    let s = load(name, &[]);
    assert!(!s.protections().is_empty(), "{name} names no protections");
    s.protections()
        .iter()
        .map(|p| (p.describe(), p.breaks.map(str::to_string)))
        .collect()
}

/// `check` of a catalog scenario, text and JSON, both exit 0 (holds).
fn check_both(args: &[&str]) -> (String, Value) {
    let args = [&["check"], args, &["--no-regressions"]].concat();
    let (text, _) = run(&args, 0);
    let (json, _) = run(&[&args[..], &["--json"]].concat(), 0);
    (text, summary(&json))
}

#[test]
fn a_holding_catalog_scenario_names_each_protection_and_the_command_that_removes_it() {
    for (name, runs) in [(SQS, "20"), ("payment-stable-key", "50")] {
        let (text, s) = check_both(&[name, "--runs", runs]);
        assert_eq!(s["verdict"], "holds", "{s}");
        let want = declared(name);
        assert_eq!(named(&s), want, "{name}: JSON names other protections");
        let verify = format!("idemsim verify {name}");
        assert_eq!(s["protections"]["verify"], verify.as_str(), "{s}");
        let heading = format!(
            "protections (named by the file; check removes none, `{verify}` removes each and expects a violation):"
        );
        assert!(text.contains(&heading), "{name}: no heading in\n{text}");
        for (protection, breaks) in &want {
            let breaks = breaks.as_deref().unwrap_or("an invariant");
            let line = format!("\n  without {protection}: must break {breaks}\n");
            assert!(text.contains(&line), "{name}: no `{line}` in\n{text}");
        }
    }
    // The one with an invariant, spelled out, so a wrong `describe` or a
    // dropped `breaks` cannot pass by agreeing with itself.
    let (text, _) = check_both(&[SQS]);
    assert!(
        text.contains("\n  without broker.preset=sqs-standard: must break no-duplicate-effect\n"),
        "{text}"
    );
}

#[test]
fn a_failing_scenario_and_a_variant_name_none() {
    // Meant to fail: it has no protections, and its output is as before.
    let args = ["check", "payment-retry-without-key", "--runs", "50"];
    let args = [&args[..], &["--no-shrink", "--no-regressions"]].concat();
    let (text, _) = run(&args, 1);
    let (json, _) = run(&[&args[..], &["--json"]].concat(), 1);
    assert!(!text.contains("protections"), "{text}");
    assert!(summary(&json).get("protections").is_none(), "{json}");
    // A file that expects to hold and names its protection, but whose
    // design as written has lost it: its violation prints none.
    // (Its `[expect] not met` line names `verify`, protections included.)
    let (text, s) = lost("protection-lost", &["--no-shrink"], "summary");
    assert!(text.contains(": violation over "), "{text}");
    assert!(!text.contains("protections ("), "{text}");
    assert!(s.get("protections").is_none(), "{s}");
    // A variant that still holds: the file's protections describe the file.
    let (text, s) = check_both(&[
        "payment-stable-key",
        "--runs",
        "50",
        "--set",
        "client.retry.max_attempts=2",
    ]);
    assert_eq!(s["verdict"], "holds", "{s}");
    assert!(s.get("protections").is_none(), "{s}");
    assert!(!text.contains("protections"), "{text}");
}

/// The SQS scenario's file as `edit` rewrites it, in a scratch folder.
fn rewritten(name: &str, edit: impl Fn(&str) -> String) -> String {
    let from = root().join(format!("scenarios/{SQS}.toml"));
    let text = std::fs::read_to_string(from).expect("the scenario");
    let edited = edit(&text);
    assert_ne!(edited, text, "the scenario changed: {name} edits nothing");
    let path = scratch(&format!("check_protections/{name}")).join(format!("{name}.toml"));
    std::fs::write(&path, edited).expect("write the file");
    path.to_string_lossy().into_owned()
}

/// `check FILE ARGS` of the SQS file that expects to hold with its
/// protection but has a standard queue, which has none: a violation, in
/// text and as its `record` JSON line.
fn lost(name: &str, args: &[&str], record: &str) -> (String, Value) {
    let lost = rewritten(name, |t| {
        t.replace(r#"preset = "sqs-fifo""#, r#"preset = "sqs-standard""#)
    });
    let failed = check_as(&[&[lost.as_str()], args].concat(), record, 1);
    assert_eq!(failed.1["verdict"], "violation", "{}", failed.1);
    failed
}

/// `text` without its `[expect]` table (up to the blank line after it).
fn without_expect(text: &str) -> String {
    let start = text.find("[expect]\n").expect("an [expect] table");
    let end = start + text[start..].find("\n\n").expect("a blank line after it") + 2;
    format!("{}{}", &text[..start], &text[end..])
}

/// `text` without its `protections = ...` line.
fn without_protections(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("protections = "))
        .collect();
    lines.join("\n") + "\n"
}

#[test]
fn a_file_without_expect_says_nothing_new_and_one_that_holds_without_protections_is_told() {
    // No [expect]: a design being explored, whose "holds" says nothing more.
    let bare = rewritten("no-expect", without_expect);
    let (text, s) = check_both(&[&bare]);
    assert_eq!(s["verdict"], "holds", "{s}");
    assert!(s.get("protections").is_none(), "{s}");
    assert!(!text.contains("protections"), "{text}");
    // It expects to hold and names nothing that earns it: `verify` will
    // count it as a mismatch, and `check` says so rather than stay silent.
    let none = rewritten("no-protections", without_protections);
    let (text, s) = check_both(&[&none]);
    assert_eq!(s["verdict"], "holds", "{s}");
    assert_eq!(s["protections"]["named"], serde_json::json!([]), "{s}");
    let verify = format!("idemsim verify {none}");
    assert_eq!(s["protections"]["verify"], verify.as_str(), "{s}");
    let line = format!(
        "\nprotections: the file names none (`{verify}` counts a holding file without them as a mismatch)\n"
    );
    assert!(text.contains(&line), "no `{line}` in\n{text}");
}

#[test]
fn merged_shards_name_the_protections_one_machine_would_have() {
    let dir = scratch("check_protections/shards");
    let mut files = Vec::new();
    for shard in ["0/2", "1/2"] {
        let args = ["check", SQS, "--shard", shard, "--json", "--no-regressions"];
        let (json, _) = run(&args, 0);
        let s = summary(&json);
        assert_eq!(named(&s), declared(SQS), "shard {shard}: {s}");
        let file = dir.join(format!("shard-{}.jsonl", &shard[..1]));
        std::fs::write(&file, json).expect("write the shard");
        files.push(file.to_string_lossy().into_owned());
    }
    let merge = |json: bool| {
        let mut args = vec!["merge", files[0].as_str(), files[1].as_str()];
        args.extend(json.then_some("--json"));
        run(&args, 0).0
    };
    let (_, one) = check_both(&[SQS]);
    let merged = summary(&merge(true));
    assert_eq!(merged["protections"], one["protections"], "{merged}");
    assert!(
        merge(false)
            .contains("\n  without broker.preset=sqs-standard: must break no-duplicate-effect\n"),
        "the merged text names no protection"
    );
}

/// The last record of type `kind` in `jsonl`: its `data`.
fn record(jsonl: &str, kind: &str) -> Value {
    let tag = format!("\"type\":\"{kind}\"");
    let line = jsonl
        .lines()
        .rev()
        .find(|l| l.contains(&tag))
        .unwrap_or_else(|| panic!("no `{kind}` line in {jsonl}"));
    serde_json::from_str::<Value>(line).expect("valid JSON")["data"].clone()
}

/// `check ARGS` in text and as JSON (`kind`'s record), both with exit `code`.
fn check_as(args: &[&str], kind: &str, code: i32) -> (String, Value) {
    let args = [&["check"], args, &["--no-regressions"]].concat();
    let (text, _) = run(&args, code);
    let (json, _) = run(&[&args[..], &["--json"]].concat(), code);
    (text, record(&json, kind))
}

/// Both outputs name exactly the file's protections, as a sweep does.
#[track_caller]
fn names_each(name: &str, verify_arg: &str, (text, s): &(String, Value)) {
    assert_eq!(s["verdict"], "holds", "{s}");
    assert_eq!(
        named(s),
        declared(name),
        "{name}: JSON names other protections"
    );
    let verify = format!("idemsim verify {verify_arg}");
    assert_eq!(s["protections"]["verify"], verify.as_str(), "{s}");
    let heading = format!(
        "\nprotections (named by the file; check removes none, `{verify}` removes each and expects a violation):\n"
    );
    assert!(text.contains(&heading), "{name}: no heading in\n{text}");
    for (protection, breaks) in declared(name) {
        let breaks = breaks.as_deref().unwrap_or("an invariant");
        let line = format!("\n  without {protection}: must break {breaks}\n");
        assert!(text.contains(&line), "{name}: no `{line}` in\n{text}");
    }
}

/// Neither output names any protection.
#[track_caller]
fn names_none((text, s): &(String, Value)) {
    assert!(s.get("protections").is_none(), "{s}");
    assert!(!text.contains("protections"), "{text}");
}

#[test]
fn an_exhaustive_check_that_holds_names_the_protections_and_one_that_does_not_names_none() {
    let stable = "payment-stable-key";
    let holds = check_as(
        &[stable, "--exhaustive", "--max-faults", "1"],
        "exhaustive",
        0,
    );
    assert!(
        holds
            .0
            .contains(": holds for every schedule with at most 1 fault"),
        "{}",
        holds.0
    );
    names_each(stable, stable, &holds);
    let sqs = check_as(&[SQS, "--exhaustive", "--max-faults", "2"], "exhaustive", 0);
    names_each(SQS, SQS, &sqs);
    assert!(
        sqs.0
            .contains("\n  without broker.preset=sqs-standard: must break no-duplicate-effect\n"),
        "{}",
        sqs.0
    );
    // The design has lost its protection: the counterexample, and no list.
    let args = ["--exhaustive", "--max-faults", "1"];
    names_none(&lost("exhaustive-lost", &args, "exhaustive"));
    // A variant that holds: `--set` may have removed one.
    let set = "client.retry.max_attempts=2";
    let variant = [stable, "--exhaustive", "--max-faults", "1", "--set", set];
    let variant = check_as(&variant, "exhaustive", 0);
    assert_eq!(variant.1["verdict"], "holds", "{}", variant.1);
    names_none(&variant);
}

#[test]
fn a_coverage_guided_check_that_holds_names_the_protections_and_one_that_does_not_names_none() {
    let by_flag = check_as(
        &[SQS, "--strategy", "coverage", "--runs", "50"],
        "summary",
        0,
    );
    assert_eq!(by_flag.1["strategy"], "coverage", "{}", by_flag.1);
    names_each(SQS, SQS, &by_flag);
    // A file whose own strategy is the search, named by its path.
    let own = rewritten("coverage-by-file", |t| {
        t.replace(
            "[run]\nruns = 20\n",
            "[run]\nruns = 20\nstrategy = \"coverage\"\n",
        )
    });
    let by_file = check_as(&[&own], "summary", 0);
    assert_eq!(by_file.1["strategy"], "coverage", "{}", by_file.1);
    names_each(SQS, &own, &by_file);
    let args = ["--strategy", "coverage", "--no-shrink"];
    names_none(&lost("coverage-lost", &args, "summary"));
    let set = "producer.publish_timeout_ms=299998";
    let variant = [SQS, "--strategy", "coverage", "--runs", "50", "--set", set];
    let variant = check_as(&variant, "summary", 0);
    assert_eq!(variant.1["verdict"], "holds", "{}", variant.1);
    names_none(&variant);
}

/// An edit of a shard's JSON Lines, as a hand might make it.
type Edit = fn(&str) -> String;

/// A shard's JSON Lines with the `protections` field taken out of its
/// summary, the last line.
fn without_protections_field(jsonl: &str) -> String {
    let mut lines: Vec<String> = jsonl.lines().map(String::from).collect();
    let last = lines.last_mut().expect("a summary line");
    let mut s: Value = serde_json::from_str(last).expect("valid JSON");
    let data = s["data"].as_object_mut().expect("a summary's data");
    assert!(
        data.remove("protections").is_some(),
        "no protections in {last}"
    );
    *last = s.to_string();
    lines.join("\n") + "\n"
}

#[test]
fn merge_refuses_holding_shards_that_name_other_protections() {
    let dir = scratch("check_protections/edited-shards");
    let shard = |i: &str| {
        let args = ["check", SQS, "--shard", i, "--json", "--no-regressions"];
        run(&args, 0).0
    };
    let first = dir.join("shard-0.jsonl");
    std::fs::write(&first, shard("0/2")).expect("write shard 0");
    let second = shard("1/2");
    let edits: [(&str, Edit); 3] = [
        // Another protection than the file's.
        ("renamed", |t| t.replace("sqs-standard", "sqs-fifo")),
        // The field taken out of a shard that holds.
        ("dropped", without_protections_field),
        // The same protections, removed by another command.
        ("verify", |t| {
            t.replace("idemsim verify ", "idemsim verify --runs 5 ")
        }),
    ];
    for (what, edit) in edits {
        let edited = edit(&second);
        assert_ne!(edited, second, "{what} edits nothing");
        let file = dir.join(format!("shard-1-{what}.jsonl"));
        std::fs::write(&file, edited).expect("write shard 1");
        let args = ["merge", first.to_str().unwrap(), file.to_str().unwrap()];
        let (out, err) = run(&args, 2);
        assert!(out.is_empty(), "{what}: {out}");
        let at = format!("error: {}:", file.display());
        assert!(err.starts_with(&at), "{what}: no `{at}` in\n{err}");
        assert!(
            err.contains("names the protections `broker.preset=sqs-standard`"),
            "{what}: {err}"
        );
        assert!(err.contains("so one summary was edited"), "{what}: {err}");
        // Lists that read alike name the command that differs.
        let command = "removed by `idemsim verify --runs 5 ";
        assert_eq!(err.contains(command), what == "verify", "{what}: {err}");
        assert!(
            err.contains("\nhelp: give the unedited stdout of `idemsim check --json --shard I/N`"),
            "{what}: {err}"
        );
    }
    // A shard no seed fell to names none and merges as nothing (with one
    // seed and two shards, shard 1 runs seed 0 and shard 0 none).
    let of_one_seed = |i: &str| {
        let args = ["check", SQS, "--runs", "1", "--shard", i, "--json"];
        run(&[&args[..], &["--no-regressions"]].concat(), 0).0
    };
    let (empty, one) = (of_one_seed("0/2"), of_one_seed("1/2"));
    assert_eq!(summary(&empty)["verdict"], "no-seeds", "{empty}");
    assert!(summary(&empty).get("protections").is_none(), "{empty}");
    let files = [dir.join("one.jsonl"), dir.join("empty.jsonl")];
    std::fs::write(&files[0], one).expect("write");
    std::fs::write(&files[1], empty).expect("write");
    let args = [
        "merge",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--json",
    ];
    let merged = summary(&run(&args, 0).0);
    assert_eq!(named(&merged), declared(SQS), "{merged}");
}
