//! Settings without effect: a key a scenario writes that its other settings
//! leave unread (a lease on the keys of a service that keeps no key table, a
//! PUT mode in a scenario that sends no PUT). The run is the same with the
//! line or without it, and the reader of the file believes otherwise.
//!
//! A model lists every such key its settings leave unread, whether or not
//! the file writes it ([`Unused`]); the loader keeps those the scenario
//! writes and reports them as the design warning
//! [`SETTING_WITHOUT_EFFECT`], at the line that writes them. A key that
//! lost its effect only because a `--set` (a sweep's variant, a protection
//! removed) changed one of the settings it depends on is not reported:
//! the file that writes it was meaningful as written, and the variant is
//! the user's own (docs/design-warnings.md).

use super::input::Seg;

/// The design warning's id.
pub const SETTING_WITHOUT_EFFECT: &str = "setting-without-effect";

/// A key the settings leave without effect, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unused {
    /// The key: `service.lease_ms`.
    pub key: Vec<Seg>,
    /// The settings that leave it without effect: a `--set` of any of
    /// them (or of a table holding one) made a variant, not a mistake.
    pub because: Vec<Vec<Seg>>,
    /// Why nothing reads it, naming those settings and their values.
    pub why: String,
    /// How to give it an effect, or to drop it.
    pub fix: String,
    /// The value, as TOML writes it, that says what happens anyway
    /// (`lease_ms = 0` where nothing is leased, `pass_key_to_bank = false`
    /// where the bank takes no key): a file that writes it states the
    /// design, and is not told.
    pub inert: Option<&'static str>,
}

impl Unused {
    /// The key `key` (as written, table first), left without effect by
    /// the settings `because`.
    pub fn new(
        key: &[&'static str],
        because: &[&[&'static str]],
        why: impl Into<String>,
        fix: impl Into<String>,
    ) -> Unused {
        Unused {
            key: super::input::path(key),
            because: because.iter().map(|b| super::input::path(b)).collect(),
            why: why.into(),
            fix: fix.into(),
            inert: None,
        }
    }

    /// The same, but not where the file writes `value` (TOML text: `0`,
    /// `false`, `"none"`), which says what happens anyway.
    pub fn unless(mut self, value: &'static str) -> Unused {
        self.inert = Some(value);
        self
    }

    /// Each of `keys` of the table `table`, left without effect for the
    /// same reason; `key=value` names a value that says what happens anyway
    /// ([`unless`](Unused::unless)).
    pub fn each(
        table: &[&'static str],
        keys: &[&'static str],
        because: &[&[&'static str]],
        why: &str,
        fix: &str,
    ) -> Vec<Unused> {
        keys.iter()
            .map(|k| {
                let (k, inert) = match k.split_once('=') {
                    Some((k, v)) => (k, Some(v)),
                    None => (*k, None),
                };
                let mut key = table.to_vec();
                key.push(k);
                let u = Unused::new(&key, because, why, fix);
                match inert {
                    Some(v) => u.unless(v),
                    None => u,
                }
            })
            .collect()
    }

    /// The key as dotted text: `service.lease_ms`.
    pub fn dotted(&self) -> String {
        dotted(&self.key)
    }
}

/// A path as dotted text: `client.retry.window_ms`.
pub fn dotted(path: &[Seg]) -> String {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => (*k).to_string(),
            Seg::Name(n) => n.clone(),
            Seg::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}
