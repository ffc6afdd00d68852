//! State panels (reports, `replay --states`) show a field only where it is
//! in use: a field added for one design must not change how every other
//! design's state reads, and with it every committed report and snapshot.

use std::fmt;

/// `DebugStruct::field` for a field shown only when `shown`.
pub trait FieldIf {
    /// Adds the field `name` with `value` if `shown`, and nothing otherwise.
    fn field_if(&mut self, shown: bool, name: &str, value: &dyn fmt::Debug) -> &mut Self;
}

impl FieldIf for fmt::DebugStruct<'_, '_> {
    fn field_if(&mut self, shown: bool, name: &str, value: &dyn fmt::Debug) -> &mut Self {
        if shown {
            self.field(name, value);
        }
        self
    }
}

/// For `#[serde(serialize_with = "...")]`: a value (a message held in
/// state) shown as traces write it.
pub fn as_text<T: fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

#[cfg(test)]
mod tests {
    use super::FieldIf;
    use std::fmt;

    struct S(u32);

    impl fmt::Debug for S {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("S")
                .field("a", &1)
                .field_if(self.0 != 0, "b", &self.0)
                .finish()
        }
    }

    #[test]
    fn a_field_shows_only_where_it_is_in_use() {
        assert_eq!(format!("{:?}", S(0)), "S { a: 1 }");
        assert_eq!(format!("{:?}", S(7)), "S { a: 1, b: 7 }");
        assert_eq!(format!("{:#?}", S(7)), "S {\n    a: 1,\n    b: 7,\n}");
    }
}
