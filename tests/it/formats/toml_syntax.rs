//! TOML 1.1 syntax in scenario files (the loaders read them with `toml` 1 and
//! `toml_edit` 0.25): an inline table may span lines, with a comment in it and
//! a trailing comma, and strings may use `\e` and `\xHH`. A file written so
//! means what its TOML 1.0 spelling means; an escape that makes a control
//! character is refused where a control character always was.

use crate::support::{load, load_text, root, sweep};

/// `payment-stable-key` with its `[client.retry]` table written as an inline
/// table across lines, and its summary with TOML 1.1's `\xHH` escape.
fn stable_key_in_toml_1_1() -> String {
    let original = std::fs::read_to_string(root().join("scenarios/payment-stable-key.toml"))
        .expect("a catalog scenario");
    let table = "[client.retry]\n\
                 policy = \"exponential\"\n\
                 base_ms = 1000\n\
                 cap_ms = 30000\n\
                 jitter = \"full\"\n\
                 max_attempts = 0             # bounded by the window instead\n\
                 window_ms = 600000           # 10 minutes, then a dead letter\n";
    assert!(
        original.contains(table),
        "the retry table as this test knows it"
    );
    let inline = "retry = {\n    \
                  policy = \"exponential\",\n    \
                  base_ms = 1000, cap_ms = 30000,\n    \
                  jitter = \"full\",\n    \
                  max_attempts = 0,   # bounded by the window instead\n    \
                  window_ms = 600000,\n\
                  }\n";
    let client = "[client]\nkey = \"stable\"\ntimeout_ms = 10000\n";
    assert!(
        original.contains(client),
        "the client table as this test knows it"
    );
    original
        .replacen(table, "", 1)
        .replacen(client, &format!("{client}{inline}"), 1)
        .replacen("summary = \"Stable key", "summary = \"\\x53table key", 1)
}

#[test]
fn an_inline_table_across_lines_with_a_trailing_comma_loads() {
    let text = stable_key_in_toml_1_1();
    let s = load_text("stable-key-toml-1.1.toml", &text, &[]);
    let original = load("payment-stable-key", &[]);
    assert!(s.summary.starts_with("Stable key"), "{}", s.summary);
    assert_eq!(
        idemsim::meaning::settings(&s),
        idemsim::meaning::settings(&original),
        "the same settings as the file in TOML 1.0"
    );
    assert_eq!(sweep(&s, 40), sweep(&original, 40), "the same runs");
    // `--set` writes into the inline table where the file put it.
    let set = load_text(
        "stable-key-toml-1.1.toml",
        &text,
        &["client.retry.max_attempts=3"],
    );
    assert!(
        set.effective_text().contains("max_attempts = 3"),
        "{}",
        set.effective_text()
    );
    assert_eq!(
        idemsim::meaning::settings(&set),
        idemsim::meaning::settings(&load(
            "payment-stable-key",
            &["client.retry.max_attempts=3"]
        )),
    );
}

#[test]
fn an_escape_to_a_control_character_is_refused_in_a_summary_as_before() {
    let text = stable_key_in_toml_1_1().replacen("\\x53table", "Stable\\e", 1);
    let e = crate::support::load_error("escape.toml", &text);
    assert_eq!((e.line, e.column), (19, 11), "{e}");
    assert!(e.message.contains("control character"), "{e}");
}
