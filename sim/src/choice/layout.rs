//! Which stream is which: the dense numbering of a world's decision
//! streams (the swarm mix, one per directed link, per actor's crashes, per
//! actor's own draws), which depends only on the number of actors.

use super::StreamId;

/// Where each stream of a world lives in the dense numbering.
///
/// The layout depends only on the number of actors, so a record stays valid for
/// every design variant of the same topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamLayout {
    /// Actors in the world.
    pub actors: u32,
}

/// What a stream is for, for repro files and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// The per-seed fault mix (swarm testing).
    Swarm,
    /// Loss, duplication and delays of one directed link.
    Link {
        /// The sender.
        from: u32,
        /// The receiver.
        to: u32,
    },
    /// One actor's crashes and restart delays.
    Crash {
        /// The actor.
        actor: u32,
    },
    /// One actor's own draws.
    Actor {
        /// The actor.
        actor: u32,
    },
}

impl StreamLayout {
    /// The swarm stream's id.
    pub const SWARM: StreamId = 0;

    /// How many streams the world has.
    pub fn count(&self) -> usize {
        (1 + self.actors * self.actors + 2 * self.actors) as usize
    }

    /// The stream of the link `from → to` (loss, duplication, delay).
    pub fn link(&self, from: u32, to: u32) -> StreamId {
        debug_assert!(from < self.actors && to < self.actors);
        1 + from * self.actors + to
    }

    /// The stream of `actor`'s crashes (and restart delays).
    pub fn crash(&self, actor: u32) -> StreamId {
        debug_assert!(actor < self.actors);
        1 + self.actors * self.actors + actor
    }

    /// The stream of `actor`'s own draws (`Ctx::choose`, jitter).
    pub fn actor(&self, actor: u32) -> StreamId {
        debug_assert!(actor < self.actors);
        1 + self.actors * self.actors + self.actors + actor
    }

    /// What `stream` is for.
    pub fn kind(&self, stream: StreamId) -> StreamKind {
        let n = self.actors;
        assert!(
            (stream as usize) < self.count(),
            "stream {stream} outside layout"
        );
        if stream == 0 {
            StreamKind::Swarm
        } else if stream <= n * n {
            let i = stream - 1;
            StreamKind::Link {
                from: i / n,
                to: i % n,
            }
        } else if stream <= n * n + n {
            StreamKind::Crash {
                actor: stream - 1 - n * n,
            }
        } else {
            StreamKind::Actor {
                actor: stream - 1 - n * n - n,
            }
        }
    }
}
