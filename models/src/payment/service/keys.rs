//! The key table: the rows that claim a key for a request (with their
//! lease and retention), the bookings, and what a request whose key is known
//! gets (a stored result, a 409 or a wait, a 422, a lease takeover), the
//! duplicates held open until their key's execution ends, and the status
//! answers a client's reconciliation reads from it.

use super::bank_calls::NewCall;
use super::workers::Queued;
use super::{Concurrent, Idempotency, Service, ServiceState};
use crate::core::dedup::{DedupStore, Lookup};
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::msg::{Msg, PayStatus};
use crate::payment::situations as sit;
use sim::{ActorId, Ctx, TimeUs};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Where a key's request stands.
pub enum KeyState {
    /// Claimed: an execution is running (or died with a crash).
    InProgress,
    /// Paid: the answer is known.
    Paid,
}

/// A row of the key table: the request the key stands for, and its state.
#[derive(Clone, Copy, Debug)]
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

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Booking {
    pub op: Op,
    pub key: Key,
    pub amount_eur: u32,
    /// Its key is still to be recorded by a later step of its execution
    /// (split-booking-first's insert, check-then-act's record on the bank's
    /// confirmation). Kept with the booking because only a crash while it
    /// is set leaves the booking without its key for that reason: a key
    /// recorded and later expired, reaped or deleted, or never recorded
    /// because the bank gave up, leaves one too, with no crash in between.
    pub key_due: bool,
}

/// A booking whose key is not due shows what it always showed.
impl fmt::Debug for Booking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Booking");
        d.field("op", &self.op)
            .field("key", &self.key)
            .field("amount_eur", &self.amount_eur);
        if self.key_due {
            d.field("key_due", &self.key_due);
        }
        d.finish()
    }
}

/// The payment database: key rows and bookings, committed atomically per step.
#[derive(Clone)]
pub struct ServiceStorage {
    /// The idempotency keys it remembers.
    pub keys: DedupStore<Key, KeyRow>,
    /// Payments booked.
    pub bookings: Vec<Booking>,
    /// Status questions asked so far: the last one's number. Kept with
    /// the database, not in memory, because answers to questions asked
    /// before a crash still travel the network after the restart, and a
    /// number used again would let one of them answer a recovery's question.
    pub questions_asked: u32,
}

impl ServiceStorage {
    /// `key` was recorded: no booking of it waits for its key any longer.
    pub(super) fn key_recorded(&mut self, key: Key) {
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
    pub(super) fn key_given_up(&mut self, key: Key) {
        if let Some(b) = self.bookings.iter_mut().find(|b| b.key_due && b.key == key) {
            b.key_due = false;
        }
    }
}

/// A service that never asks the bank shows what it always showed: the
/// question counter appears once there is a question.
impl fmt::Debug for ServiceStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ServiceStorage");
        d.field("keys", &self.keys);
        d.field("bookings", &self.bookings);
        if self.questions_asked > 0 {
            d.field("questions_asked", &self.questions_asked);
        }
        d.finish()
    }
}

/// A concurrent duplicate held open until its key's execution ends.
#[derive(Clone, Copy, Debug)]
pub struct Waiter {
    pub key: Key,
    pub client: ActorId,
    pub op: Op,
    pub attempt: u32,
}

/// Duplicates held open at most.
pub const MAX_WAITERS: usize = 64;

impl<W: Carries<Msg>> Service<W> {
    /// Inserts a key row, reaping expired rows first, and reports the store's size.
    pub(super) fn insert_key(
        &self,
        s: &mut ServiceStorage,
        key: Key,
        row: KeyRow,
        ctx: &mut impl Ctx<Self>,
    ) {
        let now = ctx.now_us();
        if s.keys.reap(now) > 0 {
            ctx.reached(sit::KEY_REAPED);
        }
        s.keys.insert(key, row, now);
        s.key_recorded(key);
        ctx.observe(Obs::DedupStore {
            keys: s.keys.len() as u32,
            bound: self.cfg.max_keys,
        });
    }

    /// Books the payment; its key is due later in the designs that record it after the booking.
    pub(super) fn book(&self, s: &mut ServiceStorage, op: Op, key: Key, amount_eur: u32) {
        let later_key = matches!(
            self.cfg.idempotency,
            Idempotency::SplitBookingFirst | Idempotency::CheckThenAct
        );
        s.bookings.push(Booking {
            op,
            key,
            amount_eur,
            key_due: later_key && self.keyed(key),
        });
    }

    /// A request whose key has a live row.
    pub(super) fn on_known_key(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        q: Queued,
        ctx: &mut impl Ctx<Self>,
    ) {
        let (key, caller, op, amount_eur) = (q.key, q.caller, q.op, q.amount_eur);
        let now = ctx.now_us();
        // A row of another claim was reported as `key-collision` when the
        // request arrived (`admit`), before the ledger ended the run.
        let row = *s.keys.get(&key, now).expect("the caller found a live row");
        // The fingerprint covers the whole request: the claim and the amount.
        if self.cfg.fingerprint_check && (row.op, row.amount_eur) != (op, amount_eur) {
            ctx.reached(sit::PAYLOAD_MISMATCH_REJECTED);
            self.answer(st, q, PayStatus::Mismatch, 0, ctx);
            return;
        }
        match row.state {
            KeyState::Paid => {
                ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                // The stored result is replayed; it answers the request, whatever it asked.
                self.answer(st, q, PayStatus::Paid, row.amount_eur, ctx);
            }
            KeyState::InProgress
                if self.cfg.lease_us > 0 && now - row.locked_us >= self.cfg.lease_us =>
            {
                // The lease ran out: the executor is presumed dead, this request takes over.
                ctx.reached(sit::LEASE_EXPIRED_TAKEOVER);
                if st.running(key) {
                    // Presumed wrongly: the gap of a lease shorter than its call.
                    ctx.reached(sit::LEASE_TAKEN_FROM_RUNNING);
                }
                if let Lookup::Live(r) = s.keys.lookup(&key, now) {
                    r.locked_us = now;
                }
                ctx.observe(Obs::ExecStart { key });
                let call = NewCall {
                    op: row.op,
                    key,
                    amount_eur: row.amount_eur,
                    client: Some(caller),
                    query_first: self.cfg.query_on_recovery,
                };
                if !self.call_bank(st, &mut s.questions_asked, call, ctx) {
                    ctx.observe(Obs::ExecEnd { key });
                    self.shed(caller, op, ctx);
                }
            }
            KeyState::InProgress => {
                ctx.reached(sit::CONCURRENT_DUPLICATE);
                let wait = self.cfg.concurrent == Concurrent::Wait
                    && st.waiters.len() < MAX_WAITERS
                    && st.running(key);
                if wait {
                    st.waiters.push(Waiter {
                        key,
                        client: caller.0,
                        op,
                        attempt: caller.1,
                    });
                } else {
                    self.answer(st, q, PayStatus::InProgress, 0, ctx);
                }
            }
        }
    }

    /// A client's reconciliation job asks what was paid for `op`: the
    /// service answers from its own key table, what it believes, so a key
    /// left "in progress" reads as nothing paid whatever the bank did.
    pub(super) fn answer_status(
        &self,
        s: &ServiceStorage,
        from: ActorId,
        (op, question): (Op, u32),
        ctx: &mut impl Ctx<Self>,
    ) {
        let now = ctx.now_us();
        let paid_eur = s
            .keys
            .iter()
            .filter(|(k, e)| {
                e.value.op == op && e.value.state == KeyState::Paid && s.keys.get(k, now).is_some()
            })
            .map(|(_, e)| e.value.amount_eur)
            .max()
            .unwrap_or(0);
        let reply = Msg::StatusReply {
            op,
            question,
            paid_eur,
        };
        ctx.send(from, W::wrap(reply));
    }

    pub(super) fn answer_waiters(
        &self,
        st: &mut ServiceState,
        key: Key,
        status: PayStatus,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        if !key.is_some() {
            return;
        }
        let mut i = 0;
        while i < st.waiters.len() {
            let w = st.waiters[i];
            if w.key == key {
                ctx.reached(sit::DUPLICATE_WAITED);
                Self::reply((w.client, w.attempt), w.op, status, amount_eur, ctx);
                st.waiters.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{config, Bench, Cmd, BANK};
    use super::super::ServiceConfig;
    use super::*;
    use crate::payment::{TransferResult, CLAIM};
    use sim::Command;

    fn claim() -> Op {
        Op::new(&CLAIM, 4711)
    }

    fn key() -> Key {
        Key::Op { op: claim(), n: 1 }
    }

    /// Claim 4711's attempt `attempt`, for `amount_eur`, under its one key.
    fn pay(attempt: u32, amount_eur: u32) -> Msg {
        Msg::Pay {
            op: claim(),
            attempt,
            key: key(),
            amount_eur,
            timeout_ms: 0,
        }
    }

    fn confirmation() -> Msg {
        Msg::TransferDone {
            op: claim(),
            key: key(),
            key_passed: true,
            result: TransferResult::Done,
        }
    }

    /// The answers a handler gave: to whom, what, how much.
    fn replies(out: &[Cmd]) -> Vec<(ActorId, PayStatus, u32)> {
        out.iter()
            .filter_map(|c| match c {
                Command::Send { to, msg } => match msg.peek() {
                    Some(&Msg::PayReply {
                        status, amount_eur, ..
                    }) => Some((*to, status, amount_eur)),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    fn bank_messages(out: &[Cmd]) -> usize {
        Cmd::sent(out)
            .filter(|m| !matches!(m.peek(), Some(Msg::PayReply { .. })))
            .count()
    }

    /// Claim 4711 paid 1,200 EUR by client 1's first attempt.
    fn paid() -> Bench {
        let mut b = Bench::new(config());
        b.msg(0, 1, pay(1, 1200));
        b.msg(1_000, BANK, confirmation());
        assert_eq!(
            b.storage.keys.get(&key(), 1_000).map(|r| r.state),
            Some(KeyState::Paid)
        );
        b
    }

    #[test]
    fn a_retry_of_a_paid_key_is_answered_from_the_table_without_the_bank() {
        let mut b = paid();
        let out = b.msg(2_000, 1, pay(2, 1200));
        assert!(Cmd::reaches(&out, sit::DUPLICATE_AFTER_COMMIT));
        assert_eq!(replies(&out), [(1, PayStatus::Paid, 1200)]);
        assert_eq!(bank_messages(&out), 0, "the bank was asked again");
    }

    /// The fingerprint covers the amount: the key's stored request was
    /// 1,200 EUR, so one for 999 EUR is another request under a reused key.
    #[test]
    fn a_known_key_with_another_amount_is_refused_with_422() {
        let mut b = paid();
        let out = b.msg(2_000, 1, pay(2, 999));
        assert!(Cmd::reaches(&out, sit::PAYLOAD_MISMATCH_REJECTED));
        assert_eq!(replies(&out), [(1, PayStatus::Mismatch, 0)]);
        assert_eq!(bank_messages(&out), 0);
    }

    /// A duplicate arrives while the first execution's transfer is out: it
    /// is refused with 409, or held open and answered with the first's result.
    #[test]
    fn a_concurrent_duplicate_gets_409_or_waits_for_the_first_execution() {
        for concurrent in [Concurrent::Reject, Concurrent::Wait] {
            let mut b = Bench::new(ServiceConfig {
                concurrent,
                ..config()
            });
            b.msg(0, 1, pay(1, 1200));
            let duplicate = b.msg(10, 2, pay(1, 1200));
            assert!(Cmd::reaches(&duplicate, sit::CONCURRENT_DUPLICATE));
            assert_eq!(bank_messages(&duplicate), 0, "{concurrent:?}");
            let done = b.msg(1_000, BANK, confirmation());
            if concurrent == Concurrent::Reject {
                assert_eq!(replies(&duplicate), [(2, PayStatus::InProgress, 0)]);
                assert_eq!(replies(&done), [(1, PayStatus::Paid, 1200)]);
            } else {
                assert!(replies(&duplicate).is_empty());
                assert!(Cmd::reaches(&done, sit::DUPLICATE_WAITED));
                let both = [(1, PayStatus::Paid, 1200), (2, PayStatus::Paid, 1200)];
                assert_eq!(replies(&done), both);
            }
        }
    }

    /// Two executions of one key passed check-then-act's check, each with
    /// its booking waiting for the key: one giving up frees one booking,
    /// the key recorded frees them all.
    #[test]
    fn a_given_up_execution_frees_one_booking_a_recorded_key_frees_all() {
        let booking = Booking {
            op: claim(),
            key: key(),
            amount_eur: 1200,
            key_due: true,
        };
        let mut s = ServiceStorage {
            keys: DedupStore::new(0),
            bookings: vec![booking; 2],
            questions_asked: 0,
        };
        let due = |s: &ServiceStorage| s.bookings.iter().filter(|b| b.key_due).count();
        s.key_given_up(key());
        assert_eq!(due(&s), 1);
        s.key_recorded(key());
        assert_eq!(due(&s), 0);
    }
}
