//! Settings a scenario writes that its other settings leave without
//! effect (`core::unused`), reported as the design warning
//! `setting-without-effect` at the place that writes them.
//!
//! The line between a mistake and a variant is the one the network entries
//! draw (`routes::Kinds::written`): a key the file writes, left without
//! effect by the file's other settings, is the file's mistake; a key that
//! lost its effect because a `--set` changed what it depends on (a sweep's
//! variant, a protection removed) is not, since the file was meaningful as
//! written. A key a `--set` writes itself, into a design that leaves it
//! without effect, is reported too: the user asked for a change and got none.

use super::locate::{Locator, Override};
use crate::core::input::Invalid;
use crate::core::unused::{dotted, SETTING_WITHOUT_EFFECT};
use crate::core::{DesignWarning, Unused};

/// The design warnings for the keys of `unused` that the scenario writes
/// (`effective`: its text with `overrides` applied), but for those an
/// override took the effect from.
pub(super) fn reported(
    loc: &Locator<'_>,
    effective: &str,
    overrides: &[Override],
    unused: &[Unused],
) -> Vec<DesignWarning> {
    if unused.is_empty() {
        return Vec::new();
    }
    let Ok(doc) = effective.parse::<toml::Table>() else {
        return Vec::new();
    };
    unused
        .iter()
        .filter_map(|u| {
            let value = value_at(&doc, &u.key)?;
            if u.inert.is_some_and(|v| v == value.to_string()) {
                return None;
            }
            let varied = u.because.iter().any(|b| {
                let b = dotted(b);
                overrides.iter().any(|o| overlaps(&o.key, &b))
            });
            if varied {
                return None;
            }
            let place = place(loc, &u.key);
            Some(DesignWarning {
                id: SETTING_WITHOUT_EFFECT,
                text: format!(
                    "{place}: {} = {value} has no effect: {}; {}",
                    u.dotted(),
                    u.why,
                    u.fix
                ),
                shown_by: None,
                example: "",
                at: None,
            })
        })
        .collect()
}

/// Where the setting at `path` is written: `file:line:column`, or the
/// `--set` that wrote it.
fn place(loc: &Locator<'_>, path: &[crate::core::input::Seg]) -> String {
    let at = loc.invalid(Invalid {
        path: path.to_vec(),
        message: String::new(),
        help: None,
    });
    if at.file.starts_with("--set ") {
        at.file
    } else {
        format!("{}:{}:{}", at.file, at.line, at.column)
    }
}

/// Starts the text of each of a model's `design warnings` that names the setting
/// it is in (`DesignWarning::at`) with the place that writes it: the model knows
/// the setting, the loader the file and the `--set`s.
pub(super) fn placed(loc: &Locator<'_>, design_warnings: &mut [DesignWarning]) {
    for h in design_warnings.iter_mut() {
        if let Some(path) = &h.at {
            h.text = format!("{}: {}", place(loc, path), h.text);
        }
    }
}

/// The value the scenario writes at `path`, if it writes one (a default is
/// not written).
fn value_at(doc: &toml::Table, path: &[crate::core::input::Seg]) -> Option<toml::Value> {
    use crate::core::input::Seg;
    let mut at: Option<&toml::Value> = None;
    let mut table = Some(doc);
    for seg in path {
        let next = match seg {
            Seg::Key(k) => table?.get(*k),
            Seg::Name(n) => table?.get(n.as_str()),
            Seg::Index(i) => at?.as_array()?.get(*i),
        }?;
        table = next.as_table();
        at = Some(next);
    }
    at.cloned()
}

/// Whether the dotted keys `a` and `b` are one, or one holds the other.
fn overlaps(a: &str, b: &str) -> bool {
    let holds = |outer: &str, inner: &str| {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    };
    holds(a, b) || holds(b, a)
}

#[cfg(test)]
mod tests {
    use super::overlaps;

    #[test]
    fn an_override_overlaps_the_keys_it_sets_and_the_tables_around_them() {
        assert!(overlaps("service.idempotency", "service.idempotency"));
        assert!(overlaps("service", "service.idempotency"));
        assert!(overlaps("requests", "requests"));
        assert!(!overlaps("service.idempotency_x", "service.idempotency"));
        assert!(!overlaps("service.lease_ms", "service.idempotency"));
    }
}
