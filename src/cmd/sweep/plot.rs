//! `sweep --plot`: the violation rate against the first swept key, one line per
//! combination of the other swept keys, each with its 95% Wilson band.
//!
//! Hand-written SVG: a few dozen elements, no script, no embedded or external
//! font (the generic `sans-serif` family), so it opens in any browser and
//! diffs as text. A plotting crate would bring far more than this needs.

use super::{Axis, Row};
use std::fmt::Write;

const PLOT_WIDTH: f64 = 460.0;
const HEIGHT: f64 = 460.0;
const LEFT: f64 = 72.0;
/// A rough width of one character at 12 px in a sans-serif face, to keep
/// labels from running into each other or off the canvas.
const CHAR_PX: f64 = 7.0;
const TOP: f64 = 64.0;
const BOTTOM: f64 = 64.0;

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

struct Series {
    label: String,
    /// (x position 0..=1, rate, low, high), in the x key's order.
    points: Vec<(f64, f64, f64, f64)>,
}

pub fn svg(name: &str, runs: u64, axes: &[Axis], rows: &[Row]) -> String {
    assert!(!axes.is_empty() && !rows.is_empty(), "a sweep has variants");
    let x_axis = (0..axes.len())
        .find(|&i| axes[i].values.len() > 1)
        .unwrap_or(0);
    let others: Vec<usize> = (0..axes.len())
        .filter(|&i| i != x_axis && axes[i].values.len() > 1)
        .collect();
    let (xpos, scale_note) = x_positions(&axes[x_axis].values);
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
        let (lo, hi) = r.stats.interval();
        let point = (xpos[xi], r.stats.violation_rate(), lo, hi);
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                label,
                points: vec![point],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }

    let longest = series
        .iter()
        .map(|s| s.label.chars().count())
        .max()
        .unwrap_or(0);
    let right = (60.0 + CHAR_PX * longest as f64).max(150.0);
    let plot_w = PLOT_WIDTH;
    let width = LEFT + plot_w + right;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + x * plot_w;
    let py = |y: f64| TOP + (1.0 - y) * plot_h;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" viewBox="0 0 {width} {HEIGHT}" font-family="sans-serif" font-size="12">
<title>{} – violation rate by {}</title>
<rect x="0" y="0" width="{width}" height="{HEIGHT}" fill="#ffffff"/>
<text x="{LEFT}" y="24" font-size="15" font-weight="bold">{} – violation rate by {}</text>
<text x="{LEFT}" y="42" fill="#555555">seeds 0..{runs} for every variant; shaded: 95% Wilson interval</text>"##,
        esc(name),
        esc(&axes[x_axis].key),
        esc(name),
        esc(&axes[x_axis].key),
    );
    // Grid and y ticks.
    for i in 0..=5 {
        let y = f64::from(i) / 5.0;
        let _ = writeln!(
            o,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#e3e3e3"/>
<text x="{:.1}" y="{:.1}" text-anchor="end">{}%</text>"##,
            px(0.0),
            py(y),
            px(1.0),
            py(y),
            px(0.0) - 8.0,
            py(y) + 4.0,
            i * 20
        );
    }
    // X ticks at the swept values; labels that would touch go on two rows.
    let labels: Vec<String> = axes[x_axis]
        .values
        .iter()
        .map(|v| tick_label(&axes[x_axis].key, v))
        .collect();
    let crowded = labels.windows(2).zip(xpos.windows(2)).any(|(l, x)| {
        let need = CHAR_PX * (l[0].chars().count() + l[1].chars().count()) as f64 / 2.0 + 6.0;
        (x[1] - x[0]).abs() * plot_w < need
    });
    for (i, (label, &x)) in labels.iter().zip(&xpos).enumerate() {
        let row = if crowded && i % 2 == 1 { 14.0 } else { 0.0 };
        let _ = writeln!(
            o,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333333"/>
<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            px(x),
            py(0.0),
            px(x),
            py(0.0) + 5.0 + row,
            px(x),
            py(0.0) + 19.0 + row,
            esc(label)
        );
    }
    // Axes and their labels.
    let _ = writeln!(
        o,
        r##"<line x1="{l:.1}" y1="{b:.1}" x2="{r:.1}" y2="{b:.1}" stroke="#333333"/>
<line x1="{l:.1}" y1="{t:.1}" x2="{l:.1}" y2="{b:.1}" stroke="#333333"/>
<text x="{cx:.1}" y="{xl:.1}" text-anchor="middle">{key}{scale_note}</text>
<text transform="translate(18 {cy:.1}) rotate(-90)" text-anchor="middle">violation rate (share of runs)</text>"##,
        l = px(0.0),
        r = px(1.0),
        t = py(1.0),
        b = py(0.0),
        cx = LEFT + plot_w / 2.0,
        xl = HEIGHT - 18.0,
        cy = TOP + plot_h / 2.0,
        key = esc(&axes[x_axis].key),
    );
    // Bands first, so that no band covers another series' line.
    for (k, s) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let band: Vec<String> = if s.points.len() == 1 {
            let (x, _, lo, hi) = s.points[0];
            [(-6.0, hi), (6.0, hi), (6.0, lo), (-6.0, lo)]
                .iter()
                .map(|(dx, y)| format!("{:.1},{:.1}", px(x) + dx, py(*y)))
                .collect()
        } else {
            let upper = s.points.iter().map(|p| (p.0, p.3));
            let lower = s.points.iter().rev().map(|p| (p.0, p.2));
            upper
                .chain(lower)
                .map(|(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect()
        };
        let _ = writeln!(
            o,
            r#"<polygon points="{}" fill="{color}" fill-opacity="0.18" stroke="none"/>"#,
            band.join(" ")
        );
    }
    for (k, s) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let d: Vec<String> = s
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let cmd = if i == 0 { "M" } else { "L" };
                format!("{cmd}{:.1},{:.1}", px(p.0), py(p.1))
            })
            .collect();
        let _ = writeln!(
            o,
            r#"<path d="{}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{}"/>"#,
            d.join(" "),
            DASHES[k % DASHES.len()]
        );
        for p in &s.points {
            let _ = writeln!(
                o,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"/>"#,
                px(p.0),
                py(p.1)
            );
        }
    }
    // Legend to the right of the plot.
    let lx = px(1.0) + 24.0;
    let _ = writeln!(
        o,
        r#"<text x="{lx:.1}" y="{:.1}" font-weight="bold">lines</text>"#,
        TOP + 4.0
    );
    for (k, s) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let y = TOP + 24.0 + 22.0 * k as f64;
        let _ = writeln!(
            o,
            r#"<rect x="{lx:.1}" y="{:.1}" width="22" height="10" fill="{color}" fill-opacity="0.18"/>
<line x1="{lx:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{}"/>
<text x="{:.1}" y="{:.1}">{}</text>"#,
            y - 5.0,
            lx + 22.0,
            DASHES[k % DASHES.len()],
            lx + 30.0,
            y + 4.0,
            esc(&s.label)
        );
    }
    o.push_str("</svg>\n");
    o
}
