//! Effects and what clients were told: an effect lands once, with the payload asked, and a "done" or a "failed" is true of what landed (or of a state seen holding).

use super::ledger::{
    claim, ended, entity, event, fires, intent, judge, paid_once, published, silent, told, transfer,
};
use models::core::{AttemptOutcome, Ending, Obs, Op};
use models::http::{REQUEST, RESOURCE};
use models::messaging::CONSUMER_WRITE;

/// Event `id`, about claim `about` (paid with 1200 EUR), committed as
/// version `version` of it.
fn booked(about: Op, id: u32, version: u32) -> Obs {
    Obs::Committed {
        op: event(id),
        entity: about,
        value: 1200,
        version,
    }
}

/// Accounting books event `id`: 1200 EUR downstream.
fn booking(id: u32) -> Obs {
    Obs::Effect {
        site: &CONSUMER_WRITE,
        op: event(id),
        payload: 1200,
    }
}

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
    silent(&published(&[
        (0, 0, committed(1, 1)),
        (0, 0, committed(2, 2)),
        (1, 3, applied(1)),
        (2, 3, applied(2)),
    ]));
    fires(
        "no-duplicate-effect",
        &published(&[
            (0, 0, committed(1, 1)),
            (1, 3, applied(1)),
            (2, 3, applied(1)),
        ]),
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
    fires("no-duplicate-effect", &published(&resent));
    silent(&published(&resent[..2]));
    // The chain: events about a claim a client asked to pay once. The
    // service booked it twice (a retry it no longer recognised), the bank
    // paid once, accounting booked each event once: the claim took effect
    // twice downstream.
    let mut rebooked = paid_once(a);
    rebooked.extend([
        (0, 1, booked(a, 1, 1)),
        (0, 1, booked(a, 2, 2)),
        (1, 3, booking(1)),
        (2, 3, booking(2)),
    ]);
    fires("no-duplicate-effect", &published(&rebooked));
    // Booked once, and that booking's redelivery deduplicated: silent; so
    // is a second event about a claim nobody asked for (an entity of the
    // messaging model is such a claim-less subject).
    let mut once = paid_once(a);
    once.extend([(0, 1, booked(a, 1, 1)), (1, 3, booking(1))]);
    silent(&published(&once));
    let unasked = claim(4712);
    silent(&published(&[
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
    ]));
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
    // Told before the transfer landed, which then lands once: what the
    // client was finally told is true, so the truth table of the operation
    // is fine (a design that answers early is caught in the runs where the
    // transfer never comes).
    silent(&[
        (0, 0, intent(a, 1200)),
        (1, 0, told(a, 1200)),
        (1, 0, ended(a, Ending::Done)),
        (2, 2, transfer(a, 1200)),
    ]);
    // Told done, and nothing lands by the end: the violation is the
    // operation's, whatever else the run did after the answer.
    let b = claim(4712);
    let v = super::ledger::violation(&[
        (0, 0, intent(a, 1200)),
        (0, 0, intent(b, 900)),
        (1, 0, told(a, 1200)),
        (1, 0, ended(a, Ending::Done)),
        (5, 2, transfer(b, 900)),
    ])
    .expect("a false success");
    assert_eq!(v.invariant, "no-false-success");
    assert_eq!(v.operation, a.key(), "{v:?}");
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
    // "Unknown", and the transfer lands later: still honest, and the
    // effect is not owed twice.
    silent(&[
        (0, 0, intent(a, 1200)),
        (1, 0, ended(a, Ending::Unknown)),
        (2, 2, transfer(a, 1200)),
    ]);
}

/// A silent give-up whose effect landed: the client's records say the claim
/// is open, the bank paid it, and no person is told. Every silent give-up
/// is some invariant's business: this one with one effect, `no-lost-effect`
/// with none, `no-duplicate-effect` with two.
#[test]
fn no_untold_effect() {
    let a = claim(4711);
    let paid = [(0, 0, intent(a, 1200)), (1, 2, transfer(a, 1200))];
    let mut abandoned = paid.to_vec();
    abandoned.push((32, 0, ended(a, Ending::Abandoned)));
    let v = super::ledger::violation(&abandoned).expect("an untold effect");
    assert_eq!(v.invariant, "no-untold-effect");
    assert_eq!(v.operation, a.key(), "{v:?}");
    assert!(v.message.contains("1200 EUR landed"), "{}", v.message);
    // Given up first, and an attempt still on its way pays afterwards.
    fires(
        "no-untold-effect",
        &[
            (0, 0, intent(a, 1200)),
            (32, 0, ended(a, Ending::Abandoned)),
            (33, 2, transfer(a, 1200)),
        ],
    );
    // The other cells of the same column.
    fires(
        "no-lost-effect",
        &[
            (0, 0, intent(a, 1200)),
            (32, 0, ended(a, Ending::Abandoned)),
        ],
    );
    let mut twice = abandoned.clone();
    twice.push((40, 2, transfer(a, 1200)));
    fires("no-duplicate-effect", &twice);
    // A dead letter tells a person: "unknown" is honest, "failed" is
    // no-false-failure's, and exactly once with "done" is fine.
    let mut unknown = paid.to_vec();
    unknown.push((32, 0, ended(a, Ending::Unknown)));
    silent(&unknown);
    let mut failed = paid.to_vec();
    failed.push((32, 0, ended(a, Ending::Failed)));
    fires("no-false-failure", &failed);
    silent(&paid_once(a));
    // Another claim's silent give-up with nothing paid does not make this
    // paid, told claim untold.
    let b = claim(4712);
    let mut both = paid_once(a);
    both.extend([(0, 0, intent(b, 900)), (32, 0, ended(b, Ending::Abandoned))]);
    let v = super::ledger::violation(&both).expect("b is lost");
    assert_eq!((v.invariant, v.operation), ("no-lost-effect", b.key()));
    // A DELETE given up silently after an answer that saw the resource
    // gone: the world holds what it asks, its client's records say open.
    let d = Op::new(&REQUEST, 2);
    fires(
        "no-untold-effect",
        &[
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
                2,
                0,
                Obs::Attempt {
                    op: d,
                    attempt: 1,
                    outcome: AttemptOutcome::Rejected,
                },
            ),
            (2, 0, ended(d, Ending::Abandoned)),
        ],
    );
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
    // The claim the ledger judges is the told-done, not the ending: every
    // model reports "done" as a told-done followed by its ending
    // (`ClientOp::done`, the reconciliation job), so an ending "done" on its
    // own adds no claim, and with nothing landed nothing is judged false.
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

/// Event first: the broker hands the event to accounting while the service
/// still waits for the broker's confirmation to run its transaction, so
/// accounting's booking can be observed before the commit that says which
/// claim the event is about. The claim booked twice downstream is a
/// duplicate in whichever order the two facts of each event arrive.
#[test]
fn a_booking_seen_before_its_commit_still_counts_downstream() {
    let a = claim(4711);
    let paid = paid_once(a);
    // The first event booked before its commit, the second after.
    let mut first_early = paid.clone();
    first_early.extend([
        (3, 3, booking(1)),
        (3, 1, booked(a, 1, 1)),
        (4, 1, booked(a, 2, 2)),
        (5, 3, booking(2)),
    ]);
    fires("no-duplicate-effect", &published(&first_early));
    // The second event booked before its commit: the commit is the moment
    // both facts hold.
    let mut second_early = paid.clone();
    second_early.extend([
        (3, 1, booked(a, 1, 1)),
        (3, 3, booking(1)),
        (5, 3, booking(2)),
        (5, 1, booked(a, 2, 2)),
    ]);
    fires("no-duplicate-effect", &published(&second_early));
    let v = super::ledger::violation(&published(&second_early)).expect("a violation");
    assert_eq!(
        v.operation,
        a.key(),
        "the claim took effect twice, not the event"
    );
    // Each booked before its commit: still twice.
    let mut both_early = paid.clone();
    both_early.extend([
        (3, 3, booking(1)),
        (3, 1, booked(a, 1, 1)),
        (5, 3, booking(2)),
        (5, 1, booked(a, 2, 2)),
    ]);
    fires("no-duplicate-effect", &published(&both_early));
    // One event booked before its commit, and only one: once.
    let mut once = paid;
    once.extend([(3, 3, booking(1)), (3, 1, booked(a, 1, 1))]);
    silent(&published(&once));
}
