//! What a retried write does to the row: a blind write over a version it
//! never read, its copies, a lost answer found by reading again, request ids
//! (through crashes too), a restarted client, and a retry from a fresh read.

use super::*;

/// The shrunk blind write shows the lost update itself: both clients read
/// version 1, both writes land, the second without having seen the first,
/// though it writes the value the first one left.
#[test]
fn a_blind_write_replaces_a_version_it_never_read() {
    let (entries, outcome) = support::failing_trace("contention-blind-write");
    assert!(
        matches!(&outcome, sim::Outcome::Violation(v) if v.invariant == "no-lost-update"),
        "{outcome:?}"
    );
    assert!(reached(&entries, sit::STALE_BLIND_WRITE));
    let landed: Vec<(bool, u32)> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Send { msg, .. } => match Carries::<CMsg>::peek(msg) {
                Some(&CMsg::WriteReply { ok, version, .. }) => Some((ok, version)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(landed, [(true, 2), (true, 3)], "both blind writes land");
    // The second sets the 1 the first left: the row's value does not move,
    // and yet an increment is gone (1, not 2). A write here asks for a
    // change computed from its read, not for a state, so unlike a replacing
    // PUT that finds its body in place (http), it still replaces the
    // version it never read.
    let values: Vec<u32> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Send { msg, .. } => match Carries::<CMsg>::peek(msg) {
                Some(&CMsg::Write { value, .. }) => Some(value),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(values, [1, 1], "both computed 0 + 1");
}

/// One client, blind writes ("set the row to read + 1"), every write sent
/// twice by the network, with 1 ms to 1 s on the way to the row: the copy of
/// a write can land long after the write itself, and after the next one.
fn blind_copies(writes: u32) -> String {
    format!(
        r#"summary = "one client's blind writes, each delivered twice"
model = "contention"
clients = 1

[client]
cas = false
writes = {writes}

[client.retry]
policy = "fixed"
base_ms = 0
max_attempts = 0

[network]
delay_ms_min = 1
delay_ms_max = 1

[[network.links]]
from = "client-1"
to = "resource"
delay_ms_min = 1
delay_ms_max = 1000

[[network.links]]
from = "client-1"
to = "resource"
kinds = ["write"]
duplicate_per_mille = 1000
"#
    )
}

/// `UPDATE row SET value = 1` delivered twice leaves the row at 1: the
/// second copy of a blind write that finds the row as it left it changes
/// nothing, not even the version, like a replacing PUT's repeat. With one
/// writer nothing else can happen to it, so every schedule holds: the
/// increment is not doubled. The row answers the copy "written" too.
#[test]
fn a_blind_writes_copy_that_finds_the_row_at_its_value_changes_nothing() {
    let one = load_text("copies.toml", &blind_copies(1), &[]);
    let sum = support::sweep(&one, 200);
    assert_eq!(
        one.judge(&sum).found,
        Verdict::Holds,
        "{:?}",
        sum.first_failure
    );
    assert_eq!(
        sum.tally.situation_runs[usize::from(sit::BLIND_WRITE_CHANGED_NOTHING)],
        200,
        "every copy comes after its write"
    );
    let (entries, _) = trace_of(&one, 0);
    let versions: Vec<u32> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Send { msg, .. } => match Carries::<CMsg>::peek(msg) {
                Some(&CMsg::WriteReply {
                    ok: true, version, ..
                }) => Some(version),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(versions, [2, 2], "the copy leaves the row at v2");
    // The review's case: one client's writes, loss, duplication and
    // timeouts, neither compare-and-set nor request id: nobody else writes,
    // so a copy or a retry of a landed write finds it in place.
    check(
        "contention-request-id",
        &[
            "clients=1",
            "client.writes=2",
            "client.cas=false",
            "client.request_id=false",
        ],
        500,
        Verdict::Holds,
        None,
    );
}

/// A copy of write #1 that lands after write #2 sets the row back to 1: it
/// adds no second increment of #1 (the value it sets is #1's own), it
/// replaces #2's version without having seen it. That is #2's update lost,
/// judged by `no-lost-update`, and never a duplicate of #1.
#[test]
fn a_stale_blind_copy_that_changes_the_row_is_a_lost_update_not_a_duplicate() {
    let two = load_text("copies.toml", &blind_copies(2), &[]);
    let mut lost = 0;
    for seed in 0..200 {
        let (entries, outcome) = trace_of(&two, seed);
        match &outcome {
            sim::Outcome::Holds => {}
            sim::Outcome::Violation(v) if v.invariant == "no-lost-update" => {
                assert!(reached(&entries, sit::STALE_BLIND_WRITE), "seed {seed}");
                lost += 1;
            }
            other => panic!("seed {seed}: {other:?}"),
        }
    }
    assert!(lost > 0, "some copy of #1 lands after #2");
}

/// A write whose answer is lost may have landed: the client times out,
/// reads again, and finds its own write as the current version. With one
/// client nobody writes on top, so that is always found. With several, a
/// compare-and-set that carries nothing but the version cannot tell its own
/// landed write once another one followed: it writes again, and the ledger
/// sees the increment twice.
#[test]
fn a_lost_answer_is_found_by_reading_again_unless_another_write_followed() {
    let lossy = [
        "client.timeout_ms=100",
        "network.loss_per_mille=200",
        "client.retry.jitter=full",
    ];
    let one = load(
        "contention-full-jitter",
        &[&lossy[..], &["clients=1"]].concat(),
    );
    let sum = support::sweep(&one, 200);
    assert_eq!(one.judge(&sum).found, Verdict::Holds);
    assert!(sum.tally.situations.contains(sit::OWN_WRITE_FOUND));
    check(
        "contention-full-jitter",
        &[&lossy[..], &["clients=5"]].concat(),
        300,
        Verdict::Violation,
        Some("no-duplicate-effect"),
    );
    // Without a timeout a lost answer is waited for forever: the write never ends.
    check(
        "contention-full-jitter",
        &["clients=1", "network.loss_per_mille=200"],
        200,
        Verdict::Violation,
        Some("operation-ends"),
    );
}

/// The same schedule with and without a request id: the seed on which the
/// retried compare-and-set lands twice is, with the id kept in the row's
/// transaction, the seed on which the row recognises the retry and adds
/// nothing. No draw depends on the id, so both runs meet the same faults.
#[test]
fn a_request_id_turns_the_rewritten_increment_into_a_recognised_retry() {
    let name = "contention-lost-answer-rewritten";
    let without = load(name, &[]);
    let seed = support::sweep(&without, 300)
        .first_failure
        .expect("the lost answer is rewritten on some seed")
        .seed;
    let (entries, outcome) = trace_of(&without, seed);
    assert!(
        matches!(&outcome, sim::Outcome::Violation(v) if v.invariant == "no-duplicate-effect"),
        "{outcome:?}"
    );
    assert!(!reached(&entries, sit::REQUEST_ID_RECOGNIZED));
    let with = load(name, &["client.request_id=true"]);
    let (entries, outcome) = trace_of(&with, seed);
    assert!(
        matches!(outcome, sim::Outcome::Holds),
        "seed {seed}: {outcome:?}"
    );
    assert!(
        reached(&entries, sit::REQUEST_ID_RECOGNIZED),
        "seed {seed}: the retry came under a known id"
    );
    // Its answer says so, and the row took one effect per write.
    let already = entries.iter().any(|e| {
        matches!(
            e.kind,
            TraceKind::Send { ref msg, .. }
                if matches!(msg.peek(), Some(CMsg::WriteReply { already: true, ok: true, .. }))
        )
    });
    assert!(already, "the row answered the retry as written before");
}

/// The request ids live with the row, in its durable storage: a crash of
/// the resource keeps them, and a crash of a client resumes its write under
/// the same id. With many clients, duplication, loss and crashes on both
/// sides, every write still lands once and no update is lost; without the
/// ids the same faults rewrite increments.
#[test]
fn request_ids_survive_crashes_of_the_row_and_of_its_clients() {
    let faults = [
        "clients=8",
        "crashes.resource.crash_per_mille=[0,30]",
        "crashes.resource.restart_ms_min=10",
        "crashes.resource.restart_ms_max=500",
        "crashes.client-3.crash_per_mille=[0,30]",
        "crashes.client-3.restart_ms_max=500",
    ];
    check("contention-request-id", &faults, 500, Verdict::Holds, None);
    check(
        "contention-request-id",
        &[&faults[..], &["client.request_id=false"]].concat(),
        500,
        Verdict::Violation,
        Some("no-duplicate-effect"),
    );
}

/// A client crash loses its open connection, not its database: the pending
/// write resumes and lands once. (One client: with others writing on top,
/// a write that landed while its client was down would be written again,
/// as with a lost answer.)
#[test]
fn a_restarted_client_resumes_its_write() {
    let s = load(
        "contention-full-jitter",
        &[
            "clients=1",
            "crashes.client-1.crash_per_mille=200",
            "client.timeout_ms=1000",
        ],
    );
    let sum = support::sweep(&s, 200);
    assert_eq!(
        s.judge(&sum).found,
        Verdict::Holds,
        "{:?}",
        sum.first_failure
    );
    assert!(sum
        .tally
        .situations
        .contains(sit::WRITE_RESUMED_AFTER_RESTART));
}

/// The situation is about what the row did, not where the write came from:
/// a retry reads the row afresh, and when another client moved the row, between
/// that read and the retry's write, to the very value the retry computes, the
/// retry's write lands and leaves the row as it was. With no network
/// duplication every such write is a retry computed from a fresh read.
#[test]
fn a_retry_from_a_fresh_read_that_computes_the_rows_value_changes_nothing() {
    let s = load(
        "contention-full-jitter",
        &[
            "clients=3",
            "client.cas=false",
            "client.timeout_ms=100",
            "network.loss_per_mille=200",
        ],
    );
    let mut retries = 0;
    for seed in 0..400 {
        let (entries, _) = trace_of(&s, seed);
        for (i, e) in entries.iter().enumerate() {
            if !matches!(e.kind, TraceKind::Reached { situation, .. } if situation == sit::BLIND_WRITE_CHANGED_NOTHING)
            {
                continue;
            }
            let write = entries[..i].iter().rev().find_map(|e| match &e.kind {
                TraceKind::Deliver { msg, duplicate, .. } => match Carries::<CMsg>::peek(msg) {
                    Some(&CMsg::Write { attempt, .. }) => Some((attempt, *duplicate)),
                    _ => None,
                },
                _ => None,
            });
            let (attempt, duplicate) = write.expect("a write reached it");
            assert!(!duplicate, "seed {seed}: no copies on this network");
            assert!(attempt >= 2, "seed {seed}: a retry, read afresh");
            retries += 1;
        }
    }
    assert!(retries > 0, "some retry computes the value the row holds");
}
