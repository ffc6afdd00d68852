//! Scenario input found wrong by fuzzing the binary with mutated files and
//! `--set` values: each case was accepted silently, refused wrongly, or took
//! gigabytes, and is now refused where it is written or handled.

use crate::support;

use models::scenario::{Override, ScenarioError};
use support::{load_error, load_text, refuses};

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

// Presets: a real system's documented defaults (docs/fidelity.md).

/// A minimal scenario of `model` naming `preset` in its `table`.
fn with_preset(model: &str, table: &str, preset: &str) -> String {
    format!("summary = \"p\"\nmodel = \"{model}\"\n[{table}]\npreset = \"{preset}\"\n")
}

#[test]
fn every_preset_of_every_model_loads_on_its_own() {
    let mut n = 0;
    for m in models::registry::MODELS {
        for p in m.presets() {
            let text = with_preset(m.name(), p.table, p.name);
            if let Err(e) = models::Scenario::load("p.toml", &text) {
                panic!("{} of {}: {e}", p.written(), m.name());
            }
            n += 1;
        }
    }
    assert!(n >= 10, "only {n} presets");
}

#[test]
fn a_key_written_beside_a_preset_wins_over_the_presets_value() {
    use models::scenario::Verdict;
    // Stripe keeps keys 24 h: the retry 1 ms inside holds; with keys kept
    // one hour beside the preset, the same retry pays again.
    support::check(
        "payment-stripe-key-retention-inside",
        &[],
        3,
        Verdict::Holds,
        None,
    );
    support::check(
        "payment-stripe-key-retention-inside",
        &["service.retention_ms=3600000"],
        3,
        Verdict::Violation,
        Some("no-duplicate-effect"),
    );
}

#[test]
fn a_value_the_presets_system_refuses_is_refused_where_it_is_written() {
    let text = format!(
        "{}max_attempts = 0\n",
        with_preset("payment", "client.retry", "aws-standard")
    );
    let e = load_error("aws.toml", &text);
    assert_eq!((e.line, e.column), (5, 16), "{e}");
    assert!(e.message.contains("retry_mode = standard"), "{e}");
    assert!(e.message.contains("greater than 0"), "{e}");
    assert!(e.help.unwrap().contains("drop preset = \"aws-standard\""));
}

#[test]
fn an_unknown_preset_is_refused_at_its_line_with_the_closest_name() {
    let e = load_error("s.toml", &with_preset("payment", "service", "strip"));
    assert_eq!(e.line, 4, "{e}");
    assert!(
        e.message.contains("unknown preset \"strip\" for service"),
        "{e}"
    );
    assert!(e.help.unwrap().contains("did you mean \"stripe\""));
    // A preset in a table that offers none is an unknown key there.
    let e = load_error("s.toml", &with_preset("payment", "client", "stripe"));
    assert!(e.message.contains("preset"), "{e}");
}

#[test]
fn a_preset_named_by_set_applies_as_one_written_in_the_file() {
    // The preset's values arrive (AWS's three attempts are a cap of 3)...
    let s = load_text(
        "s.toml",
        "summary = \"s\"\n",
        &["client.retry.preset=aws-standard"],
    );
    assert_eq!(s.overrides.len(), 1);
    // ...and its system's rules apply to a `--set` beside it.
    let e = match models::Scenario::load_with(
        "s.toml",
        "summary = \"s\"\n",
        &[
            Override::parse("client.retry.preset=aws-standard").unwrap(),
            Override::parse("client.retry.max_attempts=0").unwrap(),
        ],
    ) {
        Ok(_) => panic!("AWS refuses max_attempts = 0"),
        Err(e) => e,
    };
    assert_eq!(e.file, "--set client.retry.max_attempts=0", "{e}");
}
