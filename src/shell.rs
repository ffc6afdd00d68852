//! Shell quoting for the command lines idemsim prints (repro lines, replay
//! commands), so that a person can paste them, and the reverse: a command
//! given as one argument (`learn check --program`) split into words as a
//! shell would. It sits below every other module: the catalog, repro files,
//! tests and the CLI all quote through it.

/// `word` as a shell reads it back: as is when it is plain, else in single
/// quotes (`--set 'consumer.program=["python3", "c.py"]'`), so a repro line
/// can be pasted.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,=/:+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Why a command line could not be split into words.
#[derive(Debug, PartialEq, Eq)]
pub struct SplitError(pub &'static str);

/// A command line split into words as a POSIX shell splits it, without
/// expansions: blanks separate words; `'...'` keeps everything literally;
/// `"..."` keeps everything but `\` before `"`, `\`, `$` or `` ` ``; a `\`
/// outside quotes keeps the next character. So `--program` takes a path
/// with a space (`"my dir/c.py"` or `my\ dir/c.py`) and an argument with
/// quotes, as the user would type them in a shell.
pub fn split_words(line: &str) -> Result<Vec<String>, SplitError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(SplitError("a single quote is not closed")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err(SplitError("a double quote is not closed")),
                        },
                        Some(c) => w.push(c),
                        None => return Err(SplitError("a double quote is not closed")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err(SplitError("a backslash ends the line")),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// `word` as a TOML basic string (`"..."`), for a word given on the command
/// line that becomes a value of a scenario's key (`consumer.program`).
pub fn toml_string(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    out.push('"');
    for c in word.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::{shell_word, split_words, toml_string, SplitError};

    #[test]
    fn plain_words_stay_bare_and_others_are_single_quoted() {
        assert_eq!(shell_word("client.key=stable"), "client.key=stable");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }

    fn words(line: &str) -> Vec<String> {
        split_words(line).unwrap()
    }

    #[test]
    fn words_split_at_blanks_and_quotes_keep_them() {
        assert_eq!(words("python3  c.py\t-x"), ["python3", "c.py", "-x"]);
        assert_eq!(words("python3 'my dir/c.py'"), ["python3", "my dir/c.py"]);
        assert_eq!(
            words(r#"python3 "my dir/c.py""#),
            ["python3", "my dir/c.py"]
        );
        assert_eq!(words(r"python3 my\ dir/c.py"), ["python3", "my dir/c.py"]);
        assert_eq!(
            words(r#"a "say \"hi\" \n" 'it'\''s'"#),
            ["a", r#"say "hi" \n"#, "it's"]
        );
        assert_eq!(words(r#"a '' """#), ["a", "", ""]);
        assert!(words("  ").is_empty());
    }

    #[test]
    fn an_open_quote_is_refused() {
        assert_eq!(
            split_words("a 'b"),
            Err(SplitError("a single quote is not closed"))
        );
        assert_eq!(
            split_words("a \"b"),
            Err(SplitError("a double quote is not closed"))
        );
        assert_eq!(
            split_words("a\\"),
            Err(SplitError("a backslash ends the line"))
        );
    }

    #[test]
    fn every_word_round_trips_through_shell_word() {
        for w in ["plain", "a b", "it's", "", r#"say "hi""#, "tab\there"] {
            assert_eq!(words(&shell_word(w)), [w]);
        }
    }

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_string(r#"my dir/"c".py"#), r#""my dir/\"c\".py""#);
        assert_eq!(toml_string("a\\b\u{1}"), r#""a\\b\u0001""#);
        assert_eq!(toml_string("é"), "\"é\"");
    }
}
