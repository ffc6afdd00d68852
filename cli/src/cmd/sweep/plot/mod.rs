//! `sweep --plot`: the violation rate against the first swept key, one line per
//! combination of the other swept keys, each with its 95% Wilson band; or,
//! with `--plot-metric`, any of the table's metric columns, one panel each,
//! stacked above each other on the same x axis.
//!
//! Hand-written SVG: a few dozen elements, no script, no embedded or external
//! font (the generic `sans-serif` family), so it opens in any browser and
//! diffs as text. A plotting crate would bring far more than this needs.

mod draw;
pub mod reference;

use super::axis::Axis;
use super::columns::{human_time, Field, Shape};
use super::variant::Row;
use draw::Frame;
use idemsim::catalog::UsageError;
use reference::Reference;
use sim::SeedRange;
// One HTML/XML escape for every page and figure idemsim writes.
use idemsim::render::html::esc;

const PLOT_WIDTH: f64 = 460.0;
const HEIGHT: f64 = 460.0;
const LEFT: f64 = 72.0;
/// A rough width of one character at 12 px in a sans-serif face, to keep
/// labels from running into each other or off the canvas.
const CHAR_PX: f64 = 7.0;
const TOP: f64 = 64.0;
const BOTTOM: f64 = 64.0;
/// Between two panels: room for the upper one's x tick labels.
const GAP: f64 = 48.0;

/// Okabe and Ito's palette: tells lines apart with any common colour blindness.
const PALETTE: &[&str] = &[
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// Dash patterns, so that lines lying on top of each other stay visible and
/// a page printed in grey tells them apart: one per series up to six (the
/// jitter plot has five strategies and the no-backoff line).
const DASHES: &[&str] = &["none", "7 4", "2 3", "10 3 2 3", "12 3 2 3 2 3", "1 5"];

/// A tick label: a millisecond key's whole values in the unit that reads best.
pub(super) fn tick_label(key: &str, value: &str) -> String {
    let Some(ms) = key
        .ends_with("_ms")
        .then(|| value.parse::<u64>().ok())
        .flatten()
    else {
        return value.to_string();
    };
    const UNITS: &[(u64, &str)] = &[
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1_000, "s"),
    ];
    UNITS
        .iter()
        .find(|(size, _)| ms >= *size && ms % size == 0)
        .map_or(format!("{ms} ms"), |(size, unit)| {
            format!("{} {unit}", ms / size)
        })
}

/// Where each of the x key's values sits, 0..=1 across the plot area.
pub(super) fn x_positions(values: &[String]) -> (Vec<f64>, &'static str) {
    let n = values.len();
    let numbers: Option<Vec<f64>> = values
        .iter()
        .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    let categorical = || {
        let pos = (0..n).map(|i| (i as f64 + 0.5) / n as f64).collect();
        (pos, "")
    };
    let Some(xs) = numbers else {
        return categorical();
    };
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi <= lo {
        return categorical();
    }
    // Retention times and attempt counts often span orders of magnitude.
    if lo > 0.0 && hi / lo >= 100.0 {
        let (l, h) = (lo.log10(), hi.log10());
        let pos = xs.iter().map(|x| 0.04 + 0.92 * (x.log10() - l) / (h - l));
        return (pos.collect(), " (log scale)");
    }
    let pos = xs.iter().map(|x| 0.04 + 0.92 * (x - lo) / (hi - lo));
    (pos.collect(), "")
}

/// What one panel draws on its y axis.
pub enum Y<'a> {
    /// The share of runs that failed, 0 to 100%, with its 95% Wilson band.
    ViolationRate,
    /// One of the table's metric columns: its mean (or quantile) per variant.
    Metric(&'a Field),
}

impl Y<'_> {
    /// The panel's name in the title and on its y axis.
    fn name(&self) -> String {
        match self {
            Y::ViolationRate => "violation rate".into(),
            Y::Metric(f) => f.header.clone(),
        }
    }

    fn axis_label(&self) -> String {
        match self {
            Y::ViolationRate => "violation rate (share of runs)".into(),
            Y::Metric(f) => f.header.clone(),
        }
    }

    /// (value, band low, band high) of one variant; the band is the value
    /// itself where there is no interval.
    fn point(&self, r: &Row) -> Option<(f64, f64, f64)> {
        match self {
            Y::ViolationRate => {
                let (lo, hi) = r.stats.interval();
                Some((r.stats.violation_rate(), lo, hi))
            }
            Y::Metric(f) => (f.value)(&r.stats)
                .filter(|v| v.is_finite())
                .map(|v| (v, v, v)),
        }
    }

    /// Its name as `--plot-metric` and a reference file give it.
    fn metric_name(&self) -> &str {
        match self {
            Y::ViolationRate => "violation_rate",
            Y::Metric(f) => &f.name,
        }
    }

    /// A tick's label in the metric's unit.
    fn tick(&self, v: f64) -> String {
        let shape = match self {
            Y::ViolationRate => Shape::Percent,
            Y::Metric(f) => f.shape,
        };
        match shape {
            Shape::Percent => format!("{}%", (v * 100.0).round()),
            Shape::Time => time_tick(v.round() as u64),
            Shape::Ratio if v.fract() != 0.0 => format!("{v:.2}"),
            Shape::Rate if v.fract() != 0.0 => format!("{v:.1}"),
            Shape::Ratio | Shape::Rate | Shape::Count => format!("{v:.0}"),
        }
    }
}

/// The panels `--plot-metric` asks for, by the names the CSV header uses.
pub fn ys<'a>(names: &[String], fields: &'a [Field]) -> Result<Vec<Y<'a>>, UsageError> {
    let mut ys = Vec::with_capacity(names.len());
    for n in names {
        let n = n.trim();
        if n == "violation_rate" {
            ys.push(Y::ViolationRate);
        } else if let Some(f) = fields.iter().find(|f| f.name == n) {
            ys.push(Y::Metric(f));
        } else {
            let known: Vec<&str> = std::iter::once("violation_rate")
                .chain(fields.iter().map(|f| f.name.as_str()))
                .collect();
            return Err(UsageError(format!(
                "error: --plot-metric {n}: this model has no such column\nhelp: use one of {}\n",
                known.join(", ")
            )));
        }
    }
    Ok(ys)
}

/// A time tick: round ticks read as round numbers ("100 s", not "1.7 min").
fn time_tick(us: u64) -> String {
    const MS: u64 = 1_000;
    const S: u64 = 1_000 * MS;
    match us {
        0 => "0".into(),
        _ if us.is_multiple_of(3600 * S) => format!("{} h", us / (3600 * S)),
        _ if us >= S && us.is_multiple_of(S) => format!("{} s", us / S),
        _ if us < S && us.is_multiple_of(MS) => format!("{} ms", us / MS),
        _ => human_time(us),
    }
}

/// How a panel maps values to its height: 0..=1 from the bottom.
struct Scale {
    /// The values the ticks sit at, bottom up.
    ticks: Vec<f64>,
    log: bool,
    lo: f64,
    hi: f64,
}

impl Scale {
    fn violation_rate() -> Scale {
        Scale {
            ticks: (0..=5).map(|i| f64::from(i) / 5.0).collect(),
            log: false,
            lo: 0.0,
            hi: 1.0,
        }
    }

    /// From zero to a round number above every value, five steps; or, when
    /// the values span a factor of 100 or more, decades on a log scale.
    fn fit(values: &[f64]) -> Scale {
        let max = values.iter().copied().fold(0.0, f64::max);
        let min_pos = values
            .iter()
            .copied()
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        if min_pos.is_finite() && values.iter().all(|v| *v > 0.0) && max / min_pos >= 100.0 {
            let (lo, hi) = (min_pos.log10().floor(), max.log10().ceil());
            let ticks = (lo as i32..=hi as i32).map(|e| 10f64.powi(e)).collect();
            return Scale {
                ticks,
                log: true,
                lo,
                hi,
            };
        }
        if max <= 0.0 {
            return Scale {
                ticks: vec![0.0, 1.0],
                log: false,
                lo: 0.0,
                hi: 1.0,
            };
        }
        let rough = max / 5.0;
        let magnitude = 10f64.powf(rough.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= rough)
            .unwrap_or(10.0 * magnitude);
        let top = (max / step).ceil().max(1.0);
        Scale {
            ticks: (0..=top as u32).map(|i| f64::from(i) * step).collect(),
            log: false,
            lo: 0.0,
            hi: top * step,
        }
    }

    /// 0..=1 from the bottom of the panel.
    fn at(&self, v: f64) -> f64 {
        if self.log {
            (v.max(1e-300).log10() - self.lo) / (self.hi - self.lo)
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
}

struct Series {
    label: String,
    /// (x position 0..=1, value, low, high) per panel, in the x key's order.
    points: Vec<Vec<(f64, f64, f64, f64)>>,
}

/// What a plot adds to the sweep's rows: the series' names in the user's
/// words (`--plot-label VALUE=TEXT`) and a reference drawn over them.
pub struct Extras<'a> {
    pub labels: &'a [(String, String)],
    pub reference: Option<&'a Reference>,
}

/// The swept key across the plot: the first with several values.
pub fn x_axis(axes: &[Axis]) -> usize {
    (0..axes.len())
        .find(|&i| axes[i].values.len() > 1)
        .unwrap_or(0)
}

/// The keys whose values make the series: those with several values, but x.
fn other_axes(axes: &[Axis], x_axis: usize) -> Vec<usize> {
    (0..axes.len())
        .filter(|&i| i != x_axis && axes[i].values.len() > 1)
        .collect()
}

/// One swept value in a series' label: the user's words for it if
/// `--plot-label` gives them; a scenario by its name; `none` with what it
/// means (`client.retry.jitter=none` is exponential backoff without jitter,
/// not "no backoff"); else `key=value`.
fn label_part(key: &str, value: &str, labels: &[(String, String)]) -> String {
    if let Some((_, text)) = labels.iter().find(|(v, _)| v == value) {
        return text.clone();
    }
    if key == super::SCENARIO_KEY {
        return value.to_string();
    }
    if value.trim_matches('"') == "none" {
        let leaf = key.rsplit('.').next().unwrap_or(key).replace('_', " ");
        return format!("{key}=none (no {leaf})");
    }
    format!("{key}={value}")
}

/// A series' label from a row's values, and the label without `--plot-label`.
fn series_label(
    axes: &[Axis],
    others: &[usize],
    values: &[String],
    labels: &[(String, String)],
) -> (String, String) {
    let join = |labels: &[(String, String)]| {
        others
            .iter()
            .map(|&i| label_part(&axes[i].key, &values[i], labels))
            .collect::<Vec<_>>()
            .join(", ")
    };
    (join(labels), join(&[]))
}

/// Each series' names in drawing order: its label first, then the label
/// without `--plot-label` and, for one swept key, its bare value; a
/// reference file may name a series by any of them.
pub fn series_names(axes: &[Axis], x_axis: usize, labels: &[(String, String)]) -> Vec<Vec<String>> {
    let others = other_axes(axes, x_axis);
    let mut out: Vec<Vec<String>> = Vec::new();
    for combo in super::axis::cross_product(axes) {
        if combo[x_axis] != 0 {
            continue;
        }
        let values: Vec<String> = (0..axes.len())
            .map(|i| axes[i].values[combo[i]].clone())
            .collect();
        let (label, plain) = series_label(axes, &others, &values, labels);
        let mut names = vec![label, plain];
        if let [only] = others.as_slice() {
            names.push(values[*only].clone());
        }
        if !out.iter().any(|n| n[0] == names[0]) {
            out.push(names);
        }
    }
    out
}

/// `--plot-label VALUE=TEXT` flags, each value one of the series' values.
pub fn labels(flags: &[String], axes: &[Axis]) -> Result<Vec<(String, String)>, UsageError> {
    let others = other_axes(axes, x_axis(axes));
    let values: Vec<&str> = others
        .iter()
        .flat_map(|&i| axes[i].values.iter().map(String::as_str))
        .collect();
    let mut out: Vec<(String, String)> = Vec::with_capacity(flags.len());
    for flag in flags {
        let Some((value, text)) = flag.split_once('=').filter(|(_, t)| !t.trim().is_empty()) else {
            return Err(UsageError(format!(
                "error: --plot-label {flag}: not VALUE=TEXT\nhelp: name a series by a swept value, e.g. --plot-label 'none=exponential, no jitter'\n"
            )));
        };
        let value = value.trim();
        if !values.contains(&value) {
            let help = if values.is_empty() {
                "the plot has one line; name it with a second swept key, or leave --plot-label out"
                    .to_string()
            } else {
                format!(
                    "use one of the values that make the lines: {}",
                    values.join(", ")
                )
            };
            return Err(UsageError(format!(
                "error: --plot-label {flag}: no line of the plot has the value {value}\nhelp: {help}\n"
            )));
        }
        if out.iter().any(|(v, _)| v == value) {
            return Err(UsageError(format!(
                "error: --plot-label names the value {value} twice\nhelp: give each value one label\n"
            )));
        }
        out.push((value.to_string(), text.trim().to_string()));
    }
    Ok(out)
}

/// The plot of one sweep: one panel per `ys`, the first key with several
/// values across, one line per combination of the other swept keys, and
/// the reference's points over them.
pub fn svg(
    name: &str,
    seeds: SeedRange,
    axes: &[Axis],
    rows: &[Row],
    ys: &[Y],
    extras: &Extras,
) -> String {
    assert!(!axes.is_empty() && !rows.is_empty(), "a sweep has variants");
    assert!(!ys.is_empty(), "a plot has a panel");
    let x_axis = x_axis(axes);
    let (xpos, scale_note) = x_positions(&axes[x_axis].values);
    let series = series_of(name, axes, rows, ys, (x_axis, &xpos), extras.labels);
    let frame = Frame::new(
        &axes[x_axis],
        xpos,
        scale_note,
        (&series, extras.reference),
        ys,
    );
    let mut o = String::new();
    frame.header(&mut o, name, seeds, ys);
    for (j, y) in ys.iter().enumerate() {
        let panel = frame.panel(j, y, &series, extras.reference);
        panel.axes(&mut o, &frame, y, j + 1 == ys.len());
        if matches!(y, Y::ViolationRate) {
            panel.bands(&mut o, &frame, &series);
        }
        panel.lines(&mut o, &frame, &series);
        if let Some(r) = extras.reference {
            panel.reference(&mut o, &frame, r.of(y).filter(|p| p.series < series.len()));
        }
    }
    frame.legend(&mut o, &series, ys, extras.reference);
    o.push_str("</svg>\n");
    o
}

/// One line per combination of the swept keys other than `x_axis`, each
/// with its points per panel, sorted by x.
fn series_of(
    name: &str,
    axes: &[Axis],
    rows: &[Row],
    ys: &[Y],
    (x_axis, xpos): (usize, &[f64]),
    labels: &[(String, String)],
) -> Vec<Series> {
    let others = other_axes(axes, x_axis);
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let label = if others.is_empty() {
            name.to_string()
        } else {
            series_label(axes, &others, &r.values, labels).0
        };
        let xi = axes[x_axis]
            .values
            .iter()
            .position(|v| *v == r.values[x_axis])
            .expect("a row's value comes from its axis");
        let k = match series.iter().position(|s| s.label == label) {
            Some(k) => k,
            None => {
                series.push(Series {
                    label,
                    points: vec![Vec::new(); ys.len()],
                });
                series.len() - 1
            }
        };
        for (j, y) in ys.iter().enumerate() {
            if let Some((v, lo, hi)) = y.point(r) {
                series[k].points[j].push((xpos[xi], v, lo, hi));
            }
        }
    }
    for s in &mut series {
        for p in &mut s.points {
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    series
}
