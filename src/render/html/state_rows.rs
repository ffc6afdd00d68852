//! An actor's state as the rows of the state panel's tables, with units.
//!
//! The panel diffs text lines step by step (see [`super::state`]), so the
//! rows are lines too, one per table row, each a kind, a depth and cells
//! separated by tabs (a tab inside a value is written as a space):
//!
//! - `f{depth}\tname\tvalue`: a field and its value;
//! - `g{depth}\tname`: a field holding a group of fields, listed after it
//!   one level deeper;
//! - `h{depth}\tname\tcolumn...`: a field holding records (a list or a map
//!   of structs), the head of their table; its rows follow as
//!   `r{depth}\tcell...`;
//! - `p0\ttext`: a line that is no field: why a state cannot be shown.
//!
//! The rows come from the model's own types through `serde`
//! ([`super::state_tree`]), never from `Debug` text. Numbers take their
//! unit from the field's name: `retention_us: 2592000000000` is
//! `retention  30 d`, `amount_eur: 1200` is `1200 EUR`, `kv_bytes: 12` is
//! `12 B`. An operation reads as the ledger names it (`claim 4711`): its
//! type serializes so.

use super::super::units::{duration_ms, duration_us};
use super::state_tree::{tree, Error, Node};

/// The panel's rows for one actor's state or storage.
pub fn rows<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    match tree(value)? {
        Node::Tuple(name, items) if name.is_empty() && items.is_empty() => {}
        Node::Struct(_, fields) => {
            for (k, v) in fields {
                field(&k, v, 0, &mut out);
            }
        }
        other => field("", other, 0, &mut out),
    }
    Ok(out)
}

/// A value's text in a cell: one line, no tab (the rows' separator).
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// How a number in a unit is written.
type Show = fn(u64) -> String;

/// A field's name without its unit, and its value in that unit.
fn with_unit(name: &str, v: Node) -> (String, Node) {
    if let Node::Scalar(s) = &v {
        if let Ok(n) = s.parse::<u64>() {
            let suffixes: [(&str, Show); 5] = [
                ("_us", duration_us),
                ("_ms", duration_ms),
                ("_s", |n| duration_ms(n.saturating_mul(1000))),
                ("_bytes", |n| format!("{n} B")),
                ("_eur", |n| format!("{n} EUR")),
            ];
            for (suffix, show) in suffixes {
                // A rate (`capacity_per_s`) is no duration.
                if suffix == "_s" && name.ends_with("_per_s") {
                    continue;
                }
                if let Some(base) = name.strip_suffix(suffix) {
                    return (base.to_string(), Node::Scalar(show(n)));
                }
            }
        }
    }
    (name.to_string(), v)
}

/// A value on one line: a cell of a table, a map's key.
fn inline(n: &Node) -> String {
    match n {
        Node::Scalar(s) if s == "None" => "—".into(),
        Node::Scalar(s) => clean(s),
        Node::Struct(_, fields) => fields
            .iter()
            .map(|(k, v)| {
                let (k, v) = with_unit(k, v.clone());
                format!("{k}: {}", inline(&v))
            })
            .collect::<Vec<_>>()
            .join(", "),
        Node::Tuple(name, items) => {
            let inner = items.iter().map(inline).collect::<Vec<_>>().join(", ");
            format!("{name}({inner})")
        }
        Node::List(items) => format!(
            "[{}]",
            items.iter().map(inline).collect::<Vec<_>>().join(", ")
        ),
        Node::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| match v {
                    Some(v) => format!("{}: {}", inline(k), inline(v)),
                    None => inline(k),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn is_record(n: &Node) -> bool {
    matches!(n, Node::Struct(..)) || matches!(n, Node::Tuple(name, _) if name.is_empty())
}

/// The rows of one field.
fn field(name: &str, v: Node, depth: usize, out: &mut Vec<String>) {
    let (name, v) = with_unit(name, v);
    match v {
        Node::Struct(_, fields) => {
            out.push(format!("g{depth}\t{name}"));
            for (k, v) in fields {
                field(&k, v, depth + 1, out);
            }
        }
        Node::List(items) if items.iter().any(is_record) => {
            let records: Vec<(Option<String>, Node)> =
                items.into_iter().map(|v| (None, v)).collect();
            table(&name, records, depth, out);
        }
        Node::Map(entries)
            if entries
                .iter()
                .any(|(_, v)| v.as_ref().is_some_and(is_record)) =>
        {
            let records = entries
                .into_iter()
                .map(|(k, v)| {
                    (
                        Some(inline(&k)),
                        v.unwrap_or(Node::Tuple(String::new(), vec![])),
                    )
                })
                .collect();
            table(&name, records, depth, out);
        }
        Node::List(items) if items.is_empty() => out.push(format!("f{depth}\t{name}\tnone")),
        Node::Map(entries) if entries.is_empty() => out.push(format!("f{depth}\t{name}\tnone")),
        Node::List(items) => {
            let text = items.iter().map(inline).collect::<Vec<_>>().join(", ");
            out.push(format!("f{depth}\t{name}\t{text}"));
        }
        other => {
            let text = match &other {
                Node::Map(_) => inline(&other).trim_matches(['{', '}']).to_string(),
                _ => inline(&other),
            };
            out.push(format!("f{depth}\t{name}\t{text}"));
        }
    }
}

/// A record's cells by column: a struct's fields (a nested struct's fields
/// beside them), a tuple's items numbered from 1.
fn cells(n: Node, parent: &str, out: &mut Vec<(String, String)>) {
    match n {
        Node::Struct(_, fields) => {
            for (k, v) in fields {
                let (k, v) = with_unit(&k, v);
                let k = if out.iter().any(|(c, _)| *c == k) || k == "value" && !parent.is_empty() {
                    format!("{parent}.{k}")
                } else {
                    k
                };
                match v {
                    Node::Struct(_, ref f) if !f.is_empty() => cells(v, &k, out),
                    v => out.push((k, inline(&v))),
                }
            }
        }
        Node::Tuple(name, items) if name.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                out.push(((i + 1).to_string(), inline(v)));
            }
        }
        other => out.push(("value".into(), inline(&other))),
    }
}

/// A table of records: its head, then one row per record; a map's key is
/// the first column.
fn table(name: &str, records: Vec<(Option<String>, Node)>, depth: usize, out: &mut Vec<String>) {
    let keyed = records.iter().any(|(k, _)| k.is_some());
    let mut columns: Vec<String> = Vec::new();
    let mut rows = Vec::with_capacity(records.len());
    for (key, v) in records {
        let mut c = Vec::new();
        cells(v, "", &mut c);
        for (col, _) in &c {
            if !columns.contains(col) {
                columns.push(col.clone());
            }
        }
        rows.push((key, c));
    }
    let mut head = format!("h{depth}\t{name}");
    if keyed {
        head.push_str("\tkey");
    }
    for c in &columns {
        head.push('\t');
        head.push_str(c);
    }
    out.push(head);
    for (key, c) in rows {
        let mut row = format!("r{depth}");
        if keyed {
            row.push('\t');
            row.push_str(key.as_deref().unwrap_or(""));
        }
        for col in &columns {
            row.push('\t');
            row.push_str(
                c.iter()
                    .find(|(k, _)| k == col)
                    .map_or("", |(_, v)| v.as_str()),
            );
        }
        out.push(row);
    }
}

#[cfg(test)]
mod tests {
    use super::rows;
    use serde::Serialize;

    /// As the models' `Op` serializes: the ledger's name.
    struct Op(u32);
    impl Serialize for Op {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(&format_args!("claim {}", self.0))
        }
    }
    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    struct Key {
        op: u32,
        n: u32,
    }
    #[derive(Serialize)]
    struct Entry {
        created_us: u64,
        value: Row,
    }
    #[derive(Serialize)]
    struct Row {
        amount_eur: u64,
        state: State,
    }
    #[derive(Serialize)]
    enum State {
        Paid,
    }
    #[derive(Serialize)]
    struct Store {
        retention_us: u64,
        entries: std::collections::BTreeMap<String, Entry>,
    }
    #[derive(Serialize)]
    struct Storage {
        keys: Store,
        awaiting: Vec<Option<u32>>,
        timeout_ms: u64,
        window_s: u64,
        capacity_per_s: u32,
        kv_bytes: u64,
        log: Vec<u8>,
        note: &'static str,
    }

    #[test]
    fn state_reads_as_tables_with_units() {
        let s = Storage {
            keys: Store {
                retention_us: 2_592_000_000_000,
                entries: [(
                    "claim 4711 #1".to_string(),
                    Entry {
                        created_us: 2_500_000,
                        value: Row {
                            amount_eur: 1200,
                            state: State::Paid,
                        },
                    },
                )]
                .into(),
            },
            awaiting: vec![Some(1), None],
            timeout_ms: 10_000,
            window_s: 90,
            capacity_per_s: 5,
            kv_bytes: 12,
            log: vec![],
            note: "a\tb",
        };
        assert_eq!(
            rows(&s).unwrap(),
            [
                "g0\tkeys",
                "f1\tretention\t30 d",
                "h1\tentries\tkey\tcreated\tamount\tstate",
                "r1\tclaim 4711 #1\t2.5 s\t1200 EUR\tPaid",
                "f0\tawaiting\t1, —",
                "f0\ttimeout\t10 s",
                "f0\twindow\t1.5 min",
                "f0\tcapacity_per_s\t5",
                "f0\tkv\t12 B",
                "f0\tlog\tnone",
                "f0\tnote\ta b",
            ]
        );
    }

    #[test]
    fn a_list_of_structs_is_a_table_with_a_column_per_field() {
        #[derive(Serialize)]
        struct Booking {
            op: Op,
            key: Key,
            amount_eur: u64,
        }
        #[derive(Serialize)]
        struct S {
            bookings: Vec<Booking>,
        }
        let s = S {
            bookings: vec![Booking {
                op: Op(4711),
                key: Key { op: 4711, n: 1 },
                amount_eur: 1200,
            }],
        };
        assert_eq!(
            rows(&s).unwrap(),
            [
                "h0\tbookings\top\tkey.op\tn\tamount",
                "r0\tclaim 4711\t4711\t1\t1200 EUR",
            ]
        );
        assert!(rows(&()).unwrap().is_empty(), "nothing held, no rows");
        assert_eq!(rows(&7u32).unwrap(), ["f0\t\t7"]);
    }
}
