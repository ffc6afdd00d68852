//! The files of the regression database: how they are named, and reading
//! one so that any fault names the file, the line and the column and says
//! what to do with it.

use crate::catalog::{self, UsageError};
use crate::repro::{hash_hex, Repro};
use std::path::Path;

/// What to do with a regression file idemsim cannot use.
pub(super) const FIX: &str =
    "delete it, or restore it from version control (a failure found again is recorded anew)";

/// Whether `path` is named as the database names its files: `NAME-HASH.json`,
/// HASH 16 lowercase hex digits ([`file_name`]).
pub(crate) fn is_regression_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some((_, hash)) = name
        .strip_suffix(".json")
        .and_then(|stem| stem.rsplit_once('-'))
    else {
        return false;
    };
    hash.len() == 16
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Reads a file of the database: an error names the file (with line and
/// column where it is not JSON, or names an invariant idemsim does not have)
/// and says to delete or restore it; it is never skipped or written over.
pub(super) fn read_regression(path: &Path) -> Result<Repro, UsageError> {
    let shown = catalog::display_path(path);
    let bytes = std::fs::read(path).map_err(|e| {
        UsageError(format!(
            "error: cannot read the regression {shown}: {e}\nhelp: {FIX}\n"
        ))
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let ok = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let (line, column) = line_column(ok);
        UsageError(format!(
            "error: {shown}:{line}:{column}: not a regression file: it is not UTF-8 text\nhelp: {FIX}\n"
        ))
    })?;
    let repro = Repro::from_json(&text).map_err(|e| {
        UsageError(format!(
            "error: {shown}:{}:{}: not a regression file: {e}\nhelp: {FIX}\n",
            e.line(),
            e.column()
        ))
    })?;
    if let Some(name) = &repro.invariant {
        if models::core::invariants::by_name(name).is_none() {
            let at = text.find("\"invariant\"").map_or(String::new(), |i| {
                let (line, column) = line_column(&text.as_bytes()[..i]);
                format!(":{line}:{column}")
            });
            return Err(UsageError(format!(
                "error: {shown}{at}: not a regression file: idemsim has no invariant `{name}` (it has {})\nhelp: {FIX}\n",
                models::core::invariants::names().join(", ")
            )));
        }
    }
    Ok(repro)
}

/// The line and column just past `before`, counted from 1.
fn line_column(before: &[u8]) -> (usize, usize) {
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, column)
}

/// `:LINE:COLUMN` of the first `needle` in the file at `path`, or nothing.
pub(super) fn position_in(path: &Path, needle: &str) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            let i = text.find(needle)?;
            let (line, column) = line_column(&text.as_bytes()[..i]);
            Some(format!(":{line}:{column}"))
        })
        .unwrap_or_default()
}

/// Two paths name the same file (compared as written when one is missing).
pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// `<scenario>-<16 hex digits>.json`: the hash covers the scenario's name,
/// its settings (`crate::meaning`, overrides included, whatever their
/// order) and the failing seed, or the decisions when no seed replays the
/// run, so the same failure gets the same name, shrunk or not. A repro
/// without settings (written before idemsim recorded them) is named as it
/// was then: by its overrides as given and its decisions.
pub fn file_name(repro: &Repro) -> String {
    let mut text = if repro.settings.is_empty() {
        format!("{}\n{}\n", repro.scenario, repro.sets.join("\n"))
    } else {
        let meaning = hash_hex(crate::meaning::hash(&repro.settings));
        format!("{}\nsettings {meaning}\n", repro.scenario)
    };
    if let (Some(seed), false) = (repro.seed, repro.settings.is_empty()) {
        text.push_str(&format!("seed {seed}\n"));
    }
    let by_seed = repro.seed.is_some() && !repro.settings.is_empty();
    for (stream, values) in repro.choices.iter().filter(|_| !by_seed) {
        text.push_str(stream);
        for v in values {
            text.push(' ');
            text.push_str(&v.to_string());
        }
        text.push('\n');
    }
    let safe: String = repro
        .scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "{safe}-{}.json",
        hash_hex(models::scenario::fnv1a(text.as_bytes()))
    )
}
