//! The contention model's settings without effect: each warns only where
//! no run reads it, and a commit failure rate is read by every write mode.

use super::*;

/// A contention design: `clients` clients, then `tail` (the `[client]`
/// tables and any faults).
fn contention(tail: &str) -> String {
    format!("summary = \"s\"\nmodel = \"contention\"\nclients = 3\n{tail}")
}

/// Contention's keys each where no run reads them (the warning, at the
/// line that writes them) and where one does (silent): the first retry's
/// exponent beside a wait that no exponent shapes, what is done with a
/// write given up where none is, a request id where no write comes twice.
/// Where the warning fires, the runs are the same without the line; where a
/// fault lets the request id act, they are not.
#[test]
fn contention_settings_warn_only_where_no_run_reads_them() {
    const EXPO: &str = "[client.retry]\npolicy = \"exponential\"\nbase_ms = 5\ncap_ms = 2000\n";
    let cases: &[(String, Option<Told>)] = &[
        (
            contention(&format!("[client]\nfirst_retry_exponent = 1\n{EXPO}jitter = \"decorrelated\"\n")),
            Some(("client.first_retry_exponent = 1", "f.toml:5:24", "jitter = \"decorrelated\"")),
        ),
        (
            contention("[client]\nfirst_retry_exponent = 1\n"),
            Some(("client.first_retry_exponent = 1", "f.toml:5:24", "policy = \"fixed\"")),
        ),
        (
            contention("[client]\nfirst_retry_exponent = 1\n[client.retry]\npolicy = \"exponential\"\n"),
            Some(("client.first_retry_exponent = 1", "f.toml:5:24", "base_ms = 0")),
        ),
        (
            contention("[client]\nfirst_retry_exponent = 1\n[client.retry]\npolicy = \"none\"\n"),
            Some(("client.first_retry_exponent = 1", "f.toml:5:24", "makes no retry")),
        ),
        // Read: an exponential wait from a base, with a jitter that takes the
        // exponent; and 0 says what a fixed wait does anyway.
        (contention(&format!("[client]\nfirst_retry_exponent = 1\n{EXPO}jitter = \"full\"\n")), None),
        (contention("[client]\nfirst_retry_exponent = 0\n"), None),
        (
            contention(&format!("{EXPO}max_attempts = 0\ndead_letter = false\n")),
            Some(("client.retry.dead_letter = false", "f.toml:9:15", "max_attempts = 10")),
        ),
        // A window gives writes up, and so does a cap on attempts.
        (contention(&format!("{EXPO}max_attempts = 0\nwindow_ms = 1000\ndead_letter = false\n")), None),
        (contention(&format!("{EXPO}max_attempts = 20\ndead_letter = false\n")), None),
        (
            contention(&format!("[client]\nrequest_id = true\n{EXPO}max_attempts = 0\n")),
            Some(("client.request_id = true", "f.toml:5:14", "client.timeout_ms = 100")),
        ),
        // A write comes again after a timeout, a client's restart, or as a
        // network copy: the row meets its id.
        (contention(&format!("[client]\nrequest_id = true\ntimeout_ms = 100\n{EXPO}max_attempts = 0\n")), None),
        (
            contention(&format!("[client]\nrequest_id = true\n{EXPO}max_attempts = 0\n[crashes.client-2]\ncrash_per_mille = [0, 20]\n")),
            None,
        ),
        (
            contention(&format!("[client]\nrequest_id = true\n{EXPO}max_attempts = 0\n[network]\nduplicate_per_mille = [0, 200]\n")),
            None,
        ),
    ];
    for (text, want) in cases {
        let s = load_text("f.toml", text, &[]);
        let found = unread(&s);
        let Some((setting, at, fix)) = want else {
            assert!(found.is_empty(), "{text}: {found:?}");
            continue;
        };
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        assert!(
            found[0].starts_with(&format!("{at}: {setting} has no effect: "))
                && found[0].contains(fix),
            "{text}: {}",
            found[0]
        );
        // The warning's claim: without the line, the same runs.
        let line: usize = at.split(':').nth(1).unwrap().parse().unwrap();
        let without: String = text
            .lines()
            .enumerate()
            .filter(|(i, _)| i + 1 != line)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        let without = load_text("f.toml", &without, &[]);
        assert_eq!(
            support::sweep(&s, 100),
            support::sweep(&without, 100),
            "{text}"
        );
    }
    // The id's effect where a network copy reaches the row: recognised
    // copies, and other runs.
    let dup = format!("[client]\nrequest_id = true\n{EXPO}max_attempts = 0\n[network]\nduplicate_per_mille = [0, 200]\n");
    let with_id = support::sweep(&load_text("f.toml", &contention(&dup), &[]), 100);
    let without_id = support::sweep(
        &load_text("f.toml", &contention(&dup), &["client.request_id=false"]),
        100,
    );
    assert_ne!(with_id, without_id);
    assert!(with_id
        .tally
        .situations
        .contains(models::contention::situations::REQUEST_ID_RECOGNIZED));
}

/// `producer.commit_fail_per_mille` is read in every write mode (state
/// first, event first, the outbox, a broker transaction each commit the
/// state), so no design leaves it without effect: silent in each, and the
/// runs of each reach a failed commit.
#[test]
fn a_commit_failure_rate_is_read_by_every_write_mode() {
    for write in ["state-first", "event-first", "outbox", "broker-transaction"] {
        let text = format!(
            "summary = \"s\"\nmodel = \"messaging\"\n[producer]\nwrite = \"{write}\"\ncommit_fail_per_mille = 500\n"
        );
        let s = load_text("f.toml", &text, &[]);
        assert!(unread(&s).is_empty(), "{write}: {:?}", unread(&s));
        let sum = support::sweep(&s, 50);
        assert!(
            sum.tally
                .situations
                .contains(models::messaging::situations::COMMIT_FAILED),
            "{write}"
        );
    }
}
