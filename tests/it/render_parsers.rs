//! Every generated diagram goes through the real parser of its format: each
//! Mermaid diagram through the `mermaid` npm package under Node (the parser
//! GitHub renders with), which must parse it and read back every message and
//! note whole; each dot file through Graphviz `dot`, which must render it.
//!
//! The test installs nothing: `.ci/run` runs `tests/parsers/setup.sh`
//! (Graphviz by apt-get, `npm ci` of the pinned package-lock.json into
//! target/tmp/parsers). Without them the test fails in CI (`CI=true`) and
//! prints one visible SKIPPED line elsewhere (tests/it/support/tools.rs).

use crate::support;
use std::path::{Path, PathBuf};

use std::process::Command;
use support::{idemsim, tools};

/// Splits the output of several diagrams at each line that starts one.
fn split(text: &str, start: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with(start) {
            out.push(String::new());
        }
        if let Some(d) = out.last_mut() {
            d.push_str(line);
            d.push('\n');
        }
    }
    out.into_iter()
        .map(|d| d.trim_end().to_string() + "\n")
        .collect()
}

fn write_all(dir: &Path, ext: &str, diagrams: &[(String, String)]) -> Vec<String> {
    std::fs::create_dir_all(dir).expect("a diagrams folder");
    diagrams
        .iter()
        .map(|(name, text)| {
            let path = dir.join(format!("{name}.{ext}"));
            std::fs::write(&path, text).expect("write a diagram");
            path.to_string_lossy().into_owned()
        })
        .collect()
}

/// The stdout of a command that prints diagrams (exit 0 for shrink --all, 1 or 3 for a replay).
fn diagrams_of(args: &[&str]) -> String {
    let out = idemsim(args);
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "idemsim {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// How many scenarios expect a violation, as `idemsim list` prints them:
/// `shrink --all` draws one diagram each.
fn violating(list: &str) -> usize {
    list.lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("violation"))
        .count()
}

/// Replays that add what shrunk failures lack: holding runs, crashes and
/// healing, and a diagram cut to Mermaid's 50,000 characters.
const REPLAYS: &[(&str, &str)] = &[
    ("payment-stable-key", "0"),
    ("messaging-outbox-inbox", "3"),
    ("messaging-dead-letter", "1"),
    ("payment-uncapped-retries", "0"),
];

#[test]
fn every_diagram_parses_in_the_real_parsers() {
    let check = "every_diagram_parses_in_the_real_parsers";
    if !tools::require(check, &[&tools::DOT, &tools::NODE, &tools::MERMAID]) {
        return;
    }
    let tools = tools::parsers_dir();
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("diagrams");
    let _ = std::fs::remove_dir_all(&work);

    // Every command's output, up to four at once (each shrinks or replays
    // on its own): the three `shrink --all`, `list`, and the replays.
    let mut commands: Vec<Vec<&str>> = ["mermaid", "dot", "chrome"]
        .iter()
        .map(|f| vec!["shrink", "--all", "--format", f])
        .collect();
    commands.push(vec!["list"]);
    for (scenario, seed) in REPLAYS {
        commands.push(vec![
            "replay", scenario, "--seed", seed, "--format", "mermaid",
        ]);
        // Graphviz lays out a 20,000-event graph for many minutes: long runs are Mermaid's case.
        if *scenario != "payment-uncapped-retries" {
            commands.push(vec!["replay", scenario, "--seed", seed, "--format", "dot"]);
        }
    }
    let mut outputs = support::par_map(&commands, 4, |args| diagrams_of(args)).into_iter();
    let mut next = || outputs.next().expect("one output per command");
    let (shrunk_mermaid, shrunk_dot, chrome) = (next(), next(), next());
    let violating = violating(&next());

    // Mermaid: every violating scenario's shrunk diagram, and the replays.
    let mut mermaid: Vec<(String, String)> = split(&shrunk_mermaid, "sequenceDiagram")
        .into_iter()
        .enumerate()
        .map(|(i, d)| (format!("shrunk-{i:02}"), d))
        .collect();
    assert_eq!(
        mermaid.len(),
        violating,
        "one diagram per violating scenario"
    );
    let titled = mermaid
        .iter()
        .filter(|(_, d)| {
            d.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("    title "))
        })
        .count();
    assert_eq!(
        titled,
        mermaid.len(),
        "shrink --all names each diagram's scenario"
    );
    let mut dots: Vec<(String, String)> = split(&shrunk_dot, "digraph ")
        .into_iter()
        .enumerate()
        .map(|(i, d)| (format!("shrunk-{i:02}"), d))
        .collect();
    assert_eq!(
        dots.len(),
        violating,
        "one dot graph per violating scenario"
    );
    assert!(
        dots.iter()
            .all(|(_, d)| !d.starts_with("digraph happens_before")),
        "shrink --all names each graph for its scenario"
    );
    let chrome: serde_json::Value =
        serde_json::from_str(&chrome).expect("shrink --all --format chrome is one JSON document");
    assert_eq!(
        chrome["otherData"]["scenarios"].as_array().map(Vec::len),
        Some(violating)
    );
    for (scenario, seed) in REPLAYS {
        mermaid.push((format!("{scenario}-{seed}"), next()));
        if *scenario != "payment-uncapped-retries" {
            dots.push((format!("{scenario}-{seed}"), next()));
        }
    }
    let cut = &mermaid.last().expect("replays").1;
    assert!(cut.contains("lines left out here"), "the long run is cut");

    let files = write_all(&work.join("mermaid"), "mmd", &mermaid);
    // The checker beside its node_modules (ES modules resolve from the
    // script's folder), fresh from the checkout in case it changed.
    std::fs::copy(
        support::root().join("tests/parsers/check.mjs"),
        tools.join("check.mjs"),
    )
    .expect("copy check.mjs next to the parsers");
    let out = Command::new("node")
        .arg(tools.join("check.mjs"))
        .args(&files)
        .output()
        .expect("node runs");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "Mermaid:\n{report}");
    assert!(
        report.contains(&format!("{} diagrams checked, 0 problems", files.len())),
        "{report}"
    );

    // Graphviz: each file renders; and a broken one does not, or the check is void.
    let dot_files = write_all(&work.join("dot"), "dot", &dots);
    let render = |file: &str| {
        Command::new("dot")
            .args(["-Tsvg", "-o", "/dev/null", file])
            .output()
            .expect("dot runs")
    };
    let broken = work.join("broken.dot");
    std::fs::write(
        &broken,
        "digraph g {\n    n0 [label=\"a\"];\n    n0 -> ;\n}\n",
    )
    .unwrap();
    assert!(
        !render(&broken.to_string_lossy()).status.success(),
        "dot accepts a broken graph: the check is void"
    );
    let rendered = support::par_map(&dot_files, 4, |file| render(file));
    for (file, out) in dot_files.iter().zip(rendered) {
        assert!(
            out.status.success(),
            "dot cannot render {file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
