//! `sweep --plot`: the violation rate against the first swept key, one line per
//! combination of the other swept keys, each with its 95% Wilson band; or,
//! with `--plot-metric`, any of the table's metric columns, one panel each,
//! stacked above each other on the same x axis.
//!
//! Hand-written SVG: a few dozen elements, no script, no embedded or external
//! font (the generic `sans-serif` family), so it opens in any browser and
//! diffs as text. A plotting crate would bring far more than this needs.

use super::axis::Axis;
use super::columns::{human_time, Field, Shape};
use super::variant::Row;
use idemsim::catalog::UsageError;
use std::fmt::Write;

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

/// Dash patterns, so that lines lying on top of each other stay visible.
const DASHES: &[&str] = &["none", "7 4", "2 3", "10 3 2 3"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

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

/// The plot of one sweep: one panel per `ys`, the first key with several
/// values across, one line per combination of the other swept keys.
pub fn svg(name: &str, runs: u64, axes: &[Axis], rows: &[Row], ys: &[Y]) -> String {
    assert!(!axes.is_empty() && !rows.is_empty(), "a sweep has variants");
    assert!(!ys.is_empty(), "a plot has a panel");
    let x_axis = (0..axes.len())
        .find(|&i| axes[i].values.len() > 1)
        .unwrap_or(0);
    let (xpos, scale_note) = x_positions(&axes[x_axis].values);
    let series = series_of(name, axes, rows, ys, x_axis, &xpos);
    let frame = Frame::new(&axes[x_axis], xpos, scale_note, &series, ys);
    let mut o = String::new();
    frame.header(&mut o, name, runs, ys);
    for (j, y) in ys.iter().enumerate() {
        let panel = frame.panel(j, y, &series);
        panel.axes(&mut o, &frame, y, j + 1 == ys.len());
        if matches!(y, Y::ViolationRate) {
            panel.bands(&mut o, &frame, &series);
        }
        panel.lines(&mut o, &frame, &series);
    }
    frame.legend(&mut o, &series, ys);
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
    x_axis: usize,
    xpos: &[f64],
) -> Vec<Series> {
    let others: Vec<usize> = (0..axes.len())
        .filter(|&i| i != x_axis && axes[i].values.len() > 1)
        .collect();
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let label = if others.is_empty() {
            name.to_string()
        } else {
            others
                .iter()
                .map(|&i| format!("{}={}", axes[i].key, r.values[i]))
                .collect::<Vec<_>>()
                .join(", ")
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

/// The page's layout: sizes, the x axis and its tick labels.
struct Frame<'a> {
    x_key: &'a str,
    xpos: Vec<f64>,
    scale_note: &'static str,
    labels: Vec<String>,
    /// Neighbouring x labels would touch: every other one goes a row lower.
    crowded: bool,
    plot_w: f64,
    plot_h: f64,
    height: f64,
    width: f64,
}

impl<'a> Frame<'a> {
    fn new(
        x: &'a Axis,
        xpos: Vec<f64>,
        scale_note: &'static str,
        series: &[Series],
        ys: &[Y],
    ) -> Self {
        let longest = series
            .iter()
            .map(|s| s.label.chars().count())
            .max()
            .unwrap_or(0);
        let right = (60.0 + CHAR_PX * longest as f64).max(150.0);
        let plot_w = PLOT_WIDTH;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let labels: Vec<String> = x.values.iter().map(|v| tick_label(&x.key, v)).collect();
        let crowded = labels.windows(2).zip(xpos.windows(2)).any(|(l, x)| {
            let need = CHAR_PX * (l[0].chars().count() + l[1].chars().count()) as f64 / 2.0 + 6.0;
            (x[1] - x[0]).abs() * plot_w < need
        });
        Frame {
            x_key: &x.key,
            xpos,
            scale_note,
            labels,
            crowded,
            plot_w,
            plot_h,
            height: HEIGHT + (ys.len() - 1) as f64 * (plot_h + GAP),
            width: LEFT + plot_w + right,
        }
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + x * self.plot_w
    }

    fn header(&self, o: &mut String, name: &str, runs: u64, ys: &[Y]) {
        let (width, height) = (self.width, self.height);
        let what = ys.iter().map(Y::name).collect::<Vec<_>>().join(", ");
        let bands = ys.iter().any(|y| matches!(y, Y::ViolationRate));
        let _ = writeln!(
            o,
            r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">
<title>{} – {} by {}</title>
<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>
<text x="{LEFT}" y="24" font-size="15" font-weight="bold">{} – {} by {}</text>
<text x="{LEFT}" y="42" fill="#555555">seeds 0..{runs} for every variant{}</text>"##,
            esc(name),
            esc(&what),
            esc(self.x_key),
            esc(name),
            esc(&what),
            esc(self.x_key),
            if bands {
                "; shaded: 95% Wilson interval"
            } else {
                ""
            },
        );
    }

    /// Panel `j`: where it sits and its y scale, fitted to `series` for a metric.
    fn panel(&self, j: usize, y: &Y, series: &[Series]) -> Panel {
        let scale = match y {
            Y::ViolationRate => Scale::violation_rate(),
            Y::Metric(_) => {
                let values: Vec<f64> = series
                    .iter()
                    .flat_map(|s| s.points[j].iter().map(|p| p.1))
                    .collect();
                Scale::fit(&values)
            }
        };
        Panel {
            j,
            top: TOP + j as f64 * (self.plot_h + GAP),
            plot_h: self.plot_h,
            scale,
        }
    }

    /// The legend to the right of the plot.
    fn legend(&self, o: &mut String, series: &[Series], ys: &[Y]) {
        let bands = ys.iter().any(|y| matches!(y, Y::ViolationRate));
        let lx = self.px(1.0) + 24.0;
        let _ = writeln!(
            o,
            r#"<text x="{lx:.1}" y="{:.1}" font-weight="bold">lines</text>"#,
            TOP + 4.0
        );
        for (k, s) in series.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let y = TOP + 24.0 + 22.0 * k as f64;
            // The shaded swatch stands for a band; metric panels draw none.
            if bands {
                let _ = writeln!(
                    o,
                    r#"<rect x="{lx:.1}" y="{:.1}" width="22" height="10" fill="{color}" fill-opacity="0.18"/>"#,
                    y - 5.0,
                );
            }
            let _ = writeln!(
                o,
                r#"<line x1="{lx:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{}"/>
<text x="{:.1}" y="{:.1}">{}</text>"#,
                lx + 22.0,
                DASHES[k % DASHES.len()],
                lx + 30.0,
                y + 4.0,
                esc(&s.label)
            );
        }
    }
}

/// One panel: its index, top edge and y scale.
struct Panel {
    j: usize,
    top: f64,
    plot_h: f64,
    scale: Scale,
}

impl Panel {
    fn py(&self, v: f64) -> f64 {
        self.top + (1.0 - self.scale.at(v)) * self.plot_h
    }

    /// Grid, ticks, axes and their labels; the x key is named once, under
    /// the `last` panel.
    fn axes(&self, o: &mut String, f: &Frame, y: &Y, last: bool) {
        for &t in &self.scale.ticks {
            let _ = writeln!(
                o,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#e3e3e3"/>
<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                f.px(0.0),
                self.py(t),
                f.px(1.0),
                self.py(t),
                f.px(0.0) - 8.0,
                self.py(t) + 4.0,
                esc(&y.tick(t))
            );
        }
        // X ticks at the swept values; labels that would touch go on two rows.
        let bottom = self.top + self.plot_h;
        for (i, (label, &x)) in f.labels.iter().zip(&f.xpos).enumerate() {
            let row = if f.crowded && i % 2 == 1 { 14.0 } else { 0.0 };
            let _ = writeln!(
                o,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333333"/>
<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                f.px(x),
                bottom,
                f.px(x),
                bottom + 5.0 + row,
                f.px(x),
                bottom + 19.0 + row,
                esc(label)
            );
        }
        let log_note = if self.scale.log { " (log scale)" } else { "" };
        let _ = writeln!(
            o,
            r##"<line x1="{l:.1}" y1="{b:.1}" x2="{r:.1}" y2="{b:.1}" stroke="#333333"/>
<line x1="{l:.1}" y1="{t:.1}" x2="{l:.1}" y2="{b:.1}" stroke="#333333"/>"##,
            l = f.px(0.0),
            r = f.px(1.0),
            t = self.top,
            b = bottom,
        );
        if last {
            let _ = writeln!(
                o,
                r##"<text x="{cx:.1}" y="{xl:.1}" text-anchor="middle">{key}{scale_note}</text>"##,
                cx = LEFT + f.plot_w / 2.0,
                xl = f.height - 18.0,
                key = esc(f.x_key),
                scale_note = f.scale_note,
            );
        }
        let _ = writeln!(
            o,
            r##"<text transform="translate(18 {cy:.1}) rotate(-90)" text-anchor="middle">{label}{log_note}</text>"##,
            cy = self.top + self.plot_h / 2.0,
            label = esc(&y.axis_label()),
        );
    }

    /// The 95% bands of the violation rate, drawn before every line so that
    /// no band covers another series' line.
    fn bands(&self, o: &mut String, f: &Frame, series: &[Series]) {
        for (k, s) in series.iter().enumerate() {
            let points = &s.points[self.j];
            if points.is_empty() {
                continue;
            }
            let color = PALETTE[k % PALETTE.len()];
            let band: Vec<String> = if points.len() == 1 {
                let (x, _, lo, hi) = points[0];
                [(-6.0, hi), (6.0, hi), (6.0, lo), (-6.0, lo)]
                    .iter()
                    .map(|(dx, y)| format!("{:.1},{:.1}", f.px(x) + dx, self.py(*y)))
                    .collect()
            } else {
                let upper = points.iter().map(|p| (p.0, p.3));
                let lower = points.iter().rev().map(|p| (p.0, p.2));
                upper
                    .chain(lower)
                    .map(|(x, y)| format!("{:.1},{:.1}", f.px(x), self.py(y)))
                    .collect()
            };
            let _ = writeln!(
                o,
                r#"<polygon points="{}" fill="{color}" fill-opacity="0.18" stroke="none"/>"#,
                band.join(" ")
            );
        }
    }

    /// Each series' line and points.
    fn lines(&self, o: &mut String, f: &Frame, series: &[Series]) {
        for (k, s) in series.iter().enumerate() {
            let points = &s.points[self.j];
            if points.is_empty() {
                continue;
            }
            let color = PALETTE[k % PALETTE.len()];
            let d: Vec<String> = points
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let cmd = if i == 0 { "M" } else { "L" };
                    format!("{cmd}{:.1},{:.1}", f.px(p.0), self.py(p.1))
                })
                .collect();
            let _ = writeln!(
                o,
                r#"<path d="{}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{}"/>"#,
                d.join(" "),
                DASHES[k % DASHES.len()]
            );
            for p in points {
                let _ = writeln!(
                    o,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"/>"#,
                    f.px(p.0),
                    self.py(p.1)
                );
            }
        }
    }
}
