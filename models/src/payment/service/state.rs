//! The service's state, its parts' side by side: what it holds in memory,
//! which a crash loses ([`ServiceState`]), and its database, which survives
//! ([`ServiceStorage`]); what is asked of several parts at once (is a key
//! being worked on, how many workers are busy, what may the recovery take).
//! The state panel shows both as the one flat struct it always showed
//! (their `Serialize`); `Debug` shows the parts as they are.

use super::bank_calls::{BankCalls, Questions};
use super::keys::{Booking, KeyTable, Waiters};
use super::recovery::Recovery;
use super::requests::{Step, Steps};
use super::workers::Workers;
use crate::core::Key;
use sim::TimeUs;

/// Volatile: open requests, bank calls, pending steps and the queue die
/// with a crash.
#[derive(Clone, Debug, Default)]
pub struct ServiceState {
    /// Bank calls in flight.
    pub calls: BankCalls,
    /// Steps waiting to run (a second transaction, a retry).
    pub steps: Steps,
    /// Duplicates waiting for a running execution's result.
    pub waiters: Waiters,
    /// Requests waiting for a worker, first in first out.
    pub workers: Workers,
    /// Keys a restart left for the recovery job to drive as workers free up.
    pub recovery: Recovery,
    /// Which version of the service runs (0: the first; a rollout's index
    /// from 1): a step at a later version's time restarts the service.
    pub version: u8,
}

impl ServiceState {
    /// Empty again, in its allocations: what a crash leaves.
    pub fn clear(&mut self) {
        self.calls.clear();
        self.steps.clear();
        self.waiters.clear();
        self.workers.clear();
        self.recovery.clear();
    }

    /// Whether an execution of `key` is still under way here: a bank call in
    /// flight, or a step of it pending (an answer only is not work on the key).
    pub(super) fn running(&self, key: Key) -> bool {
        self.calls.runs(key) || self.steps.works_on(key)
    }

    /// Workers busy now: every bank call and pending step belongs to a request
    /// being worked on (or to a recovery, which takes a worker too), except a
    /// split-booking-first key insert while its own request's bank call is
    /// in flight: one request, one worker. Once that call ends (a bank that
    /// confirms within the insert's processing), the insert alone holds the
    /// worker, as the handler still has the second transaction to run.
    /// Inserts and calls pair one to one: a request the network duplicated
    /// is two of each under one caller, and one call ending frees one.
    pub(super) fn busy(&self) -> usize {
        // No step pending, no insert to pair with a call: the usual case,
        // without the second pass over the steps.
        let steps = self.steps.busy();
        if steps == 0 {
            return self.calls.busy();
        }
        let held_by_call = self
            .steps
            .inserts()
            .filter(|&(i, p)| {
                let same = |q: &Step| q.client == p.client && q.key == p.key;
                let earlier = self
                    .steps
                    .inserts()
                    .filter(|&(j, q)| j < i && same(q))
                    .count();
                self.calls.held_by(p.client, p.key) > earlier
            })
            .count();
        self.calls.busy() + steps - held_by_call
    }

    /// Keys the recovery may start driving now, with `pool` workers. It runs
    /// on the workers that take requests, so it starts none while every
    /// worker is busy, and it waits for one in the same line as the queued
    /// requests. Nor does it take the bank call of an admitted request
    /// whose call is still to come (a step after its processing): a worker
    /// that took a request has claimed its key and will call the bank, and
    /// a recovery that took its call would leave it nothing to answer but a
    /// 503, "not executed", for a key it claimed and booked.
    pub(super) fn recovery_slots(&self, pool: usize) -> usize {
        let workers_free = pool.saturating_sub(self.busy());
        let calls_free = self.calls.free().saturating_sub(self.steps.calls_due());
        self.recovery.slots(workers_free, calls_free)
    }

    /// Whether the recovery has keys waiting and a worker to drive one with.
    pub(super) fn can_recover_next(&self, pool: usize) -> bool {
        self.recovery.waiting() > 0 && self.recovery_slots(pool) > 0
    }
}

/// The state panel's fields: the parts side by side, the one flat struct
/// it always showed; the version once a rollout has deployed a later one.
impl serde::Serialize for ServiceState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut d = s.serialize_struct("ServiceState", 7)?;
        d.serialize_field("calls", &self.calls)?;
        d.serialize_field("steps", &self.steps)?;
        d.serialize_field("waiters", &self.waiters)?;
        d.serialize_field("queue", &self.workers)?;
        self.recovery.serialize_into(&mut d)?;
        if self.version != 0 {
            d.serialize_field("version", &self.version)?;
        }
        d.end()
    }
}

/// The payment database: key rows and bookings, committed atomically per
/// step, and the number of the last status question.
#[derive(Clone, Debug)]
pub struct ServiceStorage {
    /// The idempotency keys it remembers, and the payments booked.
    pub keys: KeyTable,
    /// Status questions asked so far.
    pub questions: Questions,
}

impl ServiceStorage {
    /// An empty database that keeps keys `retention_us` (0: forever).
    pub fn new(retention_us: TimeUs) -> Self {
        ServiceStorage {
            keys: KeyTable::new(retention_us),
            questions: Questions::default(),
        }
    }

    /// Empty again, in its allocations.
    pub fn reset(&mut self, retention_us: TimeUs) {
        self.keys.reset(retention_us);
        self.questions.reset();
    }

    /// The payments booked, in order.
    pub fn bookings(&self) -> &[Booking] {
        self.keys.bookings()
    }
}

/// The state panel's fields: a service that never asks the bank shows what
/// it always showed, the question counter appears once there is a question.
impl serde::Serialize for ServiceStorage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut d = s.serialize_struct("ServiceStorage", 3)?;
        self.keys.serialize_into(&mut d)?;
        if self.questions.asked() > 0 {
            d.serialize_field("questions_asked", &self.questions.asked())?;
        }
        d.end()
    }
}

#[cfg(test)]
mod tests {
    use super::super::bank_calls::NewCall;
    use super::super::requests::StepKind;
    use super::super::tests::harness::{commands, config};
    use super::*;
    use crate::core::Op;
    use crate::payment::CLAIM;

    fn key() -> Key {
        let op = Op::new(&CLAIM, 4711);
        Key::Op { op, n: 1 }
    }

    /// Split-booking-first's request holds one worker with its bank call
    /// and its key insert both pending; the insert alone still holds it.
    #[test]
    fn a_key_insert_and_its_own_bank_call_hold_one_worker() {
        let cfg = config();
        let mut st = ServiceState::default();
        let mut questions = Questions::default();
        let call = NewCall {
            op: Op::new(&CLAIM, 4711),
            key: key(),
            amount_eur: 1200,
            client: Some((1, 1)),
            query_first: false,
        };
        let insert = Step {
            kind: StepKind::InsertKey,
            op: call.op,
            key: key(),
            amount_eur: 1200,
            client: (1, 1),
        };
        commands(0, |ctx| {
            assert!(st.calls.call(&cfg, &mut questions, call, ctx));
            assert!(st.steps.schedule(insert, 1, ctx));
        });
        assert_eq!(st.busy(), 1);
        assert!(st.running(key()));
        // Another caller's call under the same key is another worker.
        let other = NewCall {
            client: Some((2, 1)),
            ..call
        };
        commands(0, |ctx| {
            assert!(st.calls.call(&cfg, &mut questions, other, ctx));
        });
        assert_eq!(st.busy(), 2);
        // The recovery may take neither a busy worker nor a call.
        assert_eq!(st.recovery_slots(2), 0);
        assert_eq!(st.recovery_slots(3), 1);
    }

    /// With no step pending (the shortcut `busy` takes), every bank call in
    /// flight holds a worker of its own, each caller's under the same key too.
    #[test]
    fn with_no_step_pending_every_call_is_a_busy_worker() {
        let cfg = config();
        let mut st = ServiceState::default();
        let mut questions = Questions::default();
        assert_eq!(st.busy(), 0);
        for caller in 1..=3 {
            let call = NewCall {
                op: Op::new(&CLAIM, 4711),
                key: key(),
                amount_eur: 1200,
                client: Some((caller, 1)),
                query_first: false,
            };
            commands(0, |ctx| {
                assert!(st.calls.call(&cfg, &mut questions, call, ctx));
            });
            assert_eq!(st.steps.busy(), 0);
            assert_eq!(st.busy(), caller as usize);
        }
    }

    /// The state panel shows the parts as the one flat struct it always
    /// showed: the recovery's fields appear only once it holds something.
    #[test]
    fn the_state_shows_as_one_flat_struct() {
        // In the order the panel shows them (a JSON map read back in order).
        fn fields(v: &impl serde::Serialize) -> Vec<String> {
            let text = serde_json::to_string(v).expect("json");
            let map: indexmap::IndexMap<String, serde_json::Value> =
                serde_json::from_str(&text).expect("a struct");
            map.into_keys().collect()
        }
        let mut st = ServiceState::default();
        assert_eq!(fields(&st), ["calls", "steps", "waiters", "queue"]);
        st.recovery.defer(key());
        st.recovery.driven(2);
        assert_eq!(
            fields(&st),
            [
                "calls",
                "steps",
                "waiters",
                "queue",
                "recovering",
                "queued_before_recovery"
            ]
        );
        let storage = ServiceStorage::new(0);
        assert_eq!(fields(&storage), ["keys", "bookings"]);
    }
}
