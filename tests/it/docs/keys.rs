//! Every key a model accepts is documented (issue 43's done-when: "docs/
//! scenario-format.md, or the per-model catalog page it links, documents
//! every key of every model").
//!
//! The list of keys is not written down here, where it would go stale: it
//! is asked of the loaders themselves. For every table that appears in a
//! catalog scenario or an example, the test adds an unknown key to it and
//! reads the keys the loader's error says are accepted there ("the keys
//! here are ..."). A key a model gains therefore fails this test until a
//! page documents it.

use crate::support::{root, scenario_files};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, Item, Table};

const PROBE: &str = "zz_undocumented_probe";

/// The path of every table in `table`, arrays of tables by their first element.
fn table_paths(table: &Table, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(path.clone());
    for (key, item) in table.iter() {
        path.push(key.to_string());
        match item {
            Item::Table(t) => table_paths(t, path, out),
            Item::ArrayOfTables(a) => {
                if let Some(first) = a.iter().next() {
                    table_paths(first, path, out);
                }
            }
            _ => {}
        }
        path.pop();
    }
}

fn table_at<'a>(doc: &'a mut DocumentMut, path: &[String]) -> &'a mut Table {
    let mut t = doc.as_table_mut();
    for key in path {
        t = match t.get_mut(key).expect("path comes from the document") {
            Item::Table(x) => x,
            Item::ArrayOfTables(a) => a.iter_mut().next().expect("non-empty"),
            other => panic!("{key} is not a table: {other:?}"),
        };
    }
    t
}

/// The keys the loader accepts in the table at `path`, if its error lists them.
fn accepted_keys(file: &Path, text: &str, path: &[String]) -> Option<Vec<String>> {
    let mut doc: DocumentMut = text.parse().expect("catalog files parse");
    table_at(&mut doc, path).insert(PROBE, toml_edit::value(1));
    let err = models::Scenario::load(&file.display().to_string(), &doc.to_string())
        .err()
        .unwrap_or_else(|| {
            panic!(
                "{}: an unknown key in [{}] was accepted",
                file.display(),
                path.join(".")
            )
        })
        .to_string();
    assert!(err.contains(PROBE) || !err.contains("unknown"), "{err}");
    let list = err.split("the keys here are ").nth(1)?.lines().next()?;
    Some(
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}

fn files() -> Vec<PathBuf> {
    let mut all = scenario_files();
    let mut stack = vec![root().join("examples")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "toml") {
                all.push(p);
            }
        }
    }
    all.sort();
    all
}

/// Whether a page names `key` of `[table]` the way the docs write keys.
fn documented(pages: &str, table: &str, key: &str) -> bool {
    let full = if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    };
    [
        format!("`{key}`"),
        format!("`{full}`"),
        format!("`{key} "),
        format!("`{key}="),
        format!("`{full}="),
        format!("[{full}]"),
        format!("[{full}."),
        format!("[[{full}]]"),
        format!("`[[{table}]] {key}`"),
        format!("\n{key} ="),
    ]
    .iter()
    .any(|p| pages.contains(p.as_str()))
}

#[test]
fn every_key_of_every_model_is_documented() {
    let format = std::fs::read_to_string(root().join("docs/scenario-format.md")).unwrap();
    let mut seen = BTreeSet::new();
    let mut missing = Vec::new();
    let mut probed = 0;
    for file in files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let doc: DocumentMut = text.parse().unwrap();
        let model = doc
            .get("model")
            .and_then(Item::as_str)
            .unwrap_or("payment")
            .to_string();
        let catalog = std::fs::read_to_string(root().join(format!("docs/catalog-{model}.md")))
            .unwrap_or_default();
        let pages = format!("{format}\n{catalog}");
        let mut paths = Vec::new();
        table_paths(doc.as_table(), &mut Vec::new(), &mut paths);
        for path in paths.iter().filter(|p| !p.is_empty()) {
            let table = path.join(".");
            if !seen.insert((model.clone(), table.clone())) {
                continue;
            }
            let Some(keys) = accepted_keys(&file, &text, path) else {
                continue;
            };
            probed += 1;
            for key in keys.iter().filter(|k| !documented(&pages, &table, k)) {
                missing.push(format!(
                    "{model}: [{table}] {key} (seen in {})",
                    file.display()
                ));
            }
        }
    }
    // The loaders list their keys for most tables; if they stopped, this
    // test would pass without checking anything.
    assert!(probed >= 60, "only {probed} tables listed their keys");
    assert!(
        missing.is_empty(),
        "keys no page documents (docs/scenario-format.md or docs/catalog-MODEL.md):\n{}",
        missing.join("\n")
    );
}
