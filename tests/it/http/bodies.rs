//! A retry whose body differs from its first attempt's under the same
//! Idempotency-Key: what the server's fingerprint (`server.fingerprint`)
//! compares, the 422 it answers, what the client makes of it, and how
//! `no-mismatched-payload` judges the answer a key-only server gives.

use super::{effects_of, responses, violated, SEEDS};
use crate::support::{failing_trace, load, load_text, reached, refuses, sweep, trace_of};
use models::core::{Ending, Obs};
use models::http::{situations as sit, Method, Status};
use sim::{Outcome, TraceKind};

fn endings(entries: &[crate::support::Entry]) -> Vec<Ending> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Observe {
                obs: Obs::Ended { ending, .. },
                ..
            } => Some(*ending),
            _ => None,
        })
        .collect()
}

/// Fires: the retry for 1,300 under req-1-01 is answered with the stored
/// 201 of the 1,200 claim, and the client is told "done" for a value that
/// never landed. One creation, of the first value: the fault is the answer,
/// not a second effect.
#[test]
fn a_key_only_server_answers_a_changed_retry_with_the_first_bodys_201() {
    let (entries, outcome) = failing_trace("http-post-body-changed-on-retry");
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-mismatched-payload"
            && v.message.contains("value 1300") && v.message.contains("value 1200")),
        "{outcome:?}"
    );
    assert!(reached(&entries, sit::RETRY_BODY_CHANGED));
    assert!(reached(&entries, sit::KEY_REPLAYED));
    assert_eq!(effects_of(&entries, "creation"), 1);
}

/// Silent on the same seeds with the fingerprint: the changed retry gets
/// 422, nothing is executed or replayed, and the client ends the request
/// in a dead letter marked unknown, never "done" and never "failed" (its
/// first attempt landed). Where no answer is lost, no retry is sent and
/// the request is done.
#[test]
fn a_fingerprint_refuses_the_changed_retry_with_422_and_the_client_ends_it_unknown() {
    let s = load("http-post-body-fingerprint", &[]);
    let sum = sweep(&s, SEEDS);
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::BODY_MISMATCH_REJECTED));
    let seed = (0..SEEDS)
        .find(|&seed| reached(&trace_of(&s, seed).0, sit::BODY_MISMATCH_REJECTED))
        .expect("some retry is refused");
    let (entries, outcome) = trace_of(&s, seed);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert!(!reached(&entries, sit::KEY_REPLAYED), "nothing replayed");
    assert_eq!(effects_of(&entries, "creation"), 1);
    assert!(responses(&entries, Status::UnprocessableContent, Method::Post) >= 1);
    assert_eq!(endings(&entries), [Ending::Unknown]);
    // The same seed without the fingerprint is the violation.
    let off = load("http-post-body-fingerprint", &["server.fingerprint=none"]);
    let (_, outcome) = trace_of(&off, seed);
    assert!(
        matches!(&outcome, Outcome::Violation(v) if v.invariant == "no-mismatched-payload"),
        "{outcome:?}"
    );
}

/// A client that retries a 422 (`retry_final_errors`) only meets it again:
/// the key still stands for the first body.
#[test]
fn a_422_retried_is_an_attempt_after_a_final_error() {
    let s = load(
        "http-post-body-fingerprint",
        &["client.retry.retry_final_errors=true"],
    );
    assert!(violated(&sweep(&s, SEEDS), "operation-ends"));
}

/// The innocent change: a body serialised anew with its `sent_at` differs
/// in its bytes, not in its value. A fingerprint of the fields lets the
/// retry through to the stored 201 (silent); a fingerprint of the whole
/// body refuses it with 422, which is no wrong answer either (still
/// silent), but turns every lost 201 into a dead letter.
#[test]
fn a_new_timestamp_passes_a_fingerprint_of_the_fields_and_is_refused_by_one_of_the_body() {
    let s = load("http-post-retry-new-timestamp", &[]);
    let sum = sweep(&s, SEEDS);
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    assert!(sum.tally.situations.contains(sit::KEY_REPLAYED));
    assert!(!sum.tally.situations.contains(sit::BODY_MISMATCH_REJECTED));
    let seed = (0..SEEDS)
        .find(|&seed| reached(&trace_of(&s, seed).0, sit::RETRY_BODY_CHANGED))
        .expect("some answer is lost and the request retried");
    let (entries, _) = trace_of(&s, seed);
    assert_eq!(endings(&entries), [Ending::Done]);

    let body = load(
        "http-post-retry-new-timestamp",
        &["server.fingerprint=body"],
    );
    let (entries, outcome) = trace_of(&body, seed);
    assert!(matches!(outcome, Outcome::Holds), "{outcome:?}");
    assert!(reached(&entries, sit::BODY_MISMATCH_REJECTED));
    assert_eq!(endings(&entries), [Ending::Unknown]);
    // The bytes resent as first sent match any fingerprint.
    let same = load(
        "http-post-retry-new-timestamp",
        &["server.fingerprint=body", "client.retry_body=same"],
    );
    let (entries, _) = trace_of(&same, seed);
    assert!(!reached(&entries, sit::RETRY_BODY_CHANGED));
    assert_eq!(endings(&entries), [Ending::Done]);
}

/// A fingerprint compares a retry with the request its key was stored
/// for: where the first attempt never reached the server, the key is new
/// and the changed retry is executed as it is, a creation of another value
/// than the operation's (`no-mismatched-payload` on the effect).
#[test]
fn a_fingerprint_cannot_catch_a_changed_retry_whose_first_attempt_was_lost() {
    let text = r#"summary = "the first POST lost on the way"
model = "http"
[client]
timeout_ms = 1000
[client.retry]
policy = "fixed"
base_ms = 0
max_attempts = 3
[server]
fingerprint = "body"
[[requests]]
method = "post"
value = 1200
retry_value = 1300
[[network.links]]
from = "client"
to = "server"
loss_per_mille = [0, 500]
"#;
    let s = load_text("first-lost.toml", text, &[]);
    let sum = sweep(&s, SEEDS);
    assert!(
        violated(&sum, "no-mismatched-payload"),
        "{:?}",
        sum.first_failure
    );
    let failure = sum.first_failure.expect("a failure");
    let (entries, _) = trace_of(&s, failure.seed);
    assert!(!reached(&entries, sit::BODY_MISMATCH_REJECTED));
}

#[test]
fn retry_bodies_that_make_no_sense_are_refused_with_their_place_and_a_fix() {
    let base = "summary = \"x\"\nmodel = \"http\"\n[[resources]]\nid = 4711\n";
    refuses(
        base,
        &[
            (
                "[[requests]]\nmethod = \"delete\"\nresource = 4711\nretry_value = 3\n",
                "a DELETE has no body",
                "remove `retry_value`",
            ),
            (
                "[[requests]]\nmethod = \"edit\"\nresource = 4711\nvalue = 3\nretry_value = 4\n",
                "computes its body from a new read",
                "remove `retry_value`",
            ),
            (
                "[[requests]]\nmethod = \"post\"\nvalue = 3\nretry_value = 3\n",
                "would send its value, 3, again",
                "remove `retry_value`",
            ),
            (
                "[[requests]]\nmethod = \"patch\"\nresource = 4711\nvalue = 3\nretry_value = 0\n",
                "adding 0 changes nothing",
                "at least 1",
            ),
            (
                "[[requests]]\nmethod = \"post\"\nvalue = 3\n[server]\nfingerprint = \"bdy\"\n",
                "unknown value \"bdy\"",
                "did you mean \"body\"",
            ),
            (
                "[[requests]]\nmethod = \"post\"\nvalue = 3\n[client]\nretry_body = \"new-time\"\n",
                "unknown value \"new-time\"",
                "\"new-timestamp\"",
            ),
        ],
    );
}
