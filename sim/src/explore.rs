//! Sweeps over seed ranges, on as many threads as asked, with a result that
//! does not depend on the number of threads: every seed runs, and results are
//! merged with order-independent operations (sums, minimum failing seed, unions).

use crate::engine::{FaultCounts, Limit, Model, Outcome, Sim, Violation};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// The lowest failing seed and what it gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub seed: u64,
    pub outcome: Outcome,
    pub events: u64,
}

/// What a sweep found, identical for any number of threads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub schedules: u64,
    pub events: u64,
    pub holds: u64,
    pub violations: u64,
    pub inconclusive: u64,
    pub panics: u64,
    pub first_failure: Option<Failure>,
    /// The lowest inconclusive seed, for a repro when nothing failed.
    pub first_inconclusive: Option<(u64, Limit)>,
    pub faults: FaultCounts,
    /// Union of the situations reached by all runs.
    pub situations: u64,
    /// Runs that reached each situation (index = situation id).
    pub situation_runs: Vec<u64>,
    /// True when the sweep was stopped before every seed ran. The seeds that
    /// ran are then exactly `start..start + schedules` of the range swept.
    pub interrupted: bool,
}

impl Summary {
    /// Combines two disjoint sweeps; the result is the same in any order.
    pub fn merge(&mut self, o: Summary) {
        self.schedules += o.schedules;
        self.events += o.events;
        self.holds += o.holds;
        self.violations += o.violations;
        self.inconclusive += o.inconclusive;
        self.panics += o.panics;
        self.faults.add(&o.faults);
        self.situations |= o.situations;
        if self.situation_runs.len() < o.situation_runs.len() {
            self.situation_runs.resize(o.situation_runs.len(), 0);
        }
        for (a, b) in self.situation_runs.iter_mut().zip(o.situation_runs) {
            *a += b;
        }
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
    }

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub start: u64,
    pub end: u64,
}

impl SeedRange {
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Shard `index` of `count`: contiguous and deterministic, together exactly the range.
    /// Computed in 128 bits, so it is exact for any range of `u64` seeds.
    pub fn shard(&self, index: u64, count: u64) -> SeedRange {
        assert!(count > 0 && index < count, "shard {index}/{count}");
        let n = u128::from(self.len());
        let at = |i: u64| {
            let offset = n * u128::from(i) / u128::from(count);
            // offset <= n = end - start, so the sum stays within u64.
            self.start + u64::try_from(offset).expect("an offset within the range")
        };
        SeedRange {
            start: at(index),
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
pub fn run_guarded<M: Model>(sim: &mut Sim<M>, model: &M, seed: u64) -> crate::engine::RunReport {
    match guarded(|| sim.run_seed(model, seed)) {
        Ok(r) => r,
        Err(msg) => crate::engine::RunReport {
            outcome: Outcome::Panicked(msg),
            events: 0,
            end_time_us: 0,
            faults: FaultCounts::default(),
            situations: 0,
        },
    }
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
    let jobs = jobs.max(1);
    // The next seed to hand out; it never passes `seeds.end`, so it cannot
    // wrap at the top of u64. Every chunk handed out runs to its end (`stop`
    // is only read between chunks), so the seeds that ran are always the
    // contiguous range `seeds.start..next`, also after an interrupt.
    let next = AtomicU64::new(seeds.start);
    let done = AtomicU64::new(0);
    let total = Mutex::new(Summary::default());
    let worker = || {
        let mut sim = Sim::new(model);
        let mut local = Summary::default();
        loop {
            if stop.load(Ordering::Relaxed) {
                local.interrupted = true;
                break;
            }
            let claimed = next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < seeds.end).then(|| n.saturating_add(CHUNK).min(seeds.end))
            });
            let Ok(lo) = claimed else {
                break;
            };
            let hi = lo.saturating_add(CHUNK).min(seeds.end);
            for seed in lo..hi {
                let r = run_guarded(&mut sim, model, seed);
                local.schedules += 1;
                local.events += r.events;
                local.faults.add(&r.faults);
                local.situations |= r.situations;
                let mut bits = r.situations;
                while bits != 0 {
                    let i = bits.trailing_zeros() as usize;
                    if local.situation_runs.len() <= i {
                        local.situation_runs.resize(i + 1, 0);
                    }
                    local.situation_runs[i] += 1;
                    bits &= bits - 1;
                }
                match &r.outcome {
                    Outcome::Holds => local.holds += 1,
                    Outcome::Inconclusive(limit) => {
                        local.inconclusive += 1;
                        if local.first_inconclusive.is_none_or(|m| seed < m.0) {
                            local.first_inconclusive = Some((seed, *limit));
                        }
                    }
                    Outcome::Violation(_) | Outcome::Panicked(_) => {
                        if matches!(r.outcome, Outcome::Panicked(_)) {
                            local.panics += 1;
                        } else {
                            local.violations += 1;
                        }
                        if local.first_failure.as_ref().is_none_or(|m| seed < m.seed) {
                            local.first_failure = Some(Failure {
                                seed,
                                outcome: r.outcome.clone(),
                                events: r.events,
                            });
                        }
                    }
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
    if summary.schedules == seeds.len() {
        summary.interrupted = false;
    }
    debug_assert_eq!(
        summary.schedules,
        next.load(Ordering::Relaxed) - seeds.start,
        "the seeds that ran are seeds.start..next"
    );
    summary
}

#[cfg(test)]
mod tests {
    use super::SeedRange;

    #[test]
    fn shards_of_the_whole_u64_range_tile_it_without_overflow() {
        let all = SeedRange {
            start: 0,
            end: u64::MAX,
        };
        let half = u64::MAX / 2;
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
                start: half,
                end: u64::MAX
            }
        );
        let top = SeedRange {
            start: u64::MAX - 1,
            end: u64::MAX,
        };
        assert_eq!(top.shard(0, 1), top);
        assert!(top.shard(0, 3).is_empty());
        assert_eq!(top.shard(2, 3), top);
    }
}
