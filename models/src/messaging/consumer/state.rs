//! What a consumer holds in memory, which a crash loses: its jobs (one per
//! delivery in progress, each in a phase of its handler), the receipts it
//! saw last, and its timers.

use super::super::msg::{Event, TxKind};
use crate::core::slots::Slots;
use sim::TimeUs;
use std::collections::VecDeque;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Phase {
    Checking,
    Processing,
    /// Waiting for the result of its ack before the commit.
    Acking,
    Committing,
    Recording,
}

/// One delivery in progress. The state panel shows the flags and counts
/// only where they are set, so the panels of runs without redeliveries,
/// retries or rollouts read as they did before each was kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Job {
    pub ev: Event,
    pub receipt: u32,
    pub phase: Phase,
    /// The broker flagged the delivery as redelivered.
    #[serde(skip_serializing_if = "crate::core::shown::is_false")]
    pub redelivered: bool,
    /// The transaction in flight (while checking, committing, recording):
    /// the phase says as much, so the panel leaves it out.
    #[serde(skip)]
    pub tx: TxKind,
    /// Its sends so far, 1 for the first.
    #[serde(skip_serializing_if = "crate::core::shown::at_most_one")]
    pub attempt: u8,
    /// The version of the consumer that took the delivery (0: the first;
    /// a rollout's later ones count up): it finishes the job under its own
    /// settings, as a process shutting down gracefully does.
    #[serde(skip_serializing_if = "crate::core::shown::is_zero")]
    pub version: u8,
}

/// Volatile: deliveries in progress, lost on a crash (the broker redelivers).
/// The state panel shows the jobs as it did before the rest was kept: the
/// receipts taken are bookkeeping against the network's copies.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ConsumerState {
    /// The deliveries in progress, one slot each.
    pub jobs: Slots<Job>,
    /// The receipts of the latest deliveries taken (at most
    /// `RECENT_RECEIPTS`), so that a copy of a delivery the network made
    /// is not taken for a second one: a receipt names one delivery, and two
    /// jobs under it would both see their ack counted under exactly-once
    /// delivery (a repeat of the ack that counted is answered "counted").
    #[serde(skip)]
    pub taken: VecDeque<u32>,
    /// When this process started: its connection to the broker is as old.
    /// A delivery sent before it was sent over the connection of a process
    /// that crashed (or to none), and never reaches this one.
    #[serde(skip)]
    pub started_us: TimeUs,
    /// The version taking new deliveries (0: the first; a rollout's later
    /// ones count up).
    #[serde(skip_serializing_if = "crate::core::shown::is_zero")]
    pub version: u8,
}

impl ConsumerState {
    /// A consumer with nothing in hand.
    pub fn new() -> Self {
        ConsumerState {
            jobs: Slots::new(MAX_JOBS),
            // Full size at once: no run grows it (a warm sweep allocates nothing).
            taken: VecDeque::with_capacity(RECENT_RECEIPTS),
            started_us: 0,
            version: 0,
        }
    }
}

impl Default for ConsumerState {
    fn default() -> Self {
        ConsumerState::new()
    }
}

pub const MAX_JOBS: usize = 16;

/// How many of its latest receipts a consumer remembers. A copy the network
/// makes of a delivery arrives within its link's delay; more deliveries than
/// this in between would take a lease per delivery the consumer holds.
pub const RECENT_RECEIPTS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A consumer's timers, one pair per job slot.
pub enum ConsumerTimer {
    /// The handler's work on job `slot` is done.
    Processed {
        /// The job's slot.
        slot: u32,
    },
    /// The database did not answer job `slot`'s transaction in time, or the
    /// broker the result of its ack.
    TxTimeout {
        /// The job's slot.
        slot: u32,
    },
    /// Time to renew job `slot`'s lease.
    Renew {
        /// The job's slot.
        slot: u32,
    },
    /// A rollout's next version takes over (a rolling deploy reaches this
    /// instance).
    Deploy,
}

impl fmt::Display for ConsumerTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConsumerTimer::Processed { .. } => f.write_str("processing done"),
            ConsumerTimer::TxTimeout { .. } => f.write_str("transaction timeout"),
            ConsumerTimer::Renew { .. } => f.write_str("renew the lease"),
            ConsumerTimer::Deploy => f.write_str("deploy the next version"),
        }
    }
}

sim::timer_slots!(ConsumerTimer {
    Processed { slot },
    TxTimeout { slot },
    Renew { slot },
    Deploy,
});
