//! Sweeps over seed ranges, on as many threads as asked, with a result that
//! does not depend on the number of threads: every seed runs, and results are
//! merged with order-independent operations (sums, minimum failing seed, unions).

use crate::engine::{
    Counter, FaultCounts, Limit, Merge, Model, Oracle, Outcome, RunReport, Sim, Violation,
};
use crate::situation::SituationSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// The lowest failing seed and what it gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// What it gave: a violation or a panic.
    pub outcome: Outcome,
    /// Engine events of its run.
    pub events: u64,
}

/// Counts over a set of runs: the one tally that sweeps, exhaustive search,
/// shards and merges all add up, with order-independent operations only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runs counted.
    pub schedules: u64,
    /// Engine events over all of them.
    pub events: u64,
    /// Runs that held.
    pub holds: u64,
    /// Runs that broke an invariant.
    pub violations: u64,
    /// Runs that hit a limit.
    pub inconclusive: u64,
    /// Runs in which a model panicked.
    pub panics: u64,
    /// Faults fired over all runs.
    pub faults: FaultCounts,
    /// Union of the situations reached by all runs.
    pub situations: SituationSet,
    /// Runs that reached each situation (index = situation id).
    pub situation_runs: Vec<u64>,
    /// The oracle's counters, added up (see [`Oracle::counters`]).
    pub counter_kinds: &'static [Counter],
    /// The counters' slots, laid end to end in the order of `counter_kinds`.
    pub counters: Vec<u64>,
}

impl Tally {
    /// An empty tally for the counters of `oracle`.
    pub fn for_oracle(oracle: &impl Oracle) -> Tally {
        let kinds = oracle.counters();
        Tally {
            counter_kinds: kinds,
            counters: vec![0; Counter::total_len(kinds)],
            ..Tally::default()
        }
    }

    /// Counts one run and the oracle's numbers for it (a panicked run leaves
    /// the oracle half-way, so its numbers are not added).
    pub fn add_counted(&mut self, r: &RunReport, oracle: &impl Oracle) {
        self.add(r);
        if !matches!(r.outcome, Outcome::Panicked(_)) {
            let kinds = oracle.counters();
            if self.counter_kinds.len() != kinds.len() {
                self.counter_kinds = kinds;
                self.counters = vec![0; Counter::total_len(kinds)];
            }
            oracle.count(&r.outcome, &mut self.counters);
        }
    }

    /// The slots of the counter named `name`, if the oracle has one.
    pub fn counter(&self, name: &str) -> Option<&[u64]> {
        let mut at = 0;
        for c in self.counter_kinds {
            if c.name == name {
                return self.counters.get(at..at + c.len);
            }
            at += c.len;
        }
        None
    }

    /// Counts one run.
    pub fn add(&mut self, r: &RunReport) {
        self.schedules += 1;
        self.events += r.events;
        self.faults.add(&r.faults);
        self.situations.union(&r.situations);
        for id in r.situations.iter() {
            let i = usize::from(id);
            if self.situation_runs.len() <= i {
                self.situation_runs.resize(i + 1, 0);
            }
            self.situation_runs[i] += 1;
        }
        match r.outcome {
            Outcome::Holds => self.holds += 1,
            Outcome::Inconclusive(_) => self.inconclusive += 1,
            Outcome::Violation(_) => self.violations += 1,
            Outcome::Panicked(_) => self.panics += 1,
        }
    }

    /// Combines two disjoint tallies; the result is the same in any order.
    pub fn merge(&mut self, o: &Tally) {
        self.schedules += o.schedules;
        self.events += o.events;
        self.holds += o.holds;
        self.violations += o.violations;
        self.inconclusive += o.inconclusive;
        self.panics += o.panics;
        self.faults.add(&o.faults);
        self.situations.union(&o.situations);
        if self.situation_runs.len() < o.situation_runs.len() {
            self.situation_runs.resize(o.situation_runs.len(), 0);
        }
        for (a, b) in self.situation_runs.iter_mut().zip(&o.situation_runs) {
            *a += b;
        }
        if self.counter_kinds.is_empty() {
            self.counter_kinds = o.counter_kinds;
        }
        if self.counters.len() < o.counters.len() {
            self.counters.resize(o.counters.len(), 0);
        }
        let merges = self
            .counter_kinds
            .iter()
            .flat_map(|c| std::iter::repeat_n(c.merge, c.len));
        for ((a, b), m) in self
            .counters
            .iter_mut()
            .zip(&o.counters)
            .zip(merges.chain(std::iter::repeat(Merge::Sum)))
        {
            match m {
                Merge::Sum => *a += b,
                Merge::Max => *a = (*a).max(*b),
            }
        }
    }

    /// Runs that failed: violations and model panics.
    pub fn failing(&self) -> u64 {
        self.violations + self.panics
    }

    /// The counts add up: every schedule has exactly one outcome.
    pub fn consistent(&self) -> bool {
        self.holds
            .checked_add(self.violations)
            .and_then(|n| n.checked_add(self.inconclusive))
            .and_then(|n| n.checked_add(self.panics))
            == Some(self.schedules)
    }
}

/// What a sweep found, identical for any number of threads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Counts over every seed that ran.
    pub tally: Tally,
    /// The lowest failing seed, if any.
    pub first_failure: Option<Failure>,
    /// The lowest inconclusive seed, for a repro when nothing failed.
    pub first_inconclusive: Option<(u64, Limit)>,
    /// The lowest seed whose model panicked, even when a lower seed is a
    /// violation: a panic is a bug (or an external program that broke its
    /// protocol), and its seed must be reported, not hidden behind a finding.
    pub first_panic: Option<(u64, String)>,
    /// True when the sweep was stopped before every seed ran. The seeds that
    /// ran are then exactly the first `schedules` of the range swept
    /// ([`SeedRange::first`]).
    pub interrupted: bool,
}

impl Summary {
    /// Counts one run of `seed`, keeping the lowest failing and inconclusive
    /// seeds, and the oracle's numbers for it.
    pub fn add(&mut self, seed: u64, r: &RunReport, oracle: &impl Oracle) {
        self.tally.add_counted(r, oracle);
        match &r.outcome {
            Outcome::Holds => {}
            Outcome::Inconclusive(limit) => {
                if self.first_inconclusive.is_none_or(|m| seed < m.0) {
                    self.first_inconclusive = Some((seed, *limit));
                }
            }
            Outcome::Violation(_) | Outcome::Panicked(_) => {
                if let Outcome::Panicked(m) = &r.outcome {
                    if self.first_panic.as_ref().is_none_or(|p| seed < p.0) {
                        self.first_panic = Some((seed, m.clone()));
                    }
                }
                if self.first_failure.as_ref().is_none_or(|m| seed < m.seed) {
                    self.first_failure = Some(Failure {
                        seed,
                        outcome: r.outcome.clone(),
                        events: r.events,
                    });
                }
            }
        }
    }

    /// Combines two disjoint sweeps; the result is the same in any order.
    pub fn merge(&mut self, o: Summary) {
        self.tally.merge(&o.tally);
        self.interrupted |= o.interrupted;
        if let Some(f) = o.first_failure {
            if self.first_failure.as_ref().is_none_or(|m| f.seed < m.seed) {
                self.first_failure = Some(f);
            }
        }
        if let Some(i) = o.first_inconclusive {
            if self.first_inconclusive.is_none_or(|m| i.0 < m.0) {
                self.first_inconclusive = Some(i);
            }
        }
        if let Some(p) = o.first_panic {
            if self.first_panic.as_ref().is_none_or(|m| p.0 < m.0) {
                self.first_panic = Some(p);
            }
        }
    }

    /// The lowest failing seed's violation (`None` when nothing failed or it was a panic).
    pub fn violation(&self) -> Option<&Violation> {
        match &self.first_failure {
            Some(Failure {
                outcome: Outcome::Violation(v),
                ..
            }) => Some(v),
            _ => None,
        }
    }
}

/// Seeds to run: `start..end`, optionally one shard of them.
///
/// `end` is exclusive and a `u128` so that a range can hold the last seed,
/// `u64::MAX`, whose exclusive end is 2^64. Only the boundaries are 128-bit:
/// a sweep counts and hands out seeds as `u64` offsets from `start`. An end
/// past 2^64 reads as 2^64 (no seed lies beyond it), and an end at or below
/// `start` makes the range empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    /// The first seed.
    pub start: u64,
    /// One past the last seed: at most 2^64.
    pub end: u128,
}

/// The exclusive end of a range holding the last seed.
const PAST_LAST_SEED: u128 = 1 << 64;

/// `A..B` as `--seeds` takes it, and a range that holds the last seed as
/// `A..=18446744073709551615`: the exclusive end, 2^64, is no seed a reader
/// can type or look up.
impl std::fmt::Display for SeedRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.end > u128::from(u64::MAX) {
            write!(f, "{}..={}", self.start, u64::MAX)
        } else {
            write!(f, "{}..{}", self.start, self.end)
        }
    }
}

impl SeedRange {
    /// Seeds `start..=last`, both included.
    pub fn inclusive(start: u64, last: u64) -> SeedRange {
        SeedRange {
            start,
            end: u128::from(last) + 1,
        }
    }

    /// How many seeds. A tally counts runs in a `u64`, so a range of all
    /// 2^64 seeds counts, and runs, its first 2^64 − 1.
    pub fn len(&self) -> u64 {
        let n = self
            .end
            .min(PAST_LAST_SEED)
            .saturating_sub(u128::from(self.start));
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// No seed at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last seed, if the range holds one.
    pub fn last(&self) -> Option<u64> {
        // start + len - 1 <= u64::MAX by the clamp in `len`.
        self.len().checked_sub(1).map(|n| self.start + n)
    }

    /// The exclusive end as a `u64`: `None` when it is 2^64, i.e. the range
    /// holds seed `u64::MAX`. What JSON writes as its `end` (then null).
    pub fn end_u64(&self) -> Option<u64> {
        u64::try_from(u128::from(self.start) + u128::from(self.len())).ok()
    }

    /// Whether `seed` is in the range.
    pub fn contains(&self, seed: u64) -> bool {
        seed >= self.start && seed - self.start < self.len()
    }

    /// The seeds in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u64> {
        let start = self.start;
        (0..self.len()).map(move |i| start + i)
    }

    /// The first `n` seeds (all of them if there are fewer): what an
    /// interrupted sweep ran.
    pub fn first(&self, n: u64) -> SeedRange {
        SeedRange {
            start: self.start,
            end: u128::from(self.start) + u128::from(n.min(self.len())),
        }
    }

    /// Shard `index` of `count`: contiguous and deterministic, together exactly the range.
    /// Computed in 128 bits, so it is exact for any range of `u64` seeds,
    /// the one holding `u64::MAX` among them.
    pub fn shard(&self, index: u64, count: u64) -> SeedRange {
        assert!(count > 0 && index < count, "shard {index}/{count}");
        let n = u128::from(self.len());
        let at = |i: u64| u128::from(self.start) + n * u128::from(i) / u128::from(count);
        // A shard's start is below the range's end (or is its start when it
        // is empty), so it is a seed.
        let start = u64::try_from(at(index)).expect("a shard starts at a seed or is empty");
        SeedRange {
            start,
            end: at(index + 1),
        }
    }
}

thread_local! {
    static INSIDE_MODEL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True while this thread runs model code under [`guarded`]. A panic hook can
/// stay quiet then: the panic becomes a reported failure with its seed.
pub fn inside_model() -> bool {
    INSIDE_MODEL.with(|c| c.get())
}

/// Runs `f`, turning a panic into `Err(message)`.
pub fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    let outer = INSIDE_MODEL.with(|c| c.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    INSIDE_MODEL.with(|c| c.set(outer));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into())
    })
}

/// Runs one seed, turning a panic inside a model into a reported failure.
pub fn run_guarded<M: Model>(sim: &mut Sim<M>, model: &M, seed: u64) -> RunReport {
    guarded(|| sim.run_seed(model, seed)).unwrap_or_else(RunReport::panicked)
}

const CHUNK: u64 = 256;

/// Runs every seed of `seeds` on `jobs` threads. `progress` is called with the
/// number of schedules finished so far (from worker threads); `stop` ends the
/// sweep early (Ctrl-C), and the summary then says it was interrupted.
pub fn explore<M: Model + Sync>(
    model: &M,
    seeds: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> Summary {
    sweep(model, seeds, jobs, stop, progress, false)
}

/// Like [`explore`], but stops taking new seeds once a run fails. Chunks of
/// seeds are taken in ascending order, and a chunk taken always finishes, so
/// the lowest failing seed is exact and the same for any number of threads;
/// the counts are not (they depend on how far other threads got), so callers
/// report the verdict and the seed only. What `verify` uses for ablations.
pub fn find_failure<M: Model + Sync>(
    model: &M,
    seeds: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
) -> Summary {
    sweep(model, seeds, jobs, stop, &|_| {}, true)
}

/// Whether a run that ended with `outcome` panicked once a stop was asked for: the stop may have
/// broken it off (Ctrl-C kills the external program the run waited for),
/// so it is counted as run but never named as the sweep's failure or
/// panic, lest its seed, lower than a failing seed another thread found
/// before the stop, hide that one. A panic the stop did not cause recurs
/// when the seeds are swept again.
pub(crate) fn broken_off_by_stop(outcome: &Outcome, stop: &AtomicBool) -> bool {
    matches!(outcome, Outcome::Panicked(_)) && stop.load(Ordering::Relaxed)
}

fn sweep<M: Model + Sync>(
    model: &M,
    seeds: SeedRange,
    jobs: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
    until_failure: bool,
) -> Summary {
    let jobs = jobs.max(1);
    // How far into the range the next chunk starts, as an offset from
    // `seeds.start`: it never passes `seeds.len()`, so neither it nor a seed
    // (`start + offset`, below 2^64) can wrap, also for a range that ends at
    // the last seed. Every chunk handed out runs to its end (`stop` is only
    // read between chunks), so the seeds that ran are always the first
    // `next` of the range, also after an interrupt.
    let len = seeds.len();
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let total = Mutex::new(Summary::default());
    let failed = AtomicBool::new(false);
    let worker = || {
        let mut sim = Sim::new(model);
        let mut local = Summary::default();
        loop {
            if stop.load(Ordering::Relaxed) {
                local.interrupted = true;
                break;
            }
            if until_failure && failed.load(Ordering::Relaxed) {
                break;
            }
            let claimed = next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < len).then(|| n.saturating_add(CHUNK).min(len))
            });
            let Ok(lo) = claimed else {
                break;
            };
            let hi = lo.saturating_add(CHUNK).min(len);
            for offset in lo..hi {
                let seed = seeds.start + offset;
                let r = run_guarded(&mut sim, model, seed);
                if broken_off_by_stop(&r.outcome, stop) {
                    local.tally.add_counted(&r, sim.oracle());
                } else {
                    local.add(seed, &r, sim.oracle());
                }
                if until_failure && r.outcome.is_failure() {
                    failed.store(true, Ordering::Relaxed);
                }
            }
            let finished = done.fetch_add(hi - lo, Ordering::Relaxed) + (hi - lo);
            progress(finished);
        }
        total
            .lock()
            .expect("no worker panics outside catch_unwind")
            .merge(local);
    };
    if jobs == 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(worker);
            }
        });
    }
    let mut summary = total.into_inner().expect("workers finished");
    // An interrupted sweep still reports only what ran; a complete one is never "interrupted".
    if summary.tally.schedules == len {
        summary.interrupted = false;
    }
    debug_assert_eq!(
        summary.tally.schedules,
        next.load(Ordering::Relaxed),
        "the seeds that ran are the first `next` of the range"
    );
    summary
}
#[cfg(test)]
mod tests {
    use super::SeedRange;

    const TOP: u128 = 1 << 64;

    #[test]
    fn shards_of_the_whole_u64_range_tile_it_without_overflow() {
        let all = SeedRange {
            start: 0,
            end: u128::from(u64::MAX),
        };
        let half = u128::from(u64::MAX / 2);
        assert_eq!(
            all.shard(0, 2),
            SeedRange {
                start: 0,
                end: half
            }
        );
        assert_eq!(
            all.shard(1, 2),
            SeedRange {
                start: u64::MAX / 2,
                end: u128::from(u64::MAX)
            }
        );
        let top = SeedRange {
            start: u64::MAX - 1,
            end: u128::from(u64::MAX),
        };
        assert_eq!(top.shard(0, 1), top);
        assert!(top.shard(0, 3).is_empty());
        assert_eq!(top.shard(2, 3), top);
    }

    #[test]
    fn a_range_can_hold_the_last_seed() {
        let r = SeedRange::inclusive(u64::MAX - 5, u64::MAX);
        assert_eq!(r.end, TOP);
        assert_eq!(r.len(), 6);
        assert_eq!(r.last(), Some(u64::MAX));
        assert_eq!(r.end_u64(), None);
        assert!(r.contains(u64::MAX) && !r.contains(u64::MAX - 6));
        let seeds: Vec<u64> = r.iter().collect();
        assert_eq!(seeds, (u64::MAX - 5..=u64::MAX).collect::<Vec<_>>());
        assert_eq!(r.first(2), SeedRange::inclusive(u64::MAX - 5, u64::MAX - 4));
        assert_eq!(r.first(99), r);
        // Shards tile it, the last one ending at 2^64.
        let shards: Vec<SeedRange> = (0..4).map(|i| r.shard(i, 4)).collect();
        assert_eq!(shards[0].start, r.start);
        assert_eq!(shards[3].end, TOP);
        for w in shards.windows(2) {
            assert_eq!(u128::from(w[1].start), w[0].end);
        }
        assert_eq!(shards.iter().map(SeedRange::len).sum::<u64>(), 6);
    }

    #[test]
    fn ends_past_the_last_seed_and_below_the_start_hold_no_extra_seeds() {
        let past = SeedRange {
            start: u64::MAX,
            end: TOP + 10,
        };
        assert_eq!(past.len(), 1);
        assert_eq!(past.last(), Some(u64::MAX));
        let backwards = SeedRange { start: 5, end: 3 };
        assert!(backwards.is_empty());
        assert_eq!(backwards.last(), None);
        assert_eq!(backwards.iter().count(), 0);
        // All 2^64 seeds count in a u64 as their first 2^64 - 1.
        let all = SeedRange { start: 0, end: TOP };
        assert_eq!(all.len(), u64::MAX);
        assert_eq!(all.last(), Some(u64::MAX - 1));
    }
}
