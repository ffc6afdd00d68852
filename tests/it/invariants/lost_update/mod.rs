//! Lost updates: a write computed from an older read that replaces writes it never saw, judged against the serial orders that would explain the state it leaves.

use super::ledger::{ended, fires, intent, judge, silent, told, violation};
use models::core::{AttemptOutcome, Change, Ending, Key, Obs, Op, Site};
use models::http::{EDIT, REQUEST, RESOURCE, WRITE};

mod races;

/// Claim 4711 holds 1000 at v1. `edit(op, version, read, from)` is a
/// write of `op` landing as `version`, computed from its read of version
/// `read` that held `from`, adding 200; `put(op, version, value)` a blind
/// PUT setting `value`; `add(op, version, value)` a PATCH whose sum the
/// server computed; `delete(op, version)` a DELETE.
fn edit(op: Op, version: u32, read: u32, from: u32) -> Vec<(u64, u32, Obs)> {
    landed(op, version, from + 200, Change::Edit { read, from }, &EDIT)
}

fn put(op: Op, version: u32, value: u32) -> Vec<(u64, u32, Obs)> {
    landed(op, version, value, Change::Set, &WRITE)
}

fn add(op: Op, version: u32, value: u32) -> Vec<(u64, u32, Obs)> {
    landed(op, version, value, Change::Add, &WRITE)
}

fn delete(op: Op, version: u32) -> Vec<(u64, u32, Obs)> {
    landed(op, version, 1000, Change::Delete, &WRITE)
}

fn landed(
    op: Op,
    version: u32,
    value: u32,
    change: Change,
    site: &'static Site,
) -> Vec<(u64, u32, Obs)> {
    let t = u64::from(version);
    vec![
        (
            t,
            9,
            Obs::Effect {
                site,
                op,
                payload: 200,
            },
        ),
        (
            t,
            9,
            Obs::NewVersion {
                op,
                entity: Op::new(&RESOURCE, 4711),
                version,
                value,
                change,
            },
        ),
    ]
}

fn done(t: u64, op: Op) -> Vec<(u64, u32, Obs)> {
    vec![(t, 0, told(op, 200)), (t, 0, ended(op, Ending::Done))]
}

fn unknown(t: u64, op: Op) -> Vec<(u64, u32, Obs)> {
    vec![(t, 0, ended(op, Ending::Unknown))]
}

/// Requests #1 to #`n` intend their writes, then `parts` happen in order.
fn run(n: u32, parts: &[Vec<(u64, u32, Obs)>]) -> Vec<(u64, u32, Obs)> {
    let mut v: Vec<_> = (1..=n).map(|i| (0, i, intent(req(i), 200))).collect();
    v.extend(parts.iter().flatten().copied());
    v
}

fn req(id: u32) -> Op {
    Op::new(&REQUEST, id)
}

/// The request the violation names, by the operation it is about.
fn names(steps: &[(u64, u32, Obs)]) -> Option<u64> {
    violation(steps).map(|v| v.operation)
}

#[test]
fn no_lost_update() {
    let (a, b) = (req(1), req(2));
    // Both read v1; b's write replaces a's v2 after a was told done.
    fires(
        "no-lost-update",
        &run(
            2,
            &[
                edit(a, 2, 1, 1000),
                done(2, a),
                edit(b, 3, 1, 1000),
                done(3, b),
            ],
        ),
    );
    // The same, with a told done only after its write was replaced.
    fires(
        "no-lost-update",
        &run(
            2,
            &[
                edit(a, 2, 1, 1000),
                edit(b, 3, 1, 1000),
                done(3, b),
                done(4, a),
            ],
        ),
    );
    // b read a's version (If-Match made it read again): nothing is lost.
    silent(&run(
        2,
        &[
            edit(a, 2, 1, 1000),
            done(2, a),
            edit(b, 3, 2, 1200),
            done(3, b),
        ],
    ));
    // A blind PUT depends on no read: the last writer wins, by design.
    silent(&run(
        2,
        &[edit(a, 2, 1, 1000), done(2, a), put(b, 3, 5), done(3, b)],
    ));
    // A request's own earlier write is no one else's update (its second
    // landing is a duplicate effect, not a lost update).
    assert_eq!(
        judge(&run(
            1,
            &[edit(a, 2, 1, 1000), edit(a, 3, 1, 1000), done(3, a)]
        )),
        Some("no-duplicate-effect")
    );
    // Replaced, but its client never claimed it was done: an honest unknown.
    silent(&run(
        2,
        &[
            edit(a, 2, 1, 1000),
            edit(b, 3, 1, 1000),
            done(3, b),
            unknown(4, a),
        ],
    ));
}

/// A lost update is a final state that no serial order of the landed
/// writes gives, each edit applied to the value it read and each blind PUT
/// setting its own. An edit from an older read that lands on writes it
/// never saw loses nothing where such an order explains what it left.
#[test]
fn no_lost_update_where_a_serial_order_explains_the_value() {
    let (dave, carol, eve, frank) = (req(1), req(2), req(3), req(4));
    // Dave PUTs 1200; carol's +200, from the 1000 she read before it, also
    // writes 1200: carol's edit, then dave's PUT, gives 1000 → 1200 → 1200.
    let same = |tail: Vec<(u64, u32, Obs)>| {
        run(
            2,
            &[
                put(dave, 2, 1200),
                done(2, dave),
                edit(carol, 3, 1, 1000),
                tail,
            ],
        )
    };
    silent(&same(done(3, carol)));
    // Dave hears back only after carol's write landed: the same order.
    silent(&run(
        2,
        &[
            put(dave, 2, 1200),
            edit(carol, 3, 1, 1000),
            done(3, carol),
            done(4, dave),
        ],
    ));
    // Dave PUTs 5 instead: carol first leaves dave's 5, dave first has
    // carol read 5, not 1000. Dave's 5 is lost.
    let other = run(
        2,
        &[
            put(dave, 2, 5),
            done(2, dave),
            edit(carol, 3, 1, 1000),
            done(3, carol),
        ],
    );
    fires("no-lost-update", &other);
    assert_eq!(names(&other), Some(dave.key()));
    // The writes carol never saw left the 1000 she read (dave's 5, then
    // eve's 1000): carol last is the serial order.
    silent(&run(
        3,
        &[
            put(dave, 2, 5),
            done(2, dave),
            put(eve, 3, 1000),
            done(3, eve),
            edit(carol, 4, 1, 1000),
            done(4, carol),
        ],
    ));
    // The same value, but from an increment the server computed on the
    // 1000 (a PATCH of +200): carol first would make it 1400, the PATCH
    // first has carol read 1200. The increment is lost.
    fires(
        "no-lost-update",
        &run(
            2,
            &[
                add(dave, 2, 1200),
                done(2, dave),
                edit(carol, 3, 1, 1000),
                done(3, carol),
            ],
        ),
    );
    // Carol's write is explained, right after the 1000 she read; frank
    // read that 1000 too, and his +200 lands last. Carol first and frank
    // first each have the other read 1200: one increment is lost (1400
    // owed), and the violation names it: carol's, the write frank
    // replaced, not dave's, which frank never saw either.
    let twice = run(
        4,
        &[
            put(dave, 2, 1200),
            done(2, dave),
            edit(carol, 3, 1, 1000),
            done(3, carol),
            edit(frank, 4, 1, 1000),
            done(4, frank),
        ],
    );
    fires("no-lost-update", &twice);
    assert_eq!(names(&twice), Some(carol.key()));
    // Carol's edit lands (1200), eve's +100 from it (1300), dave's blind
    // 1000; then a stale repeat of carol's write, from her read of the
    // first 1000, sets 1200 again (a repeat that adds nothing: no effect).
    // The 1000 it replaced is the value carol read, but carol's edit has
    // one place in a serial order, and eve read it: dave's 1000 is lost.
    let repeat = edit(carol, 5, 1, 1000)[1..].to_vec();
    let mut eve_plus_100 = edit(eve, 3, 2, 1200);
    eve_plus_100[1].2 = Obs::NewVersion {
        op: eve,
        entity: Op::new(&RESOURCE, 4711),
        version: 3,
        value: 1300,
        change: Change::Edit {
            read: 2,
            from: 1200,
        },
    };
    let repeated = run(
        3,
        &[
            edit(carol, 2, 1, 1000),
            eve_plus_100,
            unknown(3, eve),
            put(dave, 4, 1000),
            done(4, dave),
            repeat,
        ],
    );
    fires("no-lost-update", &repeated);
    assert_eq!(names(&repeated), Some(dave.key()));
    // A deletion carol never saw: her write brings the claim back.
    fires(
        "no-lost-update",
        &run(
            2,
            &[
                delete(dave, 2),
                done(2, dave),
                edit(carol, 3, 1, 1000),
                done(3, carol),
            ],
        ),
    );
}

/// A stale edit loses the updates the state it replaced still carried:
/// the newest write, and the writes that one built on (a PATCH adds to the
/// value before it, an edit to the value it read). A blind PUT among them
/// replaced what came before it by design, so those earlier writes are its
/// doing, not the stale edit's, and the violation names the update the
/// resource held.
#[test]
fn no_lost_update_names_the_update_the_replaced_state_carried() {
    let (alice, dave, carol, bob) = (req(1), req(2), req(3), req(4));
    // Alice's +200 (v2), dave's blind 7 (v3), carol's +200 from her read
    // of v1: dave's 7 is what carol's write lost; alice's increment was
    // gone with dave's PUT already.
    let after_put = |dave_hears: Vec<(u64, u32, Obs)>| {
        run(
            3,
            &[
                edit(alice, 2, 1, 1000),
                done(2, alice),
                put(dave, 3, 7),
                dave_hears,
                edit(carol, 4, 1, 1000),
                done(4, carol),
            ],
        )
    };
    let told_dave = after_put(done(3, dave));
    fires("no-lost-update", &told_dave);
    assert_eq!(names(&told_dave), Some(dave.key()));
    // Dave never heard back: the only update carol replaced was nobody's
    // "done", and alice's was replaced by a blind PUT, as designed.
    silent(&after_put(unknown(3, dave)));
    // Alice is told done only after carol's write: still not carol's loss.
    silent(&run(
        3,
        &[
            edit(alice, 2, 1, 1000),
            put(dave, 3, 7),
            unknown(3, dave),
            edit(carol, 4, 1, 1000),
            done(4, carol),
            done(5, alice),
        ],
    ));
    // Dave's 7 (v2), bob's PATCH on it (v3): carol's stale edit replaces
    // the sum, which carries both. Bob's is named, the newest; were he
    // never told done, dave's would be.
    let patched = |bob_hears: Vec<(u64, u32, Obs)>| {
        run(
            4,
            &[
                put(dave, 2, 7),
                done(2, dave),
                add(bob, 3, 207),
                bob_hears,
                edit(carol, 4, 1, 1000),
                done(4, carol),
            ],
        )
    };
    assert_eq!(names(&patched(done(3, bob))), Some(bob.key()));
    assert_eq!(names(&patched(unknown(3, bob))), Some(dave.key()));
}
