//! A bad scenario file or override: the place (file, line, column, or the
//! `--set` argument), what is wrong in the user's words, and the fix.

use crate::core::input::{did_you_mean, Seg};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
/// A bad scenario file or override, located, with the fix: printed as the CLI prints it.
pub struct ScenarioError {
    /// The file, or `--set KEY=VALUE` when the mistake is in an override.
    pub file: String,
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
    /// What is wrong, in the user's words.
    pub message: String,
    /// The line it is on, shown under the message.
    pub source_line: Option<String>,
    /// How to fix it.
    pub help: Option<String>,
}

impl std::error::Error for ScenarioError {}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.starts_with("--set ") {
            // The mistake is in the argument, which has no lines.
            writeln!(f, "error: {}: {}", self.file, self.message)?;
        } else {
            writeln!(
                f,
                "error: {}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )?;
        }
        if let Some(src) = &self.source_line {
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            writeln!(f, "{pad} |")?;
            writeln!(f, "{num} | {src}")?;
            writeln!(f, "{pad} | {}^", " ".repeat(self.column.saturating_sub(1)))?;
        }
        if let Some(help) = &self.help {
            writeln!(f, "help: {help}")?;
        }
        Ok(())
    }
}

/// Line, column (1-based, in characters) and the line's text at byte `offset`.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize, String) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[start..].chars().count() + 1;
    let src = text[start..].lines().next().unwrap_or("").to_string();
    (line, column, src)
}

/// The byte span of the value (or, failing that, the nearest table) at `path`.
pub(super) fn span_of(text: &str, path: &[Seg]) -> Option<std::ops::Range<usize>> {
    let doc = toml_edit::Document::parse(text.to_string()).ok()?;
    let mut best = None;
    let mut table: Option<&toml_edit::Table> = Some(doc.as_table());
    let mut item: Option<&toml_edit::Item> = None;
    for seg in path {
        let next: Option<&toml_edit::Item> = match (seg, table, item) {
            (Seg::Key(k), Some(t), _) => t.get(k),
            (Seg::Name(k), Some(t), _) => t.get(k.as_str()),
            (Seg::Index(i), _, Some(toml_edit::Item::ArrayOfTables(a))) => {
                let t = a.get(*i)?;
                best = t.span().or(best);
                table = Some(t);
                item = None;
                continue;
            }
            (Seg::Index(i), _, Some(it)) => it.get(*i),
            (Seg::Key(k), None, Some(it)) => it.get(k),
            (Seg::Name(k), None, Some(it)) => it.get(k.as_str()),
            _ => None,
        };
        let Some(it) = next else { break };
        best = it.span().or(best);
        table = it.as_table();
        item = Some(it);
    }
    best
}

/// Help for serde's messages about a key: the unit convention, a bound the
/// key lacks (`delay_ms` for `delay_ms_min`), or the closest spelling.
pub(super) fn help_for_unknown(message: &str) -> Option<String> {
    let unknown = message.split('`').nth(1)?;
    let expected: Vec<&str> = message
        .split("expected")
        .nth(1)
        .map(|s| s.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default();
    let stem = |k: &str| {
        k.trim_end_matches("_ms")
            .trim_end_matches("_us")
            .trim_end_matches("_s")
            .trim_end_matches("_per_mille")
            .to_string()
    };
    if let Some(k) = expected.iter().find(|k| stem(k) == stem(unknown)) {
        return Some(format!(
            "write `{k}`: durations and probabilities carry their unit in the key (milliseconds `_ms`, per mille `_per_mille`)"
        ));
    }
    let extended: Vec<String> = expected
        .iter()
        .filter(|k| k.starts_with(unknown) && k.len() > unknown.len())
        .map(|k| format!("`{k}`"))
        .collect();
    if !extended.is_empty() {
        return Some(format!("did you mean {}?", extended.join(" or ")));
    }
    if let Some(best) = did_you_mean(unknown, expected.iter().copied()) {
        return Some(format!("did you mean `{best}`?"));
    }
    (!expected.is_empty()).then(|| {
        format!(
            "the keys here are {}",
            expected
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

// serde's words made the user's, shared with the overlays' loader.
pub(super) use crate::core::input::plain;
