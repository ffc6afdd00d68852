//! PUTs and edits: a PUT's repeat over any writer's value changes nothing,
//! and an edit computed from an older read is a lost update unless a serial
//! order explains the state it leaves.

use super::*;

/// Two writers PUT different values to one resource with blind retries: the
/// last to land wins, whether the late one is a slow first copy or a retry.
/// A replacing PUT's repeat sets what its first landing set, so it is no
/// second effect; an additive PUT's repeat adds again and is one.
#[test]
fn a_replacing_puts_repeat_is_no_second_effect_whoever_wrote_in_between() {
    let text = "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = false\ntimeout_ms = 1000\n[client.retry]\npolicy = \"fixed\"\nbase_ms = 0\nmax_attempts = 5\n[[resources]]\nid = 4711\nvalue = 1000\n[[requests]]\nclient = \"alice\"\nmethod = \"put\"\nresource = 4711\nvalue = 1\n[[requests]]\nclient = \"bob\"\nmethod = \"put\"\nresource = 4711\nvalue = 2\nstart_ms = 300\n[network]\nloss_per_mille = [0, 300]\ndelay_ms_min = 1\ndelay_ms_max = 2000\n";
    let s = load_text("two-puts.toml", text, &[]);
    let sum = sweep(&s, 300);
    assert!(sum.first_failure.is_none(), "{:?}", sum.first_failure);
    let repeated = (0..300)
        .map(|seed| trace_of(&s, seed).0)
        .find(|entries| reached(entries, sit::WRITE_REPEATED))
        .expect("some retry lands after another write");
    assert!(
        effects_of(&repeated, "write") <= 2,
        "one per request at most"
    );
    // The same race with adding PUTs: the repeat adds again.
    let adding = load_text("two-adding-puts.toml", text, &["server.put=add"]);
    let sum = sweep(&adding, 300);
    assert!(
        sum.first_failure.as_ref().is_some_and(
            |f| matches!(&f.outcome, Outcome::Violation(v) if v.invariant == "no-duplicate-effect")
        ),
        "{:?}",
        sum.first_failure
    );
}

/// A PUT's repeat that finds the resource at the value it sets changes
/// nothing, whoever wrote that value last: alice's PUT of 5 lands and its
/// 200 is lost, bob PUTs 5 too, carol reads the claim for an edit, and
/// alice's retry arrives before carol's write. Had the retry made a new
/// version (it once did, unless alice was the last writer), carol's edit
/// from the version before would look as if it replaced alice's write,
/// a lost update of a value that never changed. Bob's PUT, a first landing
/// on alice's 5, changes nothing either.
#[test]
fn a_puts_repeat_over_another_writers_same_value_changes_nothing() {
    let text = "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = false\nif_match = false\ntimeout_ms = 1000\n[client.retry]\npolicy = \"fixed\"\nbase_ms = 0\nmax_attempts = 5\n[[resources]]\nid = 4711\nvalue = 1000\n[[requests]]\nclient = \"alice\"\nmethod = \"put\"\nresource = 4711\nvalue = 5\n[[requests]]\nclient = \"bob\"\nmethod = \"put\"\nresource = 4711\nvalue = 5\nstart_ms = 100\n[[requests]]\nclient = \"carol\"\nmethod = \"edit\"\nresource = 4711\nvalue = 1\nstart_ms = 300\n[[network.links]]\nfrom = \"server\"\nto = \"alice\"\nloss_per_mille = [0, 1000]\n[[network.links]]\nfrom = \"server\"\nto = \"carol\"\ndelay_ms_min = 900\ndelay_ms_max = 900\n";
    let s = load_text("same-value.toml", text, &[]);
    let sum = sweep(&s, SEEDS);
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    let seed = (0..SEEDS)
        .find(|&seed| {
            let (entries, _) = trace_of(&s, seed);
            reached(&entries, sit::PUT_CHANGED_NOTHING) && first_told_done(&entries, 1).is_some()
        })
        .expect("some retry of alice's finds bob's 5 and alice is told done");
    let (entries, _) = trace_of(&s, seed);
    assert_eq!(effects_of(&entries, "write"), 1, "alice's first landing");
    assert!(
        held_at(&entries, 2, 1).is_some(),
        "bob's PUT found 5 in place"
    );
}

/// Alice PUTs 5 to /claims/4711 at 0 ms (it lands at 10 ms), carol starts
/// an edit (+1) at 100 ms and reads alice's 5 at 110 ms, bob PUTs `bob` at
/// 115 ms (it lands at 125 ms), and carol's write, computed from the 5 she
/// read, lands at 130 ms. Every message takes 10 ms and none is lost, so
/// every seed runs this one schedule. `tail` adds to the file.
fn put_between_read_and_write(bob: u32, tail: &str) -> String {
    format!(
        "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = false\nif_match = false\ntimeout_ms = 1000\n[[resources]]\nid = 4711\nvalue = 1000\n[[requests]]\nclient = \"alice\"\nmethod = \"put\"\nresource = 4711\nvalue = 5\n[[requests]]\nclient = \"bob\"\nmethod = \"put\"\nresource = 4711\nvalue = {bob}\nstart_ms = 115\n[[requests]]\nclient = \"carol\"\nmethod = \"edit\"\nresource = 4711\nvalue = 1\nstart_ms = 100\n[network]\ndelay_ms_min = 10\ndelay_ms_max = 10\n{tail}"
    )
}

fn new_versions(entries: &[Entry]) -> usize {
    entries
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                TraceKind::Observe {
                    obs: Obs::NewVersion { .. },
                    ..
                }
            )
        })
        .count()
}

/// A replacing PUT asks for a state, "the claim is 5". Bob's first PUT
/// finds it 5 already (alice's): the representation does not change, so
/// neither does its ETag, and carol's edit, computed from the 5 she read,
/// replaces nothing she has not seen. Bob's "done" is true because 5 held
/// when his answer was made, as a DELETE's 404 is. (Bob's PUT once made a
/// new version of the same 5, and carol's write was judged a lost update
/// of a value that never changed.)
#[test]
fn a_put_that_finds_its_value_already_there_changes_nothing_for_an_editor_who_read_it() {
    let s = load_text("same-value.toml", &put_between_read_and_write(5, ""), &[]);
    let sum = sweep(&s, 20);
    assert_eq!(sum.tally.holds, 20, "{:?}", sum.first_failure);
    let (entries, _) = trace_of(&s, 0);
    assert!(reached(&entries, sit::PUT_CHANGED_NOTHING));
    assert!(
        !reached(&entries, sit::STALE_WRITE),
        "carol read the current 5"
    );
    assert_eq!(effects_of(&entries, "write"), 1, "alice's alone");
    assert_eq!(effects_of(&entries, "edit"), 1, "carol's");
    assert_eq!(new_versions(&entries), 2, "alice's v2 and carol's v3");
    let held = held_at(&entries, 2, 1).expect("bob's PUT found 5 in place");
    assert!(held < first_told_done(&entries, 2).expect("bob is told done"));
}

/// The rule is about the representation, not about who wrote last: a PUT
/// of a different value between carol's read and her write is replaced by
/// a write computed without it, and bob, told done, lost his update.
#[test]
fn a_put_of_another_value_between_an_editors_read_and_write_is_still_a_lost_update() {
    let s = load_text("other-value.toml", &put_between_read_and_write(7, ""), &[]);
    let sum = sweep(&s, 20);
    assert_eq!(sum.tally.violations, 20, "{:?}", sum.first_failure);
    let (entries, outcome) = trace_of(&s, 0);
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-lost-update" && v.message.contains("request #2")),
        "{outcome:?}"
    );
    assert!(reached(&entries, sit::STALE_WRITE));
    assert!(!reached(&entries, sit::PUT_CHANGED_NOTHING));
}

/// Carol reads 1000 before alice's 5 lands; bob's PUT finds 5 and changes
/// nothing; carol's 1001 then replaces the 5 bob was told holds, computed
/// from a read that never saw it. Alice never hears back and gives up
/// (her 200s are cut off), so the loss is bob's alone to report: what he
/// asked for is replaced as surely as if his PUT had written it.
#[test]
fn a_state_a_put_found_in_place_is_lost_to_a_write_computed_before_it() {
    let tail = "[client.retry]\nmax_attempts = 1\n[[network.links]]\nfrom = \"server\"\nto = \"carol\"\ndelay_ms_min = 200\ndelay_ms_max = 200\n[[network.partitions]]\nbetween = [\"server\", \"alice\"]\none_way = true\nstart_ms = 0\nend_ms = 2000\n";
    let text = put_between_read_and_write(5, tail)
        .replace("start_ms = 115", "start_ms = 40")
        .replace("start_ms = 100", "start_ms = 0")
        .replace(
            "value = 5\n[[requests]]\nclient = \"bob\"",
            "value = 5\nstart_ms = 20\n[[requests]]\nclient = \"bob\"",
        );
    let s = load_text("held-then-replaced.toml", &text, &[]);
    let (entries, outcome) = trace_of(&s, 0);
    assert!(
        held_at(&entries, 2, 1).is_some(),
        "bob's PUT found 5 in place"
    );
    assert!(
        first_told_done(&entries, 1).is_none(),
        "alice never hears back"
    );
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-lost-update" && v.message.contains("request #2")),
        "{outcome:?}"
    );
}

/// Bob's PUT finds 5 in place and its 200 is stored under his
/// Idempotency-Key, then cut off on its way; his retry gets the stored 200.
/// That answer was made while 5 held, so the "done" it carries is true.
#[test]
fn a_stored_answer_of_a_put_that_changed_nothing_still_vouches_for_its_done() {
    let tail = "[client.retry]\npolicy = \"fixed\"\nbase_ms = 0\nmax_attempts = 3\n[[network.partitions]]\nbetween = [\"server\", \"bob\"]\none_way = true\nstart_ms = 100\nend_ms = 500\n";
    let text = put_between_read_and_write(5, tail)
        .replace("idempotency_key = false", "idempotency_key = true");
    let s = load_text("replayed.toml", &text, &[]);
    let sum = sweep(&s, 20);
    assert_eq!(sum.tally.holds, 20, "{:?}", sum.first_failure);
    let (entries, _) = trace_of(&s, 0);
    assert!(reached(&entries, sit::KEY_REPLAYED));
    let replayed = held_at(&entries, 2, 2).expect("the stored answer to attempt 2");
    assert!(replayed < first_told_done(&entries, 2).expect("bob is told done"));
}

/// Two editors add 3 to the same 1000 from the same read: both compute
/// 1003, and the second finds 1003 already there. The representation does
/// not change, but an increment is gone (1003, not 1006): an edit asks for
/// a change, not for a state, and its write over an unseen version is
/// still a write that replaced that version.
#[test]
fn an_edit_that_lands_on_its_own_result_from_an_older_read_is_still_a_lost_update() {
    let text = "summary = \"x\"\nmodel = \"http\"\n[client]\nif_match = false\n[[resources]]\nid = 4711\nvalue = 1000\n[[requests]]\nclient = \"alice\"\nmethod = \"edit\"\nresource = 4711\nvalue = 3\n[[requests]]\nclient = \"bob\"\nmethod = \"edit\"\nresource = 4711\nvalue = 3\n[network]\ndelay_ms_min = 10\ndelay_ms_max = 10\n[[network.links]]\nfrom = \"bob\"\nto = \"server\"\ndelay_ms_min = 15\ndelay_ms_max = 15\n";
    let s = load_text("same-edit.toml", text, &[]);
    let (entries, outcome) = trace_of(&s, 0);
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-lost-update"),
        "{outcome:?}"
    );
    assert!(reached(&entries, sit::STALE_WRITE));
    assert_eq!(effects_of(&entries, "edit"), 2);
}

/// Carol starts an edit (+200) of claim 4711 at 0 ms and reads its 1000 at
/// 10 ms; dave's blind PUT of `dave`, sent at 5 ms, lands at 15 ms; carol's
/// write, computed from the 1000, lands at 30 ms over dave's version. Every
/// message takes 10 ms and none is lost: one schedule for every seed.
fn blind_put_between_read_and_write(dave: u32) -> String {
    format!(
        "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = false\nif_match = false\ntimeout_ms = 1000\n[[resources]]\nid = 4711\nvalue = 1000\n[[requests]]\nclient = \"carol\"\nmethod = \"edit\"\nresource = 4711\nvalue = 200\n[[requests]]\nclient = \"dave\"\nmethod = \"put\"\nresource = 4711\nvalue = {dave}\nstart_ms = 5\n[network]\ndelay_ms_min = 10\ndelay_ms_max = 10\n"
    )
}

/// Dave's PUT of 1200 lands between carol's read of 1000 and her +200,
/// which writes 1200 too. Carol's edit, then dave's PUT, gives 1000 →
/// 1200 → 1200: a serial order explains the claim, and nothing is lost,
/// though carol's write replaced a version she never read. (The ledger
/// judged it a lost update of dave's PUT before it compared values.)
#[test]
fn an_edit_from_an_older_read_whose_result_a_serial_order_gives_loses_nothing() {
    let s = load_text(
        "same-result.toml",
        &blind_put_between_read_and_write(1200),
        &[],
    );
    let sum = sweep(&s, 20);
    assert_eq!(sum.tally.holds, 20, "{:?}", sum.first_failure);
    let (entries, _) = trace_of(&s, 0);
    assert!(
        reached(&entries, sit::STALE_WRITE),
        "carol read v1 under v2"
    );
    assert!(first_told_done(&entries, 1).is_some(), "carol is told done");
    assert!(first_told_done(&entries, 2).is_some(), "dave is told done");
    assert_eq!(new_versions(&entries), 2, "dave's v2 and carol's v3");
}

/// The same schedule with dave's PUT of 5: carol's edit first leaves 5,
/// dave's PUT first has carol read 5, not 1000. No serial order gives the
/// 1200 carol left, and dave, told done, lost his update.
#[test]
fn an_edit_from_an_older_read_over_another_value_is_still_a_lost_update() {
    let s = load_text(
        "other-result.toml",
        &blind_put_between_read_and_write(5),
        &[],
    );
    let sum = sweep(&s, 20);
    assert_eq!(sum.tally.violations, 20, "{:?}", sum.first_failure);
    let (entries, outcome) = trace_of(&s, 0);
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-lost-update" && v.message.contains("request #2")),
        "{outcome:?}"
    );
    assert!(reached(&entries, sit::STALE_WRITE));
}

/// The lost update is a write computed from a read that missed another
/// client's write: both editors read v1, both were (or would be) told 200.
#[test]
fn a_lost_update_is_a_write_from_a_stale_read() {
    let (entries, outcome) = failing_trace("http-lost-update");
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-lost-update"),
        "{outcome:?}"
    );
    assert!(reached(&entries, sit::STALE_WRITE));
    let stale_reads = entries
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                TraceKind::Observe {
                    obs: Obs::NewVersion {
                        change: Change::Edit { read: 1, .. },
                        ..
                    },
                    ..
                }
            )
        })
        .count();
    assert_eq!(stale_reads, 2, "both writes were computed from v1");
    // With If-Match the slower editor gets 412, reads again, and nothing is lost.
    let s = load("http-lost-update", &["client.if_match=true"]);
    let sum = sweep(&s, SEEDS);
    assert_eq!(sum.tally.failing(), 0);
    assert!(sum.tally.situations.contains(sit::PRECONDITION_FAILED));
    assert!(sum.tally.situations.contains(sit::REREAD_AFTER_412));
}

/// An edit sends two requests in one attempt; a duplicated answer to its
/// GET arriving while it waits on its PUT is not the PUT's answer.
#[test]
fn an_edit_takes_only_the_answer_to_the_request_it_waits_on() {
    let s = load(
        "http-if-match",
        &[
            "network.loss_per_mille=0",
            "network.duplicate_per_mille=0",
            "network.links=[{from=\"server\", to=\"alice\", kinds=[\"response\"], duplicate_per_mille=1000}, {from=\"server\", to=\"bob\", kinds=[\"response\"], duplicate_per_mille=1000}, {from=\"server\", to=\"carol\", kinds=[\"response\"], duplicate_per_mille=1000}]",
        ],
    );
    let sum = sweep(&s, SEEDS);
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    assert!(sum.tally.faults.duplicated > 0);
}
