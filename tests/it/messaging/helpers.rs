//! Helpers shared by several groups: a failing run's trace, a sweep's
//! first broken invariant, and the checked-ack design under extra faults.

use crate::support::{load, sweep, trace_of};
use models::{Msg, Obs, Scenario};
use sim::{Outcome, TraceKind};

/// The lowest seed of `name` that breaks `invariant`, replayed with a trace.
pub fn failing_trace(
    name: &str,
    invariant: &str,
    seeds: u64,
) -> Vec<TraceKind<Msg, Obs, models::NodeTimer>> {
    let s = load(name, &[]);
    let sum = sweep(&s, seeds);
    let f = sum
        .first_failure
        .unwrap_or_else(|| panic!("{name}: no failure in {seeds} seeds"));
    let (entries, outcome) = trace_of(&s, f.seed);
    match outcome {
        Outcome::Violation(v) => assert_eq!(v.invariant, invariant, "{}", v.message),
        o => panic!("seed {} replayed to {o:?}", f.seed),
    }
    entries.into_iter().map(|e| e.kind).collect()
}

/// The invariant a sweep's first failure broke.
pub fn invariant(sum: &sim::Summary) -> Option<&'static str> {
    match &sum.first_failure.as_ref()?.outcome {
        Outcome::Violation(v) => Some(v.invariant),
        _ => None,
    }
}

/// The runs' situations, faults and the invariant of the first failure.
pub fn swept(s: &Scenario, seeds: u64) -> (sim::Summary, Option<&'static str>) {
    let sum = sweep(s, seeds);
    assert_eq!(sum.tally.panics, 0, "{:?}", sum.first_failure);
    let inv = invariant(&sum);
    (sum, inv)
}

/// Pub/Sub's exactly-once delivery with a consumer that checks its ack
/// before committing and no inbox, the idempotent producer never crashing:
/// the design `messaging-eod-checked-ack` shows holding, here over the
/// faults the scenario leaves out. `tail` adds a `[[network.links]]` entry.
pub fn eod_checked(tail: &str) -> String {
    format!(
        r#"
summary = "exactly-once delivery, checked ack, no inbox"
model = "messaging"
[producer]
write = "outbox"
idempotence = true
[broker]
visibility_timeout_ms = 10000
consumers = 2
exactly_once_delivery = true
[consumer]
handler = "effect"
ack = "checked-before-commit"
processing_ms = 2000
processing_jitter_ms = 12000
[network]
loss_per_mille = 0
duplicate_per_mille = 0
delay_ms_min = 1
delay_ms_max = 200
[[events]]
entity = 4711
value = 1200
[[events]]
entity = 4712
value = 800
start_ms = 500
{tail}"#
    )
}
