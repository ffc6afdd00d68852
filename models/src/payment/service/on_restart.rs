//! The restart, across the service's parts: a crash between the two
//! transactions of a split operation shows in the key table and is
//! reported; the keys left "in progress" (within their retention) are
//! driven to an end by the recovery job, on the workers and bank-call slots
//! it may take, the rest as workers free up, in turn with the queued
//! requests.

use super::bank_calls::Questions;
use super::keys::KeyRow;
use super::{Idempotency, Service, ServiceState, ServiceStorage};
use crate::core::{Carries, Key, Obs};
use crate::payment::msg::Msg;
use crate::payment::situations as sit;
use sim::Ctx;

impl<W: Carries<Msg>> Service<W> {
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
        let split_key_first = self.cfg.idempotency == Idempotency::SplitKeyFirst;
        if s.keys.crash_between_steps(split_key_first, now) {
            ctx.reached(sit::CRASH_BETWEEN_STEPS);
        }
        let questions = &mut s.questions;
        s.keys.drive_in_progress(now, |key, row| {
            if st.recovery_slots(self.pool()) == 0 {
                // A recovery job gets to every key: this one waits for a
                // worker to be free (`pump`), unclaimed until then.
                st.recovery.defer(key);
                return false;
            }
            self.drive(st, questions, key, row, ctx);
            true
        });
    }

    /// Drives a key the recovery found "in progress" to an end: a bank call
    /// (which the caller made sure has a slot and a worker) with no client
    /// to answer. The recovery's next key then waits for a worker behind
    /// every request queued now.
    fn drive(
        &self,
        st: &mut ServiceState,
        questions: &mut Questions,
        key: Key,
        row: KeyRow,
        ctx: &mut impl Ctx<Self>,
    ) {
        ctx.reached(sit::RECOVERED_AFTER_RESTART);
        ctx.observe(Obs::ExecStart { key });
        let call = self.redrive(key, row, None);
        let called = st.calls.call(&self.cfg, questions, call, ctx);
        debug_assert!(called, "the caller found a free call slot");
        st.recovery.driven(st.workers.queued());
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
        while st.recovery_slots(self.pool()) > 0 {
            let Some(key) = st.recovery.next() else {
                return;
            };
            if st.running(key) {
                continue;
            }
            let Some(row) = s.keys.reclaim(&key, now) else {
                continue;
            };
            self.drive(st, &mut s.questions, key, row, ctx);
        }
    }
}
