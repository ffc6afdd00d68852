//! The service's timers and the bounds of the slots they belong to: plain
//! data every part may name, so no part needs another for it.

use std::fmt;

/// Bank calls a service keeps at most.
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
