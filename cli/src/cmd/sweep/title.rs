//! The title of a sweep's plot and HTML page when it sweeps several
//! scenarios: their names, not their count, since the page is read later
//! and apart from the command that made it.

/// `names` as one title: the one name, or all of them with the prefix they
/// share written once (`contention-{no-backoff, full-jitter}`).
pub(super) fn scenarios(names: &[&str]) -> String {
    let [first, rest @ ..] = names else {
        return String::new();
    };
    if rest.is_empty() {
        return (*first).to_string();
    }
    // The longest prefix, up to and with a `-`, that every name shares and
    // none is made of alone.
    let mut prefix = &first[..first.rfind('-').map_or(0, |i| i + 1)];
    while !names
        .iter()
        .all(|n| n.starts_with(prefix) && n.len() > prefix.len())
    {
        let shorter = prefix[..prefix.len() - 1].rfind('-').map_or(0, |i| i + 1);
        prefix = &prefix[..shorter];
    }
    if prefix.is_empty() {
        return names.join(", ");
    }
    let tails: Vec<&str> = names.iter().map(|n| &n[prefix.len()..]).collect();
    format!("{prefix}{{{}}}", tails.join(", "))
}

#[cfg(test)]
mod tests {
    use super::scenarios;

    #[test]
    fn a_shared_prefix_is_written_once() {
        let names = ["contention-no-backoff", "contention-full-jitter"];
        assert_eq!(scenarios(&names), "contention-{no-backoff, full-jitter}");
        let names = ["payment-refund-on-timeout", "payment-refund-after-query"];
        assert_eq!(
            scenarios(&names),
            "payment-refund-{on-timeout, after-query}"
        );
    }

    #[test]
    fn no_prefix_and_one_name_are_said_plainly() {
        assert_eq!(scenarios(&["http-post-with-key"]), "http-post-with-key");
        let names = ["http-put-retried", "payment-stable-key"];
        assert_eq!(scenarios(&names), "http-put-retried, payment-stable-key");
        // A prefix that is a whole name is no prefix: nothing would be left of it.
        let names = ["chain-outbox", "chain-outbox-inbox"];
        assert_eq!(scenarios(&names), "chain-{outbox, outbox-inbox}");
    }
}
