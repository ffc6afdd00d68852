//! Where the regression folder is: `--regressions DIR`, else
//! `IDEMSIM_REGRESSIONS`, else found as git finds `.git`, walking up from
//! the scenario file (or the working folder) to the first `.idemsim/`.

use super::Db;
use crate::catalog::UsageError;
use std::path::{Path, PathBuf};

/// The folder, under a project's root, that holds idemsim's own files.
pub const MARKER: &str = ".idemsim";

/// The regression folder under [`MARKER`].
pub const DEFAULT_DIR: &str = ".idemsim/regressions";

/// The environment variable naming the folder (as `--regressions` does).
pub const ENV: &str = "IDEMSIM_REGRESSIONS";

/// The command-line flags of `check` and `verify`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Flags {
    /// Folder of the regression database: failures are recorded there and
    /// replayed first [default: IDEMSIM_REGRESSIONS, else .idemsim/regressions
    /// in the nearest folder above the scenario file that has a .idemsim/
    /// (else a .git/); off by default inside idemsim's own source tree].
    #[arg(long = "regressions", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Neither replay nor record regressions.
    #[arg(long = "no-regressions", conflicts_with = "dir")]
    pub off: bool,
}

impl Flags {
    /// The database these flags ask for, if any: `--regressions DIR`, else
    /// `IDEMSIM_REGRESSIONS`, else the one found from `start` (a scenario
    /// file or a folder of them; the working folder when `None`), see
    /// [`find`]. A folder that is a file, a device or under one is refused
    /// here, before anything runs ([`Db::check_folder`]).
    pub fn db(&self, start: Option<&Path>) -> Result<Option<Db>, UsageError> {
        if self.off {
            return Ok(None);
        }
        let (db, from) = if let Some(dir) = &self.dir {
            (Db::new(dir.clone()), "--regressions")
        } else if let Some(dir) = std::env::var_os(ENV).filter(|d| !d.is_empty()) {
            (Db::new(PathBuf::from(dir)), ENV)
        } else {
            let Some(root) = find(start) else {
                return Ok(None);
            };
            (
                Db::new(shown(&root.join(DEFAULT_DIR))).with_base(root),
                "the regression folder",
            )
        };
        db.check_folder(from)?;
        Ok(Some(db))
    }
}

/// The project root the default folder belongs to: walking up from `start`
/// (the folder of a scenario file, a folder given, else the working
/// folder), the first folder holding a `.idemsim/`; else the first holding
/// a `.git`; else the working folder when the start is below it, else the
/// start itself: a scenario outside any project, checked from elsewhere,
/// keeps its regressions beside it, not in whatever folder the run began. `None` inside idemsim's own source tree
/// (outside its `target/`), so its tests and developers do not litter the
/// checkout: the walk stops there too, and a scratch folder under `target/`
/// stays its own root.
pub fn find(start: Option<&Path>) -> Option<PathBuf> {
    let from = match start {
        Some(p) if p.is_dir() => p.to_path_buf(),
        Some(p) => p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => PathBuf::from("."),
    };
    let from = from.canonicalize().ok()?;
    if inside_own_checkout(&from) {
        return None;
    }
    let ancestors = || from.ancestors().take_while(|d| !inside_own_checkout(d));
    let with = |name: &str| ancestors().find(|d| d.join(name).exists());
    let found = with(MARKER)
        .filter(|d| d.join(MARKER).is_dir())
        .or_else(|| with(".git"))
        .map(Path::to_path_buf);
    // Outside any project: the working folder when the scenario is below
    // it (run from the project's root, as before), else beside the scenario.
    let cwd = std::env::current_dir().and_then(|d| d.canonicalize()).ok();
    let fallback = || match cwd.filter(|cwd| from.starts_with(cwd)) {
        Some(cwd) if !inside_own_checkout(&cwd) => cwd,
        _ => from.clone(),
    };
    Some(found.unwrap_or_else(fallback))
}

/// `path` (absolute) from the working folder when it is below it, so
/// messages say `.idemsim/regressions/...` run from the project's root.
fn shown(path: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| cwd.canonicalize().ok())
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .filter(|rel| !rel.as_os_str().is_empty())
        .unwrap_or_else(|| path.to_path_buf())
}

/// Whether `dir` lies in the source tree this idemsim was built from, outside
/// its `target/` folder (where tests make scratch folders of their own).
pub(crate) fn inside_own_checkout(dir: &Path) -> bool {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (Ok(dir), Ok(root)) = (dir.canonicalize(), manifest.canonicalize()) else {
        return false;
    };
    dir.starts_with(&root) && !dir.starts_with(root.join("target"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/tmp/regressions-folder")
            .join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        d.canonicalize().unwrap()
    }

    #[test]
    fn the_nearest_idemsim_folder_above_the_scenario_wins() {
        let d = scratch("marker");
        std::fs::create_dir_all(d.join(".idemsim")).unwrap();
        std::fs::create_dir_all(d.join("a/.git")).unwrap();
        std::fs::write(d.join("a/b/s.toml"), "").unwrap();
        assert_eq!(find(Some(&d.join("a/b/s.toml"))), Some(d.clone()));
        assert_eq!(find(Some(&d.join("a/b"))), Some(d));
    }

    #[test]
    fn without_one_the_git_root_then_the_start_folder() {
        let d = scratch("git");
        std::fs::create_dir_all(d.join("a/.git")).unwrap();
        assert_eq!(find(Some(&d.join("a/b"))), Some(d.join("a")));
        let e = scratch("bare");
        assert_eq!(find(Some(&e.join("a/b"))), Some(e.join("a/b")));
    }

    #[test]
    fn the_own_checkout_is_never_a_root() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(find(Some(&manifest.join("scenarios"))), None);
    }
}
