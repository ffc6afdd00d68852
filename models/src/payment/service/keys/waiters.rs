//! The volatile half of the key table: the concurrent duplicates held open
//! until their key's execution ends, which a crash loses (their clients
//! time out and retry).

use crate::core::{Key, Op};
use sim::ActorId;

/// A concurrent duplicate held open until its key's execution ends.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Waiter {
    /// The key whose execution it waits for.
    pub key: Key,
    /// Its client.
    pub client: ActorId,
    /// Its claim.
    pub op: Op,
    /// Its client's attempt.
    pub attempt: u32,
}

/// Duplicates held open at most.
pub const MAX_WAITERS: usize = 64;

/// The volatile half of the key table: the duplicates held open, which a
/// crash loses (their clients time out and retry). The state panel shows
/// it as the list it is.
#[derive(Clone, Debug, Default, serde::Serialize)]
#[serde(transparent)]
pub struct Waiters {
    held: Vec<Waiter>,
}

impl Waiters {
    /// None held, in its allocation.
    pub fn clear(&mut self) {
        self.held.clear();
    }

    /// Whether another duplicate may be held open.
    pub fn has_room(&self) -> bool {
        self.held.len() < MAX_WAITERS
    }

    /// Holds `w` open (the caller checked [`has_room`](Self::has_room)).
    pub fn hold(&mut self, w: Waiter) {
        debug_assert!(self.has_room());
        self.held.push(w);
    }

    /// Hands `answer` every duplicate waiting for `key`, releasing each.
    pub fn release(&mut self, key: Key, mut answer: impl FnMut(Waiter)) {
        if !key.is_some() {
            return;
        }
        let mut i = 0;
        while i < self.held.len() {
            let w = self.held[i];
            if w.key == key {
                answer(w);
                self.held.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }
}
