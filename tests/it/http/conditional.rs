//! Conditional PUT, PATCH and DELETE (`client.conditional_writes`): the
//! read before the first attempt, the If-Match every attempt carries, and
//! what a 412 means to a request that is not an edit.

use super::{effects_of, responses, SEEDS};
use crate::support::{check, load, load_text, reached, sweep, trace_of, Entry};
use models::core::{Ending, Obs};
use models::http::{self, situations as sit, Method, Precondition, Status};
use models::scenario::Verdict;
use models::Msg;
use sim::{Outcome, TraceKind};

/// The preconditions the requests of `method` carried, in order.
fn preconditions(entries: &[Entry], method: Method) -> Vec<Precondition> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Deliver {
                msg: Msg::Http(http::Msg::Request(q)),
                ..
            } if q.method == method => Some(q.cond),
            _ => None,
        })
        .collect()
}

fn ending_of(entries: &[Entry], op: u32) -> Option<Ending> {
    entries.iter().find_map(|e| match &e.kind {
        TraceKind::Observe {
            obs: Obs::Ended { op: o, ending },
            ..
        } if o.id == op => Some(*ending),
        _ => None,
    })
}

/// The pairs: each mistake fails, and the same design with conditional
/// writes holds on the same seeds.
#[test]
fn a_retry_with_the_etag_of_its_first_read_cannot_apply_twice() {
    use Verdict::{Holds, Violation};
    let dup = Some("no-duplicate-effect");
    check("http-patch-retried", &[], SEEDS, Violation, dup);
    check(
        "http-patch-retried",
        &["client.conditional_writes=true"],
        SEEDS,
        Holds,
        None,
    );
    check("http-delete-recreated", &[], SEEDS, Violation, dup);
    check(
        "http-delete-recreated",
        &["client.conditional_writes=true"],
        SEEDS,
        Holds,
        None,
    );
    check(
        "http-put-retried-late-attempt",
        &["client.conditional_writes=true"],
        SEEDS,
        Holds,
        None,
    );
}

/// Silent, and why: the PATCH's retry carries the ETag read before the
/// first attempt, the first landing moved it on, and the retry is answered
/// 412 with nothing added; the client ends the request unknown (its first
/// attempt may have landed), in a dead letter, and does not retry.
#[test]
fn a_conditional_patch_retried_after_its_landing_gets_412_and_ends_unknown() {
    let s = load("http-patch-if-match", &[]);
    let seed = (0..SEEDS)
        .find(|&seed| reached(&trace_of(&s, seed).0, sit::PRECONDITION_FAILED))
        .expect("some retry meets its used-up ETag");
    let (entries, outcome) = trace_of(&s, seed);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert_eq!(effects_of(&entries, "increment"), 1);
    let conds = preconditions(&entries, Method::Patch);
    assert!(conds.len() >= 2, "{conds:?}");
    assert!(
        conds.iter().all(|c| *c == Precondition::IfMatch(1)),
        "every attempt names the ETag first read: {conds:?}"
    );
    assert!(responses(&entries, Status::PreconditionFailed, Method::Patch) >= 1);
    assert_eq!(ending_of(&entries, 1), Some(Ending::Unknown));
    // Unconditional, the retry adds again (the read's answer shares the
    // lossy link, so the same seed loses another message: compared by
    // sweep in `a_retry_with_the_etag_of_its_first_read_cannot_apply_twice`).
    let (entries, outcome) = crate::support::failing_trace("http-patch-retried");
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-duplicate-effect"),
        "{outcome:?}"
    );
    assert_eq!(effects_of(&entries, "increment"), 2);
}

/// Fires without the condition: alice's retried DELETE deletes the claim
/// bob created since. Silent with it: bob's read finds nothing and his PUT
/// creates with If-None-Match: *; alice's retry names v1 and gets 412, and
/// bob's claim stays.
#[test]
fn a_conditional_delete_retried_after_a_recreation_leaves_the_new_resource() {
    let s = load("http-delete-recreated", &[]);
    let sum = sweep(&s, SEEDS);
    let seed = sum.first_failure.expect("a failing seed").seed;
    let (entries, _) = trace_of(&s, seed);
    assert_eq!(
        effects_of(&entries, "deletion"),
        2,
        "the second is bob's claim"
    );

    // With the condition, a seed where alice's retry meets bob's claim
    // (the reads share the lossy link, so it is another seed).
    let fixed = load("http-delete-if-match", &[]);
    let refused = |seed: &u64| {
        let entries = trace_of(&fixed, *seed).0;
        responses(&entries, Status::PreconditionFailed, Method::Delete) >= 1
    };
    let seed = (0..SEEDS)
        .find(refused)
        .expect("some retry meets bob's claim");
    let (entries, outcome) = trace_of(&fixed, seed);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert_eq!(effects_of(&entries, "deletion"), 1);
    assert_eq!(effects_of(&entries, "write"), 1, "bob's claim");
    assert_eq!(
        preconditions(&entries, Method::Put),
        [Precondition::IfNoneMatchAny]
    );
    assert!(responses(&entries, Status::PreconditionFailed, Method::Delete) >= 1);
    assert_eq!(ending_of(&entries, 1), Some(Ending::Unknown), "alice");
    assert_eq!(ending_of(&entries, 2), Some(Ending::Done), "bob");
}

/// A conditional PUT whose body is already there is answered 2xx though
/// its ETag is stale (RFC 9110 13.1.1: the change has already succeeded);
/// a conditional PATCH or DELETE of nothing is answered 404, as without
/// the condition (13.2.1); a 412 on a first attempt, where nothing of the
/// request can have landed, ends it failed.
#[test]
fn the_server_evaluates_a_precondition_only_where_the_rfc_says() {
    let base = "summary = \"x\"\nmodel = \"http\"\n[client]\nidempotency_key = false\nconditional_writes = true\n[[resources]]\nid = 4711\nvalue = 1000\n";
    // Alice's PUT of 5 reads v1; bob's PUT of 5 lands first (v2); alice's
    // If-Match v1 is stale, but the value is hers already: 200, no write.
    let puts = format!("{base}[[requests]]\nclient = \"alice\"\nmethod = \"put\"\nresource = 4711\nvalue = 5\n[[requests]]\nclient = \"bob\"\nmethod = \"put\"\nresource = 4711\nvalue = 5\n[[network.links]]\nfrom = \"server\"\nto = \"alice\"\ndelay_ms_min = 100\ndelay_ms_max = 100\n");
    let s = load_text("same-value.toml", &puts, &[]);
    let (entries, outcome) = trace_of(&s, 0);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert_eq!(
        responses(&entries, Status::PreconditionFailed, Method::Put),
        0
    );
    assert!(reached(&entries, sit::PUT_CHANGED_NOTHING));
    assert_eq!(ending_of(&entries, 1), Some(Ending::Done));
    // The same race with another value: alice's PUT of 6 gets 412 on its
    // first attempt, nothing of hers landed: failed, and true.
    let six = puts.replacen("value = 5", "value = 6", 1);
    let s = load_text("other-value.toml", &six, &[]);
    let (entries, outcome) = trace_of(&s, 0);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert_eq!(
        responses(&entries, Status::PreconditionFailed, Method::Put),
        1
    );
    assert_eq!(ending_of(&entries, 1), Some(Ending::Failed));
    // A PATCH of a resource that does not exist: its read's 404 ends it.
    let patch = format!("{base}[[requests]]\nmethod = \"delete\"\nresource = 4711\n[[requests]]\nclient = \"bob\"\nmethod = \"patch\"\nresource = 4711\nvalue = 3\nstart_ms = 1000\n");
    let s = load_text("patch-nothing.toml", &patch, &[]);
    let sum = sweep(&s, 20);
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    let (entries, _) = trace_of(&s, 0);
    assert!(preconditions(&entries, Method::Patch).is_empty());
    assert_eq!(ending_of(&entries, 2), Some(Ending::Failed));
}
