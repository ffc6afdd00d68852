//! Lost updates in races: a held state another writer replaced first, a
//! state seen holding, a late attempt of a PUT already done, and N clients
//! contending for one row.

use super::*;

/// A held state ranks like the write that made it: a PUT that found 5 in
/// place and was told done, then overwritten by another client's blind 7,
/// lost its state to that PUT, last writer wins. Carol's edit from the 5
/// replaces the 7, which is eve's loss, not bob's: carol built on bob's 5.
#[test]
fn no_lost_update_of_a_held_state_another_writer_replaced_first() {
    let (alice, bob, eve, carol) = (req(1), req(2), req(3), req(4));
    let held = |eve_hears: Vec<(u64, u32, Obs)>| {
        let mut v = run(
            4,
            &[
                vec![(
                    0,
                    2,
                    Obs::AttemptSent {
                        op: bob,
                        attempt: 1,
                    },
                )],
                put(alice, 2, 5),
                vec![
                    (
                        2,
                        9,
                        Obs::StateHeld {
                            op: bob,
                            attempt: 1,
                            entity: Op::new(&RESOURCE, 4711),
                            version: 2,
                        },
                    ),
                    (
                        2,
                        2,
                        Obs::Attempt {
                            op: bob,
                            attempt: 1,
                            outcome: AttemptOutcome::Ok,
                        },
                    ),
                ],
                done(2, bob),
                unknown(2, alice),
                put(eve, 3, 7),
                eve_hears,
                edit(carol, 4, 2, 5),
                done(4, carol),
            ],
        );
        v.sort_by_key(|s| s.0);
        v
    };
    // Eve never hears back: nobody was told the 7 is done.
    silent(&held(unknown(3, eve)));
    // Eve was told done: her 7 is the update carol's write lost.
    let told_eve = held(done(3, eve));
    fires("no-lost-update", &told_eve);
    assert_eq!(names(&told_eve), Some(eve.key()));
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
    let version = |op, version, value, change| Obs::NewVersion {
        op,
        entity: claim,
        version,
        value,
        change,
    };
    let effect = |op, site, payload| Obs::Effect { site, op, payload };
    let ok = |op| Obs::Attempt {
        op,
        attempt: 1,
        outcome: AttemptOutcome::Ok,
    };
    // Alice's PUT of 5 makes v2; bob's finds 5 there and is told done.
    let bob_holds = |carol_read| {
        let from = if carol_read == 2 { 5 } else { 1000 };
        let edit = Change::Edit {
            read: carol_read,
            from,
        };
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
            (1, 9, version(alice, 2, 5, Change::Set)),
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
            (4, 9, version(carol, 3, from + 1, edit)),
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
                // The row holds 0 at v1 and each write adds 1.
                Obs::NewVersion {
                    op,
                    entity: row,
                    version,
                    value: read,
                    change: Change::Edit {
                        read,
                        from: read - 1,
                    },
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

/// `steps` moved to time `t` (seconds).
fn at(t: u64, mut steps: Vec<(u64, u32, Obs)>) -> Vec<(u64, u32, Obs)> {
    for s in &mut steps {
        s.0 = t;
    }
    steps
}

/// Request #1 PUTs 5 and is told done at 2 s; request #2 begins at
/// `b_starts` s and is told done at 5 s after its write at 4 s; a late
/// attempt of #1 (a slow copy, a retry's straggler) then lands at 6 s with
/// `late_value`. `b_write` is #2's write as v3.
fn late_put(b_starts: u64, b_write: Vec<(u64, u32, Obs)>, late_value: u32) -> Vec<(u64, u32, Obs)> {
    let (a, b) = (req(1), req(2));
    let mut v = vec![(0, 1, intent(a, 200))];
    v.extend(at(1, put(a, 2, 5)));
    v.extend(done(2, a));
    v.push((b_starts, 2, intent(b, 200)));
    v.extend(at(4, b_write));
    v.extend(done(5, b));
    // A replacing PUT's repeat is no second effect (the server reports
    // only the version it made), as in models::http's server.
    v.extend(
        at(6, put(a, 4, late_value))
            .into_iter()
            .filter(|s| !matches!(s.2, Obs::Effect { .. })),
    );
    v
}

/// Last writer wins only between requests that overlap. A PUT whose
/// client was told done before another request began comes before it in
/// every order that respects real time; a late attempt of it landing over
/// that request's confirmed write leaves a state no such order gives.
#[test]
fn no_lost_update_by_a_late_attempt_of_a_put_already_done() {
    let (a, b) = (req(1), req(2));
    // #2 began after #1 was done, read #1's 5 and added 200: the late 5 undoes it.
    let lost = late_put(3, edit(b, 3, 2, 5), 5);
    fires("no-lost-update", &lost);
    assert_eq!(names(&lost), Some(b.key()), "the update lost is #2's");
    // A blind PUT of #2 is lost the same way.
    fires("no-lost-update", &late_put(3, put(b, 3, 7), 5));
    // #2 began before #1 was done: the two overlap, and #2 then #1 is an
    // order real time allows. The last writer wins, by design.
    silent(&late_put(1, put(b, 3, 7), 5));
    // The late attempt writes what #2 left: nothing is lost.
    silent(&late_put(3, put(b, 3, 5), 5));
    // #1 ended unknown, not done: its write may land at any time, and
    // then it is simply the last writer.
    let mut unknown_a = late_put(3, put(b, 3, 7), 5);
    unknown_a.retain(|s| !matches!(s.2, Obs::ToldDone { op, .. } if op == a));
    for s in &mut unknown_a {
        if let Obs::Ended { op, ending } = &mut s.2 {
            if *op == a {
                *ending = Ending::Unknown;
            }
        }
    }
    silent(&unknown_a);
    // #2 is told done only after the late attempt replaced its write.
    let mut told_after = late_put(3, edit(b, 3, 2, 5), 5);
    let b_done: Vec<_> = told_after
        .iter()
        .copied()
        .filter(|s| matches!(s.2, Obs::ToldDone { op, .. } | Obs::Ended { op, .. } if op == b))
        .collect();
    told_after.retain(|s| !b_done.contains(s));
    told_after.extend(b_done.into_iter().map(|mut s| {
        s.0 = 7;
        s
    }));
    fires("no-lost-update", &told_after);
    assert_eq!(names(&told_after), Some(b.key()));
}
