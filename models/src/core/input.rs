//! The vocabulary model loaders validate their tables with: a path into the
//! TOML tree for every mistake (the loader turns it into file, line and
//! column), and checks that say what is wrong in the user's words and how to
//! fix it. Durations are checked after conversion, with checked arithmetic,
//! so no value wraps.

use sim::{PerMilleRange, TimeUs, US_PER_MS};

/// A path into the TOML tree, for finding where a validated value was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A table key written in the code.
    Key(&'static str),
    /// A key the user wrote (an actor's name).
    Name(String),
    /// An element of an array.
    Index(usize),
}

/// A value that parsed but makes no sense: where, what, and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// Where in the TOML tree.
    pub path: Vec<Seg>,
    /// What is wrong, in the user's words.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

/// An [`Invalid`] with a fix.
pub fn invalid(path: Vec<Seg>, message: impl Into<String>, help: impl Into<String>) -> Invalid {
    Invalid {
        path,
        message: message.into(),
        help: Some(help.into()),
    }
}

/// Why a model could not build from a scenario file.
#[derive(Debug)]
pub enum LoadError {
    /// The model's tables do not parse into its structure (a wrong type, an
    /// unknown key); the error carries its place in the text.
    Toml(toml::de::Error),
    /// A value that parsed but makes no sense.
    Invalid(Invalid),
}

impl From<Invalid> for LoadError {
    fn from(i: Invalid) -> Self {
        LoadError::Invalid(i)
    }
}

impl From<toml::de::Error> for LoadError {
    fn from(e: toml::de::Error) -> Self {
        LoadError::Toml(e)
    }
}

/// Builds a path from string keys: `path(&["client", "retry", "cap_ms"])`.
pub fn path(keys: &[&'static str]) -> Vec<Seg> {
    keys.iter().map(|k| Seg::Key(k)).collect()
}

/// The closest of `options` to `word`, if it is close enough to be a typo.
pub fn did_you_mean<'a>(word: &str, options: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let options: Vec<&'a str> = options.into_iter().collect();
    let close = options
        .iter()
        .map(|o| (strsim::damerau_levenshtein(word, o), *o))
        .filter(|(d, o)| *d <= 2.max(o.len() / 4) && *d < o.len())
        .min()
        .map(|(_, o)| o);
    // A name that grew a prefix or suffix (`dead-lettered` → `broker-dead-lettered`).
    close.or_else(|| {
        (word.len() >= 4)
            .then(|| options.iter().copied().find(|o| o.contains(word)))
            .flatten()
    })
}

/// `value` must be one of `options`; otherwise the error lists them and
/// suggests the closest.
pub fn one_of<T: Copy>(value: &str, options: &[(&str, T)], path: Vec<Seg>) -> Result<T, Invalid> {
    if let Some((_, v)) = options.iter().find(|(n, _)| *n == value) {
        return Ok(*v);
    }
    let names: Vec<String> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    let help = match did_you_mean(value, options.iter().map(|(n, _)| *n)) {
        Some(best) => format!(
            "did you mean \"{best}\"? The values are {}",
            names.join(", ")
        ),
        None => format!("write one of {}", names.join(", ")),
    };
    Err(invalid(path, format!("unknown value \"{value}\""), help))
}

/// A day in milliseconds: the upper bound of most durations a scenario sets.
pub const DAY_MS: u64 = 24 * 3600 * 1000;

/// Most days any duration in a scenario may span: beyond it a number is a
/// mistake (a unit mix-up), not a design.
pub const MAX_DURATION_DAYS: u64 = 3650;
/// [`MAX_DURATION_DAYS`] in milliseconds.
pub const MAX_DURATION_MS: u64 = MAX_DURATION_DAYS * DAY_MS;

/// When a `what` (an operation, an event, a request) starts: `start_ms` as
/// engine microseconds, no later than the run's time limit `max_time_us`.
pub fn start_us(
    start_ms: u64,
    max_time_us: TimeUs,
    path: Vec<Seg>,
    what: &str,
) -> Result<TimeUs, Invalid> {
    let start_us = duration_us(start_ms, MAX_DURATION_MS, path.clone())?;
    if start_us > max_time_us {
        return Err(invalid(
            path,
            format!("the {what} starts at {start_ms} ms, after run.max_time_ms"),
            "start it before the run's time limit, or raise run.max_time_ms",
        ));
    }
    Ok(start_us)
}

/// A duration in milliseconds as engine microseconds, at most `max_ms`.
pub fn duration_us(ms: u64, max_ms: u64, path: Vec<Seg>) -> Result<TimeUs, Invalid> {
    bounded_duration_us(ms, 0, max_ms, path)
}

/// A duration in `min_ms..=max_ms` as engine microseconds; the help names that range.
fn bounded_duration_us(
    ms: u64,
    min_ms: u64,
    max_ms: u64,
    path: Vec<Seg>,
) -> Result<TimeUs, Invalid> {
    debug_assert!(max_ms <= MAX_DURATION_MS);
    if ms > max_ms {
        return Err(invalid(
            path,
            format!("{ms} ms is longer than the {} this key allows", human_ms(max_ms)),
            format!(
                "durations are in milliseconds: 30 s is 30000, 30 days is 2592000000; the range is {min_ms} to {max_ms}"
            ),
        ));
    }
    Ok(ms
        .checked_mul(US_PER_MS)
        .expect("the maximum keeps microseconds below 2^64"))
}

/// Like [`duration_us`], and above zero.
pub fn positive_duration_us(
    ms: u64,
    max_ms: u64,
    path: Vec<Seg>,
    example: &str,
) -> Result<TimeUs, Invalid> {
    if ms == 0 {
        return Err(invalid(path, "must be above 0", example.to_string()));
    }
    bounded_duration_us(ms, 1, max_ms, path)
}

/// A count in `lo..=hi`.
pub fn count_in(value: u64, lo: u64, hi: u64, path: Vec<Seg>, what: &str) -> Result<u64, Invalid> {
    if value < lo || value > hi {
        return Err(invalid(
            path,
            format!("{value} {what}: the range is {lo} to {hi}"),
            format!("write a number from {lo} to {hi}"),
        ));
    }
    Ok(value)
}

/// `lo` must not be above `hi`; the error points at `path` (usually the maximum).
pub fn min_max(lo: u64, hi: u64, path: Vec<Seg>, what: &str) -> Result<(), Invalid> {
    if lo > hi {
        return Err(invalid(
            path,
            format!("{what}: the minimum {lo} is above the maximum {hi}"),
            "swap them, or raise the maximum",
        ));
    }
    Ok(())
}

/// A per-mille probability, fixed (`20`) or a swarm range (`[0, 100]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PerMille(pub u64, pub u64);

impl<'de> serde::Deserialize<'de> for PerMille {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, SeqAccess, Visitor};
        use std::fmt;
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PerMille;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a whole number per mille (0 to 1000) or a range [lo, hi] of them")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PerMille, E> {
                if v < 0 {
                    return Err(E::custom(format!(
                        "{v} is negative: a per-mille probability is 0 to 1000"
                    )));
                }
                Ok(PerMille(v as u64, v as u64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PerMille, E> {
                Ok(PerMille(v, v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PerMille, E> {
                // 50.0 meant 50 per mille, 0.05 a probability of 5 %.
                let fix = if v.fract() == 0.0 && (0.0..=1000.0).contains(&v) {
                    format!("write {} without the point", v as i64)
                } else if v > 0.0 && v < 1.0 {
                    format!(
                        "a probability of {v} is {} per mille",
                        (v * 1000.0).round() as i64
                    )
                } else if (0.0..=1000.0).contains(&v) {
                    format!("round it: {}", v.round() as i64)
                } else {
                    "a per-mille probability is 0 to 1000".to_string()
                };
                Err(E::custom(format!(
                    "{v} is not a whole number: probabilities are whole numbers per mille (0 to 1000); {fix}"
                )))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PerMille, A::Error> {
                let two = "a range has exactly two values [lo, hi]";
                let lo: u64 = seq.next_element()?.ok_or_else(|| de::Error::custom(two))?;
                let hi: u64 = seq.next_element()?.ok_or_else(|| de::Error::custom(two))?;
                if seq.next_element::<u64>()?.is_some() {
                    return Err(de::Error::custom(two));
                }
                Ok(PerMille(lo, hi))
            }
        }
        d.deserialize_any(V)
    }
}

/// A validated per-mille probability or swarm range.
pub fn per_mille(p: PerMille, path: Vec<Seg>) -> Result<PerMilleRange, Invalid> {
    if p.0 > 1000 || p.1 > 1000 {
        return Err(invalid(
            path,
            format!("probability {} is over 1000 per mille", p.0.max(p.1)),
            "per mille runs from 0 (never) to 1000 (always); 5% is 50",
        ));
    }
    if p.0 > p.1 {
        return Err(invalid(
            path,
            format!("range [{}, {}] has its minimum above its maximum", p.0, p.1),
            format!("write [{}, {}]", p.1, p.0),
        ));
    }
    Ok(PerMilleRange {
        lo: p.0 as u32,
        hi: p.1 as u32,
    })
}

/// A duration for people, in the unit that keeps the number short.
pub fn human_ms(ms: u64) -> String {
    if ms < 1000 || !ms.is_multiple_of(1000) {
        format!("{ms} ms")
    } else if ms < 120_000 || !ms.is_multiple_of(60_000) {
        format!("{} s", ms / 1000)
    } else if ms < 7_200_000 || !ms.is_multiple_of(3_600_000) {
        format!("{} min", ms / 60_000)
    } else if ms < 172_800_000 || !ms.is_multiple_of(86_400_000) {
        format!("{} h", ms / 3_600_000)
    } else {
        format!("{} days", ms / 86_400_000)
    }
}

/// serde's words made the user's: no Rust type names.
pub(crate) fn plain(message: &str) -> String {
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
    use super::*;

    #[test]
    fn durations_are_checked_after_conversion() {
        let p = || path(&["client", "timeout_ms"]);
        assert_eq!(duration_us(10_000, 86_400_000, p()), Ok(10_000_000));
        let e = duration_us(2_305_843_009_213_693_952, MAX_DURATION_MS, p()).unwrap_err();
        assert!(e.message.contains("longer than"), "{}", e.message);
        assert!(positive_duration_us(0, 10, p(), "x").is_err());
    }

    #[test]
    fn typos_get_a_suggestion_and_nonsense_does_not() {
        assert_eq!(
            did_you_mean("stabel", ["stable", "per-attempt", "none"]),
            Some("stable")
        );
        assert_eq!(did_you_mean("xyz", ["stable", "none"]), None);
        let e = one_of("exponentail", &[("fixed", 1), ("exponential", 2)], vec![]).unwrap_err();
        assert!(e.help.unwrap().contains("did you mean \"exponential\""));
    }

    #[test]
    fn human_durations_pick_a_short_unit() {
        assert_eq!(human_ms(1500), "1500 ms");
        assert_eq!(human_ms(30_000), "30 s");
        assert_eq!(human_ms(2_592_000_000), "30 days");
    }

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
