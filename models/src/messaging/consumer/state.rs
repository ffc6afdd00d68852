//! What a consumer holds in memory, which a crash loses: its jobs (one per
//! delivery in progress, each in a phase of its handler), the receipts it
//! saw last, and its timers.

use super::super::msg::{Event, TxKind};
use crate::core::shown::FieldIf;
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

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Job {
    pub ev: Event,
    pub receipt: u32,
    pub phase: Phase,
    /// The broker flagged the delivery as redelivered.
    pub redelivered: bool,
    /// The transaction in flight (while checking, committing, recording).
    pub tx: TxKind,
    /// Its sends so far, 1 for the first.
    pub attempt: u8,
    /// The version of the consumer that took the delivery (0: the first;
    /// a rollout's later ones count up): it finishes the job under its own
    /// settings, as a process shutting down gracefully does.
    pub version: u8,
}

// By hand: the flag only where it is set, so the state panels of runs
// without redeliveries read as they did before it was kept.
impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job")
            .field("ev", &self.ev)
            .field("receipt", &self.receipt)
            .field("phase", &self.phase)
            .field_if(self.redelivered, "redelivered", &self.redelivered)
            .field_if(self.attempt > 1, "attempt", &self.attempt)
            .field_if(self.version > 0, "version", &self.version)
            .finish()
    }
}

/// The panel's fields, as `Debug` shows them.
impl serde::Serialize for Job {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut d = s.serialize_struct("Job", 6)?;
        d.serialize_field("ev", &self.ev)?;
        d.serialize_field("receipt", &self.receipt)?;
        d.serialize_field("phase", &self.phase)?;
        if self.redelivered {
            d.serialize_field("redelivered", &self.redelivered)?;
        }
        if self.attempt > 1 {
            d.serialize_field("attempt", &self.attempt)?;
        }
        if self.version > 0 {
            d.serialize_field("version", &self.version)?;
        }
        d.end()
    }
}

/// Volatile: deliveries in progress, lost on a crash (the broker redelivers).
#[derive(Clone)]
pub struct ConsumerState {
    /// The deliveries in progress, one slot each.
    pub jobs: Slots<Job>,
    /// The receipts of the latest deliveries taken (at most
    /// `RECENT_RECEIPTS`), so that a copy of a delivery the network made
    /// is not taken for a second one: a receipt names one delivery, and two
    /// jobs under it would both see their ack counted under exactly-once
    /// delivery (a repeat of the ack that counted is answered "counted").
    pub taken: VecDeque<u32>,
    /// When this process started: its connection to the broker is as old.
    /// A delivery sent before it was sent over the connection of a process
    /// that crashed (or to none), and never reaches this one.
    pub started_us: TimeUs,
    /// The version taking new deliveries (0: the first; a rollout's later
    /// ones count up).
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

// By hand: the receipts taken are bookkeeping against the network's copies,
// and the state panels show the jobs as they did before it was kept.
impl fmt::Debug for ConsumerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConsumerState")
            .field("jobs", &self.jobs)
            .field_if(self.version > 0, "version", &self.version)
            .finish()
    }
}

/// The panel's fields, as `Debug` shows them.
impl serde::Serialize for ConsumerState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut d = s.serialize_struct("ConsumerState", 2)?;
        d.serialize_field("jobs", &self.jobs)?;
        if self.version > 0 {
            d.serialize_field("version", &self.version)?;
        }
        d.end()
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
