//! What an actor holds as a tree, read through `serde` from the model's own
//! types (every actor kind's state and storage is `Serialize`, or the
//! registry does not compile), so the state panel shows fields by name and
//! a change to a model's `Debug` text changes nothing here.
//!
//! [`tree`] runs a [`serde::Serializer`] that builds a [`Node`]: structs and
//! variants keep their field names, sequences become lists, maps keep
//! their keys, `Some(x)` is `x`, `None` is a scalar `None`, `()` an empty
//! tuple (nothing held). A value whose `Serialize` fails is an error: the
//! report test runs every actor kind, so a state the panel cannot show
//! fails there rather than showing half a table.

use serde::ser::{self, Serialize};
use std::fmt;

/// One value of an actor's state.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A number, a string, a bool, a unit variant's name, `None`.
    Scalar(String),
    /// A struct or a struct variant: its name and fields in order.
    Struct(String, Vec<(String, Node)>),
    /// A tuple struct or variant (`Name(a, b)`), or a tuple (empty name).
    Tuple(String, Vec<Node>),
    /// A sequence.
    List(Vec<Node>),
    /// A map; a value is always present.
    Map(Vec<(Node, Option<Node>)>),
}

/// Why a value could not be read.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// The tree of `value`.
pub fn tree<T: Serialize + ?Sized>(value: &T) -> Result<Node, Error> {
    value.serialize(Tree)
}

/// The serializer: each call returns the node of the value it was given.
struct Tree;

fn scalar(s: impl ToString) -> Result<Node, Error> {
    Ok(Node::Scalar(s.to_string()))
}

/// A list, a tuple, or the fields of a tuple struct or variant.
pub struct Items {
    name: Option<String>,
    items: Vec<Node>,
}

/// A struct or a struct variant.
pub struct Fields {
    name: String,
    fields: Vec<(String, Node)>,
}

/// A map.
pub struct Entries {
    entries: Vec<(Node, Option<Node>)>,
    key: Option<Node>,
}

impl ser::Serializer for Tree {
    type Ok = Node;
    type Error = Error;
    type SerializeSeq = Items;
    type SerializeTuple = Items;
    type SerializeTupleStruct = Items;
    type SerializeTupleVariant = Items;
    type SerializeMap = Entries;
    type SerializeStruct = Fields;
    type SerializeStructVariant = Fields;

    fn serialize_bool(self, v: bool) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_i8(self, v: i8) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_i16(self, v: i16) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_i32(self, v: i32) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_i64(self, v: i64) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_u8(self, v: u8) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_u16(self, v: u16) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_u32(self, v: u32) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_u64(self, v: u64) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_f32(self, v: f32) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_f64(self, v: f64) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_char(self, v: char) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_str(self, v: &str) -> Result<Node, Error> {
        scalar(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Node, Error> {
        Ok(Node::List(
            v.iter().map(|b| Node::Scalar(b.to_string())).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Node, Error> {
        scalar("None")
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Node, Error> {
        value.serialize(Tree)
    }
    fn serialize_unit(self) -> Result<Node, Error> {
        Ok(Node::Tuple(String::new(), Vec::new()))
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<Node, Error> {
        scalar(name)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Node, Error> {
        scalar(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Node, Error> {
        Ok(Node::Tuple(name.into(), vec![value.serialize(Tree)?]))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Node, Error> {
        Ok(Node::Tuple(variant.into(), vec![value.serialize(Tree)?]))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Items, Error> {
        Ok(Items {
            name: None,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Items, Error> {
        Ok(Items {
            name: Some(String::new()),
            items: Vec::with_capacity(len),
        })
    }
    fn serialize_tuple_struct(self, name: &'static str, len: usize) -> Result<Items, Error> {
        Ok(Items {
            name: Some(name.into()),
            items: Vec::with_capacity(len),
        })
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Items, Error> {
        Ok(Items {
            name: Some(variant.into()),
            items: Vec::with_capacity(len),
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Entries, Error> {
        Ok(Entries {
            entries: Vec::new(),
            key: None,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Fields, Error> {
        Ok(Fields {
            name: name.into(),
            fields: Vec::with_capacity(len),
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Fields, Error> {
        Ok(Fields {
            name: variant.into(),
            fields: Vec::with_capacity(len),
        })
    }
}

impl Items {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(value.serialize(Tree)?);
        Ok(())
    }

    fn done(self) -> Result<Node, Error> {
        Ok(match self.name {
            None => Node::List(self.items),
            Some(name) => Node::Tuple(name, self.items),
        })
    }
}

impl ser::SerializeSeq for Items {
    type Ok = Node;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Node, Error> {
        self.done()
    }
}

impl ser::SerializeTuple for Items {
    type Ok = Node;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Node, Error> {
        self.done()
    }
}

impl ser::SerializeTupleStruct for Items {
    type Ok = Node;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Node, Error> {
        self.done()
    }
}

impl ser::SerializeTupleVariant for Items {
    type Ok = Node;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Node, Error> {
        self.done()
    }
}

impl ser::SerializeMap for Entries {
    type Ok = Node;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(Tree)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Error("a map's value came before its key".into()))?;
        self.entries.push((key, Some(value.serialize(Tree)?)));
        Ok(())
    }
    fn end(self) -> Result<Node, Error> {
        Ok(Node::Map(self.entries))
    }
}

impl Fields {
    fn push<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.fields.push((key.into(), value.serialize(Tree)?));
        Ok(())
    }
}

impl ser::SerializeStruct for Fields {
    type Ok = Node;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.push(key, value)
    }
    fn end(self) -> Result<Node, Error> {
        Ok(Node::Struct(self.name, self.fields))
    }
}

impl ser::SerializeStructVariant for Fields {
    type Ok = Node;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.push(key, value)
    }
    fn end(self) -> Result<Node, Error> {
        Ok(Node::Struct(self.name, self.fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Node {
        Node::Scalar(x.into())
    }

    #[test]
    fn a_value_reads_as_the_tree_of_its_fields() {
        #[derive(serde::Serialize)]
        struct Row {
            name: &'static str,
            at_us: u64,
            seen: Option<u8>,
            pair: (i32, char),
        }
        #[derive(serde::Serialize)]
        enum Phase {
            Open,
            Held(u32),
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
        let want = Node::Map(vec![(
            s("1"),
            Some(Node::Struct(
                "Row".into(),
                vec![
                    ("name".into(), s("a, {b}: \"c\"")),
                    ("at_us".into(), s("7")),
                    ("seen".into(), s("None")),
                    (
                        "pair".into(),
                        Node::Tuple(String::new(), vec![s("-1"), s(":")]),
                    ),
                ],
            )),
        )]);
        assert_eq!(tree(&rows).unwrap(), want);
        assert_eq!(
            tree(&vec![Some(Phase::Held(3)), Some(Phase::Open), None]).unwrap(),
            Node::List(vec![
                Node::Tuple("Held".into(), vec![s("3")]),
                s("Open"),
                s("None")
            ])
        );
        assert_eq!(tree(&()).unwrap(), Node::Tuple(String::new(), vec![]));
    }

    #[test]
    fn a_value_that_refuses_to_serialize_is_an_error() {
        struct Refuses;
        impl Serialize for Refuses {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(ser::Error::custom("no"))
            }
        }
        assert_eq!(tree(&vec![Refuses]).unwrap_err().to_string(), "no");
    }
}
