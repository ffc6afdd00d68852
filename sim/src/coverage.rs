//! Coverage-guided search: the fuzzer's answer to bugs that need several
//! faults to line up, which seeds find once in a million runs.
//!
//! A run is a record (decision values per stream), and every list of numbers
//! is a valid run, so records can be mutated the way AFL mutates inputs. What
//! counts as *coverage* is what a run reached, as numbers:
//! - each situation an actor reported;
//! - each distinct end state of an operation, from the oracle
//!   ([`Oracle::features`]: its ending, how many attempts, requests per layer
//!   and effects, what the client was told);
//! - how many faults fired on each decision stream (0, 1, 2, 3, then by
//!   powers of two), the analogue of AFL's hit-count buckets;
//! - the outcome and the fault totals, in buckets.
//!
//! The search runs a few seeds as a sweep would, keeps every run that reached
//! a number no earlier run did, and then mutates the kept records, those
//! mutated least first and, among them, the newest: a run that got somewhere
//! new is where the next fault most likely pays off. A mutation stacks one to
//! four edits: set a decision to its largest value (a loss, a duplicate, a
//! crash, the longest delay), set one to zero, to a random value, nudge it,
//! cut a stream short, take a stream from another kept record, or set the
//! swarm mix to its maxima so every fault may happen everywhere. The child is
//! replayed, values that no longer fit are clamped, and what it actually
//! decided becomes its record.
//!
//! Everything is drawn from a generator seeded by the search's seed, and the
//! features live in an ordered set: a seed, a budget and a scenario give the
//! same search, schedule for schedule. One thread: the search is sequential
//! by nature (each child depends on what came before).

use crate::choice::{Record, StreamLayout};
use crate::engine::{swarm_max_decisions, Model, Oracle, Outcome, RunReport, Sim, Source};
use crate::explore::{guarded, Summary};
use crate::trace::NoTrace;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

/// How a search runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoverageConfig {
    /// Seeds the warm-up runs and the mutations: the same seed, the same search.
    pub seed: u64,
    /// Schedules at most, warm-up included.
    pub budget: u64,
    /// Plain seeds run first (`seed`, `seed + 1`, ...), to start the corpus.
    pub warmup: u64,
}

impl CoverageConfig {
    /// A search seeded by `seed` that runs at most `budget` schedules.
    pub fn new(seed: u64, budget: u64) -> Self {
        CoverageConfig {
            seed,
            budget,
            warmup: WARMUP,
        }
    }
}

/// Plain seeds before mutation starts.
pub const WARMUP: u64 = 32;
/// Children per pick of a parent.
const ENERGY: u32 = 8;

/// What a search found.
#[derive(Clone, Debug, Default)]
pub struct CoverageReport {
    /// Every schedule it ran. A failure's `seed` is the schedule's index in
    /// the search (0-based), not a seed: replay it from `failing`.
    pub summary: Summary,
    /// The first failing schedule's decisions, normalised; replays it exactly.
    /// `None` when that schedule made more decisions than a record holds
    /// ([`MAX_RECORDED_VALUES`](crate::choice::MAX_RECORDED_VALUES)): the
    /// failure is still counted in `summary` and the search still stops
    /// there (it found what it looks for), but a record cut short would
    /// replay another run, so none is given.
    pub failing: Option<Record>,
    /// Records kept for reaching something new.
    pub corpus: usize,
    /// Distinct coverage numbers reached.
    pub features: usize,
}

/// SplitMix64: small, fast and fixed, for the search's own choices (never a run's).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A value in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A count as AFL buckets hit counts: exact up to 3, then by powers of two.
fn bucket(n: u64) -> u64 {
    if n < 4 {
        n
    } else {
        2 + u64::from(n.ilog2())
    }
}

/// The coverage numbers of the run `sim` just made, whose decisions are `record`.
fn features<M: Model>(r: &RunReport, sim: &Sim<M>, record: &Record, out: &mut Vec<u64>) {
    out.clear();
    let tagged = |tag: u64, v: u64| mix((tag << 56) ^ v);
    for id in r.situations.iter() {
        out.push(tagged(1, u64::from(id)));
    }
    let outcome = match &r.outcome {
        Outcome::Holds => 0,
        Outcome::Inconclusive(l) => 1 + *l as u64,
        Outcome::Violation(_) => 8,
        Outcome::Panicked(_) => 9,
    };
    out.push(tagged(2, outcome));
    let f = &r.faults;
    for (k, n) in [
        f.lost,
        f.duplicated,
        f.partitioned,
        f.crashed,
        f.dropped_at_down_actor,
    ]
    .into_iter()
    .enumerate()
    {
        out.push(tagged(3, (k as u64) << 8 | bucket(n)));
    }
    for (s, values) in record.streams.iter().enumerate() {
        let nonzero = values.iter().filter(|&&v| v != 0).count() as u64;
        out.push(tagged(4, (s as u64) << 8 | bucket(nonzero)));
    }
    sim.oracle().features(&mut |v| out.push(tagged(5, v)));
}

struct Entry {
    /// Every decision of the run, zeros included, so that every stream it
    /// touched can be mutated.
    record: Record,
    fuzzed: u32,
}

/// Decision values that clamp to a decision's largest value.
const BIG: u64 = u64::MAX >> 1;

/// A child of `parent`: one to four edits.
fn mutate(parent: &Record, corpus: &[Entry], swarm_max: &[u64], rng: &mut Rng) -> Record {
    let mut child = parent.clone();
    let touched: Vec<usize> = (0..parent.streams.len())
        .filter(|&s| s != StreamLayout::SWARM as usize && !parent.streams[s].is_empty())
        .collect();
    let edits = 1 + rng.below(4);
    for _ in 0..edits {
        let s = if touched.is_empty() || rng.below(16) == 0 {
            StreamLayout::SWARM as usize
        } else {
            touched[rng.below(touched.len() as u64) as usize]
        };
        let len = child.streams.get(s).map_or(0, Vec::len) as u64;
        // Reach a little past the end: a decision the parent never made.
        let i = rng.below(len + 2) as usize;
        let stream = s as u32;
        match rng.below(16) {
            0..=5 => child.set(stream, i, BIG),
            6 | 7 => child.set(stream, i, 0),
            8 => {
                let magnitude = rng.below(24);
                let v = rng.below(1 << magnitude);
                child.set(stream, i, v);
            }
            9 => {
                let v = child.get(stream, i);
                let d = 1 + rng.below(16);
                let v = if rng.below(2) == 0 {
                    v.saturating_sub(d)
                } else {
                    v.saturating_add(d)
                };
                child.set(stream, i, v);
            }
            10 => {
                if let Some(v) = child.streams.get_mut(s) {
                    v.truncate(i);
                }
            }
            11 | 12 => {
                let other = &corpus[rng.below(corpus.len() as u64) as usize].record;
                let theirs = other.streams.get(s).cloned().unwrap_or_default();
                if child.streams.len() <= s {
                    child.streams.resize(s + 1, Vec::new());
                }
                child.streams[s] = theirs;
            }
            13 => {
                let sw = StreamLayout::SWARM as usize;
                if child.streams.len() <= sw {
                    child.streams.resize(sw + 1, Vec::new());
                }
                child.streams[sw] = swarm_max.to_vec();
            }
            _ => {
                // Another decision of the same stream to its largest value.
                let j = rng.below(len + 2) as usize;
                child.set(stream, j, BIG);
            }
        }
    }
    child
}

/// The kept record to mutate next: mutated least, newest on a tie.
fn pick(corpus: &[Entry]) -> usize {
    let mut best = 0;
    for (i, e) in corpus.iter().enumerate() {
        if e.fuzzed <= corpus[best].fuzzed {
            best = i;
        }
    }
    best
}

struct Searcher<'a, M: Model> {
    model: &'a M,
    sim: Sim<M>,
    seen: BTreeSet<u64>,
    scratch: Vec<u64>,
    corpus: Vec<Entry>,
    report: CoverageReport,
    /// A schedule failed (with or without a record to show for it).
    failed: bool,
}

impl<M: Model> Searcher<'_, M> {
    /// Runs one schedule, counts it, keeps it if it reached something new.
    /// True when it failed.
    fn run(&mut self, source: Source<'_>) -> bool {
        let (sim, model) = (&mut self.sim, self.model);
        let r =
            guarded(|| sim.run(model, source, &mut NoTrace)).unwrap_or_else(RunReport::panicked);
        let index = self.report.summary.tally.schedules;
        self.report.summary.add(index, &r, self.sim.oracle());
        let whole = !self.sim.choices.recorded_overflowed();
        if r.outcome.is_failure() {
            self.failed = true;
            self.report.failing = whole.then(|| self.sim.choices.take_recorded());
            return true;
        }
        if !whole {
            // Mutating a record cut short would explore runs other than
            // the one that reached something new.
            return false;
        }
        let record = self.sim.choices.recorded().clone();
        features(&r, &self.sim, &record, &mut self.scratch);
        let mut new = false;
        for &f in &self.scratch {
            new |= self.seen.insert(f);
        }
        if new {
            self.corpus.push(Entry { record, fuzzed: 0 });
        }
        false
    }
}

/// Searches `model` for a failure with coverage-guided mutation of records,
/// within `cfg.budget` schedules; stops at the first failure.
pub fn coverage_search<M: Model>(
    model: &M,
    cfg: &CoverageConfig,
    stop: &AtomicBool,
) -> CoverageReport {
    let mut s = Searcher {
        model,
        sim: Sim::new(model),
        seen: BTreeSet::new(),
        scratch: Vec::new(),
        corpus: Vec::new(),
        report: CoverageReport::default(),
        failed: false,
    };
    let swarm_max = swarm_max_decisions(model.world());
    let mut rng = Rng(mix(cfg.seed ^ 0x636f_7665_7261_6765));
    let done = |s: &Searcher<'_, M>| s.report.summary.tally.schedules >= cfg.budget;
    for seed in cfg.seed..cfg.seed.saturating_add(cfg.warmup) {
        if done(&s) {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            s.report.summary.interrupted = true;
            break;
        }
        if s.run(Source::Seed { seed, record: true }) {
            break;
        }
    }
    'search: while !s.failed && !s.report.summary.interrupted {
        if s.corpus.is_empty() {
            // Nothing kept (a budget smaller than one run): nothing to mutate.
            break;
        }
        let parent = pick(&s.corpus);
        s.corpus[parent].fuzzed += 1;
        for _ in 0..ENERGY {
            if done(&s) {
                break 'search;
            }
            if stop.load(Ordering::Relaxed) {
                s.report.summary.interrupted = true;
                break 'search;
            }
            let child = mutate(&s.corpus[parent].record, &s.corpus, &swarm_max, &mut rng);
            let source = Source::Replay {
                record: &child,
                log_points: false,
            };
            if s.run(source) {
                break 'search;
            }
        }
    }
    s.report.corpus = s.corpus.len();
    s.report.features = s.seen.len();
    s.report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_then_logarithmic() {
        let b: Vec<u64> = [0, 1, 2, 3, 4, 7, 8, 15, 16, 1000].map(bucket).to_vec();
        assert_eq!(b, [0, 1, 2, 3, 4, 4, 5, 5, 6, 11]);
    }

    /// A run too long to record whole reaches the corpus only as a record
    /// cut short, which would replay another run: it is not kept.
    #[test]
    fn a_run_too_long_to_record_is_not_kept() {
        let model = crate::exhaustive::tests::toy();
        let stop = AtomicBool::new(false);
        let mut sim = Sim::new(&model);
        let holds = (0..)
            .find(|&seed| {
                crate::explore::run_guarded(&mut sim, &model, seed).outcome == Outcome::Holds
            })
            .unwrap();
        // One run of a seed that holds: the first run always reaches something new.
        let cfg = CoverageConfig {
            seed: holds,
            budget: 1,
            warmup: 1,
        };
        assert_eq!(coverage_search(&model, &cfg, &stop).corpus, 1);
        crate::choice::TEST_MAX_RECORDED_VALUES.with(|m| m.set(1));
        let r = coverage_search(&model, &cfg, &stop);
        crate::choice::TEST_MAX_RECORDED_VALUES.with(|m| m.set(crate::choice::MAX_RECORDED_VALUES));
        assert_eq!(r.summary.tally.schedules, 1);
        assert_eq!(r.corpus, 0);
    }

    #[test]
    fn the_generator_is_fixed() {
        let mut r = Rng(1);
        let a: Vec<u64> = (0..4).map(|_| r.below(100)).collect();
        let mut r = Rng(1);
        let b: Vec<u64> = (0..4).map(|_| r.below(100)).collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|&x| x < 100));
    }
}
