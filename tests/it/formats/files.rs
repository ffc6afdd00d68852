//! `format = N` in scenario files: a file without it is read as the current
//! format with one note on stderr; a format this idemsim does not know is
//! refused at its line; an older file's changed key is named; every repro
//! file idemsim writes carries the format.

use crate::support::{idemsim, root, scratch, text};
use models::scenario::format::FORMAT;

/// The catalog scenario `name` with its `format` line taken out, or replaced by `line`.
fn copy_of(name: &str, dir: &std::path::Path, line: &str) -> String {
    let original = std::fs::read_to_string(root().join(format!("scenarios/{name}.toml")))
        .expect("a catalog scenario");
    let ours = format!("format = {FORMAT}\n");
    assert!(original.contains(&ours), "{name} names the current format");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, original.replacen(&ours, line, 1)).expect("write a scenario");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_file_without_format_is_read_as_the_current_one_with_one_note_on_stderr() {
    let dir = scratch("formats_no_format");
    let file = copy_of("payment-stable-key", &dir, "");
    // A sweep loads the file once per variant: still one note.
    let out = idemsim(&[
        "sweep",
        &file,
        "--set",
        "client.retry.max_attempts=1,2",
        "--runs",
        "5",
        "--format",
        "json",
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("names no format"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].starts_with("note: ") && notes[0].contains(&format!("format = {FORMAT}")),
        "{}",
        notes[0]
    );
    for line in stdout.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("stdout stays JSON Lines");
    }
    // After the result: the last thing stderr says.
    assert_eq!(stderr.lines().last(), Some(notes[0]), "{stderr}");
    // The same file naming its format gets no note.
    let named = copy_of("payment-stable-key", &dir, &format!("format = {FORMAT}\n"));
    let out = idemsim(&["check", &named, "--runs", "5", "--json"]);
    assert!(!text(&out.stderr).contains("names no format"));
}

#[test]
fn a_format_from_a_newer_idemsim_is_refused_at_its_line() {
    let dir = scratch("formats_newer");
    let file = copy_of(
        "payment-stable-key",
        &dir,
        &format!("format = {}\n", FORMAT + 1),
    );
    let out = idemsim(&["check", &file, "--runs", "5"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // file:line:column of the value, whatever folder the file is shown from.
    let written = std::fs::read_to_string(&file).expect("the file");
    let line = 1 + written
        .lines()
        .position(|l| l.starts_with("format ="))
        .expect("the format line");
    let at = format!("payment-stable-key.toml:{line}:10:");
    assert!(stderr.contains(&at), "{at} in {stderr}");
    assert!(
        stderr.contains(&format!("write format = {FORMAT}")),
        "the fix is named: {stderr}"
    );
}

#[test]
fn an_older_file_writing_a_key_whose_meaning_changed_is_refused_naming_the_change() {
    let dir = scratch("formats_older");
    let file = copy_of("chain-outbox-inbox", &dir, "format = 1\n");
    let out = idemsim(&["check", &file, "--runs", "5"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("status_query"), "{stderr}");
    assert!(stderr.contains("changed meaning in format 2"), "{stderr}");
}

#[test]
fn a_repro_file_carries_the_format() {
    let dir = scratch("formats_repro");
    let file = dir.join("r.json").to_string_lossy().into_owned();
    let out = idemsim(&["shrink", "payment-retry-without-key", "--out", &file]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let repro: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("the repro")).expect("JSON");
    assert_eq!(repro["format"], FORMAT);
    // And it replays.
    let out = idemsim(&["replay", "--repro", &file]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}
