//! `format = N`: the version of the scenario format a file was written for.
//!
//! A key whose meaning changes gets a `MeaningChange` in its model. A file
//! that says it was written for an older format and writes the changed value
//! without a key that settles which meaning it wants is refused, naming the
//! change; a file that names no format is read as the current one, with the
//! design warning `key-meaning-changed` naming the change, so a file written
//! before the change never flips its verdict without a word.

use crate::core::design_warning::KEY_MEANING_CHANGED;
use crate::core::input::{invalid, Invalid, Seg};
use crate::core::{DesignWarning, MeaningChange};

/// The format this idemsim writes and reads.
pub const FORMAT: u64 = 2;

fn key_path(key: &str) -> Vec<Seg> {
    key.split('.').map(|k| Seg::Name(k.to_string())).collect()
}

fn written<'a>(doc: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut at = doc.get(parts.next()?)?;
    for p in parts {
        at = at.as_table()?.get(p)?;
    }
    Some(at)
}

/// Refuses a format this idemsim cannot read, and a changed key an older
/// file writes; warns of a changed key in a file that names no format. The
/// file as written (`text`) is what may be old; a `--set`, written today,
/// means today's meaning, and may settle the file's (`effective`).
pub(super) fn check(
    text: &str,
    effective: &str,
    format: Option<u64>,
    changes: &[MeaningChange],
) -> Result<Vec<DesignWarning>, Invalid> {
    if let Some(f) = format {
        if !(1..=FORMAT).contains(&f) {
            return Err(invalid(
                vec![Seg::Key("format")],
                format!("format = {f}: this idemsim reads formats 1 to {FORMAT}"),
                format!("write format = {FORMAT} (the current format, docs/scenario-format.md), or use the idemsim the file was written for"),
            ));
        }
    }
    let (Ok(doc), Ok(now)) = (
        text.parse::<toml::Table>(),
        effective.parse::<toml::Table>(),
    ) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for c in changes {
        if format.is_some_and(|f| f >= c.since) {
            continue;
        }
        let changed = written(&doc, c.key).is_some_and(|v| v.to_string() == c.value);
        if !changed || c.unless.iter().any(|k| written(&now, k).is_some()) {
            continue;
        }
        let change = format!(
            "{} = {} changed meaning in format {}: before, {}; since, {}",
            c.key, c.value, c.since, c.before, c.now
        );
        let settle = c.unless.first().copied().unwrap_or(c.key);
        if let Some(f) = format {
            return Err(invalid(
                key_path(c.key),
                format!("this file is written for format {f}, and {change}"),
                format!("write {settle} beside it to say which meaning you want, then format = {FORMAT}"),
            ));
        }
        found.push(DesignWarning {
            id: KEY_MEANING_CHANGED,
            text: format!(
                "{change}. The file names no format, so it is read as format {FORMAT}; write {settle} beside it and format = {FORMAT} to say which meaning you want"
            ),
            shown_by: None,
            example: "",
            at: Some(key_path(c.key)),
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    static CHANGES: [MeaningChange; 1] = [MeaningChange {
        since: 2,
        key: "bank.status_query",
        value: "true",
        unless: &["service.query_before_retry"],
        before: "it also asked before every re-send",
        now: "it only lets the bank answer",
    }];

    #[test]
    fn an_older_file_writing_a_changed_key_is_refused_naming_the_change() {
        let text = "[bank]\nstatus_query = true\n";
        let Err(i) = check(text, text, Some(1), &CHANGES) else {
            panic!("a format-1 file with the changed key must be refused")
        };
        assert!(i.message.contains("written for format 1"), "{}", i.message);
        assert!(i.message.contains("it also asked before every re-send"));
        assert!(i.help.unwrap().contains("service.query_before_retry"));
    }

    #[test]
    fn a_file_naming_no_format_is_warned_and_one_that_settles_it_is_not() {
        let text = "[bank]\nstatus_query = true\n";
        let found = check(text, text, None, &CHANGES).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, KEY_MEANING_CHANGED);
        assert!(check(text, text, Some(2), &CHANGES).unwrap().is_empty());
        let settled = "[bank]\nstatus_query = true\n[service]\nquery_before_retry = false\n";
        assert!(check(settled, settled, Some(1), &CHANGES)
            .unwrap()
            .is_empty());
        assert!(check("[bank]\nstatus_query = false\n", "", None, &CHANGES)
            .unwrap()
            .is_empty());
        // A `--set` of the key is today's; a `--set` of the settling key settles the file.
        let set = "[bank]\nstatus_query = true\n[service]\nquery_before_retry = true\n";
        assert!(check("", text, None, &CHANGES).unwrap().is_empty());
        assert!(check(text, set, Some(1), &CHANGES).unwrap().is_empty());
    }

    #[test]
    fn a_format_newer_than_this_idemsim_is_refused() {
        assert!(check("", "", Some(FORMAT + 1), &[]).is_err());
        assert!(check("", "", Some(0), &[]).is_err());
        assert!(check("", "", Some(FORMAT), &[]).is_ok());
    }
}
