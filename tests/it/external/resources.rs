//! A program in the HTTP server's place is told the scenario's
//! `[[resources]]` (protocol 3: the `resources` field of its `start`), so
//! the built-in server and examples/python/http_server.py, which stores
//! them at the first start, answer a scenario that has resources at the
//! start alike: a PATCH of an initial resource finds it, a POST gets the id
//! after the last one, a DELETE removes one. Before protocol 3 the program
//! started with an empty database and answered 404 where the built-in
//! server answered 200.

use crate::support::tools::{require, PYTHON3};
use crate::support::{root, run_in, scratch};

/// The scenario, once with the built-in server and once with the program.
const SCENARIO: &str = r#"format = 2
summary = "Resources at the start: a PATCH, a POST and a DELETE"
model = "http"

[expect]
verdict = "holds"

[run]
runs = 6

[client]
idempotency_key = true
timeout_ms = 2000

[client.retry]
policy = "exponential"
base_ms = 500
max_attempts = 6

[server]
SERVER

[[resources]]
id = 7
value = 100

[[resources]]
id = 9
value = 300

[[requests]]
method = "patch"
resource = 7
value = 50

[[requests]]
method = "post"
value = 1200
start_ms = 100

[[requests]]
method = "delete"
resource = 9
start_ms = 200

[network]
loss_per_mille = [0, 200]
duplicate_per_mille = [0, 100]
"#;

/// The folder with `builtin.toml`, `program.toml` and the example program.
fn folder() -> std::path::PathBuf {
    let dir = scratch("external/http-resources");
    let write = |name: &str, server: &str| {
        let text = SCENARIO.replace("SERVER", server);
        std::fs::write(dir.join(name), text).unwrap();
    };
    write("builtin.toml", "idempotency_keys = true");
    write(
        "program.toml",
        r#"program = ["python3", "http_server.py", "--keys=store"]"#,
    );
    std::fs::copy(
        root().join("examples/python/http_server.py"),
        dir.join("http_server.py"),
    )
    .unwrap();
    dir
}

/// What the client was answered and told in the run of `seed`.
fn answers(dir: &std::path::Path, file: &str, seed: u64) -> Vec<String> {
    let seed = seed.to_string();
    let (trace, _) = run_in(dir, &["replay", file, "--seed", &seed], &[], 0);
    let lines: Vec<String> = trace
        .lines()
        .filter(|l| l.contains("client  ← server") || l.contains("• told:"))
        .map(|l| l.split_once(" s  ").map_or(l, |(_, rest)| rest).to_string())
        .collect();
    assert!(!lines.is_empty(), "{trace}");
    lines
}

#[test]
fn a_program_is_told_the_resources_and_answers_as_the_built_in_server() {
    if !require("external::resources python http server", &[&PYTHON3]) {
        return;
    }
    let dir = folder();
    let (transcript, _) = run_in(
        &dir,
        &["replay", "program.toml", "--seed", "0", "--transcript"],
        &[],
        0,
    );
    let start = transcript.lines().next().unwrap();
    assert_eq!(
        start,
        r#"→ {"type":"start","protocol":3,"actor":"server","restarted":false,"now_us":0,"resources":[{"resource":7,"value":100,"etag":1},{"resource":9,"value":300,"etag":1}],"storage":{}}"#
    );
    for seed in 0..6 {
        let builtin = answers(&dir, "builtin.toml", seed);
        assert_eq!(answers(&dir, "program.toml", seed), builtin, "seed {seed}");
        // The initial resource was found, and the new one came after it.
        assert!(
            builtin.iter().any(|l| l.contains("200 OK /claims/7 = 150")),
            "{builtin:?}"
        );
        assert!(builtin.iter().any(|l| l.contains("/claims/10 = 1200")));
    }
    for file in ["builtin.toml", "program.toml"] {
        let (out, _) = run_in(&dir, &["check", file, "--no-regressions"], &[], 0);
        assert!(out.contains("holds over 6 schedules"), "{file}: {out}");
        assert!(out.contains("18 done, 0 failed"), "{file}: {out}");
    }
}
