//! The event queue: events ordered by (time, sequence number), a total order,
//! so that any correct priority queue pops them in the same order and every
//! run is the same whichever structure holds them.
//!
//! A run keeps few events pending (a payment run about four to eight, a
//! messaging run a dozen), and for so few a sorted array beats a binary heap.
//! The array is sorted earliest first between a moving head and tail, in a
//! fixed buffer: a pop takes the head and moves it on, with no comparison.
//! How a push finds its place is chosen for a whole run ([`Mode`]), by how
//! deep the queue ran in the runs before: where few keys are pending, the
//! latest is appended after one comparison and any other moves the keys on
//! its shorter side by one, in loops; where many are (chain, contention),
//! the new key lands at a random depth whose loop exit mispredicts, so a
//! push counts the keys later than it among the last few with no branch on
//! their times and moves a fixed block of keys one step back. A run's mode
//! is fixed before it starts, so the branch on it is always predicted, and
//! both pop in the same order (`insert.rs`). A heap's pop sifts through
//! levels whose comparisons the branch predictor cannot guess. Past [`SORTED_MAX`]
//! pending events the queue turns into a binary heap for the rest of the
//! run, so a model with thousands of pending events stays O(log n). The
//! payloads sit in a slab whose free slots are reused, so nothing allocates
//! once a run has warmed the buffers up.

use crate::actor::{ActorId, TimeUs};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

mod insert;
use insert::Mode;

/// Pending events beyond which the sorted array gives way to a heap: a push
/// moves at most this many keys there.
pub(super) const SORTED_MAX: usize = 64;

/// Keys the sorted buffer holds: twice [`SORTED_MAX`], so that when a push
/// finds the tail at the end, the pending keys, at most half of it, move to
/// [`FRONT_ROOM`] once and leave room for many pushes again. A power
/// of two, so that an index masked with `SORTED_CAP - 1` needs no bounds check.
const SORTED_CAP: usize = 2 * SORTED_MAX;
const _: () = assert!(SORTED_CAP.is_power_of_two());

/// The keys a push in a deep run looks at and moves with no branch on their
/// times: the last `WINDOW` before the tail are searched for the new key's
/// place, and a block of `WINDOW` keys moves one step back from there. One
/// that goes before more than `WINDOW` - 1 later keys takes the loops of
/// [`EventQueue::insert_by_loops`], out of line. 8 measured faster on chain
/// than 16 (docs/performance.md, third session, builds C and E).
const WINDOW: usize = 8;

/// The buffers' length: the block a push moves may reach `WINDOW` slots past
/// the tail, which is below [`SORTED_CAP`].
const SORTED_LEN: usize = SORTED_CAP + WINDOW;

/// Where the sorted keys start in an empty queue and after a compaction:
/// room for keys to move towards the front. At most [`SORTED_MAX`] - 1 keys
/// are pending when a push compacts, so the tail stays clear of the end.
/// The `WINDOW` slots below it hold time 0 from then on (see `times`).
const FRONT_ROOM: usize = SORTED_MAX / 2;
const _: () = assert!(FRONT_ROOM + SORTED_MAX < SORTED_CAP && FRONT_ROOM > WINDOW);

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
    /// While the run has few pending events: the times of the pending keys
    /// in `times[head..tail]`, earliest first, and their slab indices beside
    /// them in `indices`, so that the next event is at `head`. Ties keep the
    /// order they were pushed in, so the sequence numbers need not be kept:
    /// the order of the buffer is the (time, seq) order.
    ///
    /// The `WINDOW` slots below `head` always hold time 0, not later than
    /// any key: a push counts the keys later than its own among the last
    /// `WINDOW` slots, whichever of them are pending, with no branch. A pop
    /// writes 0 where it took a key; a push at the front, a compaction and
    /// [`clear`](Self::clear) write 0 where `head` comes to lie above.
    times: Box<[TimeUs; SORTED_LEN]>,
    indices: Box<[u32; SORTED_LEN]>,
    head: usize,
    tail: usize,
    /// Once it had more than [`SORTED_MAX`]: a heap, until the run ends.
    heap: BinaryHeap<Slot>,
    in_heap: bool,
    slab: Vec<EventKind<M, T>>,
    free: Vec<u32>,
    /// This run's way of inserting.
    mode: Mode,
    /// Pushes into the sorted buffer while the mode was [`Mode::Measure`],
    /// and the sum of the keys pending at each: their ratio, the mean depth,
    /// chooses the mode that stays. Over several runs, not one, so that a
    /// run's length does not decide it.
    sorted_pushes: u64,
    pending_at_pushes: u64,
    /// The sequence number of this run's last push, to check in debug
    /// builds that they grow, as [`push`](Self::push) requires.
    #[cfg(debug_assertions)]
    last_seq: Option<u64>,
}

impl<M, T> EventQueue<M, T> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            times: Box::new([0; SORTED_LEN]),
            indices: Box::new([0; SORTED_LEN]),
            head: FRONT_ROOM,
            tail: FRONT_ROOM,
            heap: BinaryHeap::new(),
            in_heap: false,
            slab: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
            mode: Mode::Measure,
            sorted_pushes: 0,
            pending_at_pushes: 0,
            #[cfg(debug_assertions)]
            last_seq: None,
        }
    }

    /// Empties the queue for a new run, in the [`Mode`] the runs before
    /// settled ([`settle_mode`](Self::settle_mode)).
    pub fn clear(&mut self) {
        self.restart_at_front_room();
        self.heap.clear();
        self.in_heap = false;
        self.slab.clear();
        self.free.clear();
        #[cfg(debug_assertions)]
        {
            self.last_seq = None;
        }
        self.settle_mode();
    }

    /// Puts `head` and `tail` at [`FRONT_ROOM`], with the `WINDOW` slots
    /// below it at time 0: they may hold an earlier run's keys.
    fn restart_at_front_room(&mut self) {
        self.times[FRONT_ROOM - WINDOW..FRONT_ROOM].fill(0);
        (self.head, self.tail) = (FRONT_ROOM, FRONT_ROOM);
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
            (self.head < self.tail).then(|| self.times[self.head & (SORTED_CAP - 1)])
        }
    }

    /// Queues `kind` at `time_us`; `seq` must be larger than that of every
    /// event pushed before it in this run (the engine counts pushes): the
    /// buffer keeps no sequence numbers, so a tie goes after the keys
    /// pending, and a switch to the heap numbers the keys by rank.
    #[inline(always)]
    pub fn push(&mut self, time_us: TimeUs, seq: u64, kind: EventKind<M, T>) {
        #[cfg(debug_assertions)]
        {
            let last = self.last_seq.replace(seq);
            debug_assert!(
                last.is_none_or(|last| seq > last),
                "sequence numbers grow with every push: {seq} after {last:?}"
            );
        }
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
        if self.in_heap {
            self.heap.push(Slot {
                time_us,
                seq,
                index,
            });
            return;
        }
        if self.tail - self.head == SORTED_MAX {
            self.switch_to_heap();
            self.heap.push(Slot {
                time_us,
                seq,
                index,
            });
            return;
        }
        self.insert_sorted(time_us, index);
    }

    /// Moves the pending keys into the heap, for the rest of the run. Their
    /// sequence numbers are their ranks in the buffer: the buffer's order
    /// is the (time, seq) order, and `seq` of every later push is larger
    /// than the count of the pushes before it, so every tie orders as it
    /// would have with the real numbers.
    #[cold]
    #[inline(never)]
    fn switch_to_heap(&mut self) {
        let (head, tail) = (self.head, self.tail);
        self.heap.extend((head..tail).map(|i| Slot {
            time_us: self.times[i],
            seq: (i - head) as u64,
            index: self.indices[i],
        }));
        self.in_heap = true;
        self.restart_at_front_room();
    }

    /// Moves the pending keys to the front of the buffer: at most
    /// [`SORTED_MAX`] of them, once per as many pops at least.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        let (head, tail) = (self.head, self.tail);
        self.times.copy_within(head..tail, FRONT_ROOM);
        self.indices.copy_within(head..tail, FRONT_ROOM);
        self.times[FRONT_ROOM - WINDOW..FRONT_ROOM].fill(0);
        self.tail = tail - head + FRONT_ROOM;
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
                let s = Slot {
                    time_us: self.times[i],
                    seq: 0,
                    index: self.indices[i],
                };
                if check(&s) {
                    self.times[kept] = s.time_us;
                    self.indices[kept] = s.index;
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
            if self.times[self.head & (SORTED_CAP - 1)] >= limit_us {
                return None;
            }
            self.take_head()
        };
        Some(self.due(slot))
    }

    /// The sorted buffer's head, which is there, moved past; its slot holds
    /// time 0 from now on (see `times`). An emptied buffer stays where it
    /// is: the next push goes at the same place, and a compaction makes room
    /// when the tail reaches the end.
    #[inline(always)]
    fn take_head(&mut self) -> Slot {
        let at = self.head & (SORTED_CAP - 1);
        let slot = Slot {
            time_us: self.times[at],
            seq: 0,
            index: self.indices[at],
        };
        self.times[at] = 0;
        self.head += 1;
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
