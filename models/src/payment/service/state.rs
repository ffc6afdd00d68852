//! What the service holds in memory, which a crash loses: its parts'
//! volatile state (bank calls, steps, waiters, the queue, the recovery
//! backlog) side by side, its bounds and its timers.

use super::bank_calls::BankCall;
use super::keys::Waiter;
use super::requests::{Step, StepKind};
use super::workers::Queued;
use crate::core::slots::Slots;
use crate::core::Key;
use std::collections::VecDeque;
use std::fmt;

/// Volatile: open requests, bank calls, pending steps and the queue die
/// with a crash.
#[derive(Clone)]
pub struct ServiceState {
    /// Bank calls in flight.
    pub calls: Slots<BankCall>,
    /// Steps waiting to run (a second transaction, a retry).
    pub steps: Slots<Step>,
    /// Duplicates waiting for a running execution's result.
    pub waiters: Vec<Waiter>,
    /// Requests waiting for a worker, first in first out.
    pub queue: VecDeque<Queued>,
    /// Keys a restart found left "in progress" while every worker was busy
    /// or every bank-call slot was taken or kept for an admitted request,
    /// in the key table's order: the recovery job drives them as workers
    /// free up. A crash loses the list; the next restart finds the keys in
    /// storage again.
    pub recovering: VecDeque<Key>,
    /// Queued requests ahead of the recovery's next key in the line for a
    /// worker: the recovery runs on the same workers as the requests.
    pub queued_before_recovery: usize,
    /// Which version of the service runs (0: the first; a rollout's index
    /// from 1): a step at a later version's time restarts the service.
    pub version: u8,
}

impl ServiceState {
    /// Whether an execution of `key` is still under way here: a bank call in
    /// flight, or a step of it pending (an answer only is not work on the key).
    pub(super) fn running(&self, key: Key) -> bool {
        self.calls.find(|c| c.key == key).is_some()
            || self
                .steps
                .find(|p| p.key == key && !matches!(p.kind, StepKind::Answer(_)))
                .is_some()
    }
}

/// A service that recovers no more keys than it has workers shows what it
/// always showed: the recovery's backlog appears once it holds a key, its
/// place in the line once requests are ahead of it.
impl fmt::Debug for ServiceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ServiceState");
        d.field("calls", &self.calls)
            .field("steps", &self.steps)
            .field("waiters", &self.waiters)
            .field("queue", &self.queue);
        if !self.recovering.is_empty() {
            d.field("recovering", &self.recovering);
        }
        if self.queued_before_recovery > 0 {
            d.field("queued_before_recovery", &self.queued_before_recovery);
        }
        if self.version > 0 {
            d.field("version", &self.version);
        }
        d.finish()
    }
}

/// Bank calls, pending steps and waiters a service keeps at most.
pub const MAX_BANK_CALLS: usize = 64;
/// Pending steps a service keeps at most.
pub const MAX_STEPS: usize = 64;
/// Most workers: each may hold a bank call.
pub const MAX_WORKERS: u32 = MAX_BANK_CALLS as u32;
/// Most requests a service's queue holds.
pub const MAX_QUEUE: u32 = 100_000;
/// The service's timer slots: one per bank call and step, the recovery's
/// and the queue's.
pub const SERVICE_TIMER_SLOTS: u32 = (MAX_BANK_CALLS + MAX_STEPS) as u32 + 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The service's timers.
pub enum ServiceTimer {
    /// The bank did not answer call `slot` in time.
    BankTimeout {
        /// The call's slot.
        slot: u32,
    },
    /// Pending step `slot` runs.
    Step {
        /// The step's slot.
        slot: u32,
    },
    /// A worker and a bank-call slot are free: the recovery drives the
    /// next keys it could not start at the restart.
    Recover,
    /// A worker is free: it takes the next queued request.
    Dequeue,
}

impl fmt::Display for ServiceTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceTimer::BankTimeout { .. } => f.write_str("bank timeout"),
            ServiceTimer::Step { .. } => f.write_str("next step"),
            ServiceTimer::Recover => f.write_str("next key to recover"),
            ServiceTimer::Dequeue => f.write_str("next queued request"),
        }
    }
}

sim::timer_slots!(ServiceTimer {
    BankTimeout { slot },
    Step { slot },
    Recover,
    Dequeue,
});
