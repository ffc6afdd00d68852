//! The enumeration on several threads, with the report of one thread.
//!
//! The root (the all-zero schedule) runs first; each decision point it meets
//! roots one *unit*: the subtree of schedules whose first fault is that point.
//! In the sequential order the units follow each other, so the enumeration is
//! the root, then unit 0, unit 1, ... Workers take units in that order from an
//! atomic counter, each with its own simulator, and the reports are combined
//! in unit order as they come in (only those that wait for an earlier unit are
//! kept), which gives what one search would have found: counts are sums, and
//! the first strictly shorter counterexample and the first inconclusive
//! schedule are kept, as one search keeps them.
//!
//! The bounds (`--max-schedules`, `--max-events`) cut one search at an exact
//! schedule, which depends on everything before it. A unit taken when every
//! earlier unit is combined starts from the exact counts before it and stops
//! where one search would stop. Any other unit runs as if first; when
//! combining finds that a bound may fall inside it, it is run again on its
//! own from the counts before it. Workers stop taking units once the units
//! they finished reach a bound (those all come before any unit not yet
//! taken), and abandon the unit they run once the cut is known to lie before it.

use super::{base_record, ExhaustiveReport, Search, Shared, Worker};
use crate::choice::{ChoicePoint, Record, StreamLayout};
use crate::engine::Model;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// A unit's first fault: the root's decision point at `pos`.
#[derive(Clone, Copy)]
struct Unit {
    point: ChoicePoint,
    pos: usize,
}

/// The reports combined so far, and those waiting for an earlier unit.
struct Merged {
    total: ExhaustiveReport,
    /// The next unit to combine.
    next: usize,
    /// Reports of units that finished before an earlier one, and whether
    /// each started from the exact counts before it.
    waiting: BTreeMap<usize, (ExhaustiveReport, bool)>,
    /// Combining stopped at `next`: a bound may fall inside it, or the
    /// enumeration was cut before it.
    stuck: bool,
    /// A unit combined exactly ended the enumeration (a bound, Ctrl-C, a run
    /// with too many points): one search runs nothing after it.
    ended: bool,
}

/// The combined reports, by a worker: no worker panics outside
/// `catch_unwind`, so the lock is never poisoned.
fn lock(merged: &Mutex<Merged>) -> std::sync::MutexGuard<'_, Merged> {
    merged
        .lock()
        .expect("no worker panics outside catch_unwind")
}

/// The units of work: each decision point of the all-zero run but the swarm
/// mix's, in order.
fn units_of(points: &[ChoicePoint]) -> Vec<Unit> {
    points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.stream != StreamLayout::SWARM)
        .map(|(pos, p)| Unit { point: *p, pos })
        .collect()
}

impl Merged {
    /// Nothing combined yet after the root's report.
    fn new(root: ExhaustiveReport) -> Self {
        Merged {
            total: root,
            next: 0,
            waiting: BTreeMap::new(),
            stuck: false,
            ended: false,
        }
    }

    /// The schedules and events before unit `i`, if every earlier unit is
    /// combined (so they are exact).
    fn exact_prior(&self, i: usize) -> Option<(u64, u64)> {
        (self.next == i && !self.stuck)
            .then_some((self.total.tally.schedules, self.total.tally.events))
    }

    /// Adds unit `i`'s report and combines what it can; true when combining
    /// is stuck, so that later units are beyond the cut.
    fn combine(
        &mut self,
        i: usize,
        r: ExhaustiveReport,
        exact: bool,
        shared: &Shared<'_>,
        units: usize,
    ) -> bool {
        self.waiting.insert(i, (r, exact));
        self.advance(shared, units);
        self.stuck
    }

    /// Combines every report that is next in order, as far as it safely can.
    fn advance(&mut self, shared: &Shared<'_>, units: usize) {
        let b = shared.bounds;
        while !self.stuck && self.next < units {
            let Some((r, exact)) = self.waiting.remove(&self.next) else {
                return;
            };
            if exact {
                // Cut where one search would have cut it: final either way.
                let end = r.truncated || r.interrupted || r.too_many_points;
                self.total.absorb(r);
                self.next += 1;
                self.stuck |= end;
                self.ended |= end;
                continue;
            }
            let (s, e) = (self.total.tally.schedules, self.total.tally.events);
            let fits = s < b.max_schedules
                && e < b.max_events
                && !r.truncated
                && !r.interrupted
                && !r.too_many_points
                && s + r.tally.schedules <= b.max_schedules
                && e + r.tally.events < b.max_events;
            if !fits {
                // Put back for the careful pass at the end.
                self.waiting.insert(self.next, (r, false));
                self.stuck = true;
                return;
            }
            self.total.absorb(r);
            self.next += 1;
        }
    }
}

pub(super) fn search<M: Model + Sync>(
    model: &M,
    max_faults: u32,
    jobs: usize,
    shared: &Shared<'_>,
) -> ExhaustiveReport {
    let job = Job {
        model,
        max_faults,
        shared,
        base: base_record(model),
    };
    let mut main = Worker::new(model);
    let mut root = Search {
        model,
        worker: &mut main,
        max_faults,
        shared,
        prior: (0, 0),
        abandon: None,
        report: ExhaustiveReport::new(max_faults),
    };
    if !root.run(&job.base, 0) || max_faults == 0 {
        return root.report;
    }
    let root_report = root.report;
    let units = units_of(&main.points[0]);
    let bounds = shared.bounds;
    // Schedules and events of the root and of every finished unit.
    let finished = (
        AtomicU64::new(root_report.tally.schedules),
        AtomicU64::new(root_report.tally.events),
    );
    let merged = Mutex::new(Merged::new(root_report));
    let next = AtomicUsize::new(0);
    let cut = AtomicBool::new(false);
    // Tests of the points bound set it on their own thread; workers take it.
    #[cfg(test)]
    let max_points = crate::choice::TEST_MAX_LOGGED_POINTS.with(|m| m.get());
    let worker = || {
        #[cfg(test)]
        crate::choice::TEST_MAX_LOGGED_POINTS.with(|m| m.set(max_points));
        let mut w = Worker::new(model);
        loop {
            let reached = finished.0.load(Ordering::Relaxed) >= bounds.max_schedules
                || finished.1.load(Ordering::Relaxed) >= bounds.max_events;
            if shared.stop.load(Ordering::Relaxed) || reached || cut.load(Ordering::Relaxed) {
                break;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(unit) = units.get(i) else {
                break;
            };
            // Every earlier unit combined: the counts before this one are known.
            let exact = lock(&merged).exact_prior(i);
            let prior = exact.unwrap_or((0, 0));
            let abandon = (exact.is_none()).then_some(&cut);
            let r = run_unit(&job, &mut w, unit, prior, abandon);
            finished.0.fetch_add(r.tally.schedules, Ordering::Relaxed);
            finished.1.fetch_add(r.tally.events, Ordering::Relaxed);
            if lock(&merged).combine(i, r, exact.is_some(), shared, units.len()) {
                // Everything after the unit it is stuck at is beyond the cut.
                cut.store(true, Ordering::Relaxed);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(worker);
        }
    });
    let m = merged.into_inner().expect("workers finished");
    if m.ended {
        // Not only a bound or Ctrl-C, which the pass below would find again:
        // a run with too many points ends one search where it stands.
        return m.total;
    }
    careful_pass(&job, &mut main, &units, m)
}

/// The careful pass: from the first unit not combined, exactly as one
/// search would go on, each unit's report taken as it is where no bound
/// falls inside it, else run again from the counts one search has there.
fn careful_pass<M: Model>(
    job: &Job<'_, M>,
    main: &mut Worker<M>,
    units: &[Unit],
    mut m: Merged,
) -> ExhaustiveReport {
    let bounds = job.shared.bounds;
    for (i, unit) in units.iter().enumerate().skip(m.next) {
        let before = (m.total.tally.schedules, m.total.tally.events);
        if before.0 >= bounds.max_schedules || before.1 >= bounds.max_events {
            // One search would stop at this unit's first schedule.
            m.total.truncated = true;
            break;
        }
        if job.shared.stop.load(Ordering::Relaxed) {
            m.total.interrupted = true;
            break;
        }
        let r = match m.waiting.remove(&i) {
            Some((r, _))
                if !r.truncated
                    && !r.interrupted
                    && !r.too_many_points
                    && before.0 + r.tally.schedules <= bounds.max_schedules
                    && before.1 + r.tally.events < bounds.max_events =>
            {
                r
            }
            // A bound may fall inside this unit (or it never ran): run it
            // from the counts one search would have here.
            _ => run_unit(job, main, unit, before, None),
        };
        let end = r.truncated || r.interrupted || r.too_many_points;
        m.total.absorb(r);
        if end {
            break;
        }
    }
    m.total
}

/// What every unit of one search shares: the model, the bound on faults,
/// the search's settings and the all-zero run's record.
struct Job<'a, M> {
    model: &'a M,
    max_faults: u32,
    shared: &'a Shared<'a>,
    base: Record,
}

/// The subtree of `unit`, with `prior` schedules and events counted before it.
fn run_unit<'a, M: Model>(
    job: &Job<'a, M>,
    worker: &mut Worker<M>,
    unit: &Unit,
    prior: (u64, u64),
    abandon: Option<&'a AtomicBool>,
) -> ExhaustiveReport {
    let mut search = Search {
        model: job.model,
        worker,
        max_faults: job.max_faults,
        shared: job.shared,
        prior,
        abandon,
        report: ExhaustiveReport::new(job.max_faults),
    };
    let p = unit.point;
    let mut record = job.base.clone();
    record.set(p.stream, p.index as usize, p.arity - 1);
    search.visit(&mut record, unit.pos + 1, 1);
    search.report
}
