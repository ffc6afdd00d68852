//! What users expect of a command-line tool: shell completions and man pages
//! generated from the parser's own definition, so they cannot drift from it.

use crate::support::{idemsim, scratch, text, tools};
use std::process::Command;

/// Every subcommand a user can type (the completions and pages name each).
const COMMANDS: &[&str] = &[
    "check",
    "replay",
    "shrink",
    "report",
    "list",
    "models",
    "bench",
    "merge",
    "sweep",
    "diff",
    "verify",
    "advise",
    "learn",
    "completions",
    "man",
];

#[test]
fn completions_for_every_shell_name_every_command_and_bash_parses_them() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = idemsim(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for cmd in COMMANDS {
            assert!(script.contains(cmd), "{shell} completions lack {cmd}");
        }
        assert!(
            script.contains("--max-faults"),
            "{shell}: check's flags are offered"
        );
    }
    let file = scratch("completions").join("idemsim.bash");
    std::fs::write(&file, idemsim(&["completions", "bash"]).stdout).unwrap();
    let parsed = Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .expect("bash runs");
    assert!(parsed.status.success(), "bash -n: {}", text(&parsed.stderr));
    let bad = idemsim(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2), "an unknown shell is bad usage");
    assert!(
        text(&bad.stderr).contains("possible values: bash"),
        "{}",
        text(&bad.stderr)
    );
}

/// `text` without groff's overstrikes (a character, backspace, the character).
fn plain(text: &str) -> String {
    let mut out: Vec<char> = Vec::new();
    for c in text.chars() {
        if c == '\u{8}' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out.into_iter().collect()
}

#[test]
fn the_man_pages_render_without_warnings_one_per_command() {
    let dir = scratch("man");
    let out = idemsim(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    let mut want: Vec<String> = COMMANDS.iter().map(|c| format!("idemsim-{c}.1")).collect();
    want.push("idemsim.1".into());
    want.sort();
    assert_eq!(pages, want);
    let top = text(&idemsim(&["man"]).stdout);
    assert!(top.contains(".TH idemsim 1"), "{top}");
    assert!(
        top.contains("Exit codes: 0 holds"),
        "the long help is in the page"
    );
    if !tools::require(
        "the_man_pages_render_without_warnings_one_per_command",
        &[&tools::GROFF],
    ) {
        return;
    }
    for page in &pages {
        let rendered = Command::new("groff")
            .args(["-k", "-man", "-Tutf8", "-ww"]) // -k: preconv, as man(1) does, for UTF-8 help text
            .arg(dir.join(page))
            .output()
            .expect("groff runs");
        let warnings = text(&rendered.stderr);
        assert!(
            rendered.status.success() && warnings.is_empty(),
            "{page}: {warnings}"
        );
        // groff's tty output emboldens by overstriking: "c, backspace, c".
        let shown = plain(&text(&rendered.stdout));
        assert!(shown.contains("SYNOPSIS"), "{page} renders its synopsis");
    }
}

/// Help speaks of the user's world: no Rust path (`check::run`) in any
/// command's help, the words a reader of the code would need.
#[test]
fn no_help_names_the_code() {
    let mut helps = vec![text(&idemsim(&["--help"]).stdout)];
    for cmd in COMMANDS {
        let out = idemsim(&[cmd, "--help"]);
        assert!(out.status.success(), "{cmd} --help");
        helps.push(text(&out.stdout));
    }
    for help in &helps {
        let code_path = help.match_indices("::").find(|(i, _)| {
            let before = help[..*i].chars().next_back();
            before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        });
        assert!(code_path.is_none(), "help names the code: {help}");
    }
}
