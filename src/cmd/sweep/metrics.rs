//! Per-run numbers for design comparisons, gathered by a tracer.
//!
//! The tracer reads only what the actors already tell the oracle (intents,
//! effects, attempts, endings) and the client's requests, so `check` keeps
//! its zero-cost `NoTrace` hot path and the ledger stays as it is; only a
//! sweep pays for building trace entries.

use models::ledger::{inv, AttemptOutcome, Ending, Obs, OpId};
use models::Msg;
use sim::{Outcome, TimeUs, TraceEntry, TraceKind, Tracer};

#[derive(Clone, Copy, Debug)]
struct OpTrack {
    op: OpId,
    intent_us: Option<TimeUs>,
    effects: u32,
    first_effect_us: Option<TimeUs>,
    ending: Option<Ending>,
    /// Highest attempt number the client sent (network copies share one).
    attempts: u32,
    unknown: bool,
    /// Messaging: the producer committed the change, so its event is owed.
    committed: bool,
    /// Messaging: the broker moved one of its events to the dead-letter queue.
    dead_lettered: bool,
}

/// Collects one run's per-operation facts; reused from run to run.
#[derive(Debug, Default)]
pub struct MetricsTracer {
    ops: Vec<OpTrack>,
    /// Payment requests arriving at the service in the current virtual second.
    second: u64,
    in_second: u32,
    peak_per_second: u32,
}

/// What one run contributes to a variant's row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunMetrics {
    /// Business operations the client started.
    pub operations: u32,
    /// Client attempts over those operations.
    pub attempts: u32,
    /// Some operation's effect landed twice or more.
    pub duplicate: bool,
    /// Some operation the client gave up on, or was told was done, had no
    /// effect when the run ended.
    pub lost: bool,
    /// The client saw at least one attempt end with an unknown outcome (timeout).
    pub unknown: bool,
    /// The most payment requests that reached the service within one second
    /// of virtual time: how synchronised the retries were.
    pub peak_requests_per_s: u32,
}

impl MetricsTracer {
    pub fn reset(&mut self) {
        self.ops.clear();
        self.second = 0;
        self.in_second = 0;
        self.peak_per_second = 0;
    }

    fn track(&mut self, op: OpId) -> &mut OpTrack {
        let i = match self.ops.iter().position(|t| t.op == op) {
            Some(i) => i,
            None => {
                self.ops.push(OpTrack {
                    op,
                    intent_us: None,
                    effects: 0,
                    first_effect_us: None,
                    ending: None,
                    attempts: 0,
                    unknown: false,
                    committed: false,
                    dead_lettered: false,
                });
                self.ops.len() - 1
            }
        };
        &mut self.ops[i]
    }

    /// Summarises the run that just ended; appends each operation's time from
    /// intent to first effect (microseconds) to `times_to_effect_us`.
    pub fn finish(&self, outcome: &Outcome, times_to_effect_us: &mut Vec<u64>) -> RunMetrics {
        // A committed event is only known to be lost when the run got to the
        // end of its healing phase: a run stopped early by another violation
        // may still have had it in flight.
        let reached_end = match outcome {
            Outcome::Holds => true,
            Outcome::Violation(v) => matches!(
                v.invariant,
                inv::NO_LOST_EFFECT
                    | inv::STATE_CONVERGES
                    | inv::NO_PHANTOM_EVENT
                    | inv::OPERATION_ENDS
            ),
            Outcome::Inconclusive(_) | Outcome::Panicked(_) => false,
        };
        let mut m = RunMetrics {
            peak_requests_per_s: self.peak_per_second,
            ..RunMetrics::default()
        };
        for t in self.ops.iter().filter(|t| t.intent_us.is_some()) {
            m.operations += 1;
            m.attempts += t.attempts;
            m.duplicate |= t.effects > 1;
            m.unknown |= t.unknown;
            // A final failure (rejected input) owes no effect; an operation still
            // open when the run stopped is not judged here (see operation-ends).
            let owed = matches!(
                t.ending,
                Some(Ending::Success | Ending::DeadLetter | Ending::Abandoned)
            );
            m.lost |= owed && t.effects == 0;
            m.lost |= reached_end && t.committed && t.effects == 0 && !t.dead_lettered;
            if let (Some(start), Some(first)) = (t.intent_us, t.first_effect_us) {
                times_to_effect_us.push(first.saturating_sub(start));
            }
        }
        m
    }
}

impl Tracer<Msg, Obs> for MetricsTracer {
    const ENABLED: bool = true;

    fn record(&mut self, entry: TraceEntry<Msg, Obs>) {
        let now = entry.time_us;
        match entry.kind {
            // Deliveries come in time order, so one running bucket suffices.
            TraceKind::Deliver {
                msg: Msg::Pay { .. },
                ..
            } => {
                let second = now / 1_000_000;
                if second != self.second || self.in_second == 0 {
                    self.second = second;
                    self.in_second = 0;
                }
                self.in_second += 1;
                self.peak_per_second = self.peak_per_second.max(self.in_second);
            }
            TraceKind::Send {
                msg: Msg::Pay { op, attempt, .. },
                ..
            }
            | TraceKind::Drop {
                msg: Msg::Pay { op, attempt, .. },
                ..
            } => {
                let t = self.track(op);
                t.attempts = t.attempts.max(attempt);
            }
            TraceKind::Observe { obs, .. } => match obs {
                Obs::Intent { op, .. } => {
                    self.track(op).intent_us.get_or_insert(now);
                }
                Obs::Effect { op, .. } => {
                    let t = self.track(op);
                    t.effects += 1;
                    t.first_effect_us.get_or_insert(now);
                }
                Obs::Attempt {
                    op,
                    attempt,
                    outcome,
                } => {
                    let t = self.track(op);
                    t.attempts = t.attempts.max(attempt);
                    t.unknown |= outcome == AttemptOutcome::Unknown;
                }
                Obs::ToldSuccess { .. } => {}
                Obs::Ended { op, ending } => {
                    self.track(op).ending = Some(ending);
                }
                // In the messaging model the business operation starts when its state commits.
                Obs::EventCommitted { op, .. } => {
                    let t = self.track(op);
                    t.intent_us.get_or_insert(now);
                    t.committed = true;
                }
                Obs::DeadLettered { op, .. } => {
                    self.track(op).dead_lettered = true;
                }
                // A set-value write is the consumer's effect for its entity.
                Obs::ValueWritten { op, .. } => {
                    let t = self.track(op);
                    t.effects += 1;
                    t.first_effect_us.get_or_insert(now);
                }
                Obs::Accepted { .. }
                | Obs::ExecStart { .. }
                | Obs::ExecEnd { .. }
                | Obs::ExecutorsLost
                | Obs::DedupStore { .. } => {}
            },
            _ => {}
        }
    }
}

/// The verdict class of one run, for a variant's verdict column.
pub fn failure_name(outcome: &Outcome) -> Option<&'static str> {
    match outcome {
        Outcome::Violation(v) => Some(v.invariant),
        Outcome::Panicked(_) => Some("model-panic"),
        Outcome::Holds | Outcome::Inconclusive(_) => None,
    }
}
