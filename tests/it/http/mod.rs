//! The HTTP model: what each method's semantics make of a retry, how the
//! ledger judges a repeated DELETE and a lost update, and the loader's
//! errors for requests that make no sense.

use crate::support;

use models::core::{Change, Obs};
use models::http::{self, situations as sit, Method, Status};
use models::scenario::Verdict;
use models::Msg;
use sim::{Outcome, TraceKind};
use support::{check, failing_trace, load, load_text, reached, refuses, sweep, trace_of, Entry};

mod bodies;
mod conditional;
mod puts;

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
        // The key answers the late attempt from the stored response.
        (
            "http-put-retried-late-attempt",
            &["client.idempotency_key=true"],
            Holds,
            None,
        ),
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

/// Two clients, no faults: alice deletes /claims/4711 (and bob, 300 ms later, `delete`s it too).
fn two_deletes(tail: &str) -> String {
    format!(
        "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = false\ndelete_404 = \"done\"\n[[resources]]\nid = 4711\nvalue = 1000\n[[requests]]\nclient = \"alice\"\nmethod = \"delete\"\nresource = 4711\n[[requests]]\nclient = \"bob\"\nmethod = \"delete\"\nresource = 4711\nstart_ms = 300\n{tail}"
    )
}

/// Whether `op`'s DELETE saw its resource already gone when attempt
/// `attempt` was answered.
fn held_at(entries: &[Entry], op: u32, attempt: u32) -> Option<usize> {
    entries.iter().position(|e| {
        matches!(&e.kind, TraceKind::Observe { obs: Obs::StateHeld { op: o, attempt: a, .. }, .. }
            if o.id == op && *a == attempt)
    })
}

fn first_told_done(entries: &[Entry], op: u32) -> Option<usize> {
    entries.iter().position(|e| {
        matches!(&e.kind, TraceKind::Observe { obs: Obs::ToldDone { op: o, .. }, .. } if o.id == op)
    })
}

fn violated(sum: &sim::Summary, invariant: &str) -> bool {
    sum.first_failure
        .as_ref()
        .is_some_and(|f| matches!(&f.outcome, Outcome::Violation(v) if v.invariant == invariant))
}

/// A DELETE asks for a state, "this resource is gone", not for an action of
/// its own. Two clients delete one resource with no fault at all: the
/// second finds it gone on its first attempt and reads the 404 as done,
/// which is true; one deletion landed, and exactly once still holds.
#[test]
fn a_second_client_whose_delete_finds_the_resource_gone_is_right_to_read_it_as_done() {
    let s = load_text("two-deletes.toml", &two_deletes(""), &[]);
    let sum = sweep(&s, 200);
    assert_eq!(sum.tally.holds, 200, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::DELETE_FOUND_NOTHING));
    let (entries, _) = trace_of(&s, 0);
    assert_eq!(effects_of(&entries, "deletion"), 1, "alice's");
    // Bob's first attempt saw the resource gone, before he was told done.
    let held = held_at(&entries, 2, 1).expect("bob's 404 saw 4711 gone");
    assert!(held < first_told_done(&entries, 2).expect("bob is told done"));
    // The same under loss, duplication, late answers and server crashes,
    // with both clients retrying: whichever DELETE lands first deletes, and
    // every other attempt's 404 is done.
    let s = load("http-delete-by-two-clients", &[]);
    let sum = sweep(&s, SEEDS);
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    assert!(sum.tally.faults.lost > 0 && sum.tally.faults.duplicated > 0);
    assert!(sum.tally.situations.contains(sit::REQUEST_RETRIED));
}

/// "Failed" in a dead letter tells an operator the deletion is still to be
/// done; re-driven later, it removes whatever is at that id by then. When
/// the answer it was concluded from saw the resource already gone, that is
/// false, whether the resource went by this client's earlier attempt
/// (http-delete-404-as-failure) or by another client's DELETE.
#[test]
fn a_first_attempt_that_finds_another_clients_deletion_recorded_as_failed_is_a_false_failure() {
    let s = load_text(
        "two-deletes-failed.toml",
        &two_deletes(""),
        &["client.delete_404=failed"],
    );
    let sum = sweep(&s, 50);
    assert_eq!(sum.tally.violations, 50);
    assert!(
        violated(&sum, "no-false-failure"),
        "{:?}",
        sum.first_failure
    );
    let (entries, outcome) = trace_of(&s, 0);
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.message.contains("request #2")),
        "{outcome:?}"
    );
    assert!(held_at(&entries, 2, 1).is_some(), "bob's first attempt");
}

/// A resource that never existed is gone as much as one another client
/// deleted: bob's DELETE of /claims/4800 runs before carol's PUT creates
/// it. "Gone" held when bob was answered; carol's creation later is a new
/// resource, not a deletion that failed.
#[test]
fn a_delete_of_a_resource_that_never_existed_is_done_by_the_state_it_found() {
    let text = "summary = \"x\"\nmodel = \"http\"\n[client]\ndelete_404 = \"done\"\n[[resources]]\nid = 4711\nvalue = 1000\n[[requests]]\nclient = \"bob\"\nmethod = \"delete\"\nresource = 4800\n[[requests]]\nclient = \"carol\"\nmethod = \"put\"\nresource = 4800\nvalue = 7\nstart_ms = 1000\n";
    let s = load_text("never-existed.toml", text, &[]);
    let sum = sweep(&s, 50);
    assert_eq!(sum.tally.holds, 50, "{:?}", sum.first_failure);
    let (entries, _) = trace_of(&s, 0);
    assert_eq!(effects_of(&entries, "deletion"), 0);
    assert!(held_at(&entries, 1, 1).is_some());
    let failed = load_text("never-existed.toml", text, &["client.delete_404=failed"]);
    assert!(violated(&sweep(&failed, 10), "no-false-failure"));
}

/// The state is judged when the answer is made, not at the end of the
/// run: bob's 404 is made while /claims/4711 is gone, carol re-creates it
/// with a PUT before the slow answer reaches bob, and the resource exists
/// at the end. Bob's "done" was true when the server said it.
#[test]
fn a_delete_is_judged_by_the_state_when_its_answer_was_made_not_after_a_recreation() {
    let tail = "[[requests]]\nclient = \"carol\"\nmethod = \"put\"\nresource = 4711\nvalue = 7\nstart_ms = 1000\n[[network.links]]\nfrom = \"server\"\nto = \"bob\"\ndelay_ms_min = 5000\ndelay_ms_max = 5000\n";
    let s = load_text("recreated.toml", &two_deletes(tail), &[]);
    let sum = sweep(&s, 50);
    assert_eq!(sum.tally.holds, 50, "{:?}", sum.first_failure);
    let (entries, _) = trace_of(&s, 0);
    let held = held_at(&entries, 2, 1).expect("bob's 404 saw 4711 gone");
    let recreated = entries
        .iter()
        .position(|e| matches!(&e.kind, TraceKind::Observe { obs: Obs::Effect { site, .. }, .. } if site.name == "write"))
        .expect("carol's PUT re-creates 4711");
    let told = first_told_done(&entries, 2).expect("bob is told done");
    assert!(
        held < recreated && recreated < told,
        "{held} {recreated} {told}"
    );
}

/// Exactly once still counts deletions: alice's answers are all lost, carol
/// re-creates the resource, and alice's retry deletes it again, two
/// deletions for one request. An Idempotency-Key gets the retry alice's
/// stored 204 instead.
#[test]
fn a_delete_that_deletes_twice_is_still_a_duplicate_effect() {
    let text = "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = false\ntimeout_ms = 1000\n[client.retry]\npolicy = \"fixed\"\nbase_ms = 0\nmax_attempts = 3\n[[resources]]\nid = 4711\nvalue = 1000\n[[requests]]\nclient = \"alice\"\nmethod = \"delete\"\nresource = 4711\n[[requests]]\nclient = \"carol\"\nmethod = \"put\"\nresource = 4711\nvalue = 7\nstart_ms = 500\n[[network.links]]\nfrom = \"server\"\nto = \"alice\"\nloss_per_mille = 1000\n";
    let s = load_text("deleted-twice.toml", text, &[]);
    assert!(violated(&sweep(&s, 10), "no-duplicate-effect"));
    let keyed = load_text("deleted-twice.toml", text, &["client.idempotency_key=true"]);
    let sum = sweep(&keyed, 10);
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::KEY_REPLAYED));
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

/// One edit over a network that loses every PUT, 1 s timeouts, no wait
/// between attempts, each hop 1 ms: the edit's PUT leaves 2 ms into its
/// attempt (the GET's round trip), so its timeout ends at 1,002 ms, and a
/// retry started then ends its own timeout at 2,002 ms. A window of
/// 2 × timeout + wait (2,000 ms) leaves that retry out: every lost PUT
/// ends the request after one attempt, and `retry-window-too-short` must
/// say so. One GET round trip more and the retry comes, and the rule is
/// silent.
#[test]
fn an_edits_retry_after_a_lost_put_needs_a_get_round_trip_more_of_window() {
    let text = r#"summary = "an edit whose every PUT is lost"
model = "http"

[client]
timeout_ms = 1000

[client.retry]
policy = "fixed"
base_ms = 0
max_attempts = 5
window_ms = 2000

[[resources]]
id = 4711
value = 1000

[[requests]]
method = "edit"
resource = 4711
value = 200

[network]
delay_ms_min = 1
delay_ms_max = 1

[[network.links]]
from = "client"
to = "server"
kinds = ["put"]
loss_per_mille = 1000
"#;

    let attempts = |window: &str| {
        let s = load_text("edit.toml", text, &[window]);
        support::attempts_per_op_and_warning(&s, 20, "retry-window-too-short")
    };
    let (per_op, warning) = attempts("client.retry.window_ms=2000");
    assert_eq!(per_op, 1, "no lost PUT is ever retried");
    let warning = warning.expect("the rule says so at 2 × timeout + wait");
    assert!(warning.contains("at least 2002"), "{warning}");
    let (per_op, _) = attempts("client.retry.window_ms=2001");
    assert_eq!(per_op, 1, "1 ms short of the GET's round trip");
    let (per_op, warning) = attempts("client.retry.window_ms=2002");
    assert_eq!(per_op, 2, "the retry fits, and is lost too");
    assert_eq!(warning, None, "a lost PUT's retry fits the window");
}
