//! The worker pool and its queue, a part that owns its state: a fixed
//! number of workers, each busy with one request from the moment it takes
//! it until the request is answered (its processing and its bank call
//! included), and a first-in-first-out queue of requests waiting for a
//! worker, which a crash loses. A request that finds every worker busy and
//! the queue full is shed with 503 before anything is done for it.
//!
//! Queueing delay grows with the queue, and a queued request is still
//! worked on after its client has given up on it (timed out and retried):
//! the service spends its capacity on work for nobody, which is how a retry
//! storm outlives its trigger. Unless the service drops expired work: the
//! request carries the client's timeout (as gRPC carries `grpc-timeout`),
//! and with `drop_expired` a worker skips a request whose deadline passed.
//!
//! Which workers are busy is the service's to count (its bank calls and
//! steps hold them); this part decides, given that count, what becomes of
//! a request.

use super::timers::MAX_WORKERS;
use crate::core::{Key, Op};
use sim::{ActorId, TimeUs, US_PER_MS};
use std::collections::VecDeque;

/// A request as it waits for a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Queued {
    /// The client and the attempt the answer goes to.
    pub caller: (ActorId, u32),
    /// The operation.
    pub op: Op,
    /// The key it carries.
    pub key: Key,
    /// The amount asked.
    pub amount_eur: u32,
    /// After this its client no longer waits: its arrival plus the timeout
    /// the request carries.
    pub deadline_us: TimeUs,
}

impl Queued {
    /// The request of `caller` that arrived at `now_us`, whose client
    /// waits `timeout_ms` for it (0: forever).
    pub fn arrived(
        caller: (ActorId, u32),
        (op, key): (Op, Key),
        amount_eur: u32,
        timeout_ms: u32,
        now_us: TimeUs,
    ) -> Queued {
        let deadline_us = match timeout_ms {
            0 => TimeUs::MAX,
            t => now_us.saturating_add(u64::from(t).saturating_mul(US_PER_MS)),
        };
        Queued {
            caller,
            op,
            key,
            amount_eur,
            deadline_us,
        }
    }
}

/// Workers a service configured with `workers` has: that many, or all its
/// slots (0).
pub fn pool_size(workers: u32) -> usize {
    match workers {
        0 => MAX_WORKERS as usize,
        n => n as usize,
    }
}

/// What becomes of a request that arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// A free worker takes it now.
    Take,
    /// It waits in the queue.
    Queued,
    /// Every worker is busy and the queue full: 503.
    Shed,
}

/// The request a free worker turns to next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Its client still waits.
    Take(Queued),
    /// Its deadline passed, and the service works on it all the same.
    Late(Queued),
    /// Its deadline passed, and the service drops it.
    Dropped,
}

/// The queue of requests waiting for a worker: the state panel shows it as
/// the queue it is.
#[derive(Clone, Debug, Default, serde::Serialize)]
#[serde(transparent)]
pub struct Workers {
    queue: VecDeque<Queued>,
}

impl Workers {
    /// Nothing queued, in its allocation.
    pub fn clear(&mut self) {
        self.queue.clear();
    }

    /// Requests waiting.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Whether a request waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Request `q` arrives while `busy` of `pool` workers are busy: a free
    /// worker takes it, unless requests wait before it; it queues while
    /// fewer than `queue_max` wait; else it is shed.
    pub fn admit(&mut self, q: Queued, (busy, pool): (usize, usize), queue_max: u32) -> Admit {
        if self.queue.is_empty() && busy < pool {
            Admit::Take
        } else if self.queue.len() < queue_max as usize {
            self.queue.push_back(q);
            Admit::Queued
        } else {
            Admit::Shed
        }
    }

    /// The oldest queued request, out of the queue, as of `now_us`.
    pub fn next(&mut self, now_us: TimeUs, drop_expired: bool) -> Option<Next> {
        let q = self.queue.pop_front()?;
        Some(if now_us < q.deadline_us {
            Next::Take(q)
        } else if drop_expired {
            Next::Dropped
        } else {
            Next::Late(q)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payment::CLAIM;

    fn request(claim: u32, timeout_ms: u32) -> Queued {
        let op = Op::new(&CLAIM, claim);
        Queued::arrived((1, 1), (op, Key::Op { op, n: 1 }), 100, timeout_ms, 1_000)
    }

    /// A request carries its client's timeout as a deadline from its
    /// arrival; none (0) waits forever.
    #[test]
    fn a_request_s_deadline_is_its_arrival_plus_its_timeout() {
        assert_eq!(request(1, 50).deadline_us, 1_000 + 50 * US_PER_MS);
        assert_eq!(request(1, 0).deadline_us, TimeUs::MAX);
        assert_eq!(pool_size(0), MAX_WORKERS as usize);
        assert_eq!(pool_size(3), 3);
    }

    /// A free worker takes a request only when none waits before it; the
    /// queue holds `queue_max`; past that, shed.
    #[test]
    fn a_request_is_taken_queued_or_shed() {
        let mut w = Workers::default();
        assert_eq!(w.admit(request(1, 0), (0, 1), 1), Admit::Take);
        assert!(w.is_empty(), "a taken request queued");
        assert_eq!(w.admit(request(2, 0), (1, 1), 1), Admit::Queued);
        assert_eq!(w.admit(request(3, 0), (1, 1), 1), Admit::Shed);
        // A worker is free, but claim 2 waits first: claim 4 queues behind.
        assert_eq!(w.admit(request(4, 0), (0, 1), 2), Admit::Queued);
        assert_eq!(w.queued(), 2);
    }

    /// The oldest request comes first; past its deadline it is worked on
    /// all the same, or dropped when the service drops expired work.
    #[test]
    fn the_oldest_request_comes_next_late_or_dropped_past_its_deadline() {
        let mut w = Workers::default();
        for (claim, timeout_ms) in [(1, 10), (2, 10), (3, 0)] {
            w.admit(request(claim, timeout_ms), (1, 1), 10);
        }
        let past = 1_000 + 10 * US_PER_MS;
        assert_eq!(w.next(past, false), Some(Next::Late(request(1, 10))));
        assert_eq!(w.next(past, true), Some(Next::Dropped));
        assert_eq!(w.next(past, true), Some(Next::Take(request(3, 0))));
        assert_eq!(w.next(past, true), None);
    }
}
