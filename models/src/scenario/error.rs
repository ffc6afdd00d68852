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

/// serde's words made the user's: no Rust type names.
pub(super) fn plain(message: &str) -> String {
    let m = message.trim();
    // toml 1 reads digits past i64 as an i128 that no key's type takes:
    // a number too large, in the words toml 0.8's parser used for it.
    if m.starts_with("invalid type: integer") && m.contains(" as i128,") {
        return "number too large to fit in target type".to_string();
    }
    let m = m
        .replace("invalid type: ", "wrong type: ")
        .replace(", expected u64", ", expected a whole number (0 or more)")
        .replace(
            ", expected u32",
            ", expected a whole number from 0 to 4294967295",
        )
        .replace(
            ", expected u16",
            ", expected a whole number from 0 to 65535",
        )
        .replace(", expected u8", ", expected a whole number from 0 to 255")
        .replace(", expected a string", ", expected text in quotes")
        .replace(", expected a boolean", ", expected true or false")
        .replace("invalid value: integer", "the number")
        .replace("wrong type: sequence", "wrong type: a list")
        .replace("wrong type: map", "wrong type: a table")
        .replace(", expected a sequence", ", expected a list [...]")
        .replace(", expected a map", ", expected a table");
    // serde names the Rust type a table is read into ("struct BreakerDto").
    let m = match m.find(", expected struct ") {
        Some(at) => {
            let rest = &m[at + ", expected struct ".len()..];
            let end = rest
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(rest.len());
            format!("{}, expected a table of keys{}", &m[..at], &rest[end..])
        }
        None => m,
    };
    if m.is_empty() {
        "this value cannot be read".to_string()
    } else {
        m
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn serde_words_become_the_users() {
        assert_eq!(
            plain("invalid type: string \".failures=0\", expected struct BreakerDto"),
            "wrong type: string \".failures=0\", expected a table of keys"
        );
        assert_eq!(
            plain("invalid type: sequence, expected u64"),
            "wrong type: a list, expected a whole number (0 or more)"
        );
        assert_eq!(
            plain("invalid type: map, expected a string"),
            "wrong type: a table, expected text in quotes"
        );
        assert_eq!(
            plain("invalid type: integer `3`, expected a sequence"),
            "wrong type: integer `3`, expected a list [...]"
        );
        assert_eq!(plain("  "), "this value cannot be read");
        assert_eq!(
            plain("invalid type: integer `99999999999999999999999` as i128, expected u64"),
            "number too large to fit in target type"
        );
    }
}
