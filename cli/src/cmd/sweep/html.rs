//! `sweep --html FILE`: the sweep as a page that charts every metric the
//! model declares against the swept values, and the report of each
//! variant's lowest failing seed (shrunk), written next to FILE as
//! `<stem>-<variant>-seed-<N>.html` and linked from its row.

use super::axis::Axis;
use super::columns::{fields, Field, Shape};
use super::plot;
use super::variant::Row;
use crate::cmd::report;
use idemsim::catalog::UsageError;
use idemsim::render::html::sweep as page;
use models::core::Metric;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A file-name piece for a variant: its values, with anything but letters,
/// digits, dots and dashes turned into dashes.
fn slug(values: &[String]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|v| {
            let s: String = v
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                        c
                    } else {
                        '-'
                    }
                })
                .collect();
            s.trim_matches('-').to_string()
        })
        .collect();
    parts.join("_")
}

fn shape(s: Shape) -> &'static str {
    match s {
        Shape::Percent => "percent",
        Shape::Ratio => "ratio",
        Shape::Rate => "rate",
        Shape::Time => "time_us",
        Shape::Count => "count",
    }
}

/// What a sweep's HTML report shows, and how it reports its failing seeds.
pub struct Input<'a> {
    pub name: &'a str,
    pub runs: u64,
    pub axes: &'a [Axis],
    pub rows: &'a [Row],
    pub metrics: &'a [Metric],
    pub variants: &'a [super::Variant],
    /// Where each scenario came from, with its argument: the failing seeds'
    /// commands name it.
    pub from: &'a [(String, idemsim::catalog::Entry)],
    pub budget: idemsim::minimize::Budget,
}

/// A variant's `--set` values as `KEY=VALUE`, as its report's command gives them.
fn sets(v: &super::Variant) -> Vec<String> {
    v.overrides
        .iter()
        .map(|o| format!("{}={}", o.key, o.value))
        .collect()
}

/// Writes the page and the reports of failing variants; returns how many
/// reports it wrote. All or nothing: when one file cannot be written, none is
/// left (`path` was checked before the sweep ran, see `common::output_file`).
pub fn write(path: &Path, input: &Input) -> Result<usize, UsageError> {
    let Input {
        name,
        runs,
        axes,
        rows,
        metrics,
        variants,
        from,
        budget,
    } = *input;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
    let fields = fields(metrics);
    let mut used: Vec<String> = Vec::new();
    let mut out_rows = Vec::with_capacity(rows.len());
    let mut staged = Staged::new(dir)?;
    for (i, (r, v)) in rows.iter().zip(variants).enumerate() {
        let s = &r.stats;
        let mut link = None;
        if let Some((seed, _)) = s.first_failure() {
            // The values of the keys that vary name the variant.
            let named: Vec<String> = (0..axes.len())
                .filter(|&k| axes[k].values.len() > 1)
                .map(|k| r.values[k].clone())
                .collect();
            let mut prefix = format!("{stem}-{}", slug(&named));
            if prefix == format!("{stem}-") || used.contains(&prefix) {
                prefix = format!("{stem}-{}", i + 1);
            }
            used.push(prefix.clone());
            let sets = sets(v);
            let done = idemsim::minimize::shrink_seed(&v.scenario, seed, budget);
            let (file, html) = report::render_failure(
                &v.scenario,
                &from[v.from].1,
                &sets,
                seed,
                done.as_ref(),
                Some(&prefix),
            );
            staged.write(&dir.join(&file), &html)?;
            link = Some(file);
        }
        out_rows.push(row_json(r, &fields, link));
    }
    let axes_json: Vec<Value> = axes.iter().map(axis_json).collect();
    let data = json!({
        "scenario": name,
        "runs": runs,
        "axes": axes_json,
        "metrics": fields.iter().map(|f| json!({
            "name": f.name,
            "header": f.header,
            "legend": f.legend,
            "shape": shape(f.shape),
        })).collect::<Vec<_>>(),
        "rows": out_rows,
    });
    let html = page::page(&data);
    staged.write(path, &html)?;
    let reports = staged.len() - 1;
    staged.commit()?;
    Ok(reports)
}

/// One variant's row of the page; `link` is its failure's report file.
fn row_json(r: &Row, fields: &[Field], link: Option<String>) -> Value {
    let s = &r.stats;
    let (lo, hi) = s.interval();
    json!({
        "values": r.values,
        "verdict": s.verdict(),
        "invariant": s.first_failure().map(|f| f.1),
        "seed": s.first_failure().map(|f| f.0),
        "runs": s.runs(),
        "failing": s.failing(),
        "rate": s.violation_rate(),
        "lo": lo,
        "hi": hi,
        "metrics": fields.iter().map(|f| (f.value)(s)).collect::<Vec<_>>(),
        "report": link,
        // The page shows each warning as the text table does (reach_note).
        "hazards": r.design_warnings.iter().map(|h| json!({
            "id": h.id,
            "text": h.text,
            "reached_runs": h.reached_runs,
            "note": h.reach_note(),
        })).collect::<Vec<_>>(),
    })
}

/// A swept key as the page draws it: its values, tick labels and positions.
fn axis_json(a: &Axis) -> Value {
    let (pos, note) = plot::x_positions(&a.values);
    json!({
        "key": a.key,
        "values": a.values,
        "labels": a.values.iter().map(|v| plot::tick_label(&a.key, v)).collect::<Vec<_>>(),
        "pos": pos,
        "note": note,
        "categorical": a.values.iter().any(|v| v.parse::<f64>().is_err()),
    })
}

/// Files written under temporary names in one folder and renamed to their
/// own at the end, so a sweep whose page or any report cannot be written
/// leaves nothing behind: dropped before [`Staged::commit`], it removes them.
struct Staged {
    /// (temporary, final) paths.
    files: Vec<(PathBuf, PathBuf)>,
}

impl Staged {
    /// Creates `dir` and the folders above it that are missing.
    fn new(dir: &Path) -> Result<Staged, UsageError> {
        std::fs::create_dir_all(dir).map_err(|e| {
            UsageError(format!(
                "error: cannot create the folder {}: {e}\nhelp: give --html a path in a folder you can write to\n",
                dir.display()
            ))
        })?;
        Ok(Staged { files: Vec::new() })
    }

    fn len(&self) -> usize {
        self.files.len()
    }

    /// Writes `text` under a temporary name next to `path`.
    fn write(&mut self, path: &Path, text: &str) -> Result<(), UsageError> {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        // Listed first, so that a partly written file is removed too.
        self.files.push((tmp.clone(), path.to_path_buf()));
        std::fs::write(&tmp, text).map_err(|e| {
            UsageError(format!(
                "error: cannot write {}: {e}\nhelp: give --html a path in a folder you can write to, with room for the page and its reports; nothing was written\n",
                path.display()
            ))
        })
    }

    /// Renames every file to its own name, once none of the names is taken
    /// by something a file cannot replace (a folder).
    fn commit(mut self) -> Result<(), UsageError> {
        for (_, path) in &self.files {
            if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
                return Err(UsageError(format!(
                    "error: cannot write {}: a folder or another non-file has that name\nhelp: move it away, or give --html another path; nothing was written\n",
                    path.display()
                )));
            }
        }
        let files = std::mem::take(&mut self.files);
        for (i, (tmp, path)) in files.iter().enumerate() {
            if let Err(e) = std::fs::rename(tmp, path) {
                for (rest, _) in &files[i..] {
                    let _ = std::fs::remove_file(rest);
                }
                return Err(UsageError(format!(
                    "error: cannot write {}: {e}\nhelp: give --html a path in a folder you can write to; {i} of the {} files were written before it\n",
                    path.display(),
                    files.len()
                )));
            }
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        for (tmp, _) in &self.files {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn a_variant_slug_keeps_its_values_readable() {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(slug(&v(&["86400000", "true"])), "86400000_true");
        assert_eq!(slug(&v(&["[0,100]", "state-first"])), "0-100_state-first");
        assert_eq!(slug(&v(&["\"a b\""])), "a-b");
    }
}
