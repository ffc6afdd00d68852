//! Rust's `{:#?}` text read back into a tree, so the state panel can show an
//! actor's state as tables with units instead of `Debug` output.
//!
//! Actors' states are plain `#[derive(Debug)]` values: structs, tuples,
//! lists, maps, options and scalars. Reading the text back needs no change
//! to any model, and what cannot be read (a hand-written `Debug`) stays one
//! scalar, shown as it was printed.

/// One value of a `Debug` text.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A number, a string (quotes kept), a unit variant, `()`.
    Scalar(String),
    /// `Name { field: value, ... }`; a unit struct is a scalar.
    Struct(String, Vec<(String, Node)>),
    /// `Name(a, b)` (a tuple struct, a variant) or `(a, b)` (empty name).
    Tuple(String, Vec<Node>),
    /// `[a, b]`.
    List(Vec<Node>),
    /// `{k: v}`; a set is a map whose values are `None`.
    Map(Vec<(Node, Option<Node>)>),
}

/// Splits a `Debug` text into tokens: a punctuation character, a string or
/// char literal, or a run of other characters.
fn tokens(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b"{}[](),:".contains(&c) {
            out.push(&text[i..=i]);
            i += 1;
        } else if c == b'"' || c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push(&text[start..i]);
        } else {
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !b"{}[](),:\"".contains(&b[i]) {
                i += 1;
            }
            out.push(&text[start..i]);
        }
    }
    out
}

struct Parser<'a> {
    t: Vec<&'a str>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.t.get(self.at).copied()
    }

    fn next(&mut self) -> Option<&'a str> {
        let t = self.peek();
        self.at += 1;
        t
    }

    fn eat(&mut self, s: &str) -> bool {
        let hit = self.peek() == Some(s);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn value(&mut self) -> Option<Node> {
        match self.next()? {
            "[" => self.items("]").map(Node::List),
            "(" => self.items(")").map(|v| Node::Tuple(String::new(), v)),
            "{" => self.map(),
            name => {
                if self.eat("{") {
                    self.fields().map(|f| Node::Struct(name.to_string(), f))
                } else if self.eat("(") {
                    self.items(")").map(|v| Node::Tuple(name.to_string(), v))
                } else {
                    Some(Node::Scalar(name.to_string()))
                }
            }
        }
    }

    /// Values up to `close`, each followed by a comma (the last may not be).
    fn items(&mut self, close: &str) -> Option<Vec<Node>> {
        let mut out = Vec::new();
        while !self.eat(close) {
            out.push(self.value()?);
            self.eat(",");
        }
        Some(out)
    }

    fn fields(&mut self) -> Option<Vec<(String, Node)>> {
        let mut out = Vec::new();
        while !self.eat("}") {
            // `..` ends a `finish_non_exhaustive` struct.
            if self.eat("..") {
                continue;
            }
            let name = self.next()?.to_string();
            if !self.eat(":") {
                return None;
            }
            out.push((name, self.value()?));
            self.eat(",");
        }
        Some(out)
    }

    fn map(&mut self) -> Option<Node> {
        let mut out = Vec::new();
        while !self.eat("}") {
            let k = self.value()?;
            let v = if self.eat(":") {
                Some(self.value()?)
            } else {
                None
            };
            out.push((k, v));
            self.eat(",");
        }
        Some(Node::Map(out))
    }
}

/// The tree of a `{:#?}` (or `{:?}`) text; `None` if the text is not the
/// output of derived `Debug` impls.
pub fn parse(text: &str) -> Option<Node> {
    let mut p = Parser {
        t: tokens(text),
        at: 0,
    };
    let v = p.value()?;
    (p.at == p.t.len()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Node {
        Node::Scalar(x.into())
    }

    #[test]
    fn derived_debug_reads_back_as_a_tree() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Row {
            name: &'static str,
            at_us: u64,
            seen: Option<u8>,
            pair: (i32, char),
        }
        let rows = std::collections::BTreeMap::from([(
            1,
            Row {
                name: "a, {b}: \"c\"",
                at_us: 7,
                seen: None,
                pair: (-1, ':'),
            },
        )]);
        let text = format!("{rows:#?}");
        let want = Node::Map(vec![(
            s("1"),
            Some(Node::Struct(
                "Row".into(),
                vec![
                    ("name".into(), s("\"a, {b}: \\\"c\\\"\"")),
                    ("at_us".into(), s("7")),
                    ("seen".into(), s("None")),
                    (
                        "pair".into(),
                        Node::Tuple(String::new(), vec![s("-1"), s("':'")]),
                    ),
                ],
            )),
        )]);
        assert_eq!(parse(&text), Some(want.clone()));
        assert_eq!(parse(&format!("{rows:?}")), Some(want), "one line too");
        assert_eq!(
            parse("[Some(1), None]"),
            Some(Node::List(vec![
                Node::Tuple("Some".into(), vec![s("1")]),
                s("None")
            ]))
        );
        assert_eq!(parse("{}"), Some(Node::Map(vec![])));
    }

    #[test]
    fn what_is_not_derived_debug_is_refused() {
        assert_eq!(parse("Foo { a 1 }"), None);
        assert_eq!(parse("[1, 2"), None);
        assert_eq!(parse("1 2"), None);
    }
}
