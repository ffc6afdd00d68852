//! The recovery job, a part that owns its state: after a crash, the keys
//! left "in progress" (within their retention) are driven to an end on the
//! service's workers and bank-call slots, in turn with the queued requests.
//! The keys it could not start at the restart wait here, with its place in
//! the line for a worker; a crash loses both (the next restart finds the
//! keys in storage again).

use crate::core::Key;
use std::collections::VecDeque;

/// The recovery's backlog and its place in the line.
#[derive(Clone, Debug, Default)]
pub struct Recovery {
    /// Keys a restart found left "in progress" while every worker was busy
    /// or every bank-call slot was taken or kept for an admitted request,
    /// in the key table's order: the recovery job drives them as workers
    /// free up.
    recovering: VecDeque<Key>,
    /// Queued requests ahead of the recovery's next key in the line for a
    /// worker: the recovery runs on the same workers as the requests.
    queued_before: usize,
}

impl Recovery {
    /// Nothing to recover, in its allocation.
    pub fn clear(&mut self) {
        self.recovering.clear();
        self.queued_before = 0;
    }

    /// Keys waiting for a worker.
    pub fn waiting(&self) -> usize {
        self.recovering.len()
    }

    /// `key` waits for a worker, unclaimed until then.
    pub fn defer(&mut self, key: Key) {
        self.recovering.push_back(key);
    }

    /// The next key waiting, out of the backlog.
    pub fn next(&mut self) -> Option<Key> {
        self.recovering.pop_front()
    }

    /// A queued request left the line (a worker took or dropped it).
    pub fn dequeued(&mut self) {
        self.queued_before = self.queued_before.saturating_sub(1);
    }

    /// A key was driven while `queued` requests wait: the next one waits
    /// behind them, as a job that takes its workers from the same pool
    /// waits in the same line, so neither starves the other.
    pub fn driven(&mut self, queued: usize) {
        self.queued_before = if self.recovering.is_empty() {
            0
        } else {
            queued
        };
    }

    /// Keys it may start driving now, with `workers_free` workers and
    /// `calls_free` bank-call slots it may take: none while a request is
    /// ahead of it in the line.
    pub fn slots(&self, workers_free: usize, calls_free: usize) -> usize {
        if self.queued_before > 0 {
            return 0;
        }
        calls_free.min(workers_free)
    }
}

impl Recovery {
    /// The fields the state panel shows: a service that recovers no more
    /// keys than it has workers shows what it always showed, the backlog
    /// once it holds a key, its place in the line once requests are ahead
    /// of it.
    pub fn serialize_into<S: serde::ser::SerializeStruct>(
        &self,
        d: &mut S,
    ) -> Result<(), S::Error> {
        if !self.recovering.is_empty() {
            d.serialize_field("recovering", &self.recovering)?;
        }
        if self.queued_before > 0 {
            d.serialize_field("queued_before_recovery", &self.queued_before)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Op;
    use crate::payment::CLAIM;

    fn key(claim: u32) -> Key {
        let op = Op::new(&CLAIM, claim);
        Key::Op { op, n: 1 }
    }

    /// The recovery takes no more keys than free workers and bank calls,
    /// and none while a request queued before its next key waits.
    #[test]
    fn the_recovery_takes_the_fewer_of_free_workers_and_calls_in_its_turn() {
        let mut r = Recovery::default();
        assert_eq!(r.slots(3, 2), 2);
        assert_eq!(r.slots(1, 5), 1);
        for claim in [1, 2] {
            r.defer(key(claim));
        }
        assert_eq!(r.next(), Some(key(1)));
        r.driven(2);
        assert_eq!(r.slots(3, 3), 0, "two requests are ahead of key 2");
        r.dequeued();
        assert_eq!(r.slots(3, 3), 0);
        r.dequeued();
        assert_eq!(r.slots(3, 3), 3);
        r.dequeued();
        assert_eq!(r.slots(3, 3), 3, "the count went below zero");
    }

    /// With its backlog empty, the last key driven leaves no place in the
    /// line: requests queued then hold nothing back.
    #[test]
    fn the_last_key_driven_leaves_no_place_in_the_line() {
        let mut r = Recovery::default();
        r.defer(key(1));
        assert_eq!(r.next(), Some(key(1)));
        r.driven(5);
        assert_eq!((r.waiting(), r.slots(1, 1)), (0, 1));
    }
}
