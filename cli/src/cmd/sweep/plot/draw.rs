//! Drawing one sweep plot: the page's frame (size, header, legend) and each
//! panel (axes, 95% bands, lines), as SVG text.

use super::reference::{Point, Reference};
use super::{
    esc, tick_label, Scale, Series, BOTTOM, CHAR_PX, DASHES, GAP, HEIGHT, LEFT, PALETTE,
    PLOT_WIDTH, TOP, Y,
};
use crate::cmd::sweep::axis::Axis;
use sim::SeedRange;
use std::fmt::Write;

/// The page's layout: sizes, the x axis and its tick labels.
pub(super) struct Frame<'a> {
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
    pub(super) fn new(
        x: &'a Axis,
        xpos: Vec<f64>,
        scale_note: &'static str,
        (series, reference): (&[Series], Option<&Reference>),
        ys: &[Y],
    ) -> Self {
        let longest = series
            .iter()
            .map(|s| s.label.chars().count())
            .chain(reference.map(|r| r.title.chars().count()))
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

    pub(super) fn header(&self, o: &mut String, name: &str, seeds: SeedRange, ys: &[Y]) {
        let what = ys.iter().map(Y::name).collect::<Vec<_>>().join(", ");
        // The title is one line at 15 px bold (about CHAR_PX a character, measured
        // in Chromium): the canvas widens to hold it
        // (several scenarios' names can outrun the panels and the legend).
        let title_chars = [name, &what, self.x_key]
            .iter()
            .map(|t| t.chars().count())
            .sum::<usize>()
            + 7;
        let title_w = LEFT + CHAR_PX * title_chars as f64 + 16.0;
        let (width, height) = (self.width.max(title_w.ceil()), self.height);
        let bands = ys.iter().any(|y| matches!(y, Y::ViolationRate));
        let _ = writeln!(
            o,
            r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">
<title>{} – {} by {}</title>
<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>
<text x="{LEFT}" y="24" font-size="15" font-weight="bold">{} – {} by {}</text>
<text x="{LEFT}" y="42" fill="#555555">seeds {seeds} for every variant{}</text>"##,
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
    pub(super) fn panel(
        &self,
        j: usize,
        y: &Y,
        series: &[Series],
        reference: Option<&Reference>,
    ) -> Panel {
        let scale = match y {
            Y::ViolationRate => Scale::violation_rate(),
            Y::Metric(_) => {
                // The reference's bars must fit too, or they would leave the panel.
                let values: Vec<f64> = series
                    .iter()
                    .flat_map(|s| s.points[j].iter().map(|p| p.1))
                    .chain(
                        reference
                            .into_iter()
                            .flat_map(|r| r.of(y).flat_map(|p| [p.value, p.low, p.high])),
                    )
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
    pub(super) fn legend(
        &self,
        o: &mut String,
        series: &[Series],
        ys: &[Y],
        reference: Option<&Reference>,
    ) {
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
        if let Some(r) = reference {
            // Below the lines: a grey diamond with its bar, and the source.
            let y = TOP + 24.0 + 22.0 * series.len() as f64 + 8.0;
            let _ = writeln!(
                o,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#555555" stroke-width="1.5"/>
{}
<text x="{:.1}" y="{:.1}">{}</text>"##,
                y - 8.0,
                y + 8.0,
                diamond(lx + 11.0, y, "#555555"),
                lx + 30.0,
                y + 4.0,
                esc(&r.title),
                x = lx + 11.0,
            );
        }
    }
}

/// A hollow diamond, the reference's marker: it differs from the lines'
/// filled dots in shape, not only in colour.
fn diamond(x: f64, y: f64, color: &str) -> String {
    format!(
        r##"<path d="M{:.1},{y:.1} L{x:.1},{:.1} L{:.1},{y:.1} L{x:.1},{:.1} Z" fill="#ffffff" stroke="{color}" stroke-width="1.5"/>"##,
        x - 5.0,
        y - 5.0,
        x + 5.0,
        y + 5.0
    )
}

/// One panel: its index, top edge and y scale.
pub(super) struct Panel {
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
    pub(super) fn axes(&self, o: &mut String, f: &Frame, y: &Y, last: bool) {
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
    pub(super) fn bands(&self, o: &mut String, f: &Frame, series: &[Series]) {
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

    /// The reference's points of this panel, each a diamond on a bar from its
    /// low to its high, a little right of the sweep's own point so that
    /// neither hides the other.
    pub(super) fn reference<'p>(
        &self,
        o: &mut String,
        f: &Frame,
        points: impl Iterator<Item = &'p Point>,
    ) {
        for p in points {
            let color = PALETTE[p.series % PALETTE.len()];
            let x = f.px(f.xpos[p.x]) + 7.0;
            let (lo, hi) = (self.py(p.low), self.py(p.high));
            let _ = writeln!(
                o,
                r#"<path d="M{x:.1},{lo:.1} L{x:.1},{hi:.1} M{:.1},{lo:.1} L{:.1},{lo:.1} M{:.1},{hi:.1} L{:.1},{hi:.1}" stroke="{color}" stroke-width="1.5" fill="none"/>
{}"#,
                x - 3.0,
                x + 3.0,
                x - 3.0,
                x + 3.0,
                diamond(x, self.py(p.value), color),
            );
        }
    }

    /// Each series' line and points.
    pub(super) fn lines(&self, o: &mut String, f: &Frame, series: &[Series]) {
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
