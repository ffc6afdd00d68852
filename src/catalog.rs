//! Finding and loading scenarios: by path, or by name in the catalog.
//!
//! The catalog is the shipped scenarios, embedded in the binary (`build.rs`),
//! with the user's folders on top: `--scenarios DIR` (repeatable, first wins),
//! then the folders in `IDEMSIM_SCENARIOS` (separated like `PATH`). A user file
//! with a built-in's name shadows the built-in; `idemsim list` says so.

use models::scenario::Override;
use models::{Scenario, ScenarioError};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

/// The scenario `check` runs when none is given.
pub const DEFAULT: &str = "payment-stable-key";

/// The environment variable naming more scenario folders.
pub const ENV: &str = "IDEMSIM_SCENARIOS";

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

static FOLDERS: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// The `--scenarios DIR` folders of the command line; set once by `main`.
pub fn set_folders(dirs: Vec<PathBuf>) {
    let _ = FOLDERS.set(dirs);
}

/// Where a scenario comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Shipped in the binary.
    BuiltIn,
    /// A file: in a user folder, or given by path.
    File(PathBuf),
}

/// One scenario the catalog or a path names.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its name: the file name without `.toml`.
    pub name: String,
    /// Where it comes from.
    pub origin: Origin,
    /// What this entry hides: built-ins and files of the same name in lower folders.
    pub shadows: Vec<Origin>,
}

impl Entry {
    /// "built-in" or the file's path, for `list` and messages.
    pub fn source(&self) -> String {
        origin_text(&self.origin)
    }

    /// What names this scenario on a command line so that it is this one:
    /// the name of a built-in, the path of a file.
    pub fn arg(&self) -> String {
        match &self.origin {
            Origin::BuiltIn => self.name.clone(),
            Origin::File(p) => p.to_string_lossy().into_owned(),
        }
    }

    /// `arg` as a word of a printed command: quoted when a shell would split
    /// it, so a line naming `my dir/my scen.toml` still works when pasted.
    pub fn shell_arg(&self) -> String {
        crate::shell::shell_word(&self.arg())
    }

    /// Shipped in the binary.
    pub fn is_built_in(&self) -> bool {
        self.origin == Origin::BuiltIn
    }
}

/// "built-in" or the file's path.
pub fn origin_text(o: &Origin) -> String {
    match o {
        Origin::BuiltIn => "built-in".to_string(),
        Origin::File(p) => p.to_string_lossy().into_owned(),
    }
}

/// The user's folders, highest priority first: `--scenarios`, then `IDEMSIM_SCENARIOS`.
fn folders() -> Result<Vec<(PathBuf, &'static str)>, UsageError> {
    let mut out: Vec<(PathBuf, &'static str)> = FOLDERS
        .get()
        .into_iter()
        .flatten()
        .map(|d| (d.clone(), "--scenarios"))
        .collect();
    if let Some(v) = std::env::var_os(ENV) {
        out.extend(
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| (p, ENV)),
        );
    }
    for (dir, from) in &out {
        if !dir.is_dir() {
            return Err(UsageError(format!(
                "error: {from} names `{}`, which is not a folder\nhelp: give a folder that holds scenario .toml files, or leave it out to use the built-in scenarios\n",
                dir.display()
            )));
        }
    }
    Ok(out)
}

/// The `.toml` files of a folder, sorted.
fn toml_files(dir: &Path) -> Result<Vec<PathBuf>, UsageError> {
    let rd = std::fs::read_dir(dir).map_err(|e| {
        UsageError(format!(
            "error: cannot read folder {}: {e}\nhelp: check the folder given to --scenarios or IDEMSIM_SCENARIOS and its permissions\n",
            dir.display()
        ))
    })?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
        .collect();
    v.sort();
    Ok(v)
}

/// Every scenario by name, sorted: the highest folder's file wins, then the built-in.
pub fn catalog() -> Result<Vec<Entry>, UsageError> {
    let mut layers: Vec<Vec<(String, Origin)>> = Vec::new();
    for (dir, _) in folders()? {
        let files = toml_files(&dir)?;
        layers.push(
            files
                .into_iter()
                .filter_map(|p| {
                    let name = p.file_stem()?.to_str()?.to_string();
                    Some((name, Origin::File(p)))
                })
                .collect(),
        );
    }
    layers.push(
        BUILT_IN
            .iter()
            .map(|(n, _)| (n.to_string(), Origin::BuiltIn))
            .collect(),
    );
    let mut entries: Vec<Entry> = Vec::new();
    for layer in layers {
        for (name, origin) in layer {
            match entries.iter_mut().find(|e| e.name == name) {
                Some(e) => e.shadows.push(origin),
                None => entries.push(Entry {
                    name,
                    origin,
                    shadows: Vec::new(),
                }),
            }
        }
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

fn looks_like_path(arg: &str) -> bool {
    Path::new(arg).extension().is_some_and(|e| e == "toml")
        || arg.contains('/')
        || arg.contains(std::path::MAIN_SEPARATOR)
}

/// Whether `arg` is taken as a path (a `.toml` name or one with a separator),
/// not as a name from the catalog.
pub(crate) fn is_path_arg(arg: &str) -> bool {
    looks_like_path(arg)
}

/// The entry of the scenario file at `p`, named after the file.
pub(crate) fn file_entry(p: &Path) -> Entry {
    let name = p.file_stem().map_or_else(
        || p.to_string_lossy().into_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    Entry {
        name,
        origin: Origin::File(p.to_path_buf()),
        shadows: Vec::new(),
    }
}

/// `arg` is a path to a `.toml` file or a name from the catalog.
pub fn locate(arg: &str) -> Result<Entry, UsageError> {
    if looks_like_path(arg) {
        let p = Path::new(arg);
        if p.is_file() {
            return Ok(file_entry(p));
        }
        // A folder or a device exists, and "does not exist" would send the
        // user looking for a typo that is not there.
        let plain_help = "give a path to a .toml file or a name from `idemsim list`";
        let (what, help) = if p.is_dir() {
            (
                "is a folder, not a scenario file",
                "give a path to a .toml file, a name from `idemsim list`, or the folder to `idemsim verify` or `--scenarios`",
            )
        } else if p.exists() {
            ("is not a regular file", plain_help)
        } else {
            ("does not exist", plain_help)
        };
        return Err(UsageError(format!(
            "error: scenario file `{arg}` {what}\nhelp: {help}\n"
        )));
    }
    locate_name(arg)
}

/// `name` in the catalog (built-in or in a `--scenarios` folder), never a path.
pub fn locate_name(arg: &str) -> Result<Entry, UsageError> {
    let all = catalog()?;
    if let Some(e) = all.iter().find(|e| e.name == arg) {
        return Ok(e.clone());
    }
    let mut close: Vec<(usize, &str)> = all
        .iter()
        .map(|e| (strsim::levenshtein(arg, &e.name), e.name.as_str()))
        .filter(|(d, n)| *d <= 3 || n.contains(arg) || arg.contains(n))
        .collect();
    close.sort();
    let hint = if close.is_empty() {
        "run `idemsim list` to see the scenarios".to_string()
    } else {
        format!(
            "did you mean {}?",
            close
                .iter()
                .take(3)
                .map(|(_, s)| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        )
    };
    Err(UsageError(format!(
        "error: no scenario named `{arg}` (built-in or in a --scenarios folder)\nhelp: {hint}\n"
    )))
}

/// The built-in scenario `name`, whether or not a folder's file shadows it.
pub fn built_in(name: &str) -> Option<Entry> {
    BUILT_IN.iter().any(|(n, _)| *n == name).then(|| Entry {
        name: name.to_string(),
        origin: Origin::BuiltIn,
        shadows: Vec::new(),
    })
}

/// `arg` names a folder (every `.toml` file in it, sorted), a `.toml` file
/// or a name from the catalog: what `idemsim verify DIR` accepts.
pub fn locate_all(arg: &str) -> Result<Vec<Entry>, UsageError> {
    let p = Path::new(arg);
    if !p.is_dir() {
        return Ok(vec![locate(arg)?]);
    }
    let files = toml_files(p)?;
    if files.is_empty() {
        return Err(UsageError(format!(
            "error: the folder `{arg}` holds no scenario .toml files\nhelp: give a folder of scenario files, a .toml file or a name from `idemsim list`\n"
        )));
    }
    Ok(files
        .into_iter()
        .map(|path| Entry {
            name: path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
            origin: Origin::File(path),
            shadows: Vec::new(),
        })
        .collect())
}

/// The way a path is shown in messages and repro lines: relative when it can be.
pub fn display_path(p: &Path) -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    p.strip_prefix(manifest)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

/// Loads an entry; a built-in is labelled `scenarios/NAME.toml` in messages,
/// its place in the source tree. A file that names no `format` is read as
/// the current one, noted once on stderr.
pub fn load_entry(e: &Entry, overrides: &[Override]) -> Result<Scenario, UsageError> {
    let s = read_entry(e, overrides)?;
    note_format(&s);
    Ok(s)
}

fn read_entry(e: &Entry, overrides: &[Override]) -> Result<Scenario, UsageError> {
    match &e.origin {
        Origin::BuiltIn => {
            let text = BUILT_IN
                .iter()
                .find(|(n, _)| *n == e.name)
                .map(|(_, t)| *t)
                .expect("a built-in entry names a built-in");
            Ok(Scenario::load_at(
                &format!("scenarios/{}.toml", e.name),
                None,
                text,
                overrides,
            )?)
        }
        Origin::File(path) => {
            let bytes = std::fs::read(path).map_err(|err| {
                UsageError(format!(
                    "error: cannot read {}: {err}\nhelp: check the path and its permissions; `idemsim list` shows the scenarios idemsim knows\n",
                    path.display()
                ))
            })?;
            let text = String::from_utf8(bytes).map_err(|err| {
                let at = err.utf8_error().valid_up_to();
                let ok = &err.as_bytes()[..at];
                let line = ok.iter().filter(|&&b| b == b'\n').count() + 1;
                let column = ok.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
                UsageError(format!(
                    "error: {}:{line}:{column}: the file is not UTF-8 text (byte {at})\nhelp: save it as UTF-8\n",
                    path.display()
                ))
            })?;
            // Relative paths in the file (an external program) point into
            // its real folder, wherever the label in messages says it is.
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
            Ok(Scenario::load_at(
                &display_path(path),
                Some(dir.unwrap_or(Path::new("."))),
                &text,
                overrides,
            )?)
        }
    }
}

/// Loads the scenario `arg` names (a path or a catalog name) with `overrides` applied.
pub fn load(arg: &str, overrides: &[Override]) -> Result<Scenario, UsageError> {
    load_entry(&locate(arg)?, overrides)
}

/// Files loaded without `format = N`, each once, for [`take_notes`].
static UNVERSIONED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
/// Their notes, not yet taken.
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps the one-line note for a file without `format = N`, once per file
/// and process (`verify` and `sweep` load a file once per ablation or variant).
fn note_format(s: &Scenario) {
    if s.format.is_some() {
        return;
    }
    let file = s.file.split(" with ").next().unwrap_or(&s.file).to_string();
    let first = UNVERSIONED.lock().is_ok_and(|mut n| n.insert(file.clone()));
    if first {
        let now = models::scenario::format::FORMAT;
        if let Ok(mut notes) = NOTES.lock() {
            notes.push(format!(
                "note: {file} names no format; read as format {now}, the current one (write `format = {now}` at its top to keep this meaning)"
            ));
        }
    }
}

/// The notes on files loaded without `format = N` since the last call. The
/// command line prints them on stderr after its result, so JSON on stdout
/// stays whole and an error stays the first thing stderr says.
pub fn take_notes() -> Vec<String> {
    NOTES
        .lock()
        .map(|mut n| std::mem::take(&mut *n))
        .unwrap_or_default()
}

/// Parses `--set KEY=VALUE` arguments.
pub fn parse_overrides(sets: &[String]) -> Result<Vec<Override>, UsageError> {
    let overrides: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse(s).map_err(|m| UsageError(format!(
            "error: --set {m}\nhelp: write --set KEY=VALUE, e.g. --set client.retry.max_attempts=3\n"
        ))))
        .collect::<Result<_, _>>()?;
    // Two values for one key: the run would take the last one and say nothing.
    for (i, o) in overrides.iter().enumerate() {
        if let Some(first) = overrides[..i].iter().find(|p| p.key == o.key) {
            return Err(UsageError(format!(
                "error: --set {} is given twice ({}={} and {}={})\nhelp: give each key once; to compare values, run `idemsim sweep SCENARIO --set {}=A,B`\n",
                o.key, first.key, first.value, o.key, o.value, o.key
            )));
        }
    }
    Ok(overrides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_scenario_is_built_in() {
        assert!(BUILT_IN.iter().any(|(n, _)| *n == DEFAULT));
        let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }
}
