//! The floor the engine is measured against: an event loop with the engine's
//! queue discipline and choice source but no actors, no network and no oracle.
//!
//! `idemsim bench` runs it in the same process as the real sweep, with the same
//! number of events per schedule and the same number of threads, so the ratio
//! between the two is the engine's own overhead on this machine, not a number
//! copied from elsewhere. Timing stays in the CLI: nothing here reads a clock.

use crate::choice::Choices;
use crate::explore::SeedRange;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Events pending at once in the bare loop, about what a payment run keeps queued.
pub const BARE_PENDING: u64 = 8;

/// What the bare loop did; `checksum` keeps the optimiser from deleting the work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BareTotals {
    /// Seeds run.
    pub schedules: u64,
    /// Events popped in all.
    pub events: u64,
    /// A sum over the work done, printed so the work cannot be optimised away.
    pub checksum: u64,
}

/// One thread's share: for every seed, a fresh choice source, a few pending
/// events, then `events_per_schedule` steps of pop, one draw, a branch on the
/// payload, push.
// Never inlined, so that an instruction count (scripts/instructions.sh) finds it.
#[inline(never)]
pub fn bare_loop(seeds: SeedRange, events_per_schedule: u64) -> BareTotals {
    assert!(events_per_schedule > 0, "a schedule has at least one event");
    let mut heap: BinaryHeap<Reverse<(u64, u64, u64)>> =
        BinaryHeap::with_capacity(BARE_PENDING as usize * 2);
    let mut choices = Choices::new();
    let mut totals = BareTotals::default();
    for seed in seeds.iter() {
        heap.clear();
        choices.start_random(seed, 1, false);
        let mut seq = 0u64;
        for payload in 0..BARE_PENDING {
            heap.push(Reverse((choices.choose(0, 1000), seq, payload)));
            seq += 1;
        }
        for _ in 0..events_per_schedule {
            let Reverse((time_us, _, payload)) = heap.pop().expect("the loop keeps events pending");
            let draw = choices.choose(0, 1000);
            // A branch on the payload, as an engine dispatches on the event's kind.
            let next = if payload & 1 == 0 {
                payload.wrapping_add(draw)
            } else {
                payload ^ draw
            };
            totals.checksum = totals.checksum.wrapping_add(next);
            heap.push(Reverse((time_us + draw + 1, seq, next)));
            seq += 1;
        }
        totals.schedules += 1;
        totals.events += events_per_schedule;
    }
    debug_assert_eq!(totals.schedules, seeds.len());
    totals
}

/// The bare loop over `seeds` on `jobs` threads, split into contiguous shards.
pub fn bare_loop_parallel(seeds: SeedRange, events_per_schedule: u64, jobs: usize) -> BareTotals {
    let jobs = jobs.max(1) as u64;
    let parts: Vec<BareTotals> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|i| {
                let shard = seeds.shard(i, jobs);
                s.spawn(move || bare_loop(shard, events_per_schedule))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("the bare loop does not panic"))
            .collect()
    });
    parts.iter().fold(BareTotals::default(), |a, b| BareTotals {
        schedules: a.schedules + b.schedules,
        events: a.events + b.events,
        checksum: a.checksum.wrapping_add(b.checksum),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_loop_counts_and_is_deterministic_across_threads() {
        let seeds = SeedRange { start: 0, end: 50 };
        let one = bare_loop(seeds, 20);
        assert_eq!(one.schedules, 50);
        assert_eq!(one.events, 1000);
        let two = bare_loop_parallel(seeds, 20, 2);
        assert_eq!(one, two);
    }
}
