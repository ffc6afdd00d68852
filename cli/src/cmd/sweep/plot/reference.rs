//! `sweep --plot-reference FILE.csv`: another program's numbers (a published
//! simulator's means with their intervals) drawn over the sweep's lines as
//! points with error bars, so that a reader sees where the two agree.
//!
//! The file is CSV with the header `x,series,metric,value,low,high`: `x` a
//! value of the plot's x key, `series` one of the plot's lines (its legend
//! label, or its swept values as the sweep names them), `metric` a
//! `--plot-metric` name, and the three numbers in that metric's unit as the
//! CSV output gives it (µs for times, shares 0..1 for rates). A first line
//! `# TEXT` names the source in the legend. Rows of a metric the plot does
//! not draw are skipped, so one file serves several plots.

use super::{series_names, Y};
use crate::cmd::sweep::axis::Axis;
use crate::cmd::sweep::columns::Field;
use idemsim::catalog::UsageError;
use std::path::Path;

/// The header a reference file starts with (after its optional `# TEXT`).
pub const HEADER: &str = "x,series,metric,value,low,high";

/// One reference point: where it goes and its value with its interval.
pub struct Point {
    /// The index of the x key's value.
    pub x: usize,
    /// The index of the series, in the order the plot draws them.
    pub series: usize,
    /// The metric's name, as `--plot-metric` gives it.
    pub metric: String,
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// A reference file, read and matched to the plot's keys and series.
pub struct Reference {
    /// What the legend calls it: the file's `# TEXT`, else its name.
    pub title: String,
    pub points: Vec<Point>,
}

impl Reference {
    /// The points of panel `y`.
    pub fn of<'a>(&'a self, y: &'a Y) -> impl Iterator<Item = &'a Point> + 'a {
        self.points
            .iter()
            .filter(move |p| p.metric == y.metric_name())
    }
}

/// What the file is checked against: the plot's x key, its series' names
/// and the metrics the model has.
pub struct Against<'a> {
    pub axes: &'a [Axis],
    pub labels: &'a [(String, String)],
    pub fields: &'a [Field],
}

/// Reads and checks `path`; every mistake names the file, line and column.
pub fn load(path: &Path, against: &Against) -> Result<Reference, UsageError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        UsageError(format!(
            "error: --plot-reference {}: cannot read it: {e}\nhelp: give a CSV file with the header {HEADER}\n",
            path.display()
        ))
    })?;
    parse(&path.display().to_string(), &text, against)
}

/// A mistake at `line` and `column` of the file, with its fix.
fn at(file: &str, line: usize, column: usize, what: &str, help: &str) -> UsageError {
    UsageError(format!(
        "error: {file}:{line}:{column}: {what}\nhelp: {help}\n"
    ))
}

/// What each row is checked against: the x key's values, the series'
/// names, the metrics.
struct Known<'a> {
    file: &'a str,
    x_key: &'a str,
    x_values: &'a [String],
    names: Vec<Vec<String>>,
    metrics: Vec<&'a str>,
}

/// The reference in `text`, checked against the plot.
pub fn parse(file: &str, text: &str, against: &Against) -> Result<Reference, UsageError> {
    let x_axis = super::x_axis(against.axes);
    let known = Known {
        file,
        x_key: &against.axes[x_axis].key,
        x_values: &against.axes[x_axis].values,
        names: series_names(against.axes, x_axis, against.labels),
        metrics: std::iter::once("violation_rate")
            .chain(against.fields.iter().map(|f| f.name.as_str()))
            .collect(),
    };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let mut title = Path::new(file)
        .file_name()
        .map_or(file.to_string(), |n| n.to_string_lossy().into_owned());
    let mut header = lines.next();
    if let Some((_, l)) = header.filter(|(_, l)| l.starts_with('#')) {
        title = l.trim_start_matches('#').trim().to_string();
        header = lines.next();
    }
    match header {
        Some((_, l)) if l.trim() == HEADER => {}
        Some((n, l)) => {
            let help = format!(
                "start the file with the header {HEADER} (a first line `# TEXT` may name the source)"
            );
            let what = format!("the header is `{}`", l.trim());
            return Err(at(file, n, 1, &what, &help));
        }
        None => {
            let help = format!("write the header {HEADER}, then one row per point");
            return Err(at(file, 1, 1, "the file has no header", &help));
        }
    }
    let points = lines
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| row(&known, n, line))
        .collect::<Result<Vec<Point>, UsageError>>()?;
    Ok(Reference { title, points })
}

/// One row's values, with where each starts for the errors.
struct Cells<'a> {
    k: &'a Known<'a>,
    line: usize,
    cells: Vec<(String, String)>,
}

impl Cells<'_> {
    fn cell(&self, i: usize) -> &str {
        &self.cells[i].1
    }

    /// What is wrong with value `i`, at the column where it starts.
    fn err(&self, i: usize, what: &str, help: &str) -> UsageError {
        let before: usize = self.cells[..i]
            .iter()
            .map(|(raw, _)| raw.chars().count() + 1)
            .sum();
        at(self.k.file, self.line, before + 1, what, help)
    }

    fn number(&self, i: usize) -> Result<f64, UsageError> {
        let v = self.cell(i).parse::<f64>().ok().filter(|v| v.is_finite());
        v.ok_or_else(|| {
            let help =
                "write the metric's value as the CSV output does: µs for times, 0..1 for rates";
            self.err(i, &format!("`{}` is not a number", self.cell(i)), help)
        })
    }

    /// The x value's index and the series' index.
    fn place(&self) -> Result<(usize, usize), UsageError> {
        let k = self.k;
        let x = k
            .x_values
            .iter()
            .position(|v| v == self.cell(0))
            .ok_or_else(|| {
                let what = format!(
                    "x = {}: the plot's x key {} has no such value",
                    self.cell(0),
                    k.x_key
                );
                self.err(0, &what, &format!("use one of {}", k.x_values.join(", ")))
            })?;
        let series = k
            .names
            .iter()
            .position(|s| s.iter().any(|name| name == self.cell(1)));
        let series = series.ok_or_else(|| {
            let shown: Vec<&str> = k.names.iter().map(|s| s[0].as_str()).collect();
            let what = format!("series = {}: the plot has no such line", self.cell(1));
            self.err(
                1,
                &what,
                &format!("name one of its lines: {}", shown.join("; ")),
            )
        })?;
        if !k.metrics.contains(&self.cell(2)) {
            let what = format!("metric = {}: this model has no such column", self.cell(2));
            return Err(self.err(2, &what, &format!("use one of {}", k.metrics.join(", "))));
        }
        Ok((x, series))
    }
}

/// One row of the file as a point, or what is wrong with it and where.
fn row(k: &Known, line: usize, text: &str) -> Result<Point, UsageError> {
    let cells = split(text).map_err(|(col, what)| {
        let help = "quote a value with a comma in it: \"exponential, no jitter\"";
        at(k.file, line, col, &what, help)
    })?;
    if cells.len() != 6 {
        let help = format!("write each row as {HEADER}");
        return Err(at(
            k.file,
            line,
            1,
            &format!("{} values, not 6", cells.len()),
            &help,
        ));
    }
    let c = Cells { k, line, cells };
    let (x, series) = c.place()?;
    let (value, low, high) = (c.number(3)?, c.number(4)?, c.number(5)?);
    if !(low <= value && value <= high) {
        let what = format!("the interval {low}..{high} does not hold the value {value}");
        return Err(c.err(4, &what, "write low <= value <= high"));
    }
    let metric = c.cell(2).to_string();
    Ok(Point {
        x,
        series,
        metric,
        value,
        low,
        high,
    })
}

/// A CSV line's values, each with its text as written (a quoted value
/// unquoted, `""` an inner quote); an unclosed quote is `(column, what)`.
fn split(line: &str) -> Result<Vec<(String, String)>, (usize, String)> {
    let mut out = Vec::new();
    let (mut raw, mut value) = (String::new(), String::new());
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    let mut start = 1;
    while let Some(c) = chars.next() {
        raw.push(c);
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                raw.push('"');
                value.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => {
                raw.pop();
                start += raw.chars().count() + 1;
                out.push((std::mem::take(&mut raw), value.trim().to_string()));
                value.clear();
            }
            _ => value.push(c),
        }
    }
    if quoted {
        return Err((start, "a quote is never closed".into()));
    }
    out.push((raw, value.trim().to_string()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn a_quoted_value_keeps_its_commas_and_quotes() {
        let cells = split(r#"10,"exponential, no jitter","a ""b""",1"#).unwrap();
        let values: Vec<&str> = cells.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(values, ["10", "exponential, no jitter", "a \"b\"", "1"]);
        assert!(split("10,\"open").is_err());
    }
}
