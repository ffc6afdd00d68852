//! Recovery after a crash: the keys a crash left "in progress" (within
//! their retention) are driven to an end by a recovery job that runs on the
//! service's workers and bank-call slots, in turn with the queued requests;
//! a crash between the two transactions of a split operation is reported.

use super::bank_calls::NewCall;
use super::keys::{KeyRow, KeyState};
use super::requests::StepKind;
use super::{Idempotency, Service, ServiceState, ServiceStorage};
use crate::core::dedup::Lookup;
use crate::core::{Carries, Key, Obs};
use crate::payment::msg::Msg;
use crate::payment::situations as sit;
use sim::Ctx;

/// Bank calls the recovery may start now: the free slots, less one for
/// every admitted request whose bank call is still to come (a step after its
/// processing). A worker that took a request has claimed its key and will
/// call the bank; a recovery job that took its call would leave it nothing
/// to answer but a 503, "not executed", for a key it claimed and booked.
fn calls_free_for_recovery(st: &ServiceState) -> usize {
    let calls_due = st
        .steps
        .iter()
        .filter(|(_, p)| matches!(p.kind, StepKind::CallBank | StepKind::BookAndCall))
        .count();
    (st.calls.bound() - st.calls.busy()).saturating_sub(calls_due)
}

impl<W: Carries<Msg>> Service<W> {
    /// Keys the recovery may start driving now. It runs on the workers
    /// that take requests, so it starts none while every worker is busy,
    /// and it waits for one in the same line as the queued requests: after
    /// each key it starts, behind those queued then (`drive`).
    fn recovery_slots(&self, st: &ServiceState) -> usize {
        if st.queued_before_recovery > 0 {
            return 0;
        }
        let workers_free = self.workers().saturating_sub(self.busy(st));
        calls_free_for_recovery(st).min(workers_free)
    }

    /// Whether the recovery has keys waiting and a worker to drive one with.
    pub(super) fn can_recover_next(&self, st: &ServiceState) -> bool {
        !st.recovering.is_empty() && self.recovery_slots(st) > 0
    }

    /// After a restart: a crash between the two transactions of a split
    /// operation shows in storage; keys left "in progress", and still within
    /// their retention, are driven to an end.
    pub(super) fn recover(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        ctx: &mut impl Ctx<Self>,
    ) {
        ctx.observe(Obs::ExecutorsLost);
        let now = ctx.now_us();
        // Only a booking whose key was still due when the crash fell: one
        // whose key was recorded and is gone since (expired, reaped,
        // deleted), or was never to come (the bank gave up), shows no
        // crash between the steps.
        let booking_without_key = s.bookings.iter().any(|b| b.key_due);
        // Live keys only: an expired key is gone, and its missing booking
        // says nothing about where a crash fell.
        let key_without_booking = self.cfg.idempotency == Idempotency::SplitKeyFirst
            && s.keys.iter().any(|(k, _)| {
                s.keys.get(k, now).is_some() && !s.bookings.iter().any(|b| b.key == *k)
            });
        if booking_without_key || key_without_booking {
            ctx.reached(sit::CRASH_BETWEEN_STEPS);
        }
        // In place, in the table's order: nothing collected, nothing
        // allocated unless the keys outnumber the bank-call slots.
        // A key past its retention is gone, "in progress" or not (a reaper
        // deletes by age, a lookup treats it as absent): nothing drives it.
        for (key, e, live) in s.keys.iter_mut_at(now) {
            if !live || e.value.state != KeyState::InProgress {
                continue;
            }
            let (key, row) = (*key, e.value);
            if self.recovery_slots(st) == 0 {
                // A recovery job gets to every key: this one waits for a
                // worker to be free (`pump`), unclaimed until then.
                st.recovering.push_back(key);
                continue;
            }
            e.value.locked_us = now;
            self.drive(st, &mut s.questions_asked, key, row, ctx);
        }
    }

    /// Drives a key the recovery found "in progress" to an end: a bank call
    /// (which the caller made sure has a slot and a worker) with no client
    /// to answer. The recovery's next key then waits for a worker behind
    /// every request queued now, as a job that takes its workers from the
    /// same pool waits in the same line: neither starves the other.
    fn drive(
        &self,
        st: &mut ServiceState,
        asked: &mut u32,
        key: Key,
        row: KeyRow,
        ctx: &mut impl Ctx<Self>,
    ) {
        ctx.reached(sit::RECOVERED_AFTER_RESTART);
        ctx.observe(Obs::ExecStart { key });
        let call = NewCall {
            op: row.op,
            key,
            amount_eur: row.amount_eur,
            client: None,
            query_first: self.cfg.query_on_recovery,
        };
        let called = self.call_bank(st, asked, call, ctx);
        debug_assert!(called, "the caller found a free call slot");
        st.queued_before_recovery = if st.recovering.is_empty() {
            0
        } else {
            st.queue.len()
        };
    }

    /// A worker is free: the recovery drives the keys it had to leave
    /// waiting, as many as there are free workers and calls, in turn with
    /// the queued requests. A key that stopped needing it meanwhile is
    /// passed over: expired (gone), paid (a late confirmation), or taken
    /// over by a request's lease and running.
    pub(super) fn recover_next(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        ctx: &mut impl Ctx<Self>,
    ) {
        let now = ctx.now_us();
        while self.recovery_slots(st) > 0 {
            let Some(key) = st.recovering.pop_front() else {
                return;
            };
            if st.running(key) {
                continue;
            }
            let Lookup::Live(row) = s.keys.lookup(&key, now) else {
                continue;
            };
            if row.state != KeyState::InProgress {
                continue;
            }
            row.locked_us = now;
            let row = *row;
            self.drive(st, &mut s.questions_asked, key, row, ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{
        config, confirm, pay_msg, pay_replies, step_timer, transfers_sent, Bench, Cmd, BANK,
    };
    use super::super::{ServiceConfig, ServiceTimer, MAX_BANK_CALLS};
    use super::*;
    use crate::core::Op;
    use crate::payment::{TransferResult, CLAIM};
    use sim::ActorId;

    const CLIENT: ActorId = 1;
    const RETENTION_US: sim::TimeUs = 10_000_000;

    fn key() -> Key {
        Key::Op {
            op: Op::new(&CLAIM, 4711),
            n: 1,
        }
    }

    /// The first attempt to pay claim `claim` 1,200 EUR, under its own key.
    fn pay(claim: u32) -> Msg {
        pay_msg(Op::new(&CLAIM, claim), 1)
    }

    /// Claim 4711's transfer goes out at 0 and the bank stays silent: the
    /// service answers 504 at 5 s and its key stays "in progress".
    fn stuck_in_progress() -> Bench {
        let mut b = Bench::new(ServiceConfig {
            retention_us: RETENTION_US,
            ..config()
        });
        b.msg(0, CLIENT, pay(4711));
        b.fire(5_000_000, ServiceTimer::BankTimeout { slot: 0 });
        let row = b.storage.keys.get(&key(), 5_000_000).expect("a live row");
        assert_eq!(row.state, KeyState::InProgress);
        b
    }

    fn bank_messages(out: &[Cmd]) -> usize {
        Cmd::sent(out)
            .filter(|m| {
                matches!(
                    m.peek(),
                    Some(Msg::Transfer { .. } | Msg::StatusQuery { .. })
                )
            })
            .count()
    }

    /// Within its retention, a key left "in progress" is the service's to
    /// drive to an end after a restart: it asks the bank.
    #[test]
    fn a_restart_recovers_a_live_key_left_in_progress() {
        let mut b = stuck_in_progress();
        let out = b.restart(RETENTION_US - 1);
        assert!(Cmd::reaches(&out, sit::RECOVERED_AFTER_RESTART));
        assert_eq!(bank_messages(&out), 1);
        assert_eq!(b.state.calls.iter().count(), 1);
    }

    /// Past its retention the key is gone, whatever its state: a reaper
    /// deletes keys by age (Brandur's, after 72 h "regardless of state"),
    /// and a store that checks expiry in code treats an expired record as
    /// absent (Powertools). A restart finds nothing to recover, sends the
    /// bank nothing and records no key.
    #[test]
    fn a_restart_does_not_recover_a_key_whose_retention_ran_out() {
        let mut b = stuck_in_progress();
        let out = b.restart(RETENTION_US);
        assert!(!Cmd::reaches(&out, sit::RECOVERED_AFTER_RESTART));
        assert_eq!(bank_messages(&out), 0, "a forgotten key was driven");
        assert_eq!(b.state.calls.iter().count(), 0);
        assert!(b.storage.keys.get(&key(), RETENTION_US).is_none());
    }

    /// A crash can leave more keys "in progress" than the service has bank
    /// calls at once. A real recovery job gets to every one of them, the
    /// later ones as calls end, not only as many as fit at the restart:
    /// the 65th key is driven to an end like the first.
    #[test]
    fn a_restart_drives_every_key_left_in_progress_however_many() {
        let mut b = Bench::new(ServiceConfig {
            query_on_recovery: false,
            ..config()
        });
        let claims = MAX_BANK_CALLS as u32 + 1;
        b.left_in_progress(claims);
        let restart_us = 1_000_000;
        let out = b.restart(restart_us);
        let mut sent = transfers_sent(&out);
        assert_eq!(sent.len(), MAX_BANK_CALLS);
        // The bank confirms every transfer as it arrives.
        let mut confirmed = 0;
        while confirmed < sent.len() {
            let op = sent[confirmed];
            let done = Msg::TransferDone {
                op,
                key: Key::Op { op, n: 1 },
                key_passed: true,
                result: TransferResult::Done,
            };
            let out = b.msg(restart_us, BANK, done);
            let out = b.continued(restart_us, out);
            sent.extend(transfers_sent(&out));
            confirmed += 1;
        }
        assert_eq!(sent.len(), claims as usize, "a key was never driven");
        for (key, e) in b.storage.keys.iter() {
            assert_eq!(e.value.state, KeyState::Paid, "{key:?} left in progress");
        }
    }

    /// Split-key-first records its key ("handled") in one transaction and
    /// books in the next: claim 4711's request leaves its key without a
    /// booking until that step runs.
    fn key_recorded_not_booked() -> Bench {
        let mut b = Bench::new(ServiceConfig {
            idempotency: Idempotency::SplitKeyFirst,
            retention_us: RETENTION_US,
            ..config()
        });
        b.msg(0, CLIENT, pay(4711));
        assert!(b.storage.keys.get(&key(), 0).is_some());
        assert!(b.storage.bookings.is_empty());
        b
    }

    /// A crash between split-key-first's two transactions shows after the
    /// restart as a live key without a booking. A key past its retention is
    /// gone, booked or not: its missing booking says nothing about a crash,
    /// and a report claiming `crash-between-steps` for it claims a gap the
    /// run did not show.
    #[test]
    fn crash_between_steps_is_a_live_key_without_a_booking_not_an_expired_one() {
        let mut live = key_recorded_not_booked();
        let out = live.restart(RETENTION_US - 1);
        assert!(Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS));
        let mut expired = key_recorded_not_booked();
        let out = expired.restart(RETENTION_US);
        assert!(
            !Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS),
            "an expired key was counted as a crash between the steps"
        );
    }

    /// Claim 4711 booked and its transfer sent by `idempotency`'s first
    /// step (check-then-act's act, split-booking-first's booking), its key
    /// still to be recorded: the gap a crash can fall into.
    fn booked_key_due(idempotency: Idempotency, delete_key_on_bank_timeout: bool) -> Bench {
        let mut b = Bench::new(ServiceConfig {
            idempotency,
            retention_us: RETENTION_US,
            delete_key_on_bank_timeout,
            ..config()
        });
        let out = b.msg(0, CLIENT, pay(4711));
        if idempotency == Idempotency::CheckThenAct {
            // The check passed; the booking and the call are its next step.
            b.fire(0, step_timer(&out));
        }
        assert_eq!(b.storage.bookings.len(), 1);
        assert!(b.storage.keys.get(&key(), 0).is_none());
        b
    }

    /// A crash after the booking and before the key is recorded shows after
    /// the restart as a booking without a key: `crash-between-steps`.
    #[test]
    fn a_crash_between_the_booking_and_its_key_is_reported() {
        for design in [Idempotency::SplitBookingFirst, Idempotency::CheckThenAct] {
            let mut b = booked_key_due(design, false);
            let out = b.restart(1_000_000);
            assert!(Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS), "{design:?}");
        }
    }

    /// Split-booking-first: the bank confirms, the key is recorded, both
    /// steps ran. Past the key's retention the booking has no key, and a
    /// restart then says nothing about where a crash fell.
    #[test]
    fn a_booking_whose_key_expired_is_no_crash_between_steps() {
        let mut b = booked_key_due(Idempotency::SplitBookingFirst, false);
        b.fire(0, ServiceTimer::Step { slot: 0 });
        confirm(&mut b, 1_000, Op::new(&CLAIM, 4711));
        assert!(b.storage.keys.get(&key(), 1_000).is_some());
        let out = b.restart(RETENTION_US + 1_000);
        assert!(
            !Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS),
            "an expired key was counted as a crash between the steps"
        );
    }

    /// The bank stays silent to the last attempt. Split-booking-first
    /// records its key in the second step and then deletes it
    /// (`delete_key_on_bank_timeout`); check-then-act never records one.
    /// Either way the booking has no key with no crash between the steps.
    #[test]
    fn a_booking_left_without_a_key_by_a_bank_timeout_is_no_crash_between_steps() {
        for design in [Idempotency::SplitBookingFirst, Idempotency::CheckThenAct] {
            let mut b = booked_key_due(design, true);
            if design == Idempotency::SplitBookingFirst {
                let insert = ServiceTimer::Step { slot: 0 };
                b.fire(0, insert);
                assert!(b.storage.keys.get(&key(), 0).is_some());
            }
            let out = b.fire(5_000_000, ServiceTimer::BankTimeout { slot: 0 });
            assert!(Cmd::reaches(&out, sit::BANK_GAVE_UP));
            assert!(b.storage.keys.get(&key(), 5_000_000).is_none());
            let out = b.restart(6_000_000);
            assert!(
                !Cmd::reaches(&out, sit::CRASH_BETWEEN_STEPS),
                "{design:?}: a key the bank's timeout removed was counted as a crash"
            );
        }
    }

    /// A restart leaves 65 keys "in progress": 64 are driven at once, the
    /// last waits for a call to end. One ends; in the same instant, before
    /// the recovery's next step, claim 7000 arrives, a worker takes it and
    /// claims its key, and its bank call is due after its processing. The
    /// recovery must not take the call the admitted request will need:
    /// shed then, the request would be answered 503 ("not executed") with
    /// its key claimed and booked, and with no lease every retry would get
    /// 409 while a later restart paid it.
    fn admitted_while_recovery_waits() -> (Bench, Op, Vec<Cmd>) {
        let processing_us = 100_000;
        let mut b = Bench::new(ServiceConfig {
            query_on_recovery: false,
            processing_us,
            ..config()
        });
        b.left_in_progress(MAX_BANK_CALLS as u32 + 1);
        let t = 1_000_000;
        assert_eq!(transfers_sent(&b.restart(t)).len(), MAX_BANK_CALLS);
        let ended = confirm(&mut b, t, Op::new(&CLAIM, 6000));
        let claim = Op::new(&CLAIM, 7000);
        let taken = b.msg(t, CLIENT, pay_msg(claim, 1));
        assert!(pay_replies(&taken).is_empty(), "claim 7000 was not taken");
        // The recovery's step, continued from the confirmation, runs now.
        let mut out = b.continued(t, ended);
        out.extend(b.fire(t + processing_us, step_timer(&taken)));
        (b, claim, out)
    }

    #[test]
    fn the_recovery_leaves_an_admitted_request_its_bank_call() {
        let (_, claim, out) = admitted_while_recovery_waits();
        assert_eq!(pay_replies(&out), [], "claim 7000 was shed after its claim");
        assert_eq!(transfers_sent(&out), [claim]);
    }

    /// The key the recovery left waiting is driven once a call ends.
    #[test]
    fn the_recovery_drives_its_waiting_key_once_a_call_ends() {
        let (mut b, _, _) = admitted_while_recovery_waits();
        let t = 2_000_000;
        let out = confirm(&mut b, t, Op::new(&CLAIM, 6001));
        let out = b.continued(t, out);
        let last = Op::new(&CLAIM, 6000 + MAX_BANK_CALLS as u32);
        assert_eq!(transfers_sent(&out), [last]);
    }
}
