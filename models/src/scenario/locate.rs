//! `--set` overrides and where a mistake is: in the user's file (at the line
//! the user wrote, even when an override added lines before it) or in the
//! `--set` argument that put the value there.

use super::error::{help_for_unknown, line_col, plain, span_of, ScenarioError};
use crate::core::input::{Invalid, LoadError, Seg};

/// An override `key.path=value` from the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// The dotted key path (`client.retry.max_attempts`).
    pub key: String,
    /// The value, as TOML (a bare word is a string).
    pub value: String,
}

impl Override {
    /// Parses `key.path=value`; the error says what is wrong.
    pub fn parse(s: &str) -> Result<Override, String> {
        let (k, v) = s
            .split_once('=')
            // Escaped, so that a control character shows as what it is.
            .ok_or_else(|| {
                format!(
                    "`{}` is not KEY=VALUE, e.g. client.retry.max_attempts=3",
                    s.escape_debug()
                )
            })?;
        let key = k.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(format!(
                "`{s}` has an empty key or key part; write a path such as client.retry.max_attempts"
            ));
        }
        if v.trim().is_empty() {
            return Err(format!("`{s}` has no value; write {key}=VALUE"));
        }
        Ok(Override {
            key: key.to_string(),
            value: v.trim().to_string(),
        })
    }

    pub(super) fn shown(&self) -> String {
        format!("--set {}={}", self.key, self.value)
    }

    fn path(&self) -> Vec<Seg> {
        self.key
            .split('.')
            .map(|k| Seg::Name(k.to_string()))
            .collect()
    }
}

fn set_error(o: &Override, message: String, help: Option<String>) -> ScenarioError {
    ScenarioError {
        file: o.shown(),
        line: 1,
        column: 1,
        message,
        source_line: None,
        help,
    }
}

/// The text with every override written into its TOML tree.
pub(super) fn apply_overrides(
    file: &str,
    text: &str,
    overrides: &[Override],
) -> Result<String, ScenarioError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    refuse_lost_settings(overrides)?;
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let (line, column, src) = line_col(text, e.span().map_or(0, |s| s.start));
        let message = plain(e.message());
        let help = Some(syntax_help(&src, &message));
        ScenarioError {
            file: file.into(),
            line,
            column,
            message,
            source_line: Some(src),
            help,
        }
    })?;
    for o in overrides {
        let value = override_value(o)?;
        set_in(&mut doc, o, value)?;
    }
    Ok(doc.to_string())
}

/// A later override that replaces a whole table drops what an earlier one
/// set inside it: refused, not applied in silence.
fn refuse_lost_settings(overrides: &[Override]) -> Result<(), ScenarioError> {
    for (i, later) in overrides.iter().enumerate() {
        let inside = format!("{}.", later.key);
        if let Some(earlier) = overrides[..i].iter().find(|o| o.key.starts_with(&inside)) {
            return Err(set_error(
                later,
                format!(
                    "this replaces `{}`, in which --set {}={} sets a key: that setting would be lost",
                    later.key, earlier.key, earlier.value
                ),
                Some(format!(
                    "give `{}` first and the keys inside it after, or only one of the two",
                    later.key
                )),
            ));
        }
    }
    Ok(())
}

/// The TOML value an override's text stands for.
fn override_value(o: &Override) -> Result<toml_edit::Value, ScenarioError> {
    match o.value.parse() {
        Ok(v) => Ok(v),
        // Digits TOML cannot hold are a number too large, not a word:
        // taken as text they would be reported as "wrong type: string".
        Err(_) if looks_like_integer(&o.value) => Err(set_error(
            o,
            format!(
                "the number {} is past the largest whole number a scenario holds ({})",
                o.value,
                i64::MAX
            ),
            Some(
                "every key has a much smaller range; docs/scenario-format.md gives each one"
                    .into(),
            ),
        )),
        // A list, a table or quoted text that does not parse is a
        // mistake in it, not a word: taken as text it would be reported
        // as "wrong type: string", hiding what is wrong.
        Err(e) if o.value.trim_start().starts_with(['[', '{', '"', '\'']) => Err(set_error(
            o,
            format!("the value is not valid TOML: {}", plain(e.message()).replace('\n', ": ")),
            Some("write a list as [a, b], a table as {key = value, ...}, and close every quote and bracket".into()),
        )),
        // A bare word is a string: `--set client.key=stable`.
        Err(_) => Ok(toml_edit::Value::from(o.value.as_str())),
    }
}

/// Writes `value` at the override's key path. A table may be written
/// inline (`client = { key = "stable" }`): its keys are set where they
/// are, and a missing one is added inline.
fn set_in(
    doc: &mut toml_edit::DocumentMut,
    o: &Override,
    value: toml_edit::Value,
) -> Result<(), ScenarioError> {
    let parts: Vec<&str> = o.key.split('.').collect();
    let mut table: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    let mut inline = false;
    for p in &parts[..parts.len() - 1] {
        if table.get(p).is_none() {
            let fresh = match inline {
                true => toml_edit::Item::Value(toml_edit::InlineTable::new().into()),
                false => toml_edit::Item::Table(toml_edit::Table::new()),
            };
            table.insert(p, fresh);
        }
        let entry = table.get_mut(p).expect("inserted above if missing");
        inline = entry.is_inline_table();
        table = match entry.as_table_like_mut() {
            Some(t) => t,
            None => {
                return Err(set_error(
                    o,
                    format!("`{p}` is not a table, so `{}` cannot be set", o.key),
                    Some("use a key path such as client.retry.max_attempts".into()),
                ))
            }
        };
    }
    table.insert(parts[parts.len() - 1], toml_edit::value(value));
    Ok(())
}

/// Whether `v` is written as a whole number (sign, digits, TOML's underscores).
fn looks_like_integer(v: &str) -> bool {
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// A fix for a duration written with a unit (`timeout_ms = 10s` or `"10s"`):
/// every duration key is a whole number of the unit its name ends in.
fn duration_help(src: &str) -> Option<String> {
    let (key, value) = src.split_once('=')?;
    let key = key.trim();
    if !key.ends_with("_ms") {
        return None;
    }
    let value = value.trim().trim_matches('"');
    let split = value.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = value.split_at(split);
    let number: u64 = number.parse().ok()?;
    let ms_per_unit: u64 = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => crate::core::input::DAY_MS,
        _ => return None,
    };
    let ms = number.checked_mul(ms_per_unit)?;
    Some(format!(
        "`{key}` is a whole number of milliseconds, without a unit: write `{key} = {ms}` for {value}"
    ))
}

/// A fix for a TOML syntax error, from the line it is on.
pub(super) fn syntax_help(src: &str, message: &str) -> String {
    let line = src.trim();
    if let Some(help) = duration_help(line) {
        help
    } else if line.ends_with('=') {
        "write a value after `=` (a number, \"text\" in quotes, true or false, or [min, max]), or delete the line".into()
    } else if message.contains("duplicate key") {
        "each key may appear once per table: delete one of the two lines".into()
    } else if line.starts_with('[') && !line.ends_with(']') {
        "close the table header with `]`".into()
    } else if message.contains("too large") {
        // TOML's integers are 64-bit signed: a larger number is no number.
        "TOML numbers go up to 9223372036854775807; write a smaller one (docs/scenario-format.md gives each key's range)".into()
    } else {
        "write `key = value` with text in quotes; docs/scenario-format.md shows every key".into()
    }
}

/// For each line of the text with overrides applied, the line of the user's
/// file it came from; `None` for a line an override added.
struct LineMap {
    original: Vec<Option<usize>>,
}

impl LineMap {
    /// Aligns the two texts by their longest common run of lines; lines left
    /// between two aligned ones pair up in order (a value an override
    /// replaced in place), and any extra line of the effective text is new.
    fn new(original: &str, effective: &str) -> LineMap {
        let a: Vec<&str> = original.lines().collect();
        let b: Vec<&str> = effective.lines().collect();
        // Overrides change a few lines: the lines before the first change and
        // after the last are the same in both and align one to one. Only the
        // middle needs the table, which is quadratic in its length.
        let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let tail = a[head..]
            .iter()
            .rev()
            .zip(b[head..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
        let mut map = vec![None; b.len()];
        for (k, m) in map.iter_mut().enumerate().take(head) {
            *m = Some(k);
        }
        for k in 0..tail {
            map[b.len() - 1 - k] = Some(a.len() - 1 - k);
        }
        for (j, i) in Self::middle(ma, mb).into_iter().enumerate() {
            map[head + j] = i.map(|i| head + i);
        }
        LineMap { original: map }
    }

    /// Cells the alignment table of the changed middle may have: a file of
    /// many changed lines (thousands of blank lines an override moved)
    /// would otherwise take gigabytes. Past it, lines pair up in order,
    /// which only makes an error's line less exact.
    const MAX_CELLS: usize = 1 << 22;

    fn middle(a: &[&str], b: &[&str]) -> Vec<Option<usize>> {
        if (a.len() + 1).saturating_mul(b.len() + 1) > Self::MAX_CELLS {
            return (0..b.len()).map(|j| (j < a.len()).then_some(j)).collect();
        }
        let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let mut map = vec![None; b.len()];
        let (mut i, mut j) = (0, 0);
        let (mut gap_a, mut gap_b) = (Vec::new(), Vec::new());
        let flush = |map: &mut Vec<Option<usize>>, ga: &mut Vec<usize>, gb: &mut Vec<usize>| {
            for (x, y) in ga.iter().zip(gb.iter()) {
                map[*y] = Some(*x);
            }
            ga.clear();
            gb.clear();
        };
        while i < a.len() && j < b.len() {
            if a[i] == b[j] {
                flush(&mut map, &mut gap_a, &mut gap_b);
                map[j] = Some(i);
                i += 1;
                j += 1;
            } else if lcs[i + 1][j] >= lcs[i][j + 1] {
                gap_a.push(i);
                i += 1;
            } else {
                gap_b.push(j);
                j += 1;
            }
        }
        gap_a.extend(i..a.len());
        gap_b.extend(j..b.len());
        flush(&mut map, &mut gap_a, &mut gap_b);
        map
    }
}

/// Where a mistake is: in the file, or in the value an override put there.
pub(super) struct Locator<'a> {
    file: &'a str,
    text: &'a str,
    effective: &'a str,
    overrides: &'a [Override],
    lines: Option<LineMap>,
    /// The presets whose settings were written into `effective`.
    presets: Vec<&'static crate::core::Preset>,
}

impl<'a> Locator<'a> {
    pub(super) fn new(
        file: &'a str,
        text: &'a str,
        effective: &'a str,
        overrides: &'a [Override],
    ) -> Locator<'a> {
        let lines = (text != effective).then(|| LineMap::new(text, effective));
        Locator {
            file,
            text,
            effective,
            overrides,
            lines,
            presets: Vec::new(),
        }
    }

    /// The same locator, told which presets wrote lines of its text.
    pub(super) fn with_presets(mut self, presets: &[&'static crate::core::Preset]) -> Locator<'a> {
        self.presets = presets.to_vec();
        self
    }

    /// A mistake on a line only a preset wrote is the `preset =` line's: the
    /// message says which setting of the preset, with its source.
    fn preset_blame(
        &self,
        src: &str,
        message: &str,
        help: &Option<String>,
    ) -> Option<ScenarioError> {
        let key = src.split('=').next()?.trim();
        let (p, s) = self.presets.iter().find_map(|p| {
            let s = p
                .settings
                .iter()
                .find(|s| s.key.rsplit('.').next() == Some(key))?;
            Some((p, s))
        })?;
        let message = format!(
            "{message} (preset \"{}\" sets {} = {}: {})",
            p.name, s.key, s.value, s.source
        );
        let at: Vec<Seg> = p
            .table
            .split('.')
            .chain(["preset"])
            .map(|k| Seg::Name(k.to_string()))
            .collect();
        let Some(span) = span_of(self.text, &at) else {
            // Named by `--set TABLE.preset=NAME`: that argument's.
            let o = self.overrides.iter().find(|o| o.key.ends_with("preset"))?;
            return Some(set_error(o, message, help.clone()));
        };
        let (line, column, src) = line_col(self.text, span.start);
        Some(ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            message,
            source_line: Some(src),
            help: help.clone(),
        })
    }

    pub(super) fn at(&self, offset: usize, message: String, help: Option<String>) -> ScenarioError {
        let (line, column, src) = line_col(self.effective, offset);
        // An override writes `key = value` on one line: a mistake on that
        // line (in its key or its value) is the argument's.
        for o in self.overrides {
            if let Some(span) = span_of(self.effective, &o.path()) {
                if line_col(self.effective, span.start).0 == line {
                    return set_error(o, message, help);
                }
            }
        }
        // The place in the text read, when nothing else is to blame.
        let here = |message, help| ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            message,
            source_line: Some(src.clone()),
            help,
        };
        let Some(map) = &self.lines else {
            return here(message, help);
        };
        match map.original.get(line - 1).copied().flatten() {
            Some(orig) => ScenarioError {
                file: self.file.to_string(),
                line: orig + 1,
                column,
                message,
                source_line: self.text.lines().nth(orig).map(str::to_string),
                help,
            },
            // A line only a preset or an override could have added (a
            // table header it created): blame the one that names it.
            None => {
                if let Some(e) = self.preset_blame(&src, &message, &help) {
                    return e;
                }
                let Some(first) = self.overrides.first() else {
                    return here(message, help);
                };
                let o = self
                    .overrides
                    .iter()
                    .find(|o| src.contains(o.key.split('.').next().unwrap_or("")))
                    .unwrap_or(first);
                set_error(o, message, help)
            }
        }
    }

    pub(super) fn toml(&self, e: &toml::de::Error) -> ScenarioError {
        let raw = plain(e.message());
        let offset = e.span().map_or(0, |s| s.start);
        let (_, _, src) = line_col(self.effective, offset);
        let help = if raw.starts_with("unknown field") {
            help_for_unknown(&raw)
        } else if raw.starts_with("missing field") {
            Some("add it; docs/scenario-format.md lists every key with its default".into())
        } else if raw.starts_with("this is not a protection") || raw.starts_with("`set` is") {
            Some("docs/scenario-format.md shows the three forms of a protection".into())
        } else if raw.contains("probabilities are whole numbers per mille") {
            Some("per mille: 1000 is always, 50 is 5 %, 0 is never".into())
        } else if raw.starts_with("the number") {
            Some("write a whole number in the key's range; docs/scenario-format.md gives each key's range".into())
        } else if raw.contains("wrong type") {
            duration_help(src.trim())
                .or_else(|| Some("check the value's type against docs/scenario-format.md".into()))
        } else {
            Some(syntax_help(&src, &raw))
        };
        if raw.starts_with("missing field") && e.span().is_none_or(|s| s.start == 0) {
            // A key missing from the whole document is the file's, even when
            // an override's table is what the effective text starts with.
            return ScenarioError {
                file: self.file.to_string(),
                line: 1,
                column: 1,
                message: raw,
                source_line: Some(self.text.lines().next().unwrap_or("").to_string()),
                help,
            };
        }
        let message = if src.trim().ends_with('=') {
            // toml 1's parser words this as a string left unquoted.
            "the value after `=` is missing".to_string()
        } else if e.message().trim().is_empty() {
            "the TOML syntax breaks here".to_string()
        } else if duration_help(src.trim()).is_some() {
            // The parser's words ("expected newline") for what is a unit.
            "a duration is a plain number here, without a unit".to_string()
        } else {
            raw
        };
        self.at(offset, message, help)
    }

    pub(super) fn invalid(&self, i: Invalid) -> ScenarioError {
        let offset = span_of(self.effective, &i.path).map_or(0, |s| s.start);
        self.at(offset, i.message, i.help)
    }

    pub(super) fn load(&self, e: LoadError) -> ScenarioError {
        match e {
            LoadError::Toml(e) => self.toml(&e),
            LoadError::Invalid(i) => self.invalid(i),
        }
    }
}

/// An error of a variant whose file, as written, loads: the `--set`s made
/// the combination the model refuses (`bank.status_query=false` under a
/// state mode), so the message says so, and the fix offers leaving them
/// out. An error placed at a `--set` already names it.
pub(super) fn made_by_overrides(
    mut e: ScenarioError,
    written_loads: bool,
    overrides: &[Override],
) -> ScenarioError {
    if !written_loads || overrides.is_empty() || e.file.starts_with("--set ") {
        return e;
    }
    let sets = overrides
        .iter()
        .map(|o| format!("--set {}={}", o.key, o.value))
        .collect::<Vec<_>>()
        .join(" ");
    e.message.push_str(&format!(
        " (the file as written loads: {sets} made this combination)"
    ));
    // The file's own fix ("add status_query = true") is not the variant's:
    // the file has it, and the --set took it away.
    e.help = Some(match e.help.take() {
        Some(h) => format!(
            "leave out {sets}: the model cannot build this variant (as a file it would need: {h})"
        ),
        None => format!("leave out {sets}: the model cannot build this variant"),
    });
    e
}

#[cfg(test)]
mod tests {
    use super::LineMap;

    #[test]
    fn lines_an_override_added_map_to_no_line_and_later_lines_keep_theirs() {
        let original = "a = 1\n[t]\nx = 1\n\n[u]\ny = 2\n";
        let effective = "a = 1\n[t]\nx = 5\nnew = 3\n\n[u]\ny = 2\n";
        let m = LineMap::new(original, effective);
        assert_eq!(
            m.original,
            vec![Some(0), Some(1), Some(2), None, Some(3), Some(4), Some(5)]
        );
    }
}
