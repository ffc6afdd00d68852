//! State panels (reports) show a field only where it is in use: a field
//! added for one design must not change how every other design's state
//! reads, and with it every committed report and snapshot.
//!
//! The panel reads a model's state through `Serialize` alone, so that is
//! the one place deciding which fields it shows: `skip_serializing_if`
//! with the predicates below, or a hand-written `Serialize` where the
//! choice spans fields. `Debug` is derived and shows everything: it is for
//! developers (and the determinism test's comparison of whole states).

use std::fmt;

/// For `#[serde(skip_serializing_if = "...")]`: a flag not set.
pub fn is_false(b: &bool) -> bool {
    !*b
}

/// For `#[serde(skip_serializing_if = "...")]`: a number or id still at
/// its start (0: none, not used).
pub fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// For `#[serde(skip_serializing_if = "...")]`: a count of sends that
/// never went past the first.
pub fn at_most_one(n: &u8) -> bool {
    *n <= 1
}

/// For `#[serde(serialize_with = "...")]`: a value (a message held in
/// state) shown as traces write it.
pub fn as_text<T: fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

#[cfg(test)]
mod tests {
    /// The predicates keep a field out of the panel exactly while it is at
    /// its start.
    #[test]
    fn a_field_shows_only_where_it_is_in_use() {
        #[derive(serde::Serialize)]
        struct S {
            a: u32,
            #[serde(skip_serializing_if = "super::is_zero")]
            b: u32,
            #[serde(skip_serializing_if = "super::is_false")]
            c: bool,
            #[serde(skip_serializing_if = "super::at_most_one")]
            d: u8,
        }
        let shown = |s: S| serde_json::to_string(&s).expect("json");
        let s = |b, c, d| S { a: 1, b, c, d };
        assert_eq!(shown(s(0, false, 1)), r#"{"a":1}"#);
        assert_eq!(shown(s(7, true, 2)), r#"{"a":1,"b":7,"c":true,"d":2}"#);
    }
}
