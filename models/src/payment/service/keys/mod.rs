//! The key table, a part that owns its state: the rows that claim a key for
//! a request (with their lease and retention) and the bookings, which are
//! durable ([`KeyTable`]), and the duplicates held open until their key's
//! execution ends, which a crash loses ([`Waiters`]). It decides what a
//! request whose key is known gets (a stored result, a 409 or a wait, a
//! 422, a lease takeover) and what the status answers read; the service
//! acts on those decisions.

mod waiters;

use crate::core::dedup::{DedupStore, Entry, Lookup};
use crate::core::{Key, Op};
use sim::TimeUs;

pub use waiters::{Waiter, Waiters};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Where a key's request stands.
#[derive(serde::Serialize)]
pub enum KeyState {
    /// Claimed: an execution is running (or died with a crash).
    InProgress,
    /// Paid: the answer is known.
    Paid,
}

/// A row of the key table: the request the key stands for, and its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KeyRow {
    /// The claim it stands for.
    pub op: Op,
    /// The amount of the request it stands for.
    pub amount_eur: u32,
    /// Where it stands.
    pub state: KeyState,
    /// When the current executor claimed the key (the lease's start).
    pub locked_us: TimeUs,
}

/// A payment booked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Booking {
    /// The claim it pays.
    pub op: Op,
    /// The key of the request that booked it.
    pub key: Key,
    /// The amount booked.
    pub amount_eur: u32,
    /// Its key is still to be recorded by a later step of its execution
    /// (split-booking-first's insert, check-then-act's record on the bank's
    /// confirmation). Kept with the booking because only a crash while it
    /// is set leaves the booking without its key for that reason: a key
    /// recorded and later expired, reaped or deleted, or never recorded
    /// because the bank gave up, leaves one too, with no crash in between.
    /// A booking whose key is not due shows what it always showed in the
    /// state panel.
    #[serde(skip_serializing_if = "crate::core::shown::is_false")]
    pub key_due: bool,
}

/// What inserting a key row did to the store: whether expired rows were
/// reaped first, and how many keys it holds now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inserted {
    /// Expired rows were reaped before the insert.
    pub reaped: bool,
    /// Keys stored after the insert.
    pub keys: u32,
}

/// What a request whose key has a live row gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    /// The row stands for another request (claim or amount): 422.
    Mismatch,
    /// The stored result, whatever the request asked.
    Paid {
        /// The amount the key's request paid.
        amount_eur: u32,
    },
    /// The lease ran out: the request takes the key over (its lease now
    /// starts again) and drives the row's request to an end.
    TakenOver(KeyRow),
    /// An execution holds the key: 409, or a wait.
    InProgress,
}

/// What a lookup of a request's key found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// A live row: the key is known, and this is the table's verdict on
    /// the request under it ([`KeyTable::find`]).
    Live(Known),
    /// A row past its retention, now deleted: the key is forgotten.
    Expired,
    /// No row.
    Absent,
}

/// How the table judges a request under a known key.
#[derive(Clone, Copy, Debug)]
pub struct KnownRules {
    /// A known key with another request is refused.
    pub fingerprint_check: bool,
    /// An "in progress" key older than this may be taken over; 0: never.
    pub lease_us: TimeUs,
}

/// What a request for `request` (its claim and amount) gets under a key
/// whose live row is `live`; a takeover restarts the row's lease.
fn judge(live: &mut KeyRow, request: (Op, u32), rules: KnownRules, now: TimeUs) -> Known {
    let row = *live;
    // The fingerprint covers the whole request: the claim and the amount.
    if rules.fingerprint_check && (row.op, row.amount_eur) != request {
        return Known::Mismatch;
    }
    match row.state {
        KeyState::Paid => Known::Paid {
            amount_eur: row.amount_eur,
        },
        KeyState::InProgress if rules.lease_us > 0 && now - row.locked_us >= rules.lease_us => {
            live.locked_us = now;
            Known::TakenOver(row)
        }
        KeyState::InProgress => Known::InProgress,
    }
}

/// The durable half of the key table: key rows and bookings, committed
/// atomically per step.
#[derive(Clone, Debug)]
pub struct KeyTable {
    rows: DedupStore<Key, KeyRow>,
    bookings: Vec<Booking>,
    /// Some row was stored under a key not minted for its own operation (a
    /// clock's key, another operation's): only then can a key minted for
    /// an operation find a row of another ([`may_collide`](Self::may_collide)).
    foreign: bool,
}

impl KeyTable {
    /// An empty table that keeps keys `retention_us` (0: forever).
    pub fn new(retention_us: TimeUs) -> Self {
        KeyTable {
            rows: DedupStore::new(retention_us),
            bookings: Vec::new(),
            foreign: false,
        }
    }

    /// Empty again, in its allocations.
    pub fn reset(&mut self, retention_us: TimeUs) {
        self.rows.reset(retention_us);
        self.bookings.clear();
        self.foreign = false;
    }

    /// Whether a request of `op` under `key` may find a live row of another
    /// operation, without a look-up. It cannot when `key` was minted for
    /// `op` and every row was stored under a key minted for the row's own
    /// operation: a row under `key` is then `op`'s, as no row's operation
    /// ever changes. A clock's key, or a key of another operation, is
    /// looked up. Most requests carry their own operation's key, and this
    /// saves the look-up the collision check made on every arrival.
    #[inline]
    pub fn may_collide(&self, key: &Key, op: Op) -> bool {
        self.foreign || !matches!(*key, Key::Op { op: own, .. } if own == op)
    }

    /// `key`'s live row at `now_us`.
    pub fn get(&self, key: &Key, now_us: TimeUs) -> Option<&KeyRow> {
        self.rows.get(key, now_us)
    }

    /// Every row, live or expired, in the table's order.
    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Entry<KeyRow>)> {
        self.rows.iter()
    }

    /// Rows stored, live or expired.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row is stored.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The payments booked, in order.
    pub fn bookings(&self) -> &[Booking] {
        &self.bookings
    }

    /// Inserts a key row, reaping expired rows first; no booking of `key`
    /// waits for its key any longer.
    pub fn insert(&mut self, key: Key, row: KeyRow, now_us: TimeUs) -> Inserted {
        self.foreign |= !matches!(key, Key::Op { op, .. } if op == row.op);
        let reaped = self.rows.reap(now_us) > 0;
        self.rows.insert(key, row, now_us);
        self.key_recorded(key);
        Inserted {
            reaped,
            keys: self.rows.len() as u32,
        }
    }

    /// Books a payment.
    pub fn book(&mut self, booking: Booking) {
        self.bookings.push(booking);
    }

    /// Deletes `key`'s row; whether there was one.
    pub fn remove(&mut self, key: &Key) -> bool {
        self.rows.remove(key).is_some()
    }

    /// `key` was recorded: no booking of it waits for its key any longer.
    fn key_recorded(&mut self, key: Key) {
        for b in self
            .bookings
            .iter_mut()
            .filter(|b| b.key_due && b.key == key)
        {
            b.key_due = false;
        }
    }

    /// One execution of `key` ended without recording it (check-then-act's
    /// bank gave up): its booking waits for nothing. One only: a duplicate
    /// that passed the same check may still be waiting for its bank.
    pub fn key_given_up(&mut self, key: Key) {
        if let Some(b) = self.bookings.iter_mut().find(|b| b.key_due && b.key == key) {
            b.key_due = false;
        }
    }

    /// Looks up the key of a request for `request` (its claim and amount):
    /// a live row's verdict on it (a takeover restarts the row's lease), or
    /// an expired row, deleted (the retry is a new request), or none. One
    /// look-up for all of it: the request path looked the key up once to
    /// learn that it was live and again to judge the request.
    pub fn find(&mut self, key: &Key, request: (Op, u32), rules: KnownRules, now: TimeUs) -> Found {
        match self.rows.lookup(key, now) {
            Lookup::Live(live) => Found::Live(judge(live, request, rules, now)),
            Lookup::Expired => {
                self.rows.remove(key);
                Found::Expired
            }
            Lookup::Absent => Found::Absent,
        }
    }

    /// The verdict on a request for `request` under `key`, which has a
    /// live row: [`find`](Self::find)'s, for the cases that know the row is there.
    #[cfg(test)]
    pub fn known(&mut self, key: Key, request: (Op, u32), rules: KnownRules, now: TimeUs) -> Known {
        match self.find(&key, request, rules, now) {
            Found::Live(known) => known,
            _ => panic!("the caller found a live row"),
        }
    }

    /// What the table says is paid for `op`: a key left "in progress" reads
    /// as nothing paid, whatever the bank did.
    pub fn paid_eur(&self, op: Op, now_us: TimeUs) -> u32 {
        self.rows
            .iter()
            .filter(|(k, e)| {
                e.value.op == op
                    && e.value.state == KeyState::Paid
                    && self.rows.get(k, now_us).is_some()
            })
            .map(|(_, e)| e.value.amount_eur)
            .max()
            .unwrap_or(0)
    }

    /// A confirmation the service stopped waiting for names `key`: its
    /// live row of `op`, "in progress", is paid; whether it was.
    pub fn record_late(&mut self, key: Key, op: Op, now_us: TimeUs) -> bool {
        match self.rows.lookup(&key, now_us) {
            Lookup::Live(row) if row.op == op && row.state == KeyState::InProgress => {
                row.state = KeyState::Paid;
                true
            }
            _ => false,
        }
    }

    /// The bank confirmed `key`'s transfer of `amount_eur` for `op`: its live
    /// row is paid, or a paid row is inserted (check-then-act records the
    /// key only now; so does a booking-first execution whose second step
    /// has not run), which it returns what it did of.
    pub fn record_paid(
        &mut self,
        key: Key,
        op: Op,
        amount_eur: u32,
        now: TimeUs,
    ) -> Option<Inserted> {
        match self.rows.lookup(&key, now) {
            Lookup::Live(row) => {
                row.state = KeyState::Paid;
                None
            }
            Lookup::Expired | Lookup::Absent => {
                let row = KeyRow {
                    op,
                    amount_eur,
                    state: KeyState::Paid,
                    locked_us: now,
                };
                Some(self.insert(key, row, now))
            }
        }
    }

    /// What a restart finds of a crash between the two transactions of a
    /// split operation: a booking still waiting for its key, or (with
    /// `split_key_first`) a live key without a booking.
    pub fn crash_between_steps(&self, split_key_first: bool, now_us: TimeUs) -> bool {
        // Only a booking whose key was still due when the crash fell: one
        // whose key was recorded and is gone since (expired, reaped,
        // deleted), or was never to come (the bank gave up), shows no
        // crash between the steps.
        let booking_without_key = self.bookings.iter().any(|b| b.key_due);
        // Live keys only: an expired key is gone, and its missing booking
        // says nothing about where a crash fell.
        let key_without_booking = split_key_first
            && self.rows.iter().any(|(k, _)| {
                self.rows.get(k, now_us).is_some() && !self.bookings.iter().any(|b| b.key == *k)
            });
        booking_without_key || key_without_booking
    }

    /// Hands `drive` every live key left "in progress", in the table's
    /// order, in place (nothing collected, nothing allocated). A key past
    /// its retention is gone, "in progress" or not (a reaper deletes by
    /// age, a lookup treats it as absent): nothing drives it. A key `drive`
    /// takes (it returns true) is claimed again: its lease starts now.
    pub fn drive_in_progress(
        &mut self,
        now_us: TimeUs,
        mut drive: impl FnMut(Key, KeyRow) -> bool,
    ) {
        for (key, e, live) in self.rows.iter_mut_at(now_us) {
            if !live || e.value.state != KeyState::InProgress {
                continue;
            }
            if drive(*key, e.value) {
                e.value.locked_us = now_us;
            }
        }
    }

    /// `key`'s live row if it is still "in progress", claimed again (its
    /// lease starts now).
    pub fn reclaim(&mut self, key: &Key, now_us: TimeUs) -> Option<KeyRow> {
        let Lookup::Live(row) = self.rows.lookup(key, now_us) else {
            return None;
        };
        if row.state != KeyState::InProgress {
            return None;
        }
        row.locked_us = now_us;
        Some(*row)
    }
}

impl KeyTable {
    /// The fields the state panel shows: the key rows and the bookings.
    pub fn serialize_into<S: serde::ser::SerializeStruct>(
        &self,
        d: &mut S,
    ) -> Result<(), S::Error> {
        d.serialize_field("keys", &self.rows)?;
        d.serialize_field("bookings", &self.bookings)
    }
}

#[cfg(test)]
mod tests;
