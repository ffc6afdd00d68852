//! Each invariant, judged on observation sequences written from the domain:
//! the cases where it must fire, and the cases where a correct design must
//! leave it silent. The ledger sees only these observations, as in a run.

#[path = "common/ledger.rs"]
mod ledger;

use ledger::{
    claim, ended, entity, event, fires, intent, judge, judge_load, key, paid_once, silent, told,
    transfer,
};
use models::core::invariants;
use models::core::{AttemptOutcome, Ending, Key, Obs, Op};
use models::http::{EDIT, REQUEST, RESOURCE, WRITE};
use models::messaging::CONSUMER_WRITE;
use models::payment::{BANK_LAYER, SERVICE_LAYER};

#[test]
fn no_duplicate_effect() {
    let a = claim(4711);
    let mut twice = paid_once(a);
    twice.insert(2, (1, 2, transfer(a, 1200)));
    fires("no-duplicate-effect", &twice);
    // Two claims paid once each are two operations, not a duplicate.
    let mut two = paid_once(a);
    two.extend(paid_once(claim(4712)));
    silent(&two);
    // Two events about one entity are two operations too.
    let committed = |id, version| Obs::Committed {
        op: event(id),
        entity: entity(7),
        value: id,
        version,
    };
    let applied = |id| Obs::Effect {
        site: &CONSUMER_WRITE,
        op: event(id),
        payload: id,
    };
    silent(&[
        (0, 0, committed(1, 1)),
        (0, 0, committed(2, 2)),
        (1, 3, applied(1)),
        (2, 3, applied(2)),
    ]);
    fires(
        "no-duplicate-effect",
        &[
            (0, 0, committed(1, 1)),
            (1, 3, applied(1)),
            (2, 3, applied(1)),
        ],
    );
    // A consumer whose ack let the message go sends its commit again when
    // the answer does not come: one delivery, and the database applies a
    // plain effect twice (its first answer was lost, not its commit). The
    // ledger needs no redelivery to see it; an inbox that answers the
    // re-send "already there" lands the effect once.
    let resent = [
        (0, 0, committed(1, 1)),
        (1, 3, applied(1)),
        (3, 3, applied(1)),
    ];
    fires("no-duplicate-effect", &resent);
    silent(&resent[..2]);
    // The chain: events about a claim a client asked to pay once. The
    // service booked it twice (a retry it no longer recognised), the bank
    // paid once, accounting booked each event once: the claim took effect
    // twice downstream.
    let booked = |id, version| Obs::Committed {
        op: event(id),
        entity: a,
        value: 1200,
        version,
    };
    let booking = |id| Obs::Effect {
        site: &CONSUMER_WRITE,
        op: event(id),
        payload: 1200,
    };
    let mut rebooked = paid_once(a);
    rebooked.extend([
        (0, 1, booked(1, 1)),
        (0, 1, booked(2, 2)),
        (1, 3, booking(1)),
        (2, 3, booking(2)),
    ]);
    fires("no-duplicate-effect", &rebooked);
    // Booked once, and that booking's redelivery deduplicated: silent; so
    // is a second event about a claim nobody asked for (an entity of the
    // messaging model is such a claim-less subject).
    let mut once = paid_once(a);
    once.extend([(0, 1, booked(1, 1)), (1, 3, booking(1))]);
    silent(&once);
    let unasked = claim(4712);
    silent(&[
        (
            0,
            1,
            Obs::Committed {
                op: event(1),
                entity: unasked,
                value: 5,
                version: 1,
            },
        ),
        (
            0,
            1,
            Obs::Committed {
                op: event(2),
                entity: unasked,
                value: 6,
                version: 2,
            },
        ),
        (
            1,
            3,
            Obs::Effect {
                site: &CONSUMER_WRITE,
                op: event(1),
                payload: 5,
            },
        ),
        (
            2,
            3,
            Obs::Effect {
                site: &CONSUMER_WRITE,
                op: event(2),
                payload: 6,
            },
        ),
    ]);
}

#[test]
fn no_mismatched_payload() {
    let a = claim(4711);
    // The bank executed another amount than the operation's.
    fires(
        "no-mismatched-payload",
        &[(0, 0, intent(a, 1200)), (1, 2, transfer(a, 1300))],
    );
    // The client asked for 1,300 on a retry and was told "done"; 1,200 landed.
    fires(
        "no-mismatched-payload",
        &[
            (0, 0, intent(a, 1200)),
            (1, 2, transfer(a, 1200)),
            (2, 0, told(a, 1300)),
        ],
    );
    silent(&paid_once(a));
}

#[test]
fn no_false_success() {
    let a = claim(4711);
    fires(
        "no-false-success",
        &[(0, 0, intent(a, 1200)), (1, 0, told(a, 1200))],
    );
    silent(&paid_once(a));
}

/// A DELETE asks for a state: "this resource is gone". The server that
/// answers 404 saw the resource absent as it made that answer; a "done"
/// concluded from that answer is true without an effect of its own, and
/// only from that answer: what held for an earlier attempt does not vouch
/// for a later one, made after the resource may have come back.
#[test]
fn a_state_seen_holding_makes_a_done_true_only_for_the_answer_it_was_seen_by() {
    let d = Op::new(&REQUEST, 2);
    let sent = |attempt| Obs::AttemptSent { op: d, attempt };
    let held = |attempt| Obs::StateHeld {
        op: d,
        attempt,
        entity: Op::new(&RESOURCE, 4711),
        version: 2,
    };
    let ok = |attempt| Obs::Attempt {
        op: d,
        attempt,
        outcome: AttemptOutcome::Ok,
    };
    let gone_when_answered = [
        (0, 0, intent(d, 4711)),
        (0, 0, sent(1)),
        (1, 2, held(1)),
        (2, 0, ok(1)),
        (2, 0, told(d, 4711)),
        (2, 0, ended(d, Ending::Done)),
    ];
    // Judged at the answer and at the end (no-lost-effect: nothing is owed).
    silent(&gone_when_answered);
    // Without the observation it is the plain false success.
    let unseen: Vec<_> = gone_when_answered
        .iter()
        .copied()
        .filter(|s| !matches!(s.2, Obs::StateHeld { .. }))
        .collect();
    fires("no-false-success", &unseen);
    // Seen gone by attempt 1, whose answer was lost; attempt 2 is answered
    // "done" by something that saw nothing: a done with nothing behind it.
    fires(
        "no-false-success",
        &[
            (0, 0, intent(d, 4711)),
            (0, 0, sent(1)),
            (1, 2, held(1)),
            (
                10,
                0,
                Obs::Attempt {
                    op: d,
                    attempt: 1,
                    outcome: AttemptOutcome::Unknown,
                },
            ),
            (11, 0, sent(2)),
            (12, 0, ok(2)),
            (12, 0, told(d, 4711)),
        ],
    );
    // Another request's state is not this one's.
    let other = Op::new(&REQUEST, 1);
    fires(
        "no-false-success",
        &[
            (0, 0, intent(d, 4711)),
            (0, 0, sent(1)),
            (
                1,
                2,
                Obs::StateHeld {
                    op: other,
                    attempt: 1,
                    entity: Op::new(&RESOURCE, 4711),
                    version: 2,
                },
            ),
            (2, 0, ok(1)),
            (2, 0, told(d, 4711)),
        ],
    );
    // The observation is no effect: a DELETE that also deleted once is one
    // deletion, and one that deleted twice is still a duplicate.
    let deletion = Obs::Effect {
        site: &models::http::DELETION,
        op: d,
        payload: 4711,
    };
    fires(
        "no-duplicate-effect",
        &[
            (0, 0, intent(d, 4711)),
            (0, 0, sent(1)),
            (1, 2, deletion),
            (11, 0, sent(2)),
            (12, 2, held(2)),
            (13, 0, sent(3)),
            (14, 2, deletion),
        ],
    );
    // "Failed" concluded from the answer that saw the resource gone is
    // false: an operator re-driving it deletes whatever is at that id then.
    fires(
        "no-false-failure",
        &[
            (0, 0, intent(d, 4711)),
            (0, 0, sent(1)),
            (1, 2, held(1)),
            (
                2,
                0,
                Obs::Attempt {
                    op: d,
                    attempt: 1,
                    outcome: AttemptOutcome::Rejected,
                },
            ),
            (2, 0, ended(d, Ending::Failed)),
        ],
    );
}

#[test]
fn no_false_failure() {
    let a = claim(4711);
    let paid = [(0, 0, intent(a, 1200)), (1, 2, transfer(a, 1200))];
    let mut failed = paid.to_vec();
    failed.push((2, 0, ended(a, Ending::Failed)));
    fires("no-false-failure", &failed);
    // Recorded as failed first, and then the money went out after all.
    fires(
        "no-false-failure",
        &[
            (0, 0, intent(a, 1200)),
            (1, 0, ended(a, Ending::Failed)),
            (2, 2, transfer(a, 1200)),
        ],
    );
    // "Unknown" is honest whether or not it was paid.
    let mut unknown = paid.to_vec();
    unknown.push((2, 0, ended(a, Ending::Unknown)));
    silent(&unknown);
    // "Failed" with nothing paid is true.
    silent(&[(0, 0, intent(a, 1200)), (1, 0, ended(a, Ending::Failed))]);
}

#[test]
fn one_key_one_operation() {
    let (a, b) = (claim(4711), claim(4712));
    let ts = Key::Time { bucket: 0 };
    let received = |op, key| Obs::Received {
        layer: &SERVICE_LAYER,
        op,
        key,
    };
    fires(
        "one-key-one-operation",
        &[(0, 1, received(a, ts)), (0, 1, received(b, ts))],
    );
    // The same operation's retries reuse its key: that is the point of a key.
    silent(&[(0, 1, received(a, key(a))), (10, 1, received(a, key(a)))]);
    // Requests without a key name no operation by key.
    silent(&[
        (0, 1, received(a, Key::None)),
        (0, 1, received(b, Key::None)),
    ]);
    // Each layer may see the key; the bank seeing it for the same claim is fine.
    silent(&[
        (0, 1, received(a, key(a))),
        (
            0,
            2,
            Obs::Received {
                layer: &BANK_LAYER,
                op: a,
                key: key(a),
            },
        ),
    ]);
}

#[test]
fn operation_ends() {
    let a = claim(4711);
    // Never ended.
    fires("operation-ends", &[(0, 0, intent(a, 1200))]);
    // Retried after a final error.
    fires(
        "operation-ends",
        &[
            (0, 0, intent(a, 1200)),
            (0, 0, Obs::AttemptSent { op: a, attempt: 1 }),
            (
                1,
                0,
                Obs::Attempt {
                    op: a,
                    attempt: 1,
                    outcome: AttemptOutcome::Rejected,
                },
            ),
            (2, 0, Obs::AttemptSent { op: a, attempt: 2 }),
        ],
    );
    let windowed = Obs::Intent {
        op: a,
        payload: 1200,
        window_ms: 60_000,
    };
    // An attempt sent after the window closed.
    fires(
        "operation-ends",
        &[
            (0, 0, windowed),
            (61, 0, Obs::AttemptSent { op: a, attempt: 5 }),
            (62, 0, ended(a, Ending::Unknown)),
        ],
    );
    // The last attempt at the window's edge, ending after it: the window
    // bounds the attempts, so this is fine.
    silent(&[
        (0, 0, windowed),
        (60, 0, Obs::AttemptSent { op: a, attempt: 5 }),
        (70, 0, ended(a, Ending::Unknown)),
    ]);
    silent(&paid_once(a));
}

#[test]
fn at_most_one_executor() {
    let k = key(claim(4711));
    let start = Obs::ExecStart { key: k };
    fires("at-most-one-executor", &[(0, 1, start), (1, 1, start)]);
    silent(&[
        (0, 1, start),
        (1, 1, Obs::ExecEnd { key: k }),
        (2, 1, start),
    ]);
    // A crash ends the executions of the process that crashed.
    silent(&[(0, 1, start), (1, 1, Obs::ExecutorsLost), (2, 1, start)]);
}

#[test]
fn dedup_store_bounded() {
    let store = |keys, bound| Obs::DedupStore { keys, bound };
    fires("dedup-store-bounded", &[(0, 1, store(9, 8))]);
    silent(&[(0, 1, store(8, 8))]);
    silent(&[(0, 1, store(1_000_000, 0))]);
}

#[test]
fn no_lost_effect() {
    let a = claim(4711);
    fires(
        "no-lost-effect",
        &[(0, 0, intent(a, 1200)), (1, 0, ended(a, Ending::Abandoned))],
    );
    // Unknown but recorded for a person: not lost.
    silent(&[(0, 0, intent(a, 1200)), (1, 0, ended(a, Ending::Unknown))]);
    let committed = Obs::Committed {
        op: event(1),
        entity: entity(7),
        value: 1,
        version: 1,
    };
    fires("no-lost-effect", &[(0, 0, committed)]);
    // The same seen from a consumer that acked and then gave its commit up
    // (no answer to its last attempt): nothing landed and nothing was
    // dead-lettered, with no crash anywhere. Had one attempt committed
    // before its answer was lost, the effect would be there: silent.
    silent(&[
        (0, 0, committed),
        (
            1,
            3,
            Obs::Effect {
                site: &CONSUMER_WRITE,
                op: event(1),
                payload: 1,
            },
        ),
    ]);
    silent(&[
        (0, 0, committed),
        (1, 1, Obs::DeadLettered { op: event(1) }),
    ]);
    // One event handled does not cover another event of the same entity.
    let second = Obs::Committed {
        op: event(2),
        entity: entity(7),
        value: 2,
        version: 2,
    };
    fires(
        "no-lost-effect",
        &[
            (0, 0, committed),
            (0, 0, second),
            (
                1,
                2,
                Obs::Effect {
                    site: &CONSUMER_WRITE,
                    op: event(2),
                    payload: 2,
                },
            ),
        ],
    );
    // A set-value event made moot by a newer version was handled.
    silent(&[
        (0, 0, committed),
        (0, 0, second),
        (
            1,
            2,
            Obs::ValueWritten {
                op: event(2),
                entity: entity(7),
                value: 2,
                version: 2,
            },
        ),
        (2, 2, Obs::Superseded { op: event(1) }),
    ]);
}

#[test]
fn no_phantom_event() {
    fires(
        "no-phantom-event",
        &[(0, 1, Obs::Accepted { op: event(1) })],
    );
    silent(&[
        (
            0,
            0,
            Obs::Committed {
                op: event(1),
                entity: entity(7),
                value: 1,
                version: 1,
            },
        ),
        (0, 1, Obs::Accepted { op: event(1) }),
        (1, 1, Obs::DeadLettered { op: event(1) }),
    ]);
}

#[test]
fn state_converges() {
    let committed = |id, version| Obs::Committed {
        op: event(id),
        entity: entity(7),
        value: id * 10,
        version,
    };
    let written = |id, version| Obs::ValueWritten {
        op: event(id),
        entity: entity(7),
        value: id * 10,
        version,
    };
    // v2 then the late v1 overwrites it.
    fires(
        "state-converges",
        &[
            (0, 0, committed(1, 1)),
            (0, 0, committed(2, 2)),
            (1, 2, written(2, 2)),
            (2, 2, written(1, 1)),
        ],
    );
    silent(&[
        (0, 0, committed(1, 1)),
        (0, 0, committed(2, 2)),
        (1, 2, written(1, 1)),
        (2, 2, written(2, 2)),
    ]);
}

#[test]
fn no_lost_update() {
    let (a, b) = (Op::new(&REQUEST, 1), Op::new(&REQUEST, 2));
    let claim = Op::new(&RESOURCE, 4711);
    // A write of `op` landing as `version`, computed from a read of `read`
    // (0: a blind PUT).
    let write = |op, version: u32, read: u32| -> Vec<(u64, u32, Obs)> {
        let site = if read == 0 { &WRITE } else { &EDIT };
        vec![
            (
                version.into(),
                2,
                Obs::Effect {
                    site,
                    op,
                    payload: 200,
                },
            ),
            (
                version.into(),
                2,
                Obs::NewVersion {
                    op,
                    entity: claim,
                    version,
                    read,
                },
            ),
        ]
    };
    let done = |t: u64, op: Op| -> Vec<(u64, u32, Obs)> {
        vec![(t, 0, told(op, 200)), (t, 0, ended(op, Ending::Done))]
    };
    let run = |parts: &[Vec<(u64, u32, Obs)>]| -> Vec<(u64, u32, Obs)> {
        let mut v = vec![(0, 0, intent(a, 200)), (0, 1, intent(b, 200))];
        v.extend(parts.iter().flatten().copied());
        v
    };
    // Both read v1; b's write replaces a's v2 after a was told done.
    fires(
        "no-lost-update",
        &run(&[write(a, 2, 1), done(2, a), write(b, 3, 1), done(3, b)]),
    );
    // The same, with a told done only after its write was replaced.
    fires(
        "no-lost-update",
        &run(&[write(a, 2, 1), write(b, 3, 1), done(3, b), done(4, a)]),
    );
    // b read a's version (If-Match made it read again): nothing is lost.
    silent(&run(&[
        write(a, 2, 1),
        done(2, a),
        write(b, 3, 2),
        done(3, b),
    ]));
    // A blind PUT depends on no read: the last writer wins, by design.
    silent(&run(&[
        write(a, 2, 1),
        done(2, a),
        write(b, 3, 0),
        done(3, b),
    ]));
    // A request's own earlier write is no one else's update (its second
    // landing is a duplicate effect, not a lost update).
    assert_eq!(
        judge(&run(&[write(a, 2, 1), write(a, 3, 1), done(3, a)])),
        Some("no-duplicate-effect")
    );
    // Replaced, but its client never claimed it was done: an honest unknown.
    let mut unknown = run(&[write(a, 2, 1), write(b, 3, 1), done(3, b)]);
    unknown.push((4, 0, ended(a, Ending::Unknown)));
    silent(&unknown);
}

/// A replacing PUT that finds its body in place writes no version: its
/// state was seen holding at the version another request wrote. A write
/// computed from that version read what it asks for and replaces nothing
/// of it; one computed from an older read replaces its state as it does
/// the writer's, and the holder's "done" is then a lost update too, even
/// where the writer never heard back.
#[test]
fn no_lost_update_of_a_state_seen_holding() {
    let (alice, bob, carol) = (
        Op::new(&REQUEST, 1),
        Op::new(&REQUEST, 2),
        Op::new(&REQUEST, 3),
    );
    let claim = Op::new(&RESOURCE, 4711);
    let version = |op, version, read| Obs::NewVersion {
        op,
        entity: claim,
        version,
        read,
    };
    let effect = |op, site, payload| Obs::Effect { site, op, payload };
    let ok = |op| Obs::Attempt {
        op,
        attempt: 1,
        outcome: AttemptOutcome::Ok,
    };
    // Alice's PUT of 5 makes v2; bob's finds 5 there and is told done.
    let bob_holds = |carol_read| {
        vec![
            (0, 0, intent(alice, 5)),
            (0, 1, intent(bob, 5)),
            (0, 2, intent(carol, 1)),
            (
                0,
                1,
                Obs::AttemptSent {
                    op: bob,
                    attempt: 1,
                },
            ),
            (1, 9, effect(alice, &WRITE, 5)),
            (1, 9, version(alice, 2, 0)),
            (
                2,
                9,
                Obs::StateHeld {
                    op: bob,
                    attempt: 1,
                    entity: claim,
                    version: 2,
                },
            ),
            (3, 1, ok(bob)),
            (3, 1, told(bob, 5)),
            (3, 1, ended(bob, Ending::Done)),
            (4, 9, effect(carol, &EDIT, 1)),
            (4, 9, version(carol, 3, carol_read)),
            (5, 0, ended(alice, Ending::Unknown)),
            (5, 2, ok(carol)),
            (5, 2, told(carol, 1)),
            (5, 2, ended(carol, Ending::Done)),
        ]
    };
    // Carol's edit read v2, the 5 bob asked for: nothing is lost.
    silent(&bob_holds(2));
    // Carol's edit read v1: her write replaces the 5 bob was told holds.
    fires("no-lost-update", &bob_holds(1));
}

/// The ledger judges a "done" by the state against the attempt its client
/// closed last, so a client must record the outcome of the attempt that
/// answered before it reports "done". Every client does (`ClientOp::done`);
/// the only "done" without an attempt, a reconciliation job's, is about a
/// payment, which no state vouches for. A "done" that skipped it would be
/// judged against an older attempt: here attempt 1 saw the resource gone,
/// attempt 2 answered, and without the check the ledger would take the
/// answer as attempt 1's. Debug builds refuse it.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "record the answering attempt's outcome first")]
fn a_done_whose_answering_attempt_was_not_recorded_is_refused_in_debug_builds() {
    let d = Op::new(&REQUEST, 2);
    judge(&[
        (0, 0, intent(d, 4711)),
        (0, 0, Obs::AttemptSent { op: d, attempt: 1 }),
        (
            1,
            2,
            Obs::StateHeld {
                op: d,
                attempt: 1,
                entity: Op::new(&RESOURCE, 4711),
                version: 2,
            },
        ),
        (
            10,
            0,
            Obs::Attempt {
                op: d,
                attempt: 1,
                outcome: AttemptOutcome::Unknown,
            },
        ),
        (11, 0, Obs::AttemptSent { op: d, attempt: 2 }),
        (12, 0, told(d, 4711)),
    ]);
}

/// The contention model's compare-and-set, as the ledger sees it: a write
/// refused for a stale version leaves no effect and no version, and the
/// retry that read the newer version replaces nothing unseen. A blind write
/// computed from the same old read replaces the first write's version.
#[test]
fn no_lost_update_under_contention() {
    use models::contention::{RESOURCE_LAYER, ROW, UPDATE, WRITE as CAS_WRITE};
    let (a, b) = (Op::new(&CAS_WRITE, 1), Op::new(&CAS_WRITE, 2));
    let row = Op::new(&ROW, 1);
    let received = |op| Obs::Received {
        layer: &RESOURCE_LAYER,
        op,
        key: Key::None,
    };
    let landed = |t: u64, op, version: u32, read: u32| -> Vec<(u64, u32, Obs)> {
        vec![
            (t, 2, received(op)),
            (
                t,
                2,
                Obs::Effect {
                    site: &UPDATE,
                    op,
                    payload: 1,
                },
            ),
            (
                t,
                2,
                Obs::NewVersion {
                    op,
                    entity: row,
                    version,
                    read,
                },
            ),
        ]
    };
    let done = |t: u64, op: Op, attempt: u32| -> Vec<(u64, u32, Obs)> {
        let actor = op.id - 1;
        vec![
            (
                t,
                actor,
                Obs::Attempt {
                    op,
                    attempt,
                    outcome: AttemptOutcome::Ok,
                },
            ),
            (t, actor, told(op, 1)),
            (t, actor, ended(op, Ending::Done)),
        ]
    };
    let start = vec![(0, 0, intent(a, 1)), (0, 1, intent(b, 1))];
    // Both read v1; a's compare-and-set lands, b's is refused and b reads v2.
    let mut cas = start.clone();
    cas.extend(landed(1, a, 2, 1));
    cas.push((1, 2, received(b)));
    cas.push((
        2,
        1,
        Obs::Attempt {
            op: b,
            attempt: 1,
            outcome: AttemptOutcome::Fail,
        },
    ));
    cas.extend(done(2, a, 1));
    cas.extend(landed(3, b, 3, 2));
    cas.extend(done(4, b, 2));
    silent(&cas);
    // Without the condition, b's write from its read of v1 lands over v2.
    let mut blind = start;
    blind.extend(landed(1, a, 2, 1));
    blind.extend(landed(1, b, 3, 1));
    blind.extend(done(2, b, 1));
    blind.extend(done(2, a, 1));
    fires("no-lost-update", &blind);
}

#[test]
fn load_recovers() {
    let a = claim(4711);
    let shed = |recover_ms| Obs::Shed {
        layer: &SERVICE_LAYER,
        op: a,
        recover_ms,
    };
    let work = |attempt| Obs::Work {
        layer: &SERVICE_LAYER,
        op: a,
        attempt,
        recover_ms: 30_000,
    };
    let sent = |attempt| Obs::AttemptSent { op: a, attempt };
    let timed_out = Obs::Attempt {
        op: a,
        attempt: 1,
        outcome: AttemptOutcome::Unknown,
    };
    let fires = |steps: &[(u64, u32, Obs)]| assert_eq!(judge_load(steps), Some("load-recovers"));
    // Every operation ends, or `operation-ends` would speak.
    let silent = |steps: &[(u64, u32, Obs)]| {
        let mut all = steps.to_vec();
        all.push((900, 0, ended(a, Ending::Unknown)));
        assert_eq!(judge_load(&all), None, "{all:#?}");
    };
    // Full 31 s after the faults stopped, with 30 s promised: still overloaded.
    fires(&[(0, 0, intent(a, 1200)), (131, 1, shed(30_000))]);
    // Shedding during the faults, or within the promise, is the trigger's doing.
    silent(&[
        (0, 0, intent(a, 1200)),
        (50, 1, shed(30_000)),
        (130, 1, shed(30_000)),
    ]);
    // A service that promises nothing is not judged.
    silent(&[(0, 0, intent(a, 1200)), (500, 1, shed(0))]);
    // Work on the attempt its client waits for is normal, however late.
    silent(&[
        (0, 0, intent(a, 1200)),
        (200, 0, sent(1)),
        (200, 1, work(1)),
    ]);
    // Work on an attempt its client gave up on is work for nobody: its
    // timeout was recorded, or it sent a later attempt, or the operation ended.
    fires(&[
        (0, 0, intent(a, 1200)),
        (199, 0, sent(1)),
        (200, 0, timed_out),
        (201, 1, work(1)),
    ]);
    fires(&[
        (0, 0, intent(a, 1200)),
        (199, 0, sent(1)),
        (200, 0, sent(2)),
        (201, 1, work(1)),
    ]);
    fires(&[
        (0, 0, intent(a, 1200)),
        (199, 0, sent(1)),
        (200, 0, ended(a, Ending::Unknown)),
        (201, 1, work(1)),
    ]);
    // The same waste before the promise ran out is not judged.
    silent(&[
        (0, 0, intent(a, 1200)),
        (119, 0, sent(1)),
        (120, 0, timed_out),
        (121, 1, work(1)),
    ]);
}

#[test]
fn every_invariant_has_cases_here() {
    let this = include_str!("invariants.rs");
    for i in invariants::ALL {
        let test = format!("fn {}()", i.name.replace('-', "_"));
        assert!(this.contains(&test), "no test {test} for {}", i.name);
        assert!(!i.doc.is_empty());
    }
}

/// A reconciliation job resolves an unknown dead letter later: the ledger
/// judges what the client was finally told, by the same invariants.
#[test]
fn a_reconciled_dead_letter_is_judged_by_what_the_client_was_finally_told() {
    let c = claim(4711);
    // Paid before the dead letter; the job finds it and tells the client: done, once.
    silent(&[
        (0, 0, intent(c, 1200)),
        (1, 2, transfer(c, 1200)),
        (30, 0, ended(c, Ending::Unknown)),
        (90, 0, told(c, 1200)),
        (90, 0, ended(c, Ending::Done)),
    ]);
    // The job says "paid" while nothing landed: a false success.
    fires(
        "no-false-success",
        &[
            (0, 0, intent(c, 1200)),
            (30, 0, ended(c, Ending::Unknown)),
            (90, 0, told(c, 1200)),
        ],
    );
    // The job's re-drive pays a claim the bank had already paid.
    fires(
        "no-duplicate-effect",
        &[
            (0, 0, intent(c, 1200)),
            (1, 2, transfer(c, 1200)),
            (30, 0, ended(c, Ending::Unknown)),
            (90, 0, Obs::AttemptSent { op: c, attempt: 4 }),
            (91, 2, transfer(c, 1200)),
        ],
    );
    // Reconciled to "done" and then nothing landed by the end: lost, not unknown.
    assert_eq!(
        judge(&[
            (0, 0, intent(c, 1200)),
            (30, 0, ended(c, Ending::Unknown)),
            (90, 0, ended(c, Ending::Done)),
        ]),
        None,
        "an ending without a told-done is judged by the effects alone"
    );
}
