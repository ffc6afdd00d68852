//! The tools some checks need that the Rust toolchain does not bring:
//! Chromium, Node.js, Graphviz, the pinned mermaid parser, python3, mdBook.
//!
//! The tests install nothing. `.ci/run` installs every tool (and
//! `tests/parsers/setup.sh` the parsers); a plain `cargo test` on a bare
//! machine runs everything else, and each check it cannot run prints one
//! line that shows without `--nocapture` (it goes to the terminal, not to
//! the test's captured output) and names what to install. Such a check is
//! never reported as a quiet pass in CI: with `CI=true` a missing tool fails
//! the test, and each skip is also appended to [`skip_log`], which `.ci/run`
//! refuses to find non-empty.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A tool a check needs, and how a reader gets it.
pub struct Tool {
    /// What the tool is called in the skip line.
    pub name: &'static str,
    /// Whether it is present here.
    pub present: fn() -> bool,
    /// What to run to get it.
    pub install: &'static str,
}

/// The first `name` on the PATH, if any.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The browser: `IDEMSIM_CHROMIUM`, else `chromium` on the PATH.
pub fn chromium_path() -> Option<PathBuf> {
    match std::env::var_os("IDEMSIM_CHROMIUM") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => on_path("chromium"),
    }
}

/// The folder `tests/parsers/setup.sh` installs the mermaid parser into.
pub fn parsers_dir() -> PathBuf {
    match std::env::var_os("IDEMSIM_PARSERS") {
        Some(p) => PathBuf::from(p),
        None => super::root().join("target/tmp/parsers"),
    }
}

pub const CHROMIUM: Tool = Tool {
    name: "Chromium",
    present: || chromium_path().is_some(),
    install: "apt-get install -y chromium (or set IDEMSIM_CHROMIUM to a Chrome binary)",
};

pub const NODE: Tool = Tool {
    name: "Node.js",
    present: || on_path("node").is_some(),
    install: "apt-get install -y nodejs npm (Node 18 or later)",
};

pub const DOT: Tool = Tool {
    name: "Graphviz dot",
    present: || on_path("dot").is_some(),
    install: "apt-get install -y graphviz",
};

pub const MERMAID: Tool = Tool {
    name: "the mermaid parser",
    present: || parsers_dir().join("node_modules/mermaid").is_dir(),
    install: "bash tests/parsers/setup.sh target/tmp/parsers (npm ci of a pinned lockfile)",
};

#[allow(dead_code)] // the external-program tests gate on it (tests/it/external)
pub const PYTHON3: Tool = Tool {
    name: "python3",
    present: || on_path("python3").is_some(),
    install: "apt-get install -y python3",
};

/// Whether this run is CI's (`.ci/run` sets `CI=true`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The file every skip is appended to: `IDEMSIM_SKIP_LOG`, else
/// target/tmp/skipped-checks.txt (which `.ci/run` empties first and checks last).
pub fn skip_log() -> PathBuf {
    match std::env::var_os("IDEMSIM_SKIP_LOG") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skipped-checks.txt"),
    }
}

/// Whether `check` can run with `tools`. When one is missing: fails in CI;
/// elsewhere prints one visible line naming the check and what to install,
/// records it in [`skip_log`], and returns false (the caller returns).
#[track_caller]
pub fn require(check: &str, tools: &[&Tool]) -> bool {
    let Some(missing) = tools.iter().find(|t| !(t.present)()) else {
        return true;
    };
    let line = skip_line(check, missing);
    assert!(
        !in_ci(),
        "{line}: in CI every check must run (.ci/run installs it)"
    );
    announce(&line, &skip_log());
    false
}

/// The one line a skipped check prints.
pub fn skip_line(check: &str, missing: &Tool) -> String {
    format!(
        "SKIPPED {check}: {} is not installed; to run it: {}",
        missing.name, missing.install
    )
}

/// Writes `line` to the terminal past the test harness's capture (which
/// takes only `print!`/`eprint!`), and appends it to `log`.
pub fn announce(line: &str, log: &Path) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// mdBook: `IDEMSIM_MDBOOK`, else `mdbook` on the PATH, else where
/// `cargo install` puts it.
pub fn mdbook_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("IDEMSIM_MDBOOK") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    on_path("mdbook").or_else(|| {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
        Some(home.join("bin/mdbook")).filter(|p| p.is_file())
    })
}

pub const MDBOOK: Tool = Tool {
    name: "mdBook",
    present: || mdbook_path().is_some(),
    install: "cargo install mdbook --locked --version 0.5.4 --no-default-features",
};

pub const GROFF: Tool = Tool {
    name: "groff",
    present: || on_path("groff").is_some(),
    install: "apt-get install -y groff-base",
};
