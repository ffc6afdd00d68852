//! The run report and the sweep page at real screen sizes, 1280×800 and
//! 1920×1080 (and the report at 1024×768, the sweep at 1400×1000), in
//! headless Chromium: the page never scrolls sideways, the
//! diagram's "what happened" column is inside the window, the state panel
//! shows tables with units, the sweep page shows no empty chart, round
//! ticks and error bars on a categorical axis. The screenshots are the
//! test's artefacts (target/tmp/browser-widths/, docs/report.md).

use crate::support::{browser, run, scratch};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The report also at 1024 px, where the state panel goes under the
/// diagram; the sweep page also at 1400 px, the other tests' window.
const REPORT_SIZES: [(u32, u32); 3] = [(1024, 768), (1280, 800), (1920, 1080)];
const SWEEP_SIZES: [(u32, u32); 3] = [(1280, 800), (1400, 1000), (1920, 1080)];

/// The page's width against the window's: `[scrollWidth, innerWidth]`.
const PAGE_WIDTH: &str = "[document.documentElement.scrollWidth, window.innerWidth]";

fn assert_fits(r: &Value, what: &str) {
    let (page, window) = (r[0].as_f64().unwrap(), r[1].as_f64().unwrap());
    assert!(
        page <= window,
        "{what}: the page is {page} px wide in a {window} px window"
    );
}

fn shot(dir: &Path, name: &str, (w, h): (u32, u32)) -> PathBuf {
    dir.join(format!("{name}-{w}x{h}.png"))
}

#[test]
fn the_run_report_fits_1280_and_1920_pixels_with_its_text_column_in_view() {
    if !browser::available("the_run_report_fits_1280_and_1920_pixels_with_its_text_column_in_view")
    {
        return;
    }
    let dir = scratch("browser-widths/report");
    let path = dir.join("report.html");
    run(
        &[
            "report",
            "payment-key-expired-before-retry",
            "--seed",
            "2",
            "-o",
            &path.to_string_lossy(),
        ],
        1,
    );
    for size in REPORT_SIZES {
        let png = shot(&dir, "report", size);
        let page = browser::open_at(
            &path,
            size,
            json!([
                {"eval": PAGE_WIDTH},
                // Every row's text, the wrapped lines too, inside the window.
                {"eval": "Array.from(document.querySelectorAll('#diagram text.desc')).map((t) => { const b = t.getBoundingClientRect(); return [b.left, b.right]; })"},
                {"eval": "(() => { const b = document.getElementById('step-info').getBoundingClientRect(); return [b.left, b.right, b.width]; })()"},
                {"eval": "document.querySelectorAll('#states table').length"},
                {"eval": "document.getElementById('states').innerText"},
                {"screenshot": png.to_string_lossy()},
            ]),
        );
        assert!(page.errors.is_empty(), "{size:?}: {:?}", page.errors);
        let r = &page.results;
        assert_fits(&r[0], &format!("report at {size:?}"));
        let window = f64::from(size.0);
        let rows = r[1].as_array().unwrap();
        assert!(rows.len() > 10, "the rows are drawn: {rows:?}");
        for b in rows {
            let (left, right) = (b[0].as_f64().unwrap(), b[1].as_f64().unwrap());
            assert!(
                left >= 0.0 && right <= window && right > left,
                "{size:?}: a row's text at {left}..{right} is outside the window"
            );
        }
        let side = &r[2];
        assert!(
            side[1].as_f64().unwrap() <= window && side[2].as_f64().unwrap() > 250.0,
            "{size:?}: the side panel is in view: {side:?}"
        );
        assert!(r[3].as_u64().unwrap() >= 3, "the state panel is tables");
        let states = r[4].as_str().unwrap();
        assert!(
            states.contains("retention\t1 d"),
            "{size:?}: durations in units: {states}"
        );
        for debug in ["Space {", "_us", "Some(", "retention_us"] {
            assert!(!states.contains(debug), "{size:?}: {debug} in {states}");
        }
        let len = std::fs::metadata(&png).expect("a screenshot").len();
        assert!(len > 10_000, "the screenshot shows something: {len} bytes");
    }
}

/// The numbers of a chart's y ticks (its x ticks are the swept values).
fn numbers(ticks: &Value) -> Vec<f64> {
    ticks
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let t = t.as_str().unwrap();
            let n: String = t
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            n.parse()
                .unwrap_or_else(|_| panic!("a tick that is no number: {t}"))
        })
        .collect()
}

#[test]
fn the_sweep_page_fits_shows_no_empty_chart_and_ticks_on_round_values() {
    if !browser::available("the_sweep_page_fits_shows_no_empty_chart_and_ticks_on_round_values") {
        return;
    }
    let dir = scratch("browser-widths/sweep");
    let path = dir.join("sweep.html");
    run(
        &[
            "sweep",
            "payment-give-up-silently",
            "--set",
            "client.retry.max_attempts=3,10",
            "--set",
            "client.retry.dead_letter=false,true",
            "--runs",
            "60",
            "--html",
            &path.to_string_lossy(),
        ],
        0,
    );
    for size in SWEEP_SIZES {
        let png = shot(&dir, "sweep", size);
        let page = browser::open_at(
            &path,
            size,
            json!([
                {"eval": PAGE_WIDTH},
                {"eval": "document.getElementById('charts').innerText.includes('no value')"},
                // dead_letter (false, true) on the x axis: a categorical axis.
                {"eval": "(() => { const s = document.getElementById('x-axis'); s.value = s.options[1].value; s.dispatchEvent(new Event('change')); return [document.querySelectorAll('.chart[data-metric=violation_rate] .error-bar').length, document.querySelectorAll('.chart[data-metric=violation_rate] polygon').length]; })()"},
                {"eval": "Array.from(document.querySelectorAll('.chart[data-metric=violation_rate] text.tick')).map((t) => t.textContent).filter((t) => t.endsWith('%'))"},
                {"eval": "Array.from(document.querySelectorAll('.chart[data-metric=attempts_per_operation] text.tick')).map((t) => t.textContent).filter((t) => /^[0-9.]+$/.test(t))"},
                {"screenshot": png.to_string_lossy()},
            ]),
        );
        assert!(page.errors.is_empty(), "{size:?}: {:?}", page.errors);
        let r = &page.results;
        assert_fits(&r[0], &format!("sweep page at {size:?}"));
        assert_eq!(r[1], false, "{size:?}: no empty chart is drawn");
        assert_eq!(
            r[2],
            json!([4, 0]),
            "{size:?}: an error bar per variant on a categorical axis, no band"
        );
        for ticks in [numbers(&r[3]), numbers(&r[4])] {
            assert!(ticks.len() >= 2 && ticks[0] == 0.0, "{ticks:?}");
            let step = ticks[1];
            let mantissa = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6),
                "{size:?}: ticks on 1, 2 or 5 × 10^k: {ticks:?}"
            );
            for (i, t) in ticks.iter().enumerate() {
                assert!(
                    (t - step * i as f64).abs() < 1e-6,
                    "{size:?}: evenly spaced: {ticks:?}"
                );
            }
        }
        let len = std::fs::metadata(&png).expect("a screenshot").len();
        assert!(len > 10_000, "the screenshot shows something: {len} bytes");
    }
}
