//! Shell quoting for the command lines idemsim prints (repro lines, replay
//! commands), so that a person can paste them. It sits below every other
//! module: the catalog, repro files, tests and the CLI all quote through it.

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

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn plain_words_stay_bare_and_others_are_single_quoted() {
        assert_eq!(shell_word("client.key=stable"), "client.key=stable");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
