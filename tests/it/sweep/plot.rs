//! `sweep --plot` as docs/backoff-and-jitter.md uses it: lines named in the
//! reader's words, a series of another scenario, and a reference simulator's
//! numbers drawn over the lines as points with error bars.

use super::assert_well_formed;
use crate::support::{run as check, scratch};
use std::path::Path;

/// The sweep of two scenarios over 5 and 10 clients, plotted with `extra` flags.
fn plot(dir: &Path, extra: &[&str], code: i32) -> (String, String) {
    let path = dir.join("plot.svg");
    let file = path.to_str().unwrap().to_string();
    let mut args = vec![
        "sweep",
        "contention-no-backoff",
        "contention-no-jitter",
        "--set",
        "clients=5,10",
        "--runs",
        "5",
        "--plot",
        &file,
        "--plot-metric",
        "attempts_per_run,completion_us",
    ];
    args.extend(extra);
    let (_, err) = check(&args, code);
    let svg = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::remove_file(&path).ok();
    (svg, err)
}

/// A reference file in the scratch folder.
fn reference(dir: &Path, text: &str) -> String {
    let path = dir.join("reference.csv");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The texts of the SVG's `<text>` elements.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text ")
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()])
        .collect()
}

#[test]
fn lines_are_named_in_the_readers_words() {
    let (svg, _) = plot(
        &scratch("sweep/plot-labels"),
        &[
            "--plot-label",
            "contention-no-jitter=exponential, no jitter",
        ],
        0,
    );
    assert_well_formed(&svg);
    let shown = texts(&svg);
    // A scenario is its name; a value given words is those words.
    assert!(shown.contains(&"contention-no-backoff"), "{shown:?}");
    assert!(shown.contains(&"exponential, no jitter"), "{shown:?}");
    assert!(!shown.iter().any(|t| t.contains("scenario=")), "{shown:?}");
    // The title names the scenarios, their shared prefix once, not a count.
    assert!(
        shown
            .iter()
            .any(|t| t.starts_with("contention-no-{backoff, jitter} – ")),
        "{shown:?}"
    );
    // Two panels, a line each per scenario; no reference, no diamond.
    assert_eq!(svg.matches("<path ").count(), 4, "{svg}");
    // A value `none` says what it means.
    let path = scratch("sweep/plot-none").join("plot.svg");
    let file = path.to_str().unwrap();
    check(
        &[
            "sweep",
            "contention-full-jitter",
            "--set",
            "clients=5,10",
            "--set",
            "client.retry.jitter=none,full",
            "--runs",
            "3",
            "--plot",
            file,
        ],
        0,
    );
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(
        texts(&svg).contains(&"client.retry.jitter=none (no jitter)"),
        "{svg}"
    );
    // A label for a value no line has is refused, with the values lines have.
    let (_, err) = plot(
        &scratch("sweep/plot-bad-label"),
        &["--plot-label", "decorrelated=x"],
        2,
    );
    assert!(
        err.contains("--plot-label decorrelated=x")
            && err.contains("contention-no-backoff, contention-no-jitter"),
        "{err}"
    );
}

#[test]
fn a_reference_is_drawn_as_points_with_error_bars() {
    let dir = scratch("sweep/plot-reference");
    let file = reference(
        &dir,
        "# the simulator, 95%\nx,series,metric,value,low,high\n\
         10,contention-no-backoff,attempts_per_run,50.6,49.7,51.5\n\
         10,\"exponential, no jitter\",completion_us,3536318,3254253,3818382\n\
         5,contention-no-jitter,violation_rate,0,0,0\n",
    );
    let (svg, _) = plot(
        &dir,
        &[
            "--plot-label",
            "contention-no-jitter=exponential, no jitter",
            "--plot-reference",
            &file,
        ],
        0,
    );
    assert_well_formed(&svg);
    assert!(texts(&svg).contains(&"the simulator, 95%"), "{svg}");
    // Four lines, two points each with its bar and diamond (a violation
    // rate the plot does not draw is skipped), and the legend's diamond.
    let diamonds = svg.matches(r##"fill="#ffffff" stroke="##).count();
    assert_eq!(diamonds, 3, "{svg}");
    assert_eq!(svg.matches("<path ").count(), 4 + 2 * 2 + 1, "{svg}");
    // The completion panel's scale reaches the reference's high: its
    // diamond's bar stays inside the panel.
    assert!(
        svg.contains("stroke=\"#D55E00\" stroke-width=\"1.5\" fill=\"none\""),
        "no jitter's colour: {svg}"
    );
}

#[test]
fn a_wrong_reference_row_is_refused_at_its_line_and_column() {
    let dir = scratch("sweep/plot-wrong");
    for (row, at, says) in [
        (
            "20,contention-no-backoff,attempts_per_run,1,1,1",
            ":3:1:",
            "use one of 5, 10",
        ),
        (
            "10,contention-full-jitter,attempts_per_run,1,1,1",
            ":3:4:",
            "contention-no-backoff; contention-no-jitter",
        ),
        (
            "10,contention-no-backoff,calls,1,1,1",
            ":3:26:",
            "attempts_per_run",
        ),
        (
            "10,contention-no-backoff,attempts_per_run,one,1,1",
            ":3:43:",
            "not a number",
        ),
        (
            "10,contention-no-backoff,attempts_per_run,5,1,2",
            ":3:",
            "low <= value <= high",
        ),
    ] {
        let file = reference(&dir, &format!("x,series,metric,value,low,high\n\n{row}\n"));
        let (svg, err) = plot(&dir, &["--plot-reference", &file], 2);
        assert!(svg.is_empty(), "nothing is plotted, nothing runs");
        let name = Path::new(&file).display().to_string();
        assert!(
            err.contains(&format!("{name}{at}")) && err.contains(says),
            "{row}: {err}"
        );
    }
    let file = reference(&dir, "clients,series\n");
    let (_, err) = plot(&dir, &["--plot-reference", &file], 2);
    assert!(
        err.contains(":1:1: the header is `clients,series`")
            && err.contains("x,series,metric,value,low,high"),
        "{err}"
    );
}

/// docs/backoff-and-jitter.svg as a reader's browser draws it at 1280 px:
/// every label inside the picture and clear of every other, the five lines
/// named in the legend, and a diamond for each of the simulator's 40 cells.
#[test]
fn the_jitter_plot_renders_with_every_label_inside_and_apart() {
    use crate::support::browser;
    if !browser::available("the jitter plot in Chromium") {
        return;
    }
    let svg = crate::support::root().join("docs/backoff-and-jitter.svg");
    let page = browser::open_at(
        &svg,
        (1280, 1000),
        serde_json::json!([
            {"eval": "Array.from(document.querySelectorAll('text')).map((t) => { const b = t.getBoundingClientRect(); return [t.textContent, b.left, b.top, b.right, b.bottom]; })"},
            {"eval": "(() => { const b = document.querySelector('svg').getBoundingClientRect(); return [b.width, b.height]; })()"},
            {"eval": "document.querySelectorAll('path[fill=\"#ffffff\"]').length"},
        ]),
    );
    assert!(page.errors.is_empty(), "{:?}", page.errors);
    let size = &page.results[1];
    let (width, height) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
    assert!(width <= 1280.0, "the plot fits the window: {width}");
    let boxes: Vec<(String, [f64; 4])> = page.results[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let n = |i: usize| t[i].as_f64().unwrap();
            (t[0].as_str().unwrap().to_string(), [n(1), n(2), n(3), n(4)])
        })
        .collect();
    for (text, [l, t, r, b]) in &boxes {
        assert!(
            *l >= 0.0 && *t >= 0.0 && *r <= width && *b <= height,
            "`{text}` at {l}..{r} x {t}..{b} leaves the {width} x {height} picture"
        );
    }
    for (i, (a, ba)) in boxes.iter().enumerate() {
        for (b, bb) in &boxes[i + 1..] {
            let apart = ba[2] <= bb[0] + 1.0
                || bb[2] <= ba[0] + 1.0
                || ba[3] <= bb[1] + 1.0
                || bb[3] <= ba[1] + 1.0;
            assert!(apart, "`{a}` {ba:?} overlaps `{b}` {bb:?}");
        }
    }
    let texts: Vec<&str> = boxes.iter().map(|(t, _)| t.as_str()).collect();
    for label in [
        "no backoff",
        "exponential, no jitter",
        "full jitter",
        "equal jitter",
        "decorrelated jitter",
        "AWS's simulator (66cb169), 95% interval",
    ] {
        assert!(texts.contains(&label), "{label} in the legend: {texts:?}");
    }
    // 4 client counts x 5 strategies x 2 panels, and the legend's own.
    assert_eq!(page.results[2].as_u64(), Some(41));
}
