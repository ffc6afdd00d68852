//! The event queue: events ordered by (time, sequence number), a total order,
//! so that any correct priority queue pops them in the same order and every
//! run is the same whichever structure holds them.
//!
//! A run keeps few events pending (a payment run about four to eight, a
//! messaging run a dozen), and for so few a sorted array beats a binary heap.
//! The array is sorted earliest first between a moving head and tail, in a
//! fixed buffer: a pop takes the head and moves it on, with no comparison,
//! and a push moves the keys on its shorter side by one, the later ones back
//! or the earlier ones to the front. Most pushes schedule the latest event
//! so far or nearly, so a push usually moves none or one and never calls
//! `memmove`, which the array kept latest first (the next event last) did
//! for every push that was not the earliest. A heap's pop sifts through
//! levels whose comparisons the branch predictor cannot guess. Past [`SORTED_MAX`]
//! pending events the queue turns into a binary heap for the rest of the
//! run, so a model with thousands of pending events stays O(log n). The
//! payloads sit in a slab whose free slots are reused, so nothing allocates
//! once a run has warmed the buffers up.

use crate::actor::{ActorId, TimeUs};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Pending events beyond which the sorted array gives way to a heap: a push
/// moves at most this many keys (1.5 KiB) there.
pub(super) const SORTED_MAX: usize = 64;

/// Keys the sorted buffer holds: twice [`SORTED_MAX`], so that when a push
/// finds the tail at the end, the pending keys, at most half of it, move to
/// [`FRONT_ROOM`] once and leave room for many pushes again. A power
/// of two, so that an index masked with `SORTED_CAP - 1` needs no bounds check.
const SORTED_CAP: usize = 2 * SORTED_MAX;
const _: () = assert!(SORTED_CAP.is_power_of_two());

/// Where the sorted keys start in an empty queue and after a compaction:
/// room for keys to move towards the front. At most [`SORTED_MAX`] - 1 keys
/// are pending when a push compacts, so the tail stays clear of the end.
const FRONT_ROOM: usize = SORTED_MAX / 2;
const _: () = assert!(FRONT_ROOM + SORTED_MAX < SORTED_CAP);

#[derive(Clone, Debug)]
pub(super) enum EventKind<M, T> {
    Deliver {
        from: ActorId,
        to: ActorId,
        msg: M,
        msg_id: u32,
        duplicate: bool,
    },
    Timer {
        actor: ActorId,
        timer: T,
        /// The timer's slot, an index into its actor's timer generations.
        slot: u32,
        generation: u32,
    },
    Restart {
        actor: ActorId,
    },
    /// A free slab entry.
    Vacant,
}

/// The ordering key and where the payload lives, so that ordering moves 24
/// bytes instead of a whole message.
#[derive(Clone, Copy, Default)]
struct Slot {
    time_us: TimeUs,
    seq: u64,
    index: u32,
}

impl Slot {
    #[inline(always)]
    fn key(&self) -> (TimeUs, u64) {
        (self.time_us, self.seq)
    }
}

// Ordered by (time, seq) only, reversed so BinaryHeap pops the earliest;
// seq is unique per run, so the order is total.
impl PartialEq for Slot {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Slot {}
impl PartialOrd for Slot {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Slot {
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// An event taken off the order: its time and where its payload waits in
/// the slab, read there ([`EventQueue::kind`]) and moved out only for a
/// step ([`EventQueue::take`]). A void timer is looked at where it lies,
/// never copied, and a message moves once, from the slab to its handler.
/// Its slab entry is free for the next push: the engine reads or takes the
/// payload before it pushes anything.
pub(super) struct Due {
    pub time_us: TimeUs,
    index: u32,
}

/// A popped event with its payload, for the tests.
#[cfg(test)]
pub(super) struct Event<M, T> {
    pub time_us: TimeUs,
    pub kind: EventKind<M, T>,
}

pub(super) struct EventQueue<M, T> {
    /// While the run has few pending events: `sorted[head..tail]`, sorted
    /// earliest first, so the next event is at `head`.
    sorted: Box<[Slot; SORTED_CAP]>,
    head: usize,
    tail: usize,
    /// Once it had more than [`SORTED_MAX`]: a heap, until the run ends.
    heap: BinaryHeap<Slot>,
    in_heap: bool,
    slab: Vec<EventKind<M, T>>,
    free: Vec<u32>,
}

impl<M, T> EventQueue<M, T> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            sorted: Box::new([Slot::default(); SORTED_CAP]),
            head: FRONT_ROOM,
            tail: FRONT_ROOM,
            heap: BinaryHeap::new(),
            in_heap: false,
            slab: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
        }
    }

    pub fn clear(&mut self) {
        self.head = FRONT_ROOM;
        self.tail = FRONT_ROOM;
        self.heap.clear();
        self.in_heap = false;
        self.slab.clear();
        self.free.clear();
    }

    #[inline]
    pub fn len(&self) -> usize {
        if self.in_heap {
            self.heap.len()
        } else {
            self.tail - self.head
        }
    }

    #[inline]
    pub fn peek_time(&self) -> Option<TimeUs> {
        if self.in_heap {
            self.heap.peek().map(|s| s.time_us)
        } else {
            (self.head < self.tail).then(|| self.sorted[self.head & (SORTED_CAP - 1)].time_us)
        }
    }

    /// Queues `kind` at `time_us`; `seq` must be larger than that of every
    /// event pushed before it in this run (the engine counts pushes).
    #[inline(always)]
    pub fn push(&mut self, time_us: TimeUs, seq: u64, kind: EventKind<M, T>) {
        let index = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = kind;
                i
            }
            None => {
                self.slab.push(kind);
                u32::try_from(self.slab.len() - 1).expect("fewer than 2^32 pending events")
            }
        };
        let slot = Slot {
            time_us,
            seq,
            index,
        };
        if self.in_heap {
            self.heap.push(slot);
            return;
        }
        if self.tail - self.head == SORTED_MAX {
            self.heap
                .extend(self.sorted[self.head..self.tail].iter().copied());
            self.heap.push(slot);
            self.in_heap = true;
            (self.head, self.tail) = (FRONT_ROOM, FRONT_ROOM);
            return;
        }
        self.insert_sorted(slot);
    }

    /// Puts `slot` in the sorted buffer after every key not later than it.
    #[inline(always)]
    fn insert_sorted(&mut self, slot: Slot) {
        if self.tail == SORTED_CAP {
            self.compact();
        }
        // The new event's sequence number is the largest so far, so a key is
        // later than it exactly when its time is: one 64-bit comparison per
        // key moved, and usually none moved at all.
        debug_assert!(
            self.sorted[self.head..self.tail]
                .iter()
                .all(|s| s.seq < slot.seq),
            "sequence numbers grow with every push"
        );
        let buf = &mut *self.sorted;
        let (head, tail) = (self.head, self.tail);
        // The latest event so far (a timer set past every pending delivery):
        // appended, with one comparison and no middle key looked up. The
        // back side would have taken it anyway, moving nothing.
        if tail == head || buf[(tail - 1) & (SORTED_CAP - 1)].time_us <= slot.time_us {
            buf[tail & (SORTED_CAP - 1)] = slot;
            self.tail += 1;
            return;
        }
        // Moves the keys on the side of the new one that holds fewer of them,
        // by the middle key's time: a timer set after the pending deliveries
        // moves nothing at the back, a delivery due before a dozen pending
        // timers (messaging) moves the few keys before it one step to the front.
        let mid_us = buf[((head + tail) / 2) & (SORTED_CAP - 1)].time_us;
        if head > 0 && slot.time_us < mid_us {
            // One bounds check for the window the keys move in, none per key
            // moved: the loop's range proves every index (a masked index cost
            // two instructions more per key).
            let keys = &mut buf[head - 1..tail];
            let mut at = 0;
            for i in 1..keys.len() {
                if keys[i].time_us > slot.time_us {
                    break;
                }
                keys[i - 1] = keys[i];
                at = i;
            }
            keys[at] = slot;
            self.head -= 1;
            return;
        }
        // `tail` < `SORTED_CAP`: a full buffer was compacted above.
        let keys = &mut buf[head..tail + 1];
        let mut at = keys.len() - 1;
        for i in (0..at).rev() {
            if keys[i].time_us <= slot.time_us {
                break;
            }
            keys[i + 1] = keys[i];
            at = i;
        }
        keys[at] = slot;
        self.tail += 1;
    }

    /// Moves the pending keys to the front of the buffer: at most
    /// [`SORTED_MAX`] of them, once per as many pops at least.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        self.sorted.copy_within(self.head..self.tail, FRONT_ROOM);
        self.tail = self.tail - self.head + FRONT_ROOM;
        self.head = FRONT_ROOM;
    }

    /// Drops every pending event (time, payload) `keep` says no to, freeing its slab slot;
    /// the rest keep their order. Out of the hot path: the engine calls it
    /// only when the queue looks over its limit.
    pub fn retain(&mut self, mut keep: impl FnMut(TimeUs, &EventKind<M, T>) -> bool) {
        let (slab, free) = (&mut self.slab, &mut self.free);
        let mut check = |s: &Slot| {
            let i = s.index as usize;
            if keep(s.time_us, &slab[i]) {
                return true;
            }
            slab[i] = EventKind::Vacant;
            free.push(s.index);
            false
        };
        if self.in_heap {
            self.heap.retain(|s| check(s));
        } else {
            let mut kept = self.head;
            for i in self.head..self.tail {
                let s = self.sorted[i];
                if check(&s) {
                    self.sorted[kept] = s;
                    kept += 1;
                }
            }
            self.tail = kept;
        }
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<Due> {
        let slot = if self.in_heap {
            self.heap.pop()?
        } else {
            if self.head == self.tail {
                return None;
            }
            self.take_head()
        };
        Some(self.due(slot))
    }

    /// The next event if it is due before `limit_us`; none if there is
    /// none or it is due later. The fault phase pops through this, so that
    /// finding the next event and taking it is one look at the queue, not two.
    #[inline(always)]
    pub fn pop_before(&mut self, limit_us: TimeUs) -> Option<Due> {
        let slot = if self.in_heap {
            if self.heap.peek()?.time_us >= limit_us {
                return None;
            }
            self.heap.pop()?
        } else {
            if self.head == self.tail {
                return None;
            }
            if self.sorted[self.head & (SORTED_CAP - 1)].time_us >= limit_us {
                return None;
            }
            self.take_head()
        };
        Some(self.due(slot))
    }

    /// The sorted buffer's head, which is there, moved past.
    #[inline(always)]
    fn take_head(&mut self) -> Slot {
        let slot = self.sorted[self.head & (SORTED_CAP - 1)];
        self.head += 1;
        if self.head == self.tail {
            // Empty: the next push starts with room on both sides again.
            (self.head, self.tail) = (FRONT_ROOM, FRONT_ROOM);
        }
        slot
    }

    /// `slot`, just taken off the order, as a due event; its slab entry freed.
    #[inline(always)]
    fn due(&mut self, slot: Slot) -> Due {
        self.free.push(slot.index);
        Due {
            time_us: slot.time_us,
            index: slot.index,
        }
    }

    /// The payload of an event just popped, where it lies.
    #[inline(always)]
    pub fn kind(&self, due: &Due) -> &EventKind<M, T> {
        let kind = &self.slab[due.index as usize];
        debug_assert!(
            !matches!(kind, EventKind::Vacant),
            "a queued event is never vacant"
        );
        kind
    }

    /// The payload of an event just popped, moved out of the slab.
    #[inline(always)]
    pub fn take(&mut self, due: Due) -> EventKind<M, T> {
        let kind = std::mem::replace(&mut self.slab[due.index as usize], EventKind::Vacant);
        debug_assert!(
            !matches!(kind, EventKind::Vacant),
            "a queued event is never vacant"
        );
        kind
    }

    /// The next event with its payload, for the tests.
    #[cfg(test)]
    fn pop_event(&mut self) -> Option<Event<M, T>> {
        let due = self.pop()?;
        Some(Event {
            time_us: due.time_us,
            kind: self.take(due),
        })
    }

    /// As [`pop_before`](Self::pop_before), with its payload, for the tests.
    #[cfg(test)]
    fn pop_event_before(&mut self, limit_us: TimeUs) -> Option<Event<M, T>> {
        let due = self.pop_before(limit_us)?;
        Some(Event {
            time_us: due.time_us,
            kind: self.take(due),
        })
    }
}

#[cfg(test)]
mod tests;
