//! What an observation says happened: what a client concluded from an
//! attempt, how its operation ended, how a write changed a resource.

/// What a client concluded from one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Done: the effect happened.
    Ok,
    /// Definitely not executed (shed with 503 before it started): retryable.
    Fail,
    /// A timeout, a 409 "in progress", a 504: the effect may or may not have
    /// happened.
    Unknown,
    /// A final error (422): retrying it cannot succeed.
    Rejected,
}

impl AttemptOutcome {
    /// The words traces use.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Ok => "ok",
            AttemptOutcome::Fail => "failed, not executed",
            AttemptOutcome::Unknown => "unknown",
            AttemptOutcome::Rejected => "rejected (final)",
        }
    }
}

/// What a client finally knows about its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Told it is done: the effect is owed, once, with the payload asked.
    Done,
    /// Knows it failed (every attempt was refused before it executed), and
    /// says so in a dead letter: no effect may have happened.
    Failed,
    /// Gave up without knowing, and recorded it visibly for a person to
    /// reconcile (a dead letter with an unknown outcome, a refused retry).
    Unknown,
    /// Gave up without a trace: the mistake the articles warn about.
    Abandoned,
    /// Cancelled after the fact: a compensation took back whatever
    /// landed, and the client was told so. Nothing is owed; what is left
    /// of its effects must be nothing (the net effect).
    Cancelled,
}

impl Ending {
    /// The words traces use.
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Done => "done",
            Ending::Failed => "dead letter: failed, nothing was executed",
            Ending::Unknown => "dead letter: outcome unknown, for a person to reconcile",
            Ending::Abandoned => "given up silently",
            Ending::Cancelled => "cancelled: whatever landed was taken back",
        }
    }
}

/// How a write arrived at the value of the version it made
/// ([`Obs::NewVersion`](super::Obs::NewVersion)). A serial order of the writes explains a resource's
/// state only if each edit sees the value it read and each blind write sets
/// its own: `no-lost-update` needs to know which kind each write is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Sets the value whatever the resource held: a blind replacing PUT, a
    /// creation.
    Set,
    /// Sets a value the client computed from its read of version `read`,
    /// which held `from`: a read-modify-write.
    Edit {
        /// The version read.
        read: u32,
        /// The value read.
        from: u32,
    },
    /// Adds to whatever the resource held, computed where it lands: a
    /// PATCH, an adding PUT. It depends on no client's read, but on the
    /// value it replaced.
    Add,
    /// Removes the resource: the version holds no value.
    Delete,
}

impl Change {
    /// The version the write was computed from (0: none, for a write that
    /// depends on no client's read).
    pub fn read(self) -> u32 {
        match self {
            Change::Edit { read, .. } => read,
            Change::Set | Change::Add | Change::Delete => 0,
        }
    }

    /// The write leaves the same state whatever the resource held before it.
    pub(crate) fn sets_state(self) -> bool {
        matches!(self, Change::Set | Change::Delete)
    }
}
