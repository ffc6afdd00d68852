//! Where the output goes and where it stops: a reader that left, a long
//! run's bounded trace and diagram, an interrupt or a shrink budget that cuts
//! a run short, and `sweep --html` reports written all or nothing.

use crate::support::{case, run_case as check, Stdout};
use crate::support::{root, scratch};
use std::time::Duration;

#[test]
fn a_closed_stdout_is_the_end_of_the_output_not_a_panic() {
    let cases = [
        case("idemsim list | head -1", &["list"]).stdout(Stdout::ClosedAfterOneLine),
        case("idemsim list >&-", &["list"]).stdout(Stdout::ClosedAtOnce),
        // Far more than a pipe holds: the writes after the first line all fail.
        case(
            "a long JSON trace into head -1",
            &[
                "replay",
                "payment-uncapped-retries",
                "--seed",
                "0",
                "--format",
                "json",
            ],
        )
        .stdout(Stdout::ClosedAfterOneLine)
        .code(3),
        case(
            "a failing check keeps its exit code when its reader left",
            &["check", "payment-retry-without-key", "--runs", "50"],
        )
        .stdout(Stdout::ClosedAtOnce)
        .code(1),
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn long_runs_say_where_their_output_was_bounded() {
    // A client that gives up after 3,000 lost attempts: a run of about 12,000 events
    // that fails at its end, with 6,000 decisions before it.
    let dir = scratch("cli_edges/long");
    let text = std::fs::read_to_string(root().join("scenarios/payment-give-up-silently.toml"))
        .unwrap()
        .replace("loss_per_mille = [0, 900]", "loss_per_mille = 1000")
        .replace("max_attempts = 3", "max_attempts = 3000")
        .replace("cap_ms = 8000", "cap_ms = 1")
        .replace("base_ms = 1000", "base_ms = 1")
        .replace("timeout_ms = 10000", "timeout_ms = 10");
    std::fs::write(dir.join("long.toml"), text).unwrap();
    let cases = [
        case(
            "the point of no return of a long run",
            &["replay", "long.toml", "--seed", "0"],
        )
        .cwd(&dir)
        .code(1)
        .out("· 11964 events")
        .out("the point of no return was searched among the last ")
        .out(" of 6000 decisions only: the run is long"),
        case(
            "a Mermaid diagram past Mermaid's limit is cut in the middle, with a warning",
            &["replay", "long.toml", "--seed", "0", "--format", "mermaid"],
        )
        .cwd(&dir)
        .code(1)
        .out("lines left out here: Mermaid renders at most 50000 characters")
        .err("warning: the Mermaid diagram of 11964 events would have "),
        case(
            "its JSON says how far the search went",
            &["replay", "long.toml", "--seed", "0", "--format", "json"],
        )
        .cwd(&dir)
        .code(1)
        .out("\"turn_search\":{\"decisions\":6000,\"searched\":"),
    ];
    for c in &cases {
        let (out, _) = check(c);
        if c.args.contains(&"mermaid".to_string()) {
            assert!(
                out.chars().count() <= 50_000,
                "{} characters",
                out.chars().count()
            );
        }
    }
}

#[test]
fn interrupts_print_what_ran_and_shrinking_keeps_its_budget() {
    let dir = scratch("cli_edges/budget");
    // A failing run of about 12,000 events: each shrinking rerun costs a replay of it.
    let text = std::fs::read_to_string(root().join("scenarios/payment-give-up-silently.toml"))
        .unwrap()
        .replace("loss_per_mille = [0, 900]", "loss_per_mille = 999")
        .replace("max_attempts = 3", "max_attempts = 3000")
        .replace("cap_ms = 8000", "cap_ms = 1")
        .replace("base_ms = 1000", "base_ms = 1")
        .replace("timeout_ms = 10000", "timeout_ms = 10");
    std::fs::write(dir.join("long.toml"), text).unwrap();
    let huge = "100000000000";
    let cases = [
        case(
            "Ctrl-C in sweep prints the rows that ran",
            &[
                "sweep",
                "payment-stable-key",
                "--set",
                "client.retry.max_attempts=1,2,3",
                "--runs",
                huge,
            ],
        )
        .interrupt(Duration::from_millis(800))
        .code(130)
        .out("client.retry.max_attempts")
        .out("interrupted (Ctrl-C): 1 of 3 variants ran, 1 ran seeds 0..")
        .out("the rows cover only what ran"),
        case(
            "Ctrl-C in verify prints the scenarios that ran",
            &["verify", "--runs", huge],
        )
        .interrupt(Duration::from_millis(800))
        .code(130)
        .out("interrupted (Ctrl-C) after seeds 0..")
        .out("not judged")
        .out("interrupted (Ctrl-C): 0 of "),
        case(
            "SIGTERM in verify is named as SIGTERM, not Ctrl-C",
            &["verify", "--runs", huge],
        )
        .terminate(Duration::from_millis(800))
        .code(143)
        .out("interrupted (SIGTERM) after seeds 0..")
        .out("interrupted (SIGTERM): 0 of "),
        case(
            "the rerun budget stops shrinking and the trace says so",
            &[
                "shrink",
                "payment-retry-without-key",
                "--shrink-max-runs",
                "3",
            ],
        )
        .code(1)
        .out("rerun budget hit (--shrink-max-runs): not minimal")
        .err("stopped after 3 reruns: rerun budget hit"),
        case(
            "the time budget stops shrinking and the trace says so",
            &[
                "shrink",
                "long.toml",
                "--seed",
                "0",
                "--shrink-budget-ms",
                "1",
            ],
        )
        .cwd(&dir)
        .code(1)
        .out("time budget hit (--shrink-budget-ms): not minimal")
        .err("time budget hit"),
        case(
            "check takes the same budget",
            &[
                "check",
                "payment-retry-without-key",
                "--runs",
                "50",
                "--shrink-max-runs",
                "2",
                "--json",
            ],
        )
        .code(1)
        .err("rerun budget hit (--shrink-max-runs): not minimal")
        .out("\"shrunk_events\":"),
        case(
            "a zero budget is refused",
            &["check", "--shrink-budget-ms", "0"],
        )
        .code(2)
        .err("--shrink-max-runs and --shrink-budget-ms must be at least 1"),
        case(
            "without shrinking there are no shrink figures",
            &[
                "check",
                "payment-retry-without-key",
                "--runs",
                "50",
                "--no-shrink",
                "--json",
            ],
        )
        .code(1)
        .out("\"lowest_failing_seed\":")
        .not_out("original_events")
        .not_out("situation_bits"),
    ];
    for c in &cases {
        check(c);
    }
}

/// `sweep --html FILE` writes reports next to FILE: a FILE that cannot be a
/// page is refused before the sweep, and a write that fails leaves nothing.
#[test]
fn sweep_html_checks_its_target_first_and_writes_all_or_nothing() {
    let dir = scratch("cli_edges/sweep-html");
    std::fs::create_dir_all(dir.join("folder")).unwrap();
    let sweep = |html: &str| {
        vec![
            "sweep".to_string(),
            "payment-retry-without-key".into(),
            "--runs".into(),
            "20".into(),
            "--set".into(),
            "client.retry.max_attempts=2,3".into(),
            "--html".into(),
            html.to_string(),
        ]
    };
    let refused = [
        ("/dev/full", "--html /dev/full: is not a regular file"),
        ("/dev/null", "--html /dev/null: is not a regular file"),
        ("folder", "--html folder: is a folder, not a file"),
        ("-", "--html -: `-` is not a file here"),
        (
            "/dev/null/r.html",
            "--html /dev/null/r.html: /dev/null is not a folder",
        ),
    ];
    for (target, err) in refused {
        let args = sweep(target);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(
            &case("an --html target that is no file", &args)
                .cwd(&dir)
                .code(2)
                .not_out("variants")
                .err(err)
                .err("help: give the path of a new or regular file"),
        );
    }
    for stray in ["/dev/full-3-seed-2.html", "/dev/null-3-seed-2.html"] {
        assert!(!std::path::Path::new(stray).exists(), "{stray} was written");
    }
    let beside: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["folder"], "nothing beside the folder");
    // A report's name taken by a folder: the write fails, and no file is left.
    std::fs::create_dir_all(dir.join("out/r-3-seed-2.html")).unwrap();
    let args = sweep("out/r.html");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check(
        &case("a report that cannot be written", &args)
            .cwd(&dir)
            .code(2)
            .err("cannot write out/r-3-seed-2.html")
            .err("nothing was written"),
    );
    let left: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["r-3-seed-2.html"], "only the folder that was there");
    std::fs::remove_dir(dir.join("out/r-3-seed-2.html")).unwrap();
    check(
        &case("the same sweep writes the page and both reports", &args)
            .cwd(&dir)
            .err("wrote out/r.html and 2 report(s)"),
    );
    let mut written: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    assert_eq!(written, ["r-2-seed-2.html", "r-3-seed-2.html", "r.html"]);
}
