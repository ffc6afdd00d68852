//! The HTML reports: `idemsim report`, `check --html`, `sweep --html`.
//! The files are checked as files (self-contained, deterministic, small) and
//! opened in headless Chromium (`support::browser`): the DOM must show
//! the actors, the arrows, the violation and the point of no return,
//! stepping must change the state panel, and no console error may occur.

use crate::support;

use idemsim::render::formats::text_blocks;
use idemsim::render::items::describe;
use serde_json::{json, Value};
use support::{browser, load, run, scratch};

/// The embedded data document of a report.
fn data(html: &str) -> Value {
    let start = html
        .find("<script type=\"application/json\" id=\"data\">")
        .expect("a data element")
        + "<script type=\"application/json\" id=\"data\">".len();
    let end = start + html[start..].find("</script>").expect("closed");
    serde_json::from_str(&html[start..end]).expect("the data is JSON")
}

fn report(name: &str, args: &[&str], code: i32) -> (std::path::PathBuf, String) {
    let path = scratch(&format!("html/{}", name.trim_end_matches(".html"))).join(name);
    let p = path.to_string_lossy().into_owned();
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", &p]);
    run(&all, code);
    let html = std::fs::read_to_string(&path).expect("the report was written");
    (path, html)
}

/// Nothing in the page can reach the network: no external script, style,
/// image, font or link; the SVG namespace is a name, not a fetch.
fn assert_self_contained(html: &str) {
    for bad in [
        "<link",
        " src=",
        "@import",
        "url(http",
        "href=\"http",
        "https://",
    ] {
        assert!(!html.contains(bad), "the page refers outside itself: {bad}");
    }
    let http = html.matches("http://").count();
    let ns = html.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(http, ns, "only the SVG namespace may name a URL");
}

#[test]
fn a_report_is_one_self_contained_deterministic_file() {
    let args = ["payment-retry-without-key", "--seed", "2", "--shrink"];
    let (_, html) = report("retry-without-key.html", &args, 1);
    assert_self_contained(&html);
    let (_, again) = report("retry-without-key-again.html", &args, 1);
    assert_eq!(html, again, "one seed, one report");
    let d = data(&html);
    assert_eq!(d["actors"], json!(["client", "service", "bank"]));
    assert_eq!(d["end"]["verdict"], "violation");
    assert_eq!(d["end"]["invariant"], "no-duplicate-effect");
    assert!(d["end"]["turn"].is_u64(), "the point of no return is a row");
    assert_eq!(d["end"]["effects"].as_array().unwrap().len(), 2);
    assert!(
        !d["changes"].as_array().unwrap().is_empty(),
        "state snapshots"
    );
    // The ledger: the one operation, paid twice, told nothing yet.
    assert!(html.contains("<tr class=\"violated\"><td class=\"op\">claim 4711"));
    assert!(html.contains("<td class=\"sum\">2 effects</td>"));
    // A shrunk run carries its repro file; the commands reproduce it.
    assert!(html.contains("id=\"repro-file\""));
    assert!(html.contains("idemsim shrink payment-retry-without-key --seed 2"));
}

/// The repro file a report offers is downloaded anywhere, and `replay`
/// opens a repro's scenario file only in the repro's own folder: for a
/// scenario file of the user's, the command the page gives names it, and it
/// replays the downloaded file from another folder.
#[test]
fn a_reports_repro_download_says_how_to_replay_a_users_scenario_file() {
    let dir = scratch("html/report-own-file");
    std::fs::create_dir_all(dir.join("downloads")).unwrap();
    let scenario = dir.join("mine.toml");
    std::fs::copy(
        support::root().join("scenarios/payment-retry-without-key.toml"),
        &scenario,
    )
    .unwrap();
    let scenario = scenario.to_string_lossy().into_owned();
    let (_, html) = report("own-file.html", &[&scenario, "--seed", "2", "--shrink"], 1);
    let replay = format!("idemsim replay {scenario} --repro repro.json");
    assert!(html.contains(&replay), "the page names the scenario file");
    let start =
        html.find("<pre id=\"repro-file\">").expect("a repro") + "<pre id=\"repro-file\">".len();
    let end = start + html[start..].find("</pre>").unwrap();
    let json = html[start..end]
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    let downloaded = dir.join("downloads/repro.json");
    std::fs::write(&downloaded, json).unwrap();
    let out = std::process::Command::new(support::idemsim_bin())
        .args([
            "replay",
            &scenario,
            "--repro",
            &downloaded.to_string_lossy(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Violation of no-duplicate-effect"));
    // For a built-in scenario the repro names it itself.
    let (_, built_in) = report(
        "built-in.html",
        &["payment-retry-without-key", "--seed", "2", "--shrink"],
        1,
    );
    assert!(built_in.contains("then <code>idemsim replay --repro repro.json</code>"));
}

#[test]
fn a_report_names_the_design_warnings_and_whether_this_run_reached_them() {
    // A failing run that went through the gap: the step is a link.
    let (_, html) = report(
        "visibility.html",
        &[
            "messaging-visibility-below-processing",
            "--seed",
            "4",
            "--shrink",
        ],
        1,
    );
    assert!(html.contains("id=\"warnings-section\""));
    assert!(html.contains("<b>visibility-below-processing</b>"));
    let at = html
        .find("class=\"reached\" data-step=\"")
        .expect("reached at a step");
    assert!(
        html[at..].contains("(late-ack)</span>"),
        "{}",
        &html[at..at + 120]
    );
    // The guide's question holds on this seed, and the page says the run
    // never came near the gap.
    let (_, html) = report(
        "guide-question.html",
        &[
            "payment-stable-key",
            "--seed",
            "0",
            "--set",
            "client.retry.window_ms=259200000",
            "--set",
            "service.retention_ms=86400000",
            "--set",
            "bank.key_retention_ms=86400000",
        ],
        0,
    );
    assert!(html.contains("<b>key-retention-below-retry-span</b>"));
    assert!(html.contains(
        "this run did not reach it (retry-after-key-expired); payment-key-expired-before-retry shows it failing"
    ));
    // Settings that break no rule get no section.
    let (_, html) = report(
        "no-warnings.html",
        &["payment-retry-without-key", "--seed", "2"],
        1,
    );
    assert!(!html.contains("warnings-section"));
}

#[test]
fn a_ten_thousand_event_run_stays_under_a_megabyte() {
    let (_, html) = report(
        "uncapped-10000.html",
        &[
            "payment-uncapped-retries",
            "--seed",
            "0",
            "--set",
            "run.max_steps=10000",
        ],
        3,
    );
    let d = data(&html);
    assert_eq!(d["header"]["events"], 10_000);
    assert!(
        html.len() < 1_000_000,
        "a 10,000-event report is {} bytes",
        html.len()
    );
}

#[test]
fn bad_input_to_report_exits_2_with_a_fix() {
    let (_, err) = run(
        &["report", "no-such-scenario", "--seed", "1", "-o", "x.html"],
        2,
    );
    assert!(err.contains("idemsim list"), "{err}");
    let (_, err) = run(
        &[
            "report",
            "payment-retry-without-key",
            "--seed",
            "2",
            "-o",
            "/proc/no/such/dir/r.html",
        ],
        2,
    );
    assert!(err.contains("help:"), "{err}");
    run(&["report", "payment-retry-without-key", "-o", "x.html"], 2);
}

#[test]
fn check_html_writes_the_report_of_the_lowest_failing_seed_shrunk() {
    let dir = scratch("html/check-html");
    let d = dir.to_string_lossy().into_owned();
    let (out, _) = run(
        &[
            "check",
            "payment-retry-without-key",
            "--runs",
            "50",
            "--html",
            &d,
        ],
        1,
    );
    let path = dir.join("payment-retry-without-key-seed-2.html");
    assert!(
        out.contains(&format!("report: {}", path.display())),
        "{out}"
    );
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("shrunk from seed 2"));
    let (out, _) = run(
        &["check", "payment-stable-key", "--runs", "20", "--html", &d],
        0,
    );
    assert!(out.contains("report: none written"), "{out}");
}

/// The text each row of the page must show: the text trace's lines.
fn expected_rows() -> Vec<String> {
    let s = load("payment-retry-without-key", &[]);
    let budget = idemsim::minimize::Budget::from_flags(None, None).expect("default budget");
    let done = idemsim::minimize::shrink_seed(&s, 2, budget).expect("seed 2 fails");
    let t = &done.trace;
    text_blocks(t, true)
        .iter()
        .flat_map(|b| b.items.iter())
        .map(|&i| {
            let mark = if t.end.turn == Some(i) {
                "  ◀ point of no return"
            } else {
                ""
            };
            format!("{}{mark}", describe(&t.items[i]))
        })
        .collect()
}

fn assert_no_errors(page: &browser::Page, what: &str) {
    assert!(
        page.errors.is_empty(),
        "{what}: errors in the browser: {:#?}",
        page.errors
    );
}

#[test]
fn the_run_report_works_in_a_real_browser() {
    if !browser::available("the_run_report_works_in_a_real_browser") {
        return;
    }
    let (path, _) = report(
        "browser-retry-without-key.html",
        &["payment-retry-without-key", "--seed", "2", "--shrink"],
        1,
    );
    let shot = scratch("html/report-shot").join("report.png");
    let page = browser::open(
        &path,
        json!([
            {"eval": "Array.from(document.querySelectorAll('#actors .actor-name')).map(e => e.textContent)"},
            {"eval": "document.querySelectorAll('#diagram line.arrow').length"},
            {"eval": "document.querySelectorAll('#diagram .lost').length"},
            {"eval": "document.getElementById('violation').textContent"},
            {"eval": "document.getElementById('turn') !== null"},
            {"eval": "Array.from(document.querySelectorAll('#diagram text.desc')).map(t => t.textContent)"},
            {"eval": "document.getElementById('diagram').dataset.selectedStep"},
            {"eval": "document.getElementById('states').textContent"},
            {"key": "ArrowRight"},
            {"eval": "document.getElementById('diagram').dataset.selectedStep"},
            {"eval": "document.getElementById('states').textContent"},
            {"key": "Home"},
            {"eval": "document.getElementById('states').textContent"},
            {"key": "ArrowRight"},
            {"eval": "document.querySelector('#states .actor[data-actor=client] .volatile .tables').innerText"},
            {"click": "#diagram text.desc[data-row='12']"},
            {"eval": "document.getElementById('step-info').textContent"},
            {"click": "#ledger li[data-step]"},
            {"eval": "document.getElementById('diagram').dataset.selectedStep"},
            {"screenshot": shot.to_string_lossy()},
        ]),
    );
    assert_no_errors(&page, "run report");
    let r = &page.results;
    assert_eq!(r[0], json!(["client", "service", "bank"]), "the actors");
    assert!(
        r[1].as_u64().unwrap() >= 6,
        "an arrow per delivered message"
    );
    assert!(r[2].as_u64().unwrap() >= 1, "the lost reply is marked");
    let violation = r[3].as_str().unwrap();
    assert!(violation.contains("violation of no-duplicate-effect on claim 4711"));
    assert_eq!(r[4], true, "the point of no return is marked");
    let rows: Vec<String> = serde_json::from_value(r[5].clone()).unwrap();
    assert_eq!(
        rows,
        expected_rows(),
        "the rows say what the text trace says"
    );
    // The report opens at the point of no return (step 4); → goes to step 5.
    // (Key and click steps give no result: r[8] is the eval after the key.)
    assert_eq!(r[6], "4");
    assert_eq!(r[8], "5");
    assert_ne!(r[7], r[9], "stepping changes the state panel");
    let start = r[10].as_str().unwrap();
    assert!(start.contains("not started") || start.contains("awaiting"));
    assert_ne!(
        r[10], r[7],
        "the first step shows another state than step 4"
    );
    // Step 1 (the intent): the client waits for attempt 1, rebuilt from hunks.
    assert_eq!(r[11].as_str().unwrap().trim_end(), "awaiting\t1");
    assert!(
        r[12].as_str().unwrap().contains("Step #"),
        "a click selects a row"
    );
    assert_eq!(r[13], "1", "a ledger entry (the intent) selects its step");
    let png = std::fs::metadata(&shot).expect("a screenshot").len();
    assert!(png > 10_000, "the screenshot shows something: {png} bytes");
}

#[test]
fn a_long_run_folds_and_unfolds_in_the_browser() {
    if !browser::available("a_long_run_folds_and_unfolds_in_the_browser") {
        return;
    }
    let (path, _) = report(
        "browser-uncapped.html",
        &[
            "payment-uncapped-retries",
            "--seed",
            "0",
            "--set",
            "run.max_steps=3000",
        ],
        3,
    );
    let page = browser::open(
        &path,
        json!([
            {"eval": "document.querySelectorAll('#diagram .fold').length > 0"},
            {"eval": "Number(document.getElementById('diagram').getAttribute('height'))"},
            {"click": "#diagram .fold"},
            {"eval": "Number(document.getElementById('diagram').getAttribute('height'))"},
            {"key": "End"},
            {"eval": "document.getElementById('step-info').textContent"},
            {"screenshot": scratch("html/report-long-shot").join("report-long.png").to_string_lossy()},
        ]),
    );
    assert_no_errors(&page, "long run report");
    let r = &page.results;
    assert_eq!(r[0], true, "a retry loop is folded");
    assert!(r[2].as_f64() > r[1].as_f64(), "a click unfolds: {r:?}");
    assert!(r[3].as_str().unwrap().contains("end of the run"));
}

#[test]
fn the_sweep_report_charts_every_metric_and_links_failing_seeds() {
    let path = scratch("html/sweep-retries").join("retries.html");
    let p = path.to_string_lossy().into_owned();
    run(
        &[
            "sweep",
            "payment-give-up-silently",
            "--set",
            "client.retry.cap_ms=60000",
            "--set",
            "client.retry.max_attempts=3,10",
            "--set",
            "client.retry.dead_letter=false,true",
            "--runs",
            "100",
            "--html",
            &p,
        ],
        0,
    );
    let html = std::fs::read_to_string(&path).unwrap();
    assert_self_contained(&html);
    let d = data(&html);
    let metrics = d["metrics"].as_array().unwrap().len();
    assert!(
        metrics >= 5,
        "the model's metrics, not only the violation rate"
    );
    let links: Vec<&str> = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["report"].as_str())
        .collect();
    assert_eq!(links, ["retries-3_false-seed-0.html"]);
    let dir = path.parent().unwrap();
    for l in &links {
        assert!(dir.join(l).is_file(), "{l} is written next to the sweep");
        assert!(html.contains(&format!("href=\"{l}\"")));
    }
    if !browser::available("the_sweep_report_charts_every_metric_and_links_failing_seeds") {
        return;
    }
    let page = browser::open(
        &path,
        json!([
            {"eval": "document.querySelectorAll('.chart').length"},
            {"eval": "Array.from(document.querySelectorAll('.chart h3')).map(h => h.textContent)"},
            {"eval": "document.querySelectorAll('.chart a circle').length"},
            {"eval": "(() => { const s = document.getElementById('x-axis'); s.value = s.options[1].value; s.dispatchEvent(new Event('change')); return document.querySelectorAll('#series span').length; })()"},
            {"eval": "Array.from(document.querySelectorAll('.chart[data-metric=effect_p99_us] .tick')).map(t => t.textContent).join(' ')"},
            {"screenshot": scratch("html/sweep-shot").join("sweep.png").to_string_lossy()},
        ]),
    );
    assert_no_errors(&page, "sweep report");
    let r = &page.results;
    let with_values = (0..metrics)
        .filter(|&j| {
            d["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["metrics"][j].is_number())
        })
        .count();
    assert_eq!(
        r[0],
        with_values + 1,
        "one chart per metric with a value and the violation rate"
    );
    assert_eq!(r[1][0], "violation rate");
    assert!(
        r[2].as_u64().unwrap() >= 1,
        "a failing variant's points link to its report"
    );
    assert_eq!(
        r[3], 2,
        "dead_letter on the x axis: one line per max_attempts"
    );
    let ticks = r[4].as_str().unwrap();
    assert!(
        ticks.contains(" s") || ticks.contains("min") || ticks.contains("ms"),
        "durations in human units: {ticks}"
    );
    assert!(
        ticks.contains("false") && ticks.contains("true"),
        "a categorical axis: {ticks}"
    );
    let report = dir.join(links[0]);
    let page = browser::open(&report, json!([{"eval": "document.title"}]));
    assert_no_errors(&page, "a linked report");
    assert!(page.results[0]
        .as_str()
        .unwrap()
        .contains("shrunk from seed 0"));
}

#[test]
fn the_sweep_report_marks_the_variants_that_hold_past_a_rule_they_break() {
    let path = scratch("html/sweep-retention").join("retention.html");
    let p = path.to_string_lossy().into_owned();
    run(
        &[
            "sweep",
            "payment-key-expired-before-retry",
            "--set",
            "service.retention_ms=86400000,259200000,604800000",
            "--runs",
            "100",
            "--html",
            &p,
        ],
        0,
    );
    let html = std::fs::read_to_string(&path).expect("the page was written");
    assert!(html.contains("<th>design warnings</th>"));
    // 1 day fails through the gap; 3 days holds without any run reaching it
    // (the outage is 2 days); 7 days breaks no rule.
    let rows: Vec<&str> = html
        .split("<tr")
        .filter(|r| r.contains("<td>") && !r.contains("<th>"))
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(
        rows[0].contains("key-retention-below-retry-span</span>: reached in"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("class=\"warnings unreached\"")
            && rows[1].contains("no run reached it (retry-after-key-expired)"),
        "{}",
        rows[1]
    );
    assert!(
        rows[2].ends_with("<td class=\"none\">-</td></tr>\n")
            || rows[2].contains("<td class=\"none\">-</td></tr>"),
        "{}",
        rows[2]
    );
    assert!(!rows[2].contains("class=\"warn\""), "{}", rows[2]);
}

#[test]
fn a_sweep_report_without_warnings_has_no_such_column() {
    let path = scratch("html/sweep-no-warnings").join("no-warnings.html");
    let p = path.to_string_lossy().into_owned();
    run(
        &[
            "sweep",
            "payment-stable-key",
            "--set",
            "client.timeout_ms=5000,10000",
            "--runs",
            "50",
            "--html",
            &p,
        ],
        0,
    );
    let html = std::fs::read_to_string(&path).expect("the page was written");
    assert!(!html.contains("design warnings"));
}
