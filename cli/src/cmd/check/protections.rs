//! The protections a holding file names in `[expect]`, as `check` reports
//! them: a "holds" is earned only if removing each one breaks the design,
//! and `check` removes none, so its summary says which they are and which
//! command removes them (`idemsim verify`), rather than leave a bare "holds".

use models::scenario::Verdict;
use serde::{Deserialize, Serialize};

/// The `protections` field of the summary: present only when the sweep of
/// a file as written (no `--set`) holds and its `[expect]` says it holds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProtectionsLine {
    /// Each protection, in the file's order; empty when `[expect]` names
    /// none, which `verify` counts as a mismatch.
    pub named: Vec<NamedProtection>,
    /// The command that removes each in turn: `idemsim verify FILE`.
    pub verify: String,
}

/// One protection, with the names `verify`'s ablations give it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NamedProtection {
    /// The overrides that remove it: `client.key=none + bank.accepts_key=false`.
    pub protection: String,
    /// The invariant its removal must break, or null when any will do.
    pub expected_invariant: Option<String>,
}

impl ProtectionsLine {
    /// The protections of `s` as its file states them, or `None` for a file
    /// that does not expect to hold (a design still being explored, or one
    /// meant to fail) and for a variant: `--set` may have removed one, and
    /// the file's `[expect]` describes the file, not the variant.
    pub(super) fn of(
        s: &models::Scenario,
        entry: &idemsim::catalog::Entry,
        variant: bool,
    ) -> Option<ProtectionsLine> {
        if variant || s.expected_verdict() != Some(Verdict::Holds) {
            return None;
        }
        let named = s
            .protections()
            .iter()
            .map(|p| NamedProtection {
                protection: p.describe(),
                expected_invariant: p.breaks.map(str::to_string),
            })
            .collect();
        Some(ProtectionsLine {
            named,
            verify: format!("idemsim verify {}", entry.shell_arg()),
        })
    }

    /// The lines for people: a heading that says `check` removed none and
    /// which command does, then one line per protection.
    pub(super) fn text_lines(&self) -> Vec<String> {
        if self.named.is_empty() {
            return vec![format!(
                "protections: the file names none (`{}` counts a holding file without them as a mismatch)",
                self.verify
            )];
        }
        let mut lines = vec![format!(
            "protections (named by the file; check removes none, `{}` removes each and expects a violation):",
            self.verify
        )];
        lines.extend(self.named.iter().map(|p| {
            let breaks = p.expected_invariant.as_deref().unwrap_or("an invariant");
            format!("  without {}: must break {breaks}", p.protection)
        }));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(named: &[(&str, Option<&str>)]) -> ProtectionsLine {
        ProtectionsLine {
            named: named
                .iter()
                .map(|(p, i)| NamedProtection {
                    protection: p.to_string(),
                    expected_invariant: i.map(str::to_string),
                })
                .collect(),
            verify: "idemsim verify x.toml".to_string(),
        }
    }

    #[test]
    fn each_protection_is_a_line_with_what_its_removal_must_break() {
        let l = line(&[
            ("client.key=none", Some("no-duplicate-effect")),
            ("a=b + c=d", None),
        ]);
        let text = l.text_lines();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(text[0].contains("check removes none"), "{}", text[0]);
        assert!(text[0].contains("`idemsim verify x.toml`"), "{}", text[0]);
        assert_eq!(
            text[1],
            "  without client.key=none: must break no-duplicate-effect"
        );
        assert_eq!(text[2], "  without a=b + c=d: must break an invariant");
    }

    #[test]
    fn a_holding_file_without_protections_is_told_verify_refuses_it() {
        let text = line(&[]).text_lines();
        assert_eq!(text.len(), 1);
        assert!(
            text[0].starts_with("protections: the file names none"),
            "{}",
            text[0]
        );
        assert!(text[0].contains("mismatch"), "{}", text[0]);
    }
}
