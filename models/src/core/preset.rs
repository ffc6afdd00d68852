//! Presets: a real system's documented defaults, for a stated version.
//!
//! `preset = "kafka-4.0"` in an actor's table stands for every setting that
//! system's documentation gives as its default: the loader writes each one
//! into the scenario where the file (or a `--set`) has not written that key
//! itself, and the model then applies the system's own rules to the result,
//! as it does to any file. A key written beside a preset wins, so "Kafka 4.0
//! with six requests in flight" is the file `preset = "kafka-4.0"` plus
//! `max_in_flight = 6`, refused as Kafka 4.0 refuses it.
//!
//! A model declares its presets with local names; `idemsim models --presets`
//! lists them with their sources, and docs/fidelity.md has a row for every
//! system one names.

/// One system's defaults, as a model offers them.
#[derive(Debug)]
pub struct Preset {
    /// The table it is written in, dotted: `broker`, `service`, `client.retry`.
    pub table: &'static str,
    /// Its name: `preset = "kafka-4.0"`.
    pub name: &'static str,
    /// The system and version it stands for, as people name it.
    pub system: &'static str,
    /// Every setting it makes.
    pub settings: &'static [PresetSetting],
    /// The limits the system itself enforces: a value outside one, written
    /// beside the preset, is refused as the system refuses it.
    pub rules: &'static [PresetRule],
    /// What of the system the model does not reproduce, said plainly.
    pub not_modelled: &'static str,
}

/// What the system accepts for one setting, in the system's own words.
#[derive(Clone, Copy, Debug)]
pub struct PresetRule {
    /// The full key path: `broker.visibility_timeout_ms`.
    pub key: &'static str,
    /// The values the system accepts.
    pub allowed: Allowed,
    /// What the system says or documents about the limit, with its source.
    pub says: &'static str,
}

/// The values a system accepts for a setting.
#[derive(Clone, Copy, Debug)]
pub enum Allowed {
    /// A whole number from the first to the second, both included.
    Range(i64, i64),
    /// One of these values, as TOML writes them: a system without the
    /// mechanism accepts only the value that turns it off.
    Only(&'static [&'static str]),
    /// At least the value of the key named plus this much: Kafka's
    /// `delivery.timeout.ms` >= `linger.ms` + `request.timeout.ms`.
    AtLeast(&'static str, i64),
    /// 0, idemsim's "no such policy", or a whole number from the first to
    /// the second: a limit a system takes only within a range, and only
    /// once a policy exists (Pub/Sub's `maxDeliveryAttempts`, 5 to 100).
    OffOr(i64, i64),
}

impl Allowed {
    /// Whether a whole number is admitted; `None` for a rule that needs
    /// another key's value to judge it (`AtLeast`).
    pub fn admits_number(self, v: i64) -> Option<bool> {
        match self {
            Allowed::Range(min, max) => Some((min..=max).contains(&v)),
            Allowed::OffOr(min, max) => Some(v == 0 || (min..=max).contains(&v)),
            Allowed::Only(_) | Allowed::AtLeast(..) => None,
        }
    }
}

impl PresetRule {
    /// The rule as `idemsim models --presets` prints it.
    pub fn shown(&self) -> String {
        match self.allowed {
            Allowed::Range(min, max) => format!("{} from {min} to {max}", self.key),
            Allowed::Only(values) => format!("{} = {}", self.key, values.join(" or ")),
            Allowed::AtLeast(other, plus) => format!("{} >= {other} + {plus}", self.key),
            Allowed::OffOr(min, max) => format!("{} = 0 or from {min} to {max}", self.key),
        }
    }
}

/// One setting of a preset.
#[derive(Clone, Copy, Debug)]
pub struct PresetSetting {
    /// The full key path it sets: `producer.delivery_timeout_ms`.
    pub key: &'static str,
    /// The value, as TOML: `120000`, `"kafka-default"`, `true`.
    pub value: &'static str,
    /// The system's own name for it, its default, and where that is documented.
    pub source: &'static str,
}

impl Preset {
    /// `broker.preset = "kafka-4.0"`, as a file or `--set` writes it.
    pub fn written(&self) -> String {
        format!("{}.preset = \"{}\"", self.table, self.name)
    }

    /// The setting it makes for `key`, if it makes one.
    pub fn setting(&self, key: &str) -> Option<&'static PresetSetting> {
        self.settings.iter().find(|s| s.key == key)
    }
}

#[cfg(test)]
mod tests {
    /// Every preset of every model sets keys its model reads, with values
    /// that parse, and no key twice: a typo in a preset would otherwise be
    /// blamed on the user's `preset =` line.
    #[test]
    fn every_preset_names_each_key_once_with_a_toml_value() {
        for m in crate::registry::MODELS {
            for p in m.presets() {
                let mut keys: Vec<&str> = p.settings.iter().map(|s| s.key).collect();
                keys.sort_unstable();
                let n = keys.len();
                keys.dedup();
                assert_eq!(keys.len(), n, "{} names a key twice", p.written());
                for s in p.settings {
                    let doc = format!("v = {}", s.value);
                    assert!(
                        doc.parse::<toml::Table>().is_ok(),
                        "{}: {} = {} is no TOML value",
                        p.written(),
                        s.key,
                        s.value
                    );
                    assert!(
                        !s.source.is_empty(),
                        "{}: {} has no source",
                        p.written(),
                        s.key
                    );
                }
                // A preset's own values are within its system's limits.
                for r in p.rules {
                    let Some(s) = p.setting(r.key) else { continue };
                    let ok = match r.allowed {
                        super::Allowed::Range(..) | super::Allowed::OffOr(..) => s
                            .value
                            .parse::<i64>()
                            .is_ok_and(|v| r.allowed.admits_number(v) == Some(true)),
                        super::Allowed::Only(values) => values.contains(&s.value),
                        super::Allowed::AtLeast(..) => true,
                    };
                    assert!(ok, "{}: its own {} breaks its rule", p.written(), r.key);
                }
            }
        }
    }
}
