//! Headless Chromium for the tests of the HTML reports, driven over the
//! DevTools protocol by `tests/browser/cdp.mjs` (Node's built-ins only).
//!
//! Without Chromium or Node a browser test prints one visible SKIPPED line
//! and returns, except in CI (`CI=true`), where `.ci/run` installs Chromium
//! and a missing browser is a failure (tests/it/support/tools.rs).

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// What the page gave back: the value of each `eval` step, in order, and
/// every console error, uncaught exception and network request it made.
pub struct Page {
    pub results: Vec<Value>,
    pub errors: Vec<String>,
}

/// Whether the browser tests can run: Chromium and Node.js are here. When
/// not, `check` is reported as skipped (see [`super::tools::require`]).
#[track_caller]
pub fn available(check: &str) -> bool {
    super::tools::require(check, &[&super::tools::CHROMIUM, &super::tools::NODE])
}

/// Opens `file` in headless Chromium and runs `steps` (see cdp.mjs).
#[track_caller]
pub fn open(file: &Path, steps: Value) -> Page {
    open_at(file, (1400, 1000), steps)
}

/// Opens `file` in a window of `(width, height)` CSS pixels and runs `steps`.
#[track_caller]
pub fn open_at(file: &Path, (width, height): (u32, u32), steps: Value) -> Page {
    let file = file.canonicalize().expect("the page exists");
    let plan = serde_json::json!({
        "url": format!("file://{}", file.display()),
        "width": width,
        "height": height,
        "steps": steps,
    });
    // The plan goes to the test's scratch space, never beside the page: the
    // page may be a file of the repository (docs/backoff-and-jitter.svg).
    let plan_path = plan_file(&file, (width, height));
    std::fs::write(&plan_path, plan.to_string()).expect("write the plan");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/cdp.mjs");
    let mut cmd = Command::new("node");
    cmd.arg(script).arg(&plan_path);
    if let Some(c) = super::tools::chromium_path() {
        cmd.env("IDEMSIM_CHROMIUM", c);
    }
    let out = cmd.output().expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the browser driver printed no result ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    Page {
        results: v["results"].as_array().cloned().unwrap_or_default(),
        errors: v["errors"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// A file name for one opening's plan, unique across the test binary's threads.
fn plan_file(page: &Path, (width, height): (u32, u32)) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-plans");
    std::fs::create_dir_all(&dir).expect("create the plans' folder");
    let stem = page.file_stem().unwrap_or_default().to_string_lossy();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{stem}.{n}.{width}x{height}.plan.json"))
}
