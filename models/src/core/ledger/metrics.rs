//! The ledger's numbers per run (the counters `check` and `sweep` read):
//! their names, their layout, and how a finished run fills them.

use super::Ledger;
use crate::core::hist;
use crate::core::obs::{Ending, Per, MAX_LAYERS};
use sim::{Counter, Merge, Outcome, TimeUs};

/// The ledger's numbers per run, for `check` and `sweep`.
pub mod counter {
    /// Operations the clients started.
    pub const OPERATIONS: &str = "operations";
    /// Their endings: told done, known failed, cancelled, unknown (for a person), abandoned, still open.
    pub const DONE: &str = "ended_done";
    /// Operations that ended known failed, in a dead letter: nothing executed.
    pub const FAILED: &str = "ended_failed";
    /// Operations a compensation cancelled: whatever landed was taken back.
    /// Not among the failed, where nothing executed at all.
    pub const CANCELLED: &str = "ended_cancelled";
    /// Operations that ended unknown, for a person to reconcile.
    pub const UNKNOWN: &str = "ended_unknown";
    /// Operations given up silently.
    pub const ABANDONED: &str = "ended_abandoned";
    /// Operations still open when the run stopped.
    pub const OPEN: &str = "open";
    /// Attempts the clients sent.
    pub const ATTEMPTS: &str = "attempts";
    /// Events owed by committed state changes.
    pub const EVENTS: &str = "events";
    /// Operations with two or more effects; operations whose owed effect is missing.
    pub const DUPLICATED_OPS: &str = "duplicated_ops";
    /// Operations whose owed effect is missing.
    pub const LOST_OPS: &str = "lost_ops";
    /// Runs with at least one duplicated, lost, or unknown-ending operation.
    pub const RUNS_DUPLICATED: &str = "runs_duplicated";
    /// Runs with at least one lost operation.
    pub const RUNS_LOST: &str = "runs_lost";
    /// Runs with at least one operation that ended unknown.
    pub const RUNS_UNKNOWN: &str = "runs_unknown";
    /// The most keys a dedup store held (the maximum over runs).
    pub const PEAK_DEDUP_KEYS: &str = "peak_dedup_keys";
    /// Requests each layer received, over all runs (one slot per layer).
    pub const RECEIVED: &str = "received";
    /// Each layer's busiest second, summed over runs (one slot per layer).
    pub const PEAK_PER_S: &str = "peak_per_s";
    /// Times from intent (or commit) to first effect: a log-linear histogram in µs.
    pub const TIME_TO_EFFECT: &str = "time_to_effect_us";
    /// Runs in which every operation a client started ended, and the sum
    /// over them of the time from the first intent to the last ending (µs).
    pub const RUNS_COMPLETED: &str = "runs_completed";
    /// The sum of those completion times (µs), over `RUNS_COMPLETED` runs.
    pub const COMPLETION_US: &str = "completion_us";
    /// Requests each layer's workers took, over all runs (one slot per layer).
    pub const WORK: &str = "work";
    /// Of those, requests whose client had already stopped waiting (one slot per layer).
    pub const WASTED: &str = "wasted_work";
    /// Requests each layer refused because it was full (one slot per layer).
    pub const SHED: &str = "shed";
    /// Per layer, the time from the end of the faults to its last shed or
    /// wasted request, summed over runs (0 for a run where it had none after).
    pub const OVERLOAD_AFTER_FAULTS: &str = "overload_after_faults_us";
    /// Retries refused by clients' budgets; attempts refused by their breakers.
    pub const RETRIES_DENIED: &str = "retries_denied";
    /// Attempts refused by clients' open breakers.
    pub const FAST_FAILED: &str = "fast_failed";
}

// Here rather than beside `Per`: the ledger names its counters, and
// observations know nothing of the ledger.
impl Per {
    /// The ledger counter that counts them.
    pub fn counter(self) -> &'static str {
        match self {
            Per::Operation => counter::OPERATIONS,
            Per::Event => counter::EVENTS,
        }
    }
}

/// The counters in the order `fill` writes them.
pub(crate) static COUNTERS: [Counter; 26] = {
    use counter::*;
    const fn one(name: &'static str) -> Counter {
        Counter {
            name,
            merge: Merge::Sum,
            len: 1,
        }
    }
    [
        one(OPERATIONS),
        one(DONE),
        one(FAILED),
        one(UNKNOWN),
        one(ABANDONED),
        one(OPEN),
        one(ATTEMPTS),
        one(EVENTS),
        one(DUPLICATED_OPS),
        one(LOST_OPS),
        one(RUNS_DUPLICATED),
        one(RUNS_LOST),
        one(RUNS_UNKNOWN),
        Counter {
            name: PEAK_DEDUP_KEYS,
            merge: Merge::Max,
            len: 1,
        },
        Counter {
            name: RECEIVED,
            merge: Merge::Sum,
            len: MAX_LAYERS,
        },
        Counter {
            name: PEAK_PER_S,
            merge: Merge::Sum,
            len: MAX_LAYERS,
        },
        Counter {
            name: TIME_TO_EFFECT,
            merge: Merge::Sum,
            len: hist::BUCKETS,
        },
        one(RUNS_COMPLETED),
        one(COMPLETION_US),
        Counter {
            name: WORK,
            merge: Merge::Sum,
            len: MAX_LAYERS,
        },
        Counter {
            name: WASTED,
            merge: Merge::Sum,
            len: MAX_LAYERS,
        },
        Counter {
            name: SHED,
            merge: Merge::Sum,
            len: MAX_LAYERS,
        },
        Counter {
            name: OVERLOAD_AFTER_FAULTS,
            merge: Merge::Sum,
            len: MAX_LAYERS,
        },
        one(RETRIES_DENIED),
        one(FAST_FAILED),
        // Last, so the slots before it stay where they were.
        one(CANCELLED),
    ]
};

// Slots in the order of COUNTERS; the arrays come last.
const RECEIVED_AT: usize = 14;
const PEAK_AT: usize = RECEIVED_AT + MAX_LAYERS;
const HIST_AT: usize = PEAK_AT + MAX_LAYERS;
const COMPLETED_AT: usize = HIST_AT + hist::BUCKETS;
const WORK_AT: usize = COMPLETED_AT + 2;
const WASTED_AT: usize = WORK_AT + MAX_LAYERS;
const SHED_AT: usize = WASTED_AT + MAX_LAYERS;
const OVERLOAD_AT: usize = SHED_AT + MAX_LAYERS;
const DENIED_AT: usize = OVERLOAD_AT + MAX_LAYERS;
const CANCELLED_AT: usize = DENIED_AT + 2;

impl Ledger {
    /// Adds this run's numbers to `into`, one slot per value of [`COUNTERS`]
    /// in their order (what `sim::Oracle::count` asks for).
    pub(crate) fn fill(&self, outcome: &Outcome, into: &mut [u64]) {
        debug_assert_eq!(into.len(), CANCELLED_AT + 1);
        // Loss can only be told once the run got to the end of its healing
        // phase: a run stopped early may have had the effect in flight.
        let judged_to_end = self.finished || matches!(outcome, Outcome::Holds);
        let (mut dup, mut lost, mut unknown) = (false, false, false);
        // The run's completion: from its first intent to its last ending.
        let (mut first_intent_us, mut last_end_us, mut all_ended) = (TimeUs::MAX, 0, true);
        for r in self.ops.values() {
            if r.intended {
                first_intent_us = first_intent_us.min(r.started_us);
                match r.ending {
                    Some(_) => last_end_us = last_end_us.max(r.ended_us),
                    None => all_ended = false,
                }
                into[0] += 1;
                let slot = match r.ending {
                    Some(Ending::Done) => 1,
                    Some(Ending::Failed) => 2,
                    // Not failed: that says nothing executed, and a
                    // cancelled payment may have landed and been refunded.
                    Some(Ending::Cancelled) => CANCELLED_AT,
                    Some(Ending::Unknown) => 3,
                    Some(Ending::Abandoned) => 4,
                    None => 5,
                };
                into[slot] += 1;
                unknown |= r.ending == Some(Ending::Unknown);
                into[6] += u64::from(r.attempts);
            }
            if r.committed {
                into[7] += 1;
            }
            if r.effects > 1 {
                into[8] += 1;
                dup = true;
            }
            if judged_to_end && (r.intended || r.committed) && r.lost() {
                into[9] += 1;
                lost = true;
            }
            add_layers(into, RECEIVED_AT, |i| u64::from(r.received[i]));
            let start = if r.intended {
                Some(r.started_us)
            } else {
                r.committed.then_some(r.committed_us)
            };
            if let (Some(start), Some((at, _))) = (start, r.first_effect) {
                into[HIST_AT + hist::bucket(at.saturating_sub(start))] += 1;
            }
        }
        into[10] += u64::from(dup);
        into[11] += u64::from(lost);
        into[12] += u64::from(unknown);
        into[13] = into[13].max(u64::from(self.peak_dedup_keys));
        if all_ended && first_intent_us != TimeUs::MAX {
            into[COMPLETED_AT] += 1;
            into[COMPLETED_AT + 1] += last_end_us.saturating_sub(first_intent_us);
        }
        self.fill_load(into);
    }

    /// Adds each layer's load and what clients held back to `into`: the
    /// slots of [`fill`](Ledger::fill) that come from the run's totals, not
    /// from its operations.
    fn fill_load(&self, into: &mut [u64]) {
        add_layers(into, PEAK_AT, |i| u64::from(self.rates[i].peak));
        add_layers(into, WORK_AT, |i| u64::from(self.load[i].work));
        add_layers(into, WASTED_AT, |i| u64::from(self.load[i].wasted));
        add_layers(into, SHED_AT, |i| u64::from(self.load[i].shed));
        add_layers(into, OVERLOAD_AT, |i| {
            self.load[i]
                .last_overload_us
                .map_or(0, |t| t.saturating_sub(self.healing_us))
        });
        into[DENIED_AT] += u64::from(self.retries_denied);
        into[DENIED_AT + 1] += u64::from(self.fast_failed);
    }
}

/// Adds `value(layer)` to the slot of each layer in the counter that starts
/// at `at`: taken as one whole array, so the slots are checked once, not
/// once each.
#[inline]
fn add_layers(into: &mut [u64], at: usize, value: impl Fn(usize) -> u64) {
    let slots: &mut [u64; MAX_LAYERS] = (&mut into[at..at + MAX_LAYERS])
        .try_into()
        .expect("a counter per layer has MAX_LAYERS slots");
    for (i, slot) in slots.iter_mut().enumerate() {
        *slot += value(i);
    }
}

impl Ledger {
    /// One number per operation's cell of the truth table, refined by how
    /// far the run got with it: what the business wanted, how many attempts
    /// and requests each layer saw (small counts exact, larger ones by
    /// order of magnitude), what landed, what the client was finally told.
    pub(crate) fn features(&self, out: &mut dyn FnMut(u64)) {
        let small = |n: u32| u64::from(if n < 4 { n } else { 4 + n.ilog2() });
        for r in self.ops.values() {
            let ending = r.ending.map_or(0, |e| 1 + e as u64);
            let flags = [
                r.intended,
                r.rejected,
                r.told_done.is_some(),
                r.committed,
                r.accepted,
                r.dead,
                r.written,
                r.superseded,
                r.told_done.is_some_and(|p| p != r.payload),
            ];
            let mut f = flags.iter().fold(0u64, |acc, &b| (acc << 1) | u64::from(b));
            f = (f << 4) | ending;
            f = (f << 4) | small(r.effects);
            f = (f << 4) | small(r.attempts);
            for n in r.received {
                f = (f << 4) | small(n);
            }
            out(f);
        }
        out(u64::from(self.peak_dedup_keys.min(64)) | (1 << 63));
    }
}
