//! Scenario input found wrong by fuzzing the binary with mutated files and
//! `--set` values: each case was accepted silently, refused wrongly, or took
//! gigabytes, and is now refused where it is written or handled.

mod common;

use common::{load_error, load_text, refuses};
use models::scenario::{Override, ScenarioError};

/// The error loading `text` with `set` gives (it must give one).
fn set_error(text: &str, set: &str) -> ScenarioError {
    match models::Scenario::load_with("f.toml", text, &[Override::parse(set).unwrap()]) {
        Ok(_) => panic!("{set} loads"),
        Err(e) => e,
    }
}

#[test]
fn an_override_reaches_a_table_written_inline() {
    let text = "summary = \"x\"\nclient = { key = \"stable\", timeout_ms = 10000 }\n";
    // The value lands in the inline table: a wrong one is refused as such.
    let e = set_error(text, "client.key=bogus");
    assert!(e.message.contains("unknown value \"bogus\""), "{e}");
    // A key the inline table lacks, and a table below it, are added inline.
    let s = load_text(
        "inline.toml",
        text,
        &["client.retry.max_attempts=2", "client.key=none"],
    );
    assert_eq!(s.name, "inline");
    let e = set_error(text, "client.timeout_ms.x=1");
    assert!(e.message.contains("`timeout_ms` is not a table"), "{e}");
}

#[test]
fn a_long_file_with_overrides_loads_in_linear_memory() {
    // Forty thousand blank lines once made the line map between the file and
    // its overridden text a table of 1.6 billion cells (gigabytes).
    let text = format!(
        "summary = \"x\"\n{}[client]\nkey = \"stable\"\ntimeout_ms = \"10s\"\n",
        "\n".repeat(40_000)
    );
    // The file's own mistake, found in the overridden text, is still shown
    // on the user's line.
    let e = set_error(&text, "client.key=none");
    assert!(e.message.contains("a duration is a plain number"), "{e}");
    assert_eq!(e.line, 40_004, "the error points at the user's line: {e}");
}

#[test]
fn a_chain_refuses_a_consumer_program_it_would_not_run() {
    refuses(
        "model = \"chain\"\nsummary = \"x\"\n",
        &[
            (
                "[accounting]\nprogram = [\"python3\", \"consumer.py\"]\n",
                "accounting.program is for a program in the consumer's place",
                "model = \"messaging\"",
            ),
            (
                "[accounting]\nhandler_timeout_ms = 5000\n",
                "accounting.handler_timeout_ms",
                "delete the line",
            ),
        ],
    );
}

#[test]
fn a_summary_is_one_line() {
    for summary in [
        r#""first\nsecond""#,
        r#""red \u001b[31m""#,
        r#""tab\there""#,
    ] {
        let e = load_error(
            "s.toml",
            &format!("model = \"payment\"\nsummary = {summary}\n"),
        );
        assert!(
            e.message
                .contains("line break or another control character"),
            "{e}"
        );
        assert_eq!((e.line, e.column), (2, 11), "{e}");
    }
    load_text(
        "s.toml",
        "summary = \"  one line, spaces trimmed  \"\n",
        &[],
    );
}

#[test]
fn a_value_out_of_range_is_refused_even_where_the_mode_does_not_read_it() {
    // Accepted once with key = "stable" and policy = "none", and refused only
    // after a later change of mode.
    refuses(
        "summary = \"x\"\n",
        &[
            (
                "[client]\nkey = \"stable\"\nkey_bucket_ms = 9223372036854775807\n",
                "longer than the 24 h this key allows",
                "86400000",
            ),
            (
                "[client.retry]\npolicy = \"none\"\nmax_attempts = 9223372036854775807\n",
                "attempts",
                "10000",
            ),
        ],
    );
}

/// Found by fuzzing the command line: messages that gave no range or a
/// wrong fix, a malformed --set list read as text, and a later --set that
/// silently dropped an earlier one.
#[test]
fn bad_values_are_named_with_their_range_and_a_fix_that_works() {
    let text = "summary = \"x\"\n";
    // A number past a key's 32-bit range says the range.
    let e = load_error(
        "f.toml",
        "summary = \"x\"\n[[operations]]\nclaim = 1\namount_eur = 4294967296\n",
    );
    assert!(e.message.contains("from 0 to 4294967295"), "{e}");
    assert!(
        e.help.as_deref().is_some_and(|h| h.contains("range")),
        "{e}"
    );
    // A per-mille value with a point: the fix is a value in range.
    for (set, fix) in [
        ("network.loss_per_mille=50.0", "write 50 without the point"),
        ("network.loss_per_mille=0.05", "is 50 per mille"),
        ("network.loss_per_mille=12.5", "round it: 13"),
        (
            "network.loss_per_mille=1000.0",
            "write 1000 without the point",
        ),
    ] {
        let e = set_error(text, set);
        assert!(e.message.contains(fix), "{set}: {e}");
    }
    // A list or table that does not parse is reported as such, not as text.
    for set in [
        "operations=[{claim=1,amount_eur=5",
        "operations=[{claim=18446744073709551614,amount_eur=5}]",
        "client={key=\"stable\"",
    ] {
        let e = set_error(text, set);
        assert!(e.message.contains("not valid TOML"), "{set}: {e}");
        assert!(!e.message.contains('\n'), "{set}: one line: {e}");
    }
    // A later override that replaces a table an earlier one set a key in.
    let both = [
        Override::parse("client.retry.max_attempts=3").unwrap(),
        Override::parse("client.retry=x").unwrap(),
    ];
    let Err(e) = models::Scenario::load_with("f.toml", text, &both) else {
        panic!("the second override would drop the first");
    };
    assert!(
        e.to_string()
            .contains("--set client.retry=x: this replaces `client.retry`"),
        "{e}"
    );
    // The table first and a key inside it after is what was meant: it loads.
    load_text(
        "f.toml",
        text,
        &[
            "client.retry={policy=\"fixed\", base_ms=100}",
            "client.retry.max_attempts=3",
        ],
    );
}
