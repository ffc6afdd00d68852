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

/// A range the system accepts for one setting, in the system's own words.
#[derive(Clone, Copy, Debug)]
pub struct PresetRule {
    /// The full key path: `broker.visibility_timeout_ms`.
    pub key: &'static str,
    /// The smallest value the system accepts.
    pub min: i64,
    /// The largest value the system accepts.
    pub max: i64,
    /// What the system says or documents about the limit, with its source.
    pub says: &'static str,
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
                    assert!(
                        r.min <= r.max,
                        "{}: {} has an empty range",
                        p.written(),
                        r.key
                    );
                    if let Some(s) = p.setting(r.key) {
                        let v: i64 = s.value.parse().expect("a ruled setting is a number");
                        assert!(
                            (r.min..=r.max).contains(&v),
                            "{}: its own {} breaks its rule",
                            p.written(),
                            r.key
                        );
                    }
                }
            }
        }
    }
}
