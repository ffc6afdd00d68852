//! Finding and loading scenario files by path or by name.

use models::scenario::Override;
use models::{Scenario, ScenarioError};
use std::path::{Path, PathBuf};

/// The scenario `check` runs when none is given.
pub const DEFAULT: &str = "payment-stable-key";

/// A bad command line or scenario: printed as is, exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<ScenarioError> for UsageError {
    fn from(e: ScenarioError) -> Self {
        UsageError(e.to_string())
    }
}

/// The `scenarios/` folder: in the working directory, else beside the sources.
pub fn dir() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// `arg` is a path to a `.toml` file or the name of one in `scenarios/`.
pub fn resolve(arg: &str) -> Result<PathBuf, UsageError> {
    let p = Path::new(arg);
    if p.extension().is_some_and(|e| e == "toml") || arg.contains('/') {
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        return Err(UsageError(format!(
            "error: scenario file `{arg}` does not exist\nhelp: give a path to a .toml file or a name from `idemsim list`\n"
        )));
    }
    let named = dir().join(format!("{arg}.toml"));
    if named.is_file() {
        return Ok(named);
    }
    let names: Vec<String> = all()
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    let close: Vec<&String> = names
        .iter()
        .filter(|n| n.contains(arg) || arg.contains(n.as_str()))
        .collect();
    let hint = if close.is_empty() {
        "run `idemsim list` to see the scenarios".to_string()
    } else {
        format!(
            "did you mean {}?",
            close
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        )
    };
    Err(UsageError(format!(
        "error: no scenario named `{arg}` in {}\nhelp: {hint}\n",
        dir().display()
    )))
}

/// Every scenario file, sorted by name.
pub fn all() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The way a path is shown in messages and repro lines: relative when it can be.
pub fn display_path(p: &Path) -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    p.strip_prefix(manifest)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

pub fn load(arg: &str, overrides: &[Override]) -> Result<Scenario, UsageError> {
    let path = resolve(arg)?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| UsageError(format!("error: cannot read {}: {e}\n", path.display())))?;
    Ok(Scenario::load_with(&display_path(&path), &text, overrides)?)
}

pub fn parse_overrides(sets: &[String]) -> Result<Vec<Override>, UsageError> {
    sets.iter()
        .map(|s| Override::parse(s).map_err(|m| UsageError(format!("error: --set {m}\n"))))
        .collect()
}
