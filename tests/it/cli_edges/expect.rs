//! `check` of a file with an `[expect]`: the exit code follows the verdict,
//! but a result that does not meet the expectation, in what `check` sees
//! (verdict, invariant, situations, warnings), is said in one line that
//! names the difference and the `verify` command (the review's r30).

use crate::support::scratch;
use crate::support::{case, run_case as check};

/// An outbox and an inbox with no faults at all: it holds, but no run
/// reaches the inbox hit its `[expect]` names.
const UNREACHED: &str = r#"summary = "Outbox+inbox with no faults at all"
model = "messaging"
[expect]
verdict = "holds"
situations = ["inbox-hit"]
protections = ["consumer.handler=effect"]
[run]
runs = 20
[producer]
write = "outbox"
[consumer]
handler = "inbox-same-tx"
[[events]]
entity = 4711
value = 1200
"#;

#[test]
fn check_names_an_expectation_its_runs_do_not_meet_and_keeps_its_exit_code() {
    let dir = scratch("cli_edges/expect");
    std::fs::write(dir.join("r30.toml"), UNREACHED).unwrap();
    let (out, _) = check(
        &case("an unmet [expect]", &["check", "r30.toml"])
            .cwd(&dir)
            .out("r30: holds over 20 schedules")
            .out("[expect] not met: situations not reached: inbox-hit")
            .out("idemsim verify r30.toml"),
    );
    assert_eq!(
        out.lines().filter(|l| l.contains("[expect]")).count(),
        1,
        "one line: {out}"
    );
    // JSON: a record of its own before the summary, which stays last.
    let (out, err) = check(&case("as JSON", &["check", "r30.toml", "--json"]).cwd(&dir));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON Lines"))
        .collect();
    let expect = lines
        .iter()
        .find(|v| v["type"] == "expect")
        .unwrap_or_else(|| panic!("an expect line: {out}"));
    assert_eq!(
        expect["data"]["mismatch"],
        "situations not reached: inbox-hit"
    );
    assert_eq!(expect["data"]["verify"], "idemsim verify r30.toml");
    assert_eq!(expect["data"]["scenario"], "r30");
    assert_eq!(lines.last().unwrap()["type"], "summary");
    assert!(err.contains("[expect] not met"), "{err}");
    assert_eq!(expect["data"]["own_seeds"], true);
    // Fewer seeds than the file's: said, since verify runs the file's own.
    check(
        &case("fewer seeds", &["check", "r30.toml", "--runs", "5"])
            .cwd(&dir)
            .out("[expect] not met on seeds 0..5, not the file's 0..20 (run.runs): situations not reached: inbox-hit"),
    );
    // A variant is not the file: its result is not held to the file's [expect].
    check(
        &case(
            "a --set variant",
            &["check", "r30.toml", "--set", "run.runs=10"],
        )
        .cwd(&dir)
        .not_out("[expect]"),
    );
    // A file that meets its expectation says nothing more.
    let met = UNREACHED.replace("situations = [\"inbox-hit\"]\n", "");
    std::fs::write(dir.join("met.toml"), met).unwrap();
    check(
        &case("a met [expect]", &["check", "met.toml"])
            .cwd(&dir)
            .out("met: holds")
            .not_out("[expect]"),
    );
    check(
        &case(
            "a catalog violation as expected",
            &["check", "payment-retry-without-key", "--no-shrink"],
        )
        .code(1)
        .not_out("[expect]"),
    );
}
