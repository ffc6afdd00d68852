//! D11: the trace of a `--set` variant names its overrides in every format,
//! so a trace pasted into a ticket cannot pass for the file's own design.

use crate::support::outcome as stdout;

const SET: &str = "client.retry.max_attempts=2";

fn replay(format: &str, sets: &[&str]) -> String {
    let mut args = vec!["replay", "payment-stable-key", "--seed", "3"];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend(["--format", format]);
    stdout(&args)
}

#[test]
fn a_variants_trace_names_its_overrides_in_text_json_and_chrome() {
    let sets = [SET, "client.timeout_ms=9000"];
    let text = replay("text", &sets);
    let json = replay("json", &sets);
    let chrome = replay("chrome", &sets);
    let mermaid = replay("mermaid", &sets);
    let run = json.lines().next().expect("a run record");
    let other = chrome.lines().next().expect("the chrome header");
    let heads = format!(
        "text: {}\njson: {run}\nchrome: {other}\nmermaid: {}\n",
        text.lines().next().expect("a header"),
        mermaid.lines().take(3).collect::<Vec<_>>().join(" | ")
    );
    insta::assert_snapshot!("variant_trace_heads", heads);
    let v: serde_json::Value = serde_json::from_str(run).expect("JSON");
    assert_eq!(v["data"]["sets"], serde_json::json!(sets));
    let doc: serde_json::Value = serde_json::from_str(&chrome).expect("one chrome document");
    assert_eq!(doc["otherData"]["sets"], serde_json::json!(sets));
}

#[test]
fn the_files_own_design_names_no_overrides() {
    let text = replay("text", &[]);
    assert!(
        text.starts_with("# payment-stable-key · seed 3 ·"),
        "{text}"
    );
    let json = replay("json", &[]);
    let run: serde_json::Value =
        serde_json::from_str(json.lines().next().expect("a run record")).expect("JSON");
    assert!(run["data"].get("sets").is_none(), "{run}");
    let chrome: serde_json::Value = serde_json::from_str(&replay("chrome", &[])).expect("JSON");
    assert!(chrome["otherData"].get("sets").is_none());
}

#[test]
fn a_shrunk_variant_names_its_overrides_too() {
    let out = stdout(&[
        "shrink",
        "payment-retry-without-key",
        "--set",
        "client.retry.max_attempts=4",
    ]);
    let head = out
        .lines()
        .find(|l| l.starts_with("# "))
        .expect("a trace header");
    assert!(
        head.starts_with(
            "# payment-retry-without-key --set client.retry.max_attempts=4 · shrunk from seed"
        ),
        "{head}"
    );
}
