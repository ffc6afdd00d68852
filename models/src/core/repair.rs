//! Repairs: the settings a model knows make a design hold, each with its
//! safe value, as `idemsim advise` tries them (`src/advise/`). `verify`
//! removes a scenario's declared protections; advise adds them, so a model
//! names here the protections its loader understands, never a scenario.

/// One change `advise` may propose: one or several `--set` overrides applied
/// together (a key passed on and the bank that accepts it are one change).
/// Two repairs that write the same key are alternatives and never combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repair {
    /// The overrides, `(dotted key, TOML value)`, as `--set` writes them.
    pub sets: &'static [(&'static str, &'static str)],
    /// What it protects against, in a few words, for the text output.
    pub protects: &'static str,
}

impl Repair {
    /// As people read it and `--set` takes it: `client.key=stable + bank.accepts_key=true`.
    pub fn describe(&self) -> String {
        self.sets
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// Whether the two write a key in common: then they are alternatives.
    pub fn conflicts(&self, other: &Repair) -> bool {
        self.sets
            .iter()
            .any(|(k, _)| other.sets.iter().any(|(o, _)| o == k))
    }
}

#[cfg(test)]
mod tests {
    use super::Repair;

    #[test]
    fn repairs_on_one_key_are_alternatives() {
        let a = Repair {
            sets: &[("service.retention_ms", "86400000")],
            protects: "",
        };
        let b = Repair {
            sets: &[("service.retention_ms", "604800000")],
            protects: "",
        };
        let c = Repair {
            sets: &[("client.key", "stable"), ("bank.accepts_key", "true")],
            protects: "",
        };
        assert!(a.conflicts(&b));
        assert!(!a.conflicts(&c));
        assert_eq!(c.describe(), "client.key=stable + bank.accepts_key=true");
    }
}
