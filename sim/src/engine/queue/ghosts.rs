//! Ghosts: the timers moved in the queue in place (set again while
//! pending) that the queue would once have kept at their old time and
//! popped for nothing.
//!
//! Such a pop did one thing: it moved the clock to the timer's time (within
//! the time limit). Every later event moves the clock further, so that
//! matters only where a run ends without one: when the queue runs dry (the
//! clock reaches every ghost), at the time limit (every ghost before the
//! event past it) and at the step limit (every ghost before the event it
//! stopped at). A ghost also counted among the pending events the queue
//! limit is about until its time. Both are answered here from the keys, so
//! every run ends at the time it ended at before.

use crate::actor::TimeUs;

/// Ghosts before a full list is pruned of those that no longer matter.
const ROOM: usize = 32;

/// The (time, seq) keys of timers moved in place that may still matter.
pub(in crate::engine) struct Ghosts {
    keys: Vec<(TimeUs, u64)>,
}

impl Ghosts {
    pub fn new() -> Self {
        Ghosts {
            keys: Vec::with_capacity(ROOM),
        }
    }

    pub fn clear(&mut self) {
        self.keys.clear();
    }

    /// Ghosts kept: at least those not yet passed.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Keeps `key`, moved away from while the event last popped was `last_key`
    /// and the clock read `now_us`. A full list first drops the ghosts
    /// passed and no later than the clock, which can no longer move it.
    #[inline(always)]
    pub fn add(&mut self, key: (TimeUs, u64), last_key: Option<(TimeUs, u64)>, now_us: TimeUs) {
        if self.keys.len() == self.keys.capacity() {
            self.prune(last_key, now_us);
        }
        self.keys.push(key);
    }

    #[cold]
    #[inline(never)]
    fn prune(&mut self, last_key: Option<(TimeUs, u64)>, now_us: TimeUs) {
        self.keys
            .retain(|&k| !(Some(k) < last_key && k.0 <= now_us));
    }

    /// The latest time within `max_time_us` of the ghosts before `before`
    /// (the event a run stopped at, or `Some((TimeUs::MAX, u64::MAX))` for
    /// all), which popping would have moved the clock to; 0 for none.
    pub fn clock_before(&self, before: Option<(TimeUs, u64)>, max_time_us: TimeUs) -> TimeUs {
        self.keys
            .iter()
            .filter(|&&k| Some(k) < before && k.0 <= max_time_us)
            .map(|k| k.0)
            .max()
            .unwrap_or(0)
    }

    /// Ghosts after `last_key`: timers the old queue would still hold.
    pub fn pending_after(&self, last_key: Option<(TimeUs, u64)>) -> usize {
        self.keys.iter().filter(|&&k| Some(k) > last_key).count()
    }

    /// Forgets every ghost, as the queue limit drops the void events it
    /// holds, and gives the latest time within `max_time_us` of those after
    /// `last_key` (0 for none), which the run's end then reaches.
    pub fn drain_pending(
        &mut self,
        last_key: Option<(TimeUs, u64)>,
        max_time_us: TimeUs,
    ) -> TimeUs {
        let latest = self
            .keys
            .iter()
            .filter(|&&k| Some(k) > last_key && k.0 <= max_time_us)
            .map(|k| k.0)
            .max()
            .unwrap_or(0);
        self.keys.clear();
        latest
    }
}
