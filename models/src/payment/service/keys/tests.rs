//! The key table's own cases: bookings and their keys, a known key's
//! verdicts, leases, retention, late confirmations, the recovery's keys
//! and the duplicates held open.

use super::waiters::MAX_WAITERS;
use super::*;
use crate::payment::CLAIM;

const RETENTION_US: TimeUs = 10_000_000;

fn claim() -> Op {
    Op::new(&CLAIM, 4711)
}

fn key() -> Key {
    Key::Op { op: claim(), n: 1 }
}

fn row(state: KeyState, locked_us: TimeUs) -> KeyRow {
    KeyRow {
        op: claim(),
        amount_eur: 1200,
        state,
        locked_us,
    }
}

fn table_with(state: KeyState) -> KeyTable {
    let mut t = KeyTable::new(RETENTION_US);
    t.insert(key(), row(state, 0), 0);
    t
}

const STRICT: KnownRules = KnownRules {
    fingerprint_check: true,
    lease_us: 0,
};

/// Two executions of one key passed check-then-act's check, each with
/// its booking waiting for the key: one giving up frees one booking,
/// the key recorded frees them all.
#[test]
fn a_given_up_execution_frees_one_booking_a_recorded_key_frees_all() {
    let mut t = KeyTable::new(0);
    for _ in 0..2 {
        t.book(Booking {
            op: claim(),
            key: key(),
            amount_eur: 1200,
            key_due: true,
        });
    }
    let due = |t: &KeyTable| t.bookings().iter().filter(|b| b.key_due).count();
    t.key_given_up(key());
    assert_eq!(due(&t), 1);
    t.insert(key(), row(KeyState::InProgress, 0), 0);
    assert_eq!(due(&t), 0);
}

/// The fingerprint is the claim and the amount: another amount under a
/// paid key is refused, unless the service does not check; the same
/// request gets the stored result.
#[test]
fn a_known_key_answers_the_stored_result_or_refuses_another_request() {
    let mut t = table_with(KeyState::Paid);
    let same = (claim(), 1200);
    let paid = Known::Paid { amount_eur: 1200 };
    assert_eq!(t.known(key(), same, STRICT, 1), paid);
    assert_eq!(t.known(key(), (claim(), 999), STRICT, 1), Known::Mismatch);
    let lax = KnownRules {
        fingerprint_check: false,
        ..STRICT
    };
    assert_eq!(t.known(key(), (claim(), 999), lax, 1), paid);
}

/// A key "in progress" is taken over once its lease has run out, not a
/// microsecond before, and the takeover starts the lease again.
#[test]
fn a_lease_is_taken_over_once_it_ran_out_and_starts_again() {
    let mut t = table_with(KeyState::InProgress);
    let lease = KnownRules {
        lease_us: 1_000,
        ..STRICT
    };
    let request = (claim(), 1200);
    assert_eq!(t.known(key(), request, lease, 999), Known::InProgress);
    let taken = t.known(key(), request, lease, 1_000);
    assert_eq!(taken, Known::TakenOver(row(KeyState::InProgress, 0)));
    assert_eq!(t.get(&key(), 1_000).map(|r| r.locked_us), Some(1_000));
    assert_eq!(t.known(key(), request, lease, 1_999), Known::InProgress);
    // Without a lease, never.
    assert_eq!(t.known(key(), request, STRICT, 9_999), Known::InProgress);
}

/// A key past its retention is forgotten: the lookup deletes it, so the
/// retry that found it expired claims it afresh.
#[test]
fn an_expired_key_is_found_once_and_deleted() {
    let mut t = table_with(KeyState::Paid);
    let request = (claim(), 1200);
    assert_eq!(
        t.find(&key(), request, STRICT, RETENTION_US - 1),
        Found::Live(Known::Paid { amount_eur: 1200 })
    );
    assert_eq!(
        t.find(&key(), request, STRICT, RETENTION_US),
        Found::Expired
    );
    assert!(t.is_empty());
    assert_eq!(t.find(&key(), request, STRICT, RETENTION_US), Found::Absent);
}

/// What the table tells a reconciliation is what it believes: a key
/// "in progress" reads as nothing paid until a late confirmation for
/// its own claim records it paid.
#[test]
fn a_key_in_progress_reads_unpaid_until_its_late_confirmation() {
    let mut t = table_with(KeyState::InProgress);
    assert_eq!(t.paid_eur(claim(), 1), 0);
    assert!(
        !t.record_late(key(), Op::new(&CLAIM, 1), 1),
        "another claim"
    );
    assert!(t.record_late(key(), claim(), 1));
    assert_eq!(t.paid_eur(claim(), 1), 1200);
    assert!(!t.record_late(key(), claim(), 2), "recorded twice");
    assert_eq!(t.paid_eur(claim(), RETENTION_US), 0, "an expired key");
}

/// A confirmation marks a live row paid in place; with no row (or an
/// expired one) it inserts a paid row, reaping the expired first.
#[test]
fn a_confirmation_pays_a_live_row_or_inserts_one() {
    let mut t = table_with(KeyState::InProgress);
    assert_eq!(t.record_paid(key(), claim(), 1200, 1), None);
    assert_eq!(t.get(&key(), 1).map(|r| r.state), Some(KeyState::Paid));
    let inserted = t.record_paid(key(), claim(), 1200, RETENTION_US);
    let fresh = Inserted {
        reaped: true,
        keys: 1,
    };
    assert_eq!(inserted, Some(fresh));
    assert_eq!(
        t.get(&key(), RETENTION_US).map(|r| r.locked_us),
        Some(RETENTION_US)
    );
}

/// A restart is told of a crash between the steps by a booking still
/// due its key, or, in split-key-first, by a live key without a booking.
#[test]
fn a_crash_between_the_steps_shows_in_the_table() {
    let t = table_with(KeyState::Paid);
    assert!(t.crash_between_steps(true, 0));
    assert!(!t.crash_between_steps(false, 0));
    assert!(!t.crash_between_steps(true, RETENTION_US), "expired");
    let mut booked = KeyTable::new(0);
    booked.book(Booking {
        op: claim(),
        key: key(),
        amount_eur: 1200,
        key_due: true,
    });
    assert!(booked.crash_between_steps(false, 0));
}

/// The recovery sees the live keys "in progress" only, and claims again
/// (a new lease) just the ones it takes.
#[test]
fn the_recovery_is_handed_live_keys_in_progress_and_claims_what_it_takes() {
    let mut t = KeyTable::new(RETENTION_US);
    let key_of = |n| Key::Op { op: claim(), n };
    t.insert(key_of(1), row(KeyState::InProgress, 0), 0);
    t.insert(key_of(2), row(KeyState::Paid, 0), 0);
    t.insert(key_of(3), row(KeyState::InProgress, 0), 0);
    t.insert(key_of(4), row(KeyState::InProgress, 0), 5);
    let mut handed = Vec::new();
    t.drive_in_progress(RETENTION_US, |key, _| {
        handed.push(key);
        key == key_of(3)
    });
    assert_eq!(handed, [key_of(4)], "only key 4 is still live");
    let mut handed = Vec::new();
    t.drive_in_progress(1, |key, _| {
        handed.push(key);
        key == key_of(3)
    });
    assert_eq!(handed, [key_of(1), key_of(3), key_of(4)]);
    let locked = |k| t.get(&key_of(k), 1).map(|r| r.locked_us);
    assert_eq!((locked(1), locked(3)), (Some(0), Some(1)));
    assert_eq!(t.reclaim(&key_of(2), 2), None, "paid");
    assert_eq!(t.reclaim(&key_of(1), 2).map(|r| r.locked_us), Some(2));
}

/// Duplicates held open are released by their key's end only, each
/// once, and no more are held than the bound.
#[test]
fn waiters_are_released_by_their_key_only_and_bounded() {
    let mut w = Waiters::default();
    let other = Key::Op { op: claim(), n: 2 };
    for (client, key) in [(1, key()), (2, other), (3, key())] {
        w.hold(Waiter {
            key,
            client,
            op: claim(),
            attempt: 1,
        });
    }
    let mut answered = Vec::new();
    w.release(key(), |w| answered.push(w.client));
    answered.sort_unstable();
    assert_eq!(answered, [1, 3]);
    w.release(key(), |w| answered.push(w.client));
    assert_eq!(answered.len(), 2, "released twice");
    for client in 1..MAX_WAITERS as u32 {
        assert!(w.has_room());
        w.hold(Waiter {
            key: other,
            client,
            op: claim(),
            attempt: 1,
        });
    }
    assert!(!w.has_room());
}

/// The collision check's short cut: a request under its own operation's key
/// needs no look-up until some row is stored under a key not minted for its
/// operation (here another claim's key, then a clock's), and from then on
/// every request does; a request under another operation's key always does.
#[test]
fn a_key_may_collide_once_a_row_is_stored_under_another_operations_key() {
    let other = Op::new(&CLAIM, 4712);
    let t = table_with(KeyState::InProgress);
    assert!(!t.may_collide(&key(), claim()));
    assert!(t.may_collide(&key(), other), "4711's key, asked by 4712");
    assert!(t.may_collide(&Key::Time { bucket: 7 }, claim()));
    let foreign = |k: Key| {
        let mut t = table_with(KeyState::Paid);
        t.insert(
            k,
            KeyRow {
                op: other,
                ..row(KeyState::Paid, 0)
            },
            0,
        );
        assert!(
            t.may_collide(&key(), claim()),
            "after a row of 4712 under {k}"
        );
        t.reset(RETENTION_US);
        assert!(!t.may_collide(&key(), claim()), "a new run");
    };
    foreign(key());
    foreign(Key::Time { bucket: 7 });
}
