//! The report of a sweep: the page around the data `sweep --html` gathers
//! (`src/cmd/sweep/html.rs`). The table needs no script; the charts, one per
//! metric against a swept key the reader picks, are drawn by `sweep.js`.

use super::esc;
use serde_json::Value;
use std::fmt::Write;

const CSS: &str = include_str!("sweep.css");
const JS: &str = include_str!("sweep.js");

/// A metric's value as the table shows it.
fn cell(v: &Value, shape: &str) -> String {
    let Some(x) = v.as_f64() else {
        return "-".into();
    };
    match shape {
        "percent" => format!("{:.1}%", x * 100.0),
        "ratio" => format!("{x:.2}"),
        "rate" => format!("{x:.1}"),
        "time_us" => human_us(x),
        _ => format!("{x:.0}"),
    }
}

/// A duration in the unit that keeps the number short (as the table format).
pub(crate) fn human_us(us: f64) -> String {
    const UNITS: &[(f64, &str)] = &[
        (86_400e6, "d"),
        (3_600e6, "h"),
        (60e6, "min"),
        (1e6, "s"),
        (1e3, "ms"),
    ];
    for &(size, unit) in UNITS {
        if us >= size {
            let v = us / size;
            return if unit == "ms" {
                format!("{v:.0} {unit}")
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{us:.0} µs")
}

/// The sweep report's page for the JSON `data` of its rows and axes.
pub fn page(data: &Value) -> String {
    let name = data["scenario"].as_str().unwrap_or("");
    let axes = data["axes"].as_array().cloned().unwrap_or_default();
    let rows = data["rows"].as_array().cloned().unwrap_or_default();
    let metrics = data["metrics"].as_array().cloned().unwrap_or_default();
    let varying: Vec<usize> = (0..axes.len())
        .filter(|&i| axes[i]["values"].as_array().map_or(0, Vec::len) > 1)
        .collect();
    let table = Table {
        axes: &axes,
        varying: &varying,
        metrics: &metrics,
        warned: rows
            .iter()
            .any(|r| r["hazards"].as_array().is_some_and(|h| !h.is_empty())),
    };
    let mut b = String::new();
    header_html(data, &table, rows.len(), &mut b);
    b.push_str(
        "<section>\n<h2>Metrics against the swept values</h2>\n<p class=\"controls\" id=\"controls\"></p>\n\
         <div id=\"series\"></div>\n<div id=\"charts\"></div>\n</section>\n",
    );
    b.push_str("<section>\n<h2>Variants</h2>\n<table id=\"variants\">\n<thead><tr>");
    table.head(&mut b);
    b.push_str("</tr></thead>\n<tbody>\n");
    for r in &rows {
        table.row(r, &mut b);
    }
    b.push_str("</tbody>\n</table>\n");
    table.legend(&mut b);
    b.push_str("</section>\n");
    let _ = write!(
        b,
        "<footer>idemsim {} · every variant runs the same seeds, so a difference between rows comes from the design</footer>",
        env!("CARGO_PKG_VERSION")
    );
    let mut data = data.clone();
    data["yticks"] = super::ticks::sweep_ticks(&data);
    super::page(&format!("{name} · sweep · idemsim"), CSS, &b, &data, JS)
}

/// The page of `idemsim advise --html`: the sweep page's look, with one
/// section, the cost front of the fixes (`idemsim::advise::render::html_data`
/// gathers `data`). It needs no script: one row per fix, the design as it is
/// first.
pub fn advice_page(data: &Value) -> String {
    let name = data["scenario"].as_str().unwrap_or("");
    let mut b = String::new();
    let _ = write!(
        b,
        "<header class=\"top\">\n<h1>{} · advise</h1>\n<p class=\"sub\">{}; every design on the same seeds {}..{}</p>\n</header>\n",
        esc(name),
        esc(data["verdict"].as_str().unwrap_or("")),
        data["seeds"]["start"],
        data["seeds"]["end"]
    );
    b.push_str("<section>\n<h2>Repairs: the cost front</h2>\n<table id=\"variants\">\n<thead><tr><th>rank</th><th>front</th><th>changes</th><th>extra requests per operation</th><th>p99 time to effect</th><th>dedup store keys</th><th>unknown per operation</th></tr></thead>\n<tbody>\n");
    advice_row("-", "", "(as it is)", &data["costs"], true, &mut b);
    let fixes = data["fixes"].as_array().map_or(&[][..], Vec::as_slice);
    for f in fixes {
        let changes: Vec<&str> = f["changes"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(|c| c["set"].as_str())
            .collect();
        let front = if f["front"] == true { "*" } else { "" };
        let rank = f["rank"].to_string();
        advice_row(
            &rank,
            front,
            &changes.join(" + "),
            &f["costs"],
            false,
            &mut b,
        );
    }
    b.push_str("</tbody>\n</table>\n");
    if fixes.is_empty() {
        b.push_str("<p>No setting-level fix found within budget.</p>\n");
    }
    b.push_str("<ul class=\"legend\">\n<li>front (*): no other fix is cheaper in one cost and no dearer in the others; the rows are ranked by the front, then by fewer changes, then by the costs from left to right.</li>\n<li>A fix holds on every seed and in a bounded exhaustive run, and no smaller set of its changes does.</li>\n");
    for note in data["notes"].as_array().map_or(&[][..], Vec::as_slice) {
        let _ = writeln!(b, "<li>{}</li>", esc(note.as_str().unwrap_or("")));
    }
    b.push_str("</ul>\n</section>\n");
    let _ = write!(
        b,
        "<footer>idemsim {} · every design runs the same seeds, so a difference between rows comes from the design</footer>",
        env!("CARGO_PKG_VERSION")
    );
    super::page(&format!("{name} · advise · idemsim"), CSS, &b, data, "")
}

/// One row of the cost front; the design as it is is marked as failing.
fn advice_row(rank: &str, front: &str, what: &str, c: &Value, failing: bool, b: &mut String) {
    b.push_str(if failing {
        "<tr class=\"violation\">"
    } else {
        "<tr>"
    });
    let _ = writeln!(
        b,
        "<td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        esc(rank),
        front,
        esc(what),
        cell(&c["extra_requests_per_op"], "ratio"),
        cell(&c["p99_latency_us"], "time_us"),
        cell(&c["dedup_store_keys"], "count"),
        cell(&c["unknown_per_op"], "percent"),
    );
}

/// The page's title, and the keys with one value, which are the same in
/// every variant and so said once.
fn header_html(data: &Value, table: &Table, variants: usize, b: &mut String) {
    let name = data["scenario"].as_str().unwrap_or("");
    let axes = table.axes;
    let fixed: Vec<String> = (0..axes.len())
        .filter(|i| !table.varying.contains(i))
        .map(|i| {
            format!(
                "{}={}",
                axes[i]["key"].as_str().unwrap_or(""),
                axes[i]["values"][0].as_str().unwrap_or("")
            )
        })
        .collect();
    let _ = write!(
        b,
        "<header class=\"top\">\n<h1>{} · sweep</h1>\n<p class=\"sub\">{} variants, each on the same seeds 0..{}{}</p>\n</header>\n",
        esc(name),
        variants,
        data["runs"],
        if fixed.is_empty() {
            String::new()
        } else {
            format!("; fixed: {}", esc(&fixed.join(" ")))
        }
    );
}

/// The variants table: a column per swept key that varies, the verdict,
/// each metric, the lowest failing seed and, if any variant has one, the
/// design warnings.
struct Table<'a> {
    axes: &'a [Value],
    /// The axes with more than one value.
    varying: &'a [usize],
    metrics: &'a [Value],
    /// Some variant breaks a design rule: the table gets a column for it.
    warned: bool,
}

impl Table<'_> {
    fn head(&self, b: &mut String) {
        for &i in self.varying {
            let _ = write!(
                b,
                "<th>{}</th>",
                esc(self.axes[i]["key"].as_str().unwrap_or(""))
            );
        }
        b.push_str("<th>verdict</th><th>failing</th><th>violation rate (95% CI)</th>");
        for m in self.metrics {
            let _ = write!(b, "<th>{}</th>", esc(m["header"].as_str().unwrap_or("")));
        }
        b.push_str("<th>lowest failing seed</th>");
        if self.warned {
            b.push_str("<th>design warnings</th>");
        }
    }

    /// One variant's row; a violation is marked, its seed linked to its report.
    fn row(&self, r: &Value, b: &mut String) {
        let violation = r["verdict"] == "violation";
        b.push_str(if violation {
            "<tr class=\"violation\">"
        } else {
            "<tr>"
        });
        for &i in self.varying {
            let _ = write!(b, "<td>{}</td>", esc(r["values"][i].as_str().unwrap_or("")));
        }
        let verdict = match r["invariant"].as_str() {
            Some(inv) => format!("violation: {inv}"),
            None => r["verdict"].as_str().unwrap_or("").to_string(),
        };
        let pct = |v: &Value| format!("{:.1}%", v.as_f64().unwrap_or(0.0) * 100.0);
        let _ = write!(
            b,
            "<td>{}</td><td class=\"num\">{}/{}</td><td class=\"num\">{} ({}–{})</td>",
            esc(&verdict),
            r["failing"],
            r["runs"],
            pct(&r["rate"]),
            pct(&r["lo"]),
            pct(&r["hi"])
        );
        for (j, m) in self.metrics.iter().enumerate() {
            let _ = write!(
                b,
                "<td class=\"num\">{}</td>",
                esc(&cell(&r["metrics"][j], m["shape"].as_str().unwrap_or("")))
            );
        }
        match (r["seed"].as_u64(), r["report"].as_str()) {
            (Some(seed), Some(link)) => {
                let _ = write!(
                    b,
                    "<td><a class=\"report\" href=\"{}\">seed {seed}: report</a></td>",
                    esc(link)
                );
            }
            (Some(seed), None) => {
                let _ = write!(b, "<td>{seed}</td>");
            }
            _ => b.push_str("<td class=\"none\">-</td>"),
        }
        if self.warned {
            b.push_str(&warnings_cell(&r["hazards"]));
        }
        b.push_str("</tr>\n");
    }

    /// What the columns mean.
    fn legend(&self, b: &mut String) {
        b.push_str("<ul class=\"legend\">\n<li>failing: runs that broke an invariant; the interval is Wilson's 95% score interval.</li>\n");
        for m in self.metrics {
            if let Some(l) = m["legend"].as_str().filter(|l| !l.is_empty()) {
                let _ = writeln!(b, "<li>{}</li>", esc(l));
            }
        }
        b.push_str(
            "<li>Each report shows the variant's lowest failing seed, shrunk to a minimal run.</li>\n",
        );
        if self.warned {
            b.push_str("<li>design warnings: rules of the domain the variant's settings break (docs/design-warnings.md), and how many runs reached the gap; a variant that holds with \"no run reached it\" holds only because no fault went there. Hover a warning for its text.</li>\n");
        }
        b.push_str("</ul>\n");
    }
}

/// A row's design warnings: each id (its text on hover) and whether runs
/// reached it; shaded when some run never did.
fn warnings_cell(design_warnings: &Value) -> String {
    let list = design_warnings.as_array().map_or(&[][..], Vec::as_slice);
    if list.is_empty() {
        return "<td class=\"none\">-</td>".into();
    }
    let unreached = list.iter().any(|h| h["reached_runs"].as_u64() == Some(0));
    let items: Vec<String> = list
        .iter()
        .map(|h| {
            format!(
                "<span class=\"warn\" title=\"{}\">{}</span>: {}",
                esc(h["text"].as_str().unwrap_or("")),
                esc(h["id"].as_str().unwrap_or("")),
                esc(h["note"].as_str().unwrap_or(""))
            )
        })
        .collect();
    format!(
        "<td class=\"{}\">{}</td>",
        if unreached {
            "warnings unreached"
        } else {
            "warnings"
        },
        items.join("<br>")
    )
}

#[cfg(test)]
mod tests {
    use super::{human_us, page};
    use serde_json::json;

    fn sweep(design_warnings: serde_json::Value) -> serde_json::Value {
        json!({
            "scenario": "s",
            "runs": 10,
            "axes": [
                {"key": "client.retry.max_attempts", "values": ["1", "3"]},
                {"key": "client.key", "values": ["stable"]},
            ],
            "metrics": [{"header": "attempts", "shape": "ratio", "legend": "attempts: per run"}],
            "rows": [
                {"values": ["1", "stable"], "verdict": "holds", "failing": 0, "runs": 10,
                 "rate": 0.0, "lo": 0.0, "hi": 0.3, "metrics": [1.0], "hazards": []},
                {"values": ["3", "stable"], "verdict": "violation", "invariant": "no-dup",
                 "failing": 2, "runs": 10, "rate": 0.2, "lo": 0.05, "hi": 0.5,
                 "metrics": [1.5], "seed": 4, "report": "s-3-seed-4.html", "hazards": design_warnings},
            ],
        })
    }

    #[test]
    fn the_page_has_a_column_per_varying_key_and_names_the_fixed_once() {
        let html = page(&sweep(json!([])));
        assert!(html.contains("2 variants, each on the same seeds 0..10; fixed: client.key=stable"));
        assert!(html.contains("<th>client.retry.max_attempts</th>"));
        assert!(!html.contains("<th>client.key</th>"));
        assert!(html.contains("<tr class=\"violation\"><td>3</td><td>violation: no-dup</td>"));
        assert!(html.contains("href=\"s-3-seed-4.html\">seed 4: report</a>"));
        assert!(html.contains("<li>attempts: per run</li>"));
        assert!(
            !html.contains("design warnings"),
            "no variant breaks a rule"
        );
    }

    #[test]
    fn a_design_warning_adds_its_column_and_legend() {
        let warned =
            json!([{"id": "w", "text": "t", "note": "no run reached it", "reached_runs": 0}]);
        let html = page(&sweep(warned));
        assert!(html.contains("<th>design warnings</th>"));
        assert!(html.contains("<td class=\"warnings unreached\">"));
        assert!(html.contains("<li>design warnings: rules of the domain"));
    }

    #[test]
    fn the_advice_page_lists_the_design_then_each_fix_with_its_costs() {
        let c = |extra: f64| {
            json!({"extra_requests_per_op": extra, "p99_latency_us": 90112,
                                    "dedup_store_keys": 1, "unknown_per_op": 0.002})
        };
        let data = json!({
            "scenario": "s", "verdict": "violation (no-dup)", "seeds": {"start": 0, "end": 10},
            "costs": c(0.19),
            "fixes": [{"rank": 1, "front": true, "costs": c(0.24),
                       "changes": [{"set": "client.key=stable"}, {"set": "a=1 + b=2"}]}],
            "notes": ["not tried: 3 set(s) of 2 change(s)"],
        });
        let html = super::advice_page(&data);
        assert!(html.contains("<h1>s · advise</h1>"));
        assert!(html.contains("<tr class=\"violation\"><td>-</td><td></td><td>(as it is)</td><td class=\"num\">0.19</td><td class=\"num\">90 ms</td>"));
        assert!(html.contains(
            "<td>1</td><td>*</td><td>client.key=stable + a=1 + b=2</td><td class=\"num\">0.24</td>"
        ));
        assert!(html.contains("<td class=\"num\">0.2%</td>"));
        assert!(html.contains("<li>not tried: 3 set(s) of 2 change(s)</li>"));
        assert!(!html.contains("No setting-level fix"));
        let none = super::advice_page(&json!({"scenario": "s", "fixes": []}));
        assert!(none.contains("No setting-level fix found within budget."));
    }

    #[test]
    fn durations_read_in_human_units() {
        assert_eq!(human_us(850.0), "850 µs");
        assert_eq!(human_us(12_000.0), "12 ms");
        assert_eq!(human_us(2_500_000.0), "2.5 s");
        assert_eq!(human_us(90e6), "1.5 min");
        assert_eq!(human_us(2.0 * 86_400e6), "2.0 d");
    }
}
