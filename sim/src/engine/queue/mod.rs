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
//!
//! A timer set again while it is pending is moved where it is
//! ([`EventQueue::rearm`]) while the queue is a sorted array, instead of
//! staying queued until its time to be popped for nothing. What that popping did, moving the clock to the
//! replaced timer's time, is kept in [`Ghosts`], so every run ends at the
//! same time as before.

mod ghosts;

pub(super) use ghosts::Ghosts;

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
        /// The timer's slot, an index into its actor's pending timers: the
        /// timer is live while the slot names this event's sequence number.
        slot: u32,
    },
    Restart {
        actor: ActorId,
    },
    /// A free slab entry.
    Vacant,
}

/// A timer slot's pending timer: the key of its event in the queue, or
/// [`Pending::NONE`]. The event is live exactly while its slot names its
/// sequence number; setting the slot again, cancelling it or a crash makes
/// the event it named void.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pending {
    pub seq: u64,
    pub time_us: TimeUs,
}

impl Pending {
    /// No timer pending in the slot. No event has this sequence number: a
    /// run pushes fewer than 2^64 events.
    pub const NONE: Pending = Pending {
        seq: u64::MAX,
        time_us: 0,
    };

    /// Its event's (time, seq), if one is pending.
    #[inline(always)]
    pub fn key(self) -> Option<(TimeUs, u64)> {
        (self.seq != u64::MAX).then_some((self.time_us, self.seq))
    }
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

pub(super) struct Event<M, T> {
    pub time_us: TimeUs,
    /// Its sequence number: a timer's identity against its slot.
    pub seq: u64,
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
    /// The (time, seq) of the event popped last; none before the first
    /// (`None` orders before every key).
    last_key: Option<(TimeUs, u64)>,
    /// The timers [`rearm`](Self::rearm) moved that the old queue would
    /// still have popped at their old times.
    pub ghosts: Ghosts,
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
            last_key: None,
            ghosts: Ghosts::new(),
        }
    }

    pub fn clear(&mut self) {
        self.head = FRONT_ROOM;
        self.tail = FRONT_ROOM;
        self.heap.clear();
        self.in_heap = false;
        self.slab.clear();
        self.free.clear();
        self.last_key = None;
        self.ghosts.clear();
    }

    #[inline]
    pub fn len(&self) -> usize {
        if self.in_heap {
            self.heap.len()
        } else {
            self.tail - self.head
        }
    }

    /// At least the events the queue would hold had no timer been taken
    /// out in place: [`len`](Self::len) plus the ghosts, some of them
    /// passed already (the exact count is [`Ghosts::pending_after`]'s).
    #[inline(always)]
    pub fn len_with_ghosts(&self) -> usize {
        self.len() + self.ghosts.len()
    }

    /// The (time, seq) of the event popped last, if any.
    #[inline]
    pub fn last_key(&self) -> Option<(TimeUs, u64)> {
        self.last_key
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
        // Moves the keys on the side of the new one that holds fewer of them,
        // by the middle key's time: a timer set after the pending deliveries
        // moves nothing at the back, a delivery due before a dozen pending
        // timers (messaging) moves the few keys before it one step to the front.
        let mid_us = buf[((head + tail) / 2) & (SORTED_CAP - 1)].time_us;
        if head > 0 && tail > head && slot.time_us < mid_us {
            let mut at = head;
            while at < tail && buf[at & (SORTED_CAP - 1)].time_us <= slot.time_us {
                buf[(at - 1) & (SORTED_CAP - 1)] = buf[at & (SORTED_CAP - 1)];
                at += 1;
            }
            buf[(at - 1) & (SORTED_CAP - 1)] = slot;
            self.head -= 1;
            return;
        }
        let mut at = tail;
        while at > head && buf[(at - 1) & (SORTED_CAP - 1)].time_us > slot.time_us {
            buf[at & (SORTED_CAP - 1)] = buf[(at - 1) & (SORTED_CAP - 1)];
            at -= 1;
        }
        buf[at & (SORTED_CAP - 1)] = slot;
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

    /// Drops every pending event (time, seq, payload) `keep` says no to, freeing its slab slot;
    /// the rest keep their order. Out of the hot path: the engine calls it
    /// only when the queue looks over its limit.
    pub fn retain(&mut self, mut keep: impl FnMut(TimeUs, u64, &EventKind<M, T>) -> bool) {
        let (slab, free) = (&mut self.slab, &mut self.free);
        let mut check = |s: &Slot| {
            let i = s.index as usize;
            if keep(s.time_us, s.seq, &slab[i]) {
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
    pub fn pop(&mut self) -> Option<Event<M, T>> {
        let slot = if self.in_heap {
            self.heap.pop()?
        } else {
            if self.head == self.tail {
                return None;
            }
            self.take_head()
        };
        Some(self.take(slot))
    }

    /// The next event if it is due before `limit_us`; none if there is
    /// none or it is due later. The fault phase pops through this, so that
    /// finding the next event and taking it is one look at the queue, not two.
    #[inline(always)]
    pub fn pop_before(&mut self, limit_us: TimeUs) -> Option<Event<M, T>> {
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
        Some(self.take(slot))
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

    /// The payload of `slot`, just taken off the order, its slab entry freed.
    #[inline(always)]
    fn take(&mut self, slot: Slot) -> Event<M, T> {
        self.last_key = Some(slot.key());
        self.free.push(slot.index);
        let kind = std::mem::replace(&mut self.slab[slot.index as usize], EventKind::Vacant);
        debug_assert!(
            !matches!(kind, EventKind::Vacant),
            "a queued event is never vacant"
        );
        Event {
            time_us: slot.time_us,
            seq: slot.seq,
            kind,
        }
    }

    /// Where the pending key `key` sits in the sorted buffer, if it is
    /// there: a binary search on (time, seq), a handful of comparisons.
    #[inline(always)]
    fn find(&self, key: (TimeUs, u64)) -> Option<usize> {
        let (mut lo, mut hi) = (self.head, self.tail);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.sorted[mid & (SORTED_CAP - 1)].key() < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo < self.tail && self.sorted[lo & (SORTED_CAP - 1)].seq == key.1).then_some(lo)
    }

    /// Moves the pending event `old` to `time_us` under the new sequence
    /// number `seq` (larger than every other), its payload now `kind`: the
    /// same order as pushing `kind` anew and skipping `old` when it comes
    /// up, without the push's slab entry or the pop for nothing. `old`
    /// becomes a ghost, so the clock still reaches its time at the end of
    /// a run. In the heap, or if `old` is not queued, it is a push; `old`,
    /// if queued, is then skipped when popped, as before.
    #[inline(always)]
    pub fn rearm(
        &mut self,
        old: (TimeUs, u64),
        time_us: TimeUs,
        seq: u64,
        kind: EventKind<M, T>,
        now_us: TimeUs,
    ) {
        let found = if self.in_heap { None } else { self.find(old) };
        let Some(at) = found else {
            self.push(time_us, seq, kind);
            return;
        };
        let buf = &mut *self.sorted;
        let index = buf[at & (SORTED_CAP - 1)].index;
        self.slab[index as usize] = kind;
        let slot = Slot {
            time_us,
            seq,
            index,
        };
        // The new key is the largest so far among equal times: it goes after
        // every key not later than it. A timer set again for the same time
        // moves only past keys of that very time, usually none.
        let mut at = at;
        if time_us >= old.0 {
            while at + 1 < self.tail && buf[(at + 1) & (SORTED_CAP - 1)].time_us <= time_us {
                buf[at & (SORTED_CAP - 1)] = buf[(at + 1) & (SORTED_CAP - 1)];
                at += 1;
            }
        } else {
            while at > self.head && buf[(at - 1) & (SORTED_CAP - 1)].time_us > time_us {
                buf[at & (SORTED_CAP - 1)] = buf[(at - 1) & (SORTED_CAP - 1)];
                at -= 1;
            }
        }
        buf[at & (SORTED_CAP - 1)] = slot;
        self.ghosts.add(old, self.last_key, now_us);
    }
}

#[cfg(test)]
mod tests;
