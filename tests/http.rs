//! The HTTP model: what each method's semantics make of a retry, how the
//! ledger judges a repeated DELETE and a lost update, and the loader's
//! errors for requests that make no sense.

mod common;

use common::{check, failing_trace, load, load_text, reached, refuses, sweep, trace_of, Entry};
use models::core::Obs;
use models::http::{self, situations as sit, Method, Status};
use models::scenario::Verdict;
use models::Msg;
use sim::{Outcome, TraceKind};

const SEEDS: u64 = 300;

/// Each mistake comes with the one change that fixes it, and each fix with
/// the change that breaks it again: the method's promise, kept or not.
#[test]
fn each_method_keeps_its_promise_only_as_implemented() {
    use Verdict::{Holds, Violation};
    let dup = Some("no-duplicate-effect");
    let cases: &[(&str, &[&str], Verdict, Option<&str>)] = &[
        (
            "http-post-retried-without-key",
            &["client.idempotency_key=true"],
            Holds,
            None,
        ),
        // A key protects only where the server honours it.
        (
            "http-post-retried-without-key",
            &[
                "client.idempotency_key=true",
                "server.idempotency_keys=false",
            ],
            Violation,
            dup,
        ),
        // A key makes an increment safe to retry, as it does a create.
        (
            "http-patch-retried",
            &["client.idempotency_key=true"],
            Holds,
            None,
        ),
        ("http-put-appends", &["server.put=replace"], Holds, None),
        ("http-put-retried", &["server.put=add"], Violation, dup),
        (
            "http-delete-404-as-failure",
            &["client.delete_404=done"],
            Holds,
            None,
        ),
        ("http-lost-update", &["client.if_match=true"], Holds, None),
        // Keys kept as long as the client retries (6 h, or forever) survive
        // the 2 h outage that a 1 h retention does not.
        (
            "http-key-expired-before-retry",
            &["server.key_retention_ms=21600000"],
            Holds,
            None,
        ),
        (
            "http-key-expired-before-retry",
            &["server.key_retention_ms=0"],
            Holds,
            None,
        ),
        // Without the outage no retry comes late, and the sweep holds: the
        // design warning is what still names the gap.
        (
            "http-key-expired-before-retry",
            &["network.partitions=[]"],
            Holds,
            None,
        ),
    ];
    for (name, sets, verdict, invariant) in cases {
        check(name, sets, SEEDS, *verdict, *invariant);
    }
}

fn effects_of(entries: &[Entry], site: &str) -> usize {
    entries
        .iter()
        .filter(|e| matches!(&e.kind, TraceKind::Observe { obs: Obs::Effect { site: s, .. }, .. } if s.name == site))
        .count()
}

fn responses(entries: &[Entry], status: Status, method: Method) -> usize {
    entries
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                TraceKind::Deliver {
                    msg: Msg::Http(http::Msg::Response { status: s, method: m, .. }),
                    ..
                } if *s == status && *m == method
            )
        })
        .count()
}

/// A DELETE retried after its 204 was lost gets 404: the ledger judges the
/// deletion that landed (one) against what the client was told (done), so
/// reading "already gone" as success is right, and reading it as failure
/// is a false failure.
#[test]
fn a_repeated_delete_is_judged_by_the_one_deletion_that_landed() {
    let s = load("http-delete-retried", &[]);
    let seed = (0..SEEDS)
        .find(|&seed| reached(&trace_of(&s, seed).0, sit::DELETE_FOUND_NOTHING))
        .expect("some retry finds the resource gone");
    let (entries, outcome) = trace_of(&s, seed);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert!(responses(&entries, Status::NotFound, Method::Delete) >= 1);
    assert_eq!(effects_of(&entries, "deletion"), 2, "one per resource");
    let (entries, outcome) = failing_trace("http-delete-404-as-failure");
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-false-failure"),
        "{outcome:?}"
    );
    assert!(reached(&entries, sit::DELETE_FOUND_NOTHING));
    assert_eq!(effects_of(&entries, "deletion"), 1);
}

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

/// The second creation of a keyed POST comes from the retry that arrived
/// after its key was purged, not from a key the server never had: the
/// failing run reports the expiry, and the second effect is that request's.
#[test]
fn a_key_purged_during_an_outage_lets_the_late_retry_create_again() {
    let (entries, outcome) = failing_trace("http-key-expired-before-retry");
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-duplicate-effect"),
        "{outcome:?}"
    );
    assert!(reached(&entries, sit::KEY_EXPIRED));
    assert_eq!(effects_of(&entries, "creation"), 2);
    // Kept for the whole retry span, the same outage ends in a replayed 201.
    let s = load(
        "http-key-expired-before-retry",
        &["server.key_retention_ms=21600000"],
    );
    let seed = (0..SEEDS)
        .find(|&seed| reached(&trace_of(&s, seed).0, sit::KEY_REPLAYED))
        .expect("some late retry gets the stored answer");
    let (entries, outcome) = trace_of(&s, seed);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert!(!reached(&entries, sit::KEY_EXPIRED));
    assert_eq!(effects_of(&entries, "creation"), 1);
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
                    obs: Obs::NewVersion { read: 1, .. },
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

#[test]
fn requests_that_make_no_sense_are_refused_with_their_place_and_a_fix() {
    let base = "summary = \"x\"\nmodel = \"http\"\n[expect]\nverdict = \"holds\"\n[[resources]]\nid = 4711\n";
    let cases: &[(&str, &str, &str)] = &[
        (
            "[[requests]]\nmethod = \"post\"\nresource = 4711\nvalue = 1\n",
            "a POST creates a new resource under /claims",
            "remove `resource`",
        ),
        (
            "[[requests]]\nmethod = \"patch\"\nresource = 4711\n",
            "a PATCH needs the value it sends",
            "add value",
        ),
        (
            "[[requests]]\nmethod = \"delete\"\nresource = 4711\nvalue = 3\n",
            "a DELETE has no body",
            "remove `value`",
        ),
        (
            "[[requests]]\nmethod = \"edit\"\nresource = 9\nvalue = 3\n",
            "no resource /claims/9",
            "[[resources]]",
        ),
        (
            // 0 is no id (as in [[resources]]): a PUT there was accepted once.
            "[[requests]]\nmethod = \"put\"\nresource = 0\nvalue = 3\n",
            "resource id 0 is out of range",
            "use an id from 1 to",
        ),
        (
            "[[requests]]\nmethod = \"pacth\"\nresource = 4711\nvalue = 3\n",
            "unknown value \"pacth\"",
            "did you mean \"patch\"",
        ),
        (
            "[[requests]]\nclient = \"server\"\nmethod = \"put\"\nresource = 4711\nvalue = 3\n",
            "the resource server's name",
            "another name",
        ),
        (
            "[[requests]]\nmethod = \"put\"\nresource = 4711\nvalue = 3\n[client]\ndelete_404 = \"ok\"\n",
            "unknown value \"ok\"",
            "\"done\"",
        ),
    ];
    refuses(base, cases);
    // The default scenario of the model loads: one POST, keys on.
    let s = load_text("ok.toml", base, &[]);
    assert_eq!(s.system.world.actor_names, ["client", "server"]);
}
