//! The sweep's rows as an aligned table, Markdown, CSV or JSON Lines.

use super::axis::Axis;
use super::columns::{cell, fields, legend_of, named_columns, pct, Column, Field, Shape};
use super::variant::{Row, VariantStats};
use models::core::Metric;
use sim::SeedRange;

fn verdict_text(s: &VariantStats) -> String {
    match s.first_failure() {
        Some((_, invariant)) => format!("violation: {invariant}"),
        None => s.verdict().to_string(),
    }
}

/// How the table is shown: Markdown or aligned text, which columns, and
/// whether the legend follows it.
pub(super) struct View {
    pub(super) markdown: bool,
    /// The columns `--columns` chose, or `None` for every column.
    pub(super) columns: Option<Vec<Column>>,
    /// `--no-legend` leaves it out: a page with several tables explains
    /// their columns once.
    pub(super) legend: bool,
}

/// The sweep as a table for a terminal, or as Markdown: a heading, one row
/// per variant, the legend of its columns and the design warnings.
pub(super) fn table(
    name: &str,
    seeds: SeedRange,
    axes: &[Axis],
    rows: &[Row],
    metrics: &[Metric],
    view: &View,
) -> String {
    let fields = fields(metrics);
    let columns = view.columns.clone().unwrap_or_else(|| {
        // A load column no variant has a value for (a service without a
        // capacity, clients without a budget) says nothing: the table leaves
        // it out unless asked for, CSV and JSON keep it.
        named_columns(&fields)
            .into_iter()
            .map(|(_, c)| c)
            .filter(|c| match *c {
                Column::Field(i) => {
                    !fields[i].optional
                        || rows.iter().any(|r| (fields[i].value)(&r.stats).is_some())
                }
                _ => true,
            })
            .collect()
    });
    let grid = Grid::of(axes, rows, &fields, &columns);
    let mut out = heading(name, seeds, axes, rows);
    if view.markdown {
        grid.markdown(&mut out);
    } else {
        grid.aligned(&mut out);
    }
    out.push('\n');
    if view.legend {
        legend(&fields, &columns, view.markdown, &mut out);
    }
    out.push_str(&warnings(axes, rows, view.markdown));
    out
}

/// What each shown column means, once each, in the columns' order.
fn legend(fields: &[Field], columns: &[Column], markdown: bool, out: &mut String) {
    let failing = columns
        .iter()
        .any(|c| matches!(c, Column::Failing | Column::ViolationRate));
    let failing = failing.then_some(
        "failing: runs that broke an invariant; the interval is Wilson's 95% score interval.",
    );
    let mut items: Vec<&str> = failing.into_iter().collect();
    for c in columns {
        if let Column::Field(i) = *c {
            let l = legend_of(fields, i);
            if !l.is_empty() && !items.contains(&l) {
                items.push(l);
            }
        }
    }
    let bullet = if markdown { "- " } else { "" };
    for item in items {
        out.push_str(&format!("{bullet}{item}\n"));
    }
}

/// The line above the table: how many variants, on which seeds, and the
/// keys with one value, which are the same in every row and so said once.
fn heading(name: &str, seeds: SeedRange, axes: &[Axis], rows: &[Row]) -> String {
    let fixed: Vec<String> = axes
        .iter()
        .filter(|a| a.values.len() == 1)
        .map(|a| format!("{}={}", a.key, a.values[0]))
        .collect();
    let fixed_text = if fixed.is_empty() {
        String::new()
    } else {
        format!("; fixed: {}", fixed.join(" "))
    };
    let each = if rows.iter().any(|r| r.stats.runs() < seeds.len()) {
        format!("asked for seeds {seeds} each, interrupted (see below)")
    } else {
        format!("each on seeds {seeds}")
    };
    format!("{name}: {} variants, {each}{fixed_text}\n\n", rows.len())
}

/// The table's text cells: a header, then one line per variant.
struct Grid {
    header: Vec<String>,
    cells: Vec<Vec<String>>,
    /// Which columns read left to right: the swept keys and the verdict.
    left: Vec<bool>,
    /// Each column's width in characters.
    width: Vec<usize>,
}

impl Grid {
    fn of(axes: &[Axis], rows: &[Row], fields: &[Field], columns: &[Column]) -> Grid {
        let varying: Vec<usize> = (0..axes.len())
            .filter(|&i| axes[i].values.len() > 1)
            .collect();
        let mut header: Vec<String> = varying.iter().map(|&i| axes[i].key.clone()).collect();
        let mut left = vec![true; header.len()];
        for c in columns {
            header.push(match *c {
                Column::Verdict => "verdict".into(),
                Column::Failing => "failing".into(),
                Column::ViolationRate => "violation rate (95% CI)".into(),
                Column::Field(i) => fields[i].header.clone(),
                Column::LowestFailingSeed => "lowest failing seed".into(),
            });
            left.push(matches!(c, Column::Verdict));
        }
        let mut cells: Vec<Vec<String>> = Vec::new();
        for r in rows {
            let s = &r.stats;
            let mut c: Vec<String> = varying.iter().map(|&i| r.values[i].clone()).collect();
            c.extend(columns.iter().map(|col| match *col {
                Column::Verdict => verdict_text(s),
                Column::Failing => format!("{}/{}", s.failing(), s.runs()),
                Column::ViolationRate => {
                    let (lo, hi) = s.interval();
                    format!("{} ({}–{})", pct(s.violation_rate()), pct(lo), pct(hi))
                }
                Column::Field(i) => cell(&fields[i], s),
                Column::LowestFailingSeed => {
                    s.first_failure().map_or("-".into(), |f| f.0.to_string())
                }
            }));
            cells.push(c);
        }
        let width: Vec<usize> = (0..header.len())
            .map(|j| {
                cells
                    .iter()
                    .map(|c| c[j].chars().count())
                    .chain([header[j].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Grid {
            header,
            cells,
            left,
            width,
        }
    }

    /// Keys and verdicts read left to right; numbers line up on the right.
    fn left(&self, j: usize) -> bool {
        self.left[j]
    }

    fn pad(&self, text: &str, j: usize) -> String {
        let fill = " ".repeat(self.width[j] - text.chars().count());
        if self.left(j) {
            format!("{text}{fill}")
        } else {
            format!("{fill}{text}")
        }
    }

    fn padded(&self, c: &[String]) -> Vec<String> {
        c.iter().enumerate().map(|(j, t)| self.pad(t, j)).collect()
    }

    /// A Markdown table, its rule saying each column's alignment.
    fn markdown(&self, out: &mut String) {
        let line = |c: &[String]| format!("| {} |\n", self.padded(c).join(" | "));
        out.push_str(&line(&self.header));
        let rule: Vec<String> = (0..self.header.len())
            .map(|j| {
                let dashes = "-".repeat(self.width[j].max(3) - 1);
                if self.left(j) {
                    format!("{dashes}-")
                } else {
                    format!("{dashes}:")
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for c in &self.cells {
            out.push_str(&line(c));
        }
    }

    /// Columns two spaces apart under a dashed rule, for a terminal.
    fn aligned(&self, out: &mut String) {
        let line = |c: &[String]| format!("{}\n", self.padded(c).join("  ").trim_end());
        out.push_str(&line(&self.header));
        let rule: Vec<String> = self.width.iter().map(|&w| "-".repeat(w)).collect();
        out.push_str(&format!("{}\n", rule.join("  ")));
        for c in &self.cells {
            out.push_str(&line(c));
        }
    }
}

/// The variants whose settings break a rule (docs/design-warnings.md), each
/// with whether its runs went there: a row that holds only because no run
/// reached its gap says so under the table.
fn warnings(axes: &[Axis], rows: &[Row], markdown: bool) -> String {
    let mut out = String::new();
    // The keys that vary name the row; fixed ones are the same in every row.
    let varies = axes.iter().any(|a| a.values.len() > 1);
    let bullet = if markdown { "- " } else { "" };
    for r in rows.iter().filter(|r| !r.design_warnings.is_empty()) {
        if out.is_empty() {
            out.push_str("\ndesign warnings (docs/design-warnings.md):\n");
        }
        let which: Vec<String> = axes
            .iter()
            .zip(&r.values)
            .filter(|(a, _)| !varies || a.values.len() > 1)
            .map(|(a, v)| format!("{}={v}", a.key))
            .collect();
        for h in &r.design_warnings {
            out.push_str(&format!(
                "{bullet}{}: {}, {}\n",
                which.join(" "),
                h.id,
                h.reach_note()
            ));
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// A metric's value for CSV and JSON: whole numbers for times and counts.
fn raw(f: &Field, s: &VariantStats) -> serde_json::Value {
    match ((f.value)(s), f.shape) {
        (None, _) => serde_json::Value::Null,
        (Some(x), Shape::Time | Shape::Count) => serde_json::json!(x.round() as u64),
        (Some(x), _) => serde_json::json!((x * 1e6).round() / 1e6),
    }
}

pub(super) fn csv(axes: &[Axis], rows: &[Row], metrics: &[Metric]) -> String {
    let fields = fields(metrics);
    let mut header: Vec<String> = axes.iter().map(|a| csv_field(&a.key)).collect();
    header.extend(
        [
            "verdict",
            "invariant",
            "lowest_failing_seed",
            "schedules",
            "failing",
            "inconclusive",
            "violation_rate",
            "ci95_low",
            "ci95_high",
        ]
        .map(String::from),
    );
    header.extend(fields.iter().map(|f| f.name.clone()));
    let mut out = header.join(",") + "\n";
    for r in rows {
        let s = &r.stats;
        let (lo, hi) = s.interval();
        let mut c: Vec<String> = r.values.iter().map(|v| csv_field(v)).collect();
        c.push(s.verdict().into());
        c.push(opt(s.first_failure().map(|f| f.1)));
        c.push(opt(s.first_failure().map(|f| f.0)));
        c.push(s.runs().to_string());
        c.push(s.failing().to_string());
        c.push(s.inconclusive().to_string());
        for x in [s.violation_rate(), lo, hi] {
            c.push(format!("{x:.4}"));
        }
        c.extend(fields.iter().map(|f| match raw(f, s) {
            serde_json::Value::Null => String::new(),
            v => v.to_string(),
        }));
        out.push_str(&(c.join(",") + "\n"));
    }
    out
}

pub(super) fn json(
    name: &str,
    seeds: SeedRange,
    axes: &[Axis],
    rows: &[Row],
    metrics: &[Metric],
) -> String {
    use idemsim::render::json_line;
    let round = |x: f64| (x * 1e6).round() / 1e6;
    let fields = fields(metrics);
    let mut out = json_line(
        "sweep",
        serde_json::json!({
            "scenario": name,
            "seeds": crate::cmd::check::Seeds::from(seeds),
            "variants": rows.len(),
            "keys": axes.iter().map(|a| serde_json::json!({"key": a.key, "values": a.values})).collect::<Vec<_>>(),
            "metrics": fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
        }),
    ) + "\n";
    for r in rows {
        let s = &r.stats;
        let (lo, hi) = s.interval();
        let set: serde_json::Map<String, serde_json::Value> = axes
            .iter()
            .zip(&r.values)
            .map(|(a, v)| (a.key.clone(), serde_json::Value::from(v.as_str())))
            .collect();
        let mut data = serde_json::json!({
            "set": set,
            "verdict": s.verdict(),
            "invariant": s.first_failure().map(|f| f.1),
            "lowest_failing_seed": s.first_failure().map(|f| f.0),
            "schedules": s.runs(),
            "failing": s.failing(),
            "inconclusive": s.inconclusive(),
            "violation_rate": round(s.violation_rate()),
            "ci95": [round(lo), round(hi)],
        });
        let obj = data.as_object_mut().expect("an object");
        for f in &fields {
            obj.insert(f.name.clone(), raw(f, s));
        }
        if !r.design_warnings.is_empty() {
            obj.insert(
                "hazards".into(),
                serde_json::to_value(&r.design_warnings).expect("design warnings serialise"),
            );
        }
        out.push_str(&json_line("variant", data));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Grid;

    fn grid() -> Grid {
        Grid {
            header: vec!["key".into(), "verdict".into(), "n".into()],
            cells: vec![vec!["1".into(), "holds".into(), "12".into()]],
            left: vec![true, true, false],
            width: vec![3, 7, 2],
        }
    }

    #[test]
    fn keys_and_verdicts_align_left_and_numbers_right() {
        let mut out = String::new();
        grid().aligned(&mut out);
        assert_eq!(
            out,
            "key  verdict   n\n---  -------  --\n1    holds    12\n"
        );
    }

    #[test]
    fn a_markdown_rule_says_each_columns_alignment() {
        let mut out = String::new();
        grid().markdown(&mut out);
        let rule = out.lines().nth(1).expect("a rule");
        assert_eq!(rule, "| --- | ------- | --: |");
    }
}
