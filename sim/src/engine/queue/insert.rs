//! How a push finds its place in the sorted buffer: the [`Mode`] a queue
//! takes from how deep its first runs went, the loops of a shallow run and
//! the branch-free search and block move of a deep one.

use super::{EventQueue, SORTED_CAP, WINDOW};
use crate::actor::TimeUs;

/// The mean number of keys pending at a push, over a queue's first runs,
/// above which its later runs search the window ([`Mode::Deep`]).
/// Measured at a push (2,000 runs each): chain 9.5 and contention 17.8,
/// whose pushes land at random depths where a loop's exit mispredicts;
/// messaging 6.0, mostly deliveries put before timers late in the queue,
/// where the search cost more than it saved (docs/performance.md, third
/// session, build C); payment 2.1 and HTTP 2.3.
pub(super) const DEEP_MEAN_PENDING: u64 = 8;

/// Pushes a queue counts ([`Mode::Measure`]) before its next run takes the
/// mode that stays: a few dozen runs of any model.
pub(super) const MEASURED_PUSHES: u64 = 4096;

/// How a push finds its place, fixed for a whole run (by `clear`) so that
/// the branch on it is always predicted. Every mode pops in (time, seq)
/// order: the mode changes the speed, never the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// A new queue's first runs: as [`Mode::Shallow`], and each push counts
    /// the keys pending, out of line, until [`MEASURED_PUSHES`].
    Measure,
    /// Few keys pending: [`EventQueue::insert_by_loops`].
    Shallow,
    /// Many keys pending: [`EventQueue::insert_by_search`].
    Deep,
}

impl<M, T> EventQueue<M, T> {
    /// Once the runs before have made [`MEASURED_PUSHES`], chooses the mode
    /// of every run from now on by how deep the queue ran in them (called
    /// by `clear`).
    pub(super) fn settle_mode(&mut self) {
        if self.mode == Mode::Measure && self.sorted_pushes >= MEASURED_PUSHES {
            self.mode = if self.pending_at_pushes > DEEP_MEAN_PENDING * self.sorted_pushes {
                Mode::Deep
            } else {
                Mode::Shallow
            };
        }
    }

    /// Puts the key (`time_us`, `index`) in the sorted buffer after every
    /// key not later than it, in the run's mode.
    #[inline(always)]
    pub(super) fn insert_sorted(&mut self, time_us: TimeUs, index: u32) {
        if self.tail == SORTED_CAP {
            self.compact();
        }
        match self.mode {
            Mode::Shallow => self.insert_by_loops(time_us, index),
            Mode::Deep => self.insert_by_search(time_us, index),
            Mode::Measure => self.insert_counted(time_us, index),
        }
    }

    /// [`insert_sorted`](Self::insert_sorted) in a deep run.
    #[inline(always)]
    fn insert_by_search(&mut self, time_us: TimeUs, index: u32) {
        let tail = self.tail;
        // The new event's sequence number is the largest so far, so a key
        // is later than it exactly when its time is. The keys later than it
        // are the last ones; those not later are found among the last
        // `WINDOW` slots (the slots below `head` hold time 0, never later)
        // by a search with no branch: each step adds its half or 0 as the
        // key it looks at is later or not, where a loop that stops at the
        // new key's place mispredicts wherever the random time puts it.
        let window: &[TimeUs; WINDOW] = self.times[tail - WINDOW..tail]
            .try_into()
            .expect("`tail` is at least `WINDOW`");
        let later = WINDOW - not_later_than(window, time_us);
        if later < WINDOW {
            self.move_block(tail - later, time_us, index);
        } else {
            self.insert_far(time_us, index);
        }
    }

    /// Puts the key at `at`, before the keys from there to the tail: the
    /// block of `WINDOW` keys from `at` moves one step back, the later keys
    /// and whatever lies past the tail, whose slots are free, in fixed-size
    /// copies with no loop. `at + WINDOW` is at most `tail + WINDOW` - 1,
    /// inside `SORTED_LEN`.
    #[inline(always)]
    fn move_block(&mut self, at: usize, time_us: TimeUs, index: u32) {
        let times: [TimeUs; WINDOW] = self.times[at..at + WINDOW].try_into().expect("in range");
        self.times[at + 1..at + 1 + WINDOW].copy_from_slice(&times);
        let indices: [u32; WINDOW] = self.indices[at..at + WINDOW].try_into().expect("in range");
        self.indices[at + 1..at + 1 + WINDOW].copy_from_slice(&indices);
        self.times[at] = time_us;
        self.indices[at] = index;
        self.tail += 1;
    }

    /// [`insert_by_loops`](Self::insert_by_loops) out of line, for a deep
    /// run's key earlier than the last `WINDOW` pending ones.
    #[inline(never)]
    fn insert_far(&mut self, time_us: TimeUs, index: u32) {
        self.insert_by_loops(time_us, index);
    }

    /// [`insert_by_loops`](Self::insert_by_loops) in a queue's first runs,
    /// counting the keys pending; out of line, as it is rare.
    #[inline(never)]
    fn insert_counted(&mut self, time_us: TimeUs, index: u32) {
        self.sorted_pushes += 1;
        self.pending_at_pushes += (self.tail - self.head) as u64;
        self.insert_by_loops(time_us, index);
    }

    /// [`insert_sorted`](Self::insert_sorted) in a shallow run, or for a key
    /// earlier than the last `WINDOW` pending ones: the latest key so far
    /// is appended after one comparison; otherwise the keys on the new
    /// one's shorter side move by one, by the middle key's time (a delivery
    /// due before a dozen pending timers moves the few keys before it one
    /// step to the front).
    #[inline(always)]
    fn insert_by_loops(&mut self, time_us: TimeUs, index: u32) {
        // `tail` < `SORTED_CAP`: a full buffer was compacted before. The
        // masks change no index, they only spare the bounds checks.
        const MASK: usize = SORTED_CAP - 1;
        let (head, tail) = (self.head, self.tail);
        if tail == head || self.times[(tail - 1) & MASK] <= time_us {
            self.times[tail & MASK] = time_us;
            self.indices[tail & MASK] = index;
            self.tail = tail + 1;
            return;
        }
        let mid_us = self.times[((head + tail) / 2) & MASK];
        if head > WINDOW && time_us < mid_us {
            // One bounds check for the window the keys move in, none per key
            // moved: the loop's range proves every index.
            let times = &mut self.times[head - 1..tail];
            let indices = &mut self.indices[head - 1..tail];
            let mut at = 0;
            for i in 1..times.len() {
                if times[i] > time_us {
                    break;
                }
                times[i - 1] = times[i];
                indices[i - 1] = indices[i];
                at = i;
            }
            times[at] = time_us;
            indices[at] = index;
            self.head = head - 1;
            // The slot that came to lie `WINDOW` below `head`.
            self.times[(head - 1 - WINDOW) & MASK] = 0;
            return;
        }
        let times = &mut self.times[head..tail + 1];
        let indices = &mut self.indices[head..tail + 1];
        let mut at = times.len() - 1;
        for i in (0..at).rev() {
            if times[i] <= time_us {
                break;
            }
            times[i + 1] = times[i];
            indices[i + 1] = indices[i];
            at = i;
        }
        times[at] = time_us;
        indices[at] = index;
        self.tail = tail + 1;
    }
}

/// How many keys of the sorted `window` are not later than `time_us`, by
/// three halving steps and a last look, each an addition of 0 or its step
/// (LLVM makes each a compare and an add, no jump): the steps find how many
/// of the first seven are not later, and the eighth is not later only
/// when all seven are not, so its look adds the last one.
#[inline(always)]
pub(super) fn not_later_than(window: &[TimeUs; WINDOW], time_us: TimeUs) -> usize {
    const _: () = assert!(WINDOW == 8, "three steps and a last look search 8 keys");
    let mut n = 4 * usize::from(window[3] <= time_us);
    // The masks change no index (at most 5 and 6), they only spare the
    // bounds checks.
    n += 2 * usize::from(window[(n + 1) & (WINDOW - 1)] <= time_us);
    n += usize::from(window[n & (WINDOW - 1)] <= time_us);
    n + usize::from(window[WINDOW - 1] <= time_us)
}
