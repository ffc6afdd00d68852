//! An actor's state as the rows of the state panel's tables, with units.
//!
//! The panel diffs text lines step by step (see [`super::state`]), so the
//! rows are lines too, one per table row, each a kind, a depth and cells
//! separated by tabs (`Debug` escapes a tab inside a string):
//!
//! - `f{depth}\tname\tvalue`: a field and its value;
//! - `g{depth}\tname`: a field holding a group of fields, listed after it
//!   one level deeper;
//! - `h{depth}\tname\tcolumn...`: a field holding records (a list or a map
//!   of structs), the head of their table; its rows follow as
//!   `r{depth}\tcell...`;
//! - `p0\ttext`: a line of a value that is not derived `Debug`, as printed.
//!
//! Numbers take their unit from the field's name: `retention_us:
//! 2592000000000` is `retention  30 d`, `amount_eur: 1200` is `1200 EUR`.
//! An operation reads as the ledger names it (`claim 4711`), not as the
//! `Op { space: Space { code: 1, noun: "claim", … }, id: 4711 }` it is.

use super::super::units::{duration_ms, duration_us};
use super::debug_tree::{parse, Node};

/// The panel's rows for one actor's state or storage.
pub fn rows(value: &dyn std::fmt::Debug) -> Vec<String> {
    let text = format!("{value:#?}");
    let Some(tree) = parse(&text) else {
        return text.lines().map(|l| format!("p0\t{l}")).collect();
    };
    // The actor enum's variant (`Service(ServiceState { .. })`): the panel
    // already names the actor.
    let tree = match tree {
        Node::Tuple(name, mut items) if !name.is_empty() && items.len() == 1 => {
            items.pop().expect("one item")
        }
        t => t,
    };
    let mut out = Vec::new();
    match simplify(tree) {
        Node::Tuple(name, items) if name.is_empty() && items.is_empty() => {}
        Node::Struct(_, fields) => {
            for (k, v) in fields {
                field(&k, v, 0, &mut out);
            }
        }
        other => field("", other, 0, &mut out),
    }
    out
}

/// `Some(x)` is `x`; a space is its noun; an operation is `noun id`.
fn simplify(n: Node) -> Node {
    match n {
        Node::Tuple(name, mut items) if name == "Some" && items.len() == 1 => {
            simplify(items.pop().expect("one item"))
        }
        Node::Tuple(name, items) => Node::Tuple(name, items.into_iter().map(simplify).collect()),
        Node::List(items) => Node::List(items.into_iter().map(simplify).collect()),
        Node::Map(entries) => Node::Map(
            entries
                .into_iter()
                .map(|(k, v)| (simplify(k), v.map(simplify)))
                .collect(),
        ),
        Node::Struct(name, fields) => {
            let fields: Vec<(String, Node)> =
                fields.into_iter().map(|(k, v)| (k, simplify(v))).collect();
            let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
            match (name.as_str(), get("noun"), get("space"), get("id")) {
                ("Space", Some(Node::Scalar(noun)), _, _) => Node::Scalar(unquote(noun).into()),
                ("Op", _, Some(Node::Scalar(space)), Some(Node::Scalar(id)))
                    if fields.len() == 2 =>
                {
                    Node::Scalar(format!("{space} {id}"))
                }
                _ => Node::Struct(name, fields),
            }
        }
        s @ Node::Scalar(_) => s,
    }
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s)
}

/// How a number in a unit is written.
type Show = fn(u64) -> String;

/// A field's name without its unit, and its value in that unit.
fn with_unit(name: &str, v: Node) -> (String, Node) {
    if let Node::Scalar(s) = &v {
        if let Ok(n) = s.parse::<u64>() {
            let suffixes: [(&str, Show); 3] = [
                ("_us", duration_us),
                ("_ms", duration_ms),
                ("_eur", |n| format!("{n} EUR")),
            ];
            for (suffix, show) in suffixes {
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
        Node::Scalar(s) => unquote(s).to_string(),
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

    #[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
    #[allow(dead_code)]
    struct Space {
        code: u8,
        noun: &'static str,
        unit: Option<&'static str>,
    }
    #[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
    #[allow(dead_code)]
    struct Op {
        space: Space,
        id: u64,
    }
    #[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
    #[allow(dead_code)]
    struct Key {
        op: Op,
        n: u32,
    }
    #[derive(Debug)]
    #[allow(dead_code)]
    struct Entry {
        created_us: u64,
        value: Row,
    }
    #[derive(Debug)]
    #[allow(dead_code)]
    struct Row {
        amount_eur: u64,
        state: State,
    }
    #[derive(Debug)]
    #[allow(dead_code)]
    enum State {
        Paid,
    }
    #[derive(Debug)]
    #[allow(dead_code)]
    struct Store {
        retention_us: u64,
        entries: std::collections::BTreeMap<Key, Entry>,
    }
    #[derive(Debug)]
    #[allow(dead_code)]
    struct Storage {
        keys: Store,
        awaiting: Vec<Option<u32>>,
        timeout_ms: u64,
        log: Vec<u8>,
    }
    #[derive(Debug)]
    #[allow(dead_code)]
    enum Node {
        Service(Storage),
    }

    fn claim() -> Op {
        Op {
            space: Space {
                code: 1,
                noun: "claim",
                unit: Some("EUR"),
            },
            id: 4711,
        }
    }

    #[test]
    fn state_reads_as_tables_with_units_and_no_debug_noise() {
        let s = Node::Service(Storage {
            keys: Store {
                retention_us: 2_592_000_000_000,
                entries: [(
                    Key { op: claim(), n: 1 },
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
            log: vec![],
        });
        assert_eq!(
            rows(&s),
            [
                "g0\tkeys",
                "f1\tretention\t30 d",
                "h1\tentries\tkey\tcreated\tamount\tstate",
                "r1\top: claim 4711, n: 1\t2.5 s\t1200 EUR\tPaid",
                "f0\tawaiting\t1, —",
                "f0\ttimeout\t10 s",
                "f0\tlog\tnone",
            ]
        );
    }

    #[test]
    fn a_list_of_structs_is_a_table_with_a_column_per_field() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Booking {
            op: Op,
            key: Key,
            amount_eur: u64,
        }
        #[derive(Debug)]
        #[allow(dead_code)]
        struct S {
            bookings: Vec<Booking>,
        }
        let s = S {
            bookings: vec![Booking {
                op: claim(),
                key: Key { op: claim(), n: 1 },
                amount_eur: 1200,
            }],
        };
        assert_eq!(
            rows(&s),
            [
                "h0\tbookings\top\tkey.op\tn\tamount",
                "r0\tclaim 4711\tclaim 4711\t1\t1200 EUR",
            ]
        );
        assert!(rows(&()).is_empty(), "nothing held, no rows");
        assert_eq!(rows(&7u32), ["f0\t\t7"]);
    }
}
