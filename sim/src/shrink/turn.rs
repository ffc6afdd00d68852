//! The point of no return: the last decision that could still have avoided
//! a failure.

use super::common::{replay_unrecorded, Signature};
use crate::choice::{Record, StreamId};
use crate::engine::{Model, MsgOf, ObsOf, Sim, TimerOf};
use crate::trace::{NoTrace, Recorder};

/// The last decision that could still have avoided the failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The engine step at which the alternative first changes the run: after
    /// it, no single different decision avoids the failure.
    pub step: u64,
    /// Index of the first trace entry of the failing run that the alternative changes.
    pub entry: usize,
    /// The stream of the decision that turns it.
    pub stream: StreamId,
    /// Its position in the stream.
    pub index: u32,
    /// The value the failing run drew.
    pub value: u64,
    /// The value that avoids the failure.
    pub alternative: u64,
}

/// Finds the point of no return of a failing record, searching every
/// decision (see [`point_of_no_return_within`]).
pub fn point_of_no_return<M: Model>(sim: &mut Sim<M>, model: &M, record: &Record) -> Option<Turn>
where
    MsgOf<M>: PartialEq,
    ObsOf<M>: PartialEq,
    TimerOf<M>: PartialEq,
{
    point_of_no_return_within(sim, model, record, u64::MAX).turn
}

/// The result of a search for the point of no return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnSearch {
    /// The latest point of no return found, if a single different decision avoids the failure.
    pub turn: Option<Turn>,
    /// Decisions the failing run met, and how many of them (the last ones) were tried.
    pub decisions: usize,
    /// How many of the last decisions were tried.
    pub searched: usize,
    /// The failing run alone has more events than the search may replay in
    /// all: nothing was tried, and `decisions` was not counted.
    pub too_long: bool,
}

impl TurnSearch {
    /// True when every decision was tried, so `turn` is exact.
    pub fn complete(&self) -> bool {
        !self.too_long && self.searched == self.decisions
    }

    /// Nothing to search: the run did not fail, or was longer than the budget.
    fn none(too_long: bool) -> TurnSearch {
        TurnSearch {
            turn: None,
            decisions: 0,
            searched: 0,
            too_long,
        }
    }
}

/// Finds the point of no return of a failing record.
///
/// For every decision the run meets, it tries a few single alternatives (for
/// a yes/no decision the other answer; for a range its minimum, maximum and
/// middle), each with every other decision as recorded. Of those that avoid
/// the failure's signature, the one whose change shows latest in the trace
/// gives the step: up to that step a different decision could still prevent
/// the failure, after it no single one can. `None` if no single change avoids
/// it (a failure already fixed by the configuration).
///
/// Each alternative is one replay of the whole run, so the search costs about
/// (decisions × 4 × events). It goes from the last decision backwards and
/// stops before the replays would pass `max_events` events in all; the
/// result then covers the last `searched` decisions only, which the caller
/// says. The replay it compares against keeps the run's every trace entry,
/// so a run longer than `max_events` is not searched at all (`too_long`): one
/// untraced replay finds that out first, and a run that does not fail costs
/// only that replay. Ties go to the earliest decision and alternative, whatever the order
/// of the search, so a bounded and an unbounded search agree when both find
/// the same latest step.
pub fn point_of_no_return_within<M: Model>(
    sim: &mut Sim<M>,
    model: &M,
    record: &Record,
    max_events: u64,
) -> TurnSearch
where
    MsgOf<M>: PartialEq,
    ObsOf<M>: PartialEq,
    TimerOf<M>: PartialEq,
{
    let first = replay_unrecorded(sim, model, record, false, &mut NoTrace);
    let Some(target) = Signature::of(&first.outcome) else {
        return TurnSearch::none(false);
    };
    if first.events > max_events {
        return TurnSearch::none(true);
    }
    let mut base = Recorder::default();
    let report = replay_unrecorded(sim, model, record, true, &mut base);
    if sim.choices.points_overflowed() {
        return TurnSearch::none(true);
    }
    let points = sim.choices.points().to_vec();
    let mut spent: u64 = 0;
    let mut searched = 0;
    // (turn, index of its decision point)
    let mut best: Option<(Turn, usize)> = None;
    for (k, p) in points.iter().enumerate().rev() {
        if spent >= max_events {
            break;
        }
        searched += 1;
        let value = record.get(p.stream, p.index as usize).min(p.arity - 1);
        let top = p.arity - 1;
        let mut alts = vec![0, 1, top, top / 2];
        alts.sort_unstable();
        alts.dedup();
        for alt in alts.into_iter().filter(|&a| a != value && a <= top) {
            let mut c = record.clone();
            c.set(p.stream, p.index as usize, alt);
            let mut rec = Recorder::default();
            let r = replay_unrecorded(sim, model, &c, false, &mut rec);
            spent = spent.saturating_add(r.events.max(1));
            if Signature::of(&r.outcome).as_ref() == Some(&target) {
                continue;
            }
            let entry = base
                .entries
                .iter()
                .zip(rec.entries.iter())
                .position(|(a, b)| a != b)
                .unwrap_or(base.entries.len().min(rec.entries.len()));
            let step = base
                .entries
                .get(entry)
                .or(rec.entries.get(entry))
                .map_or(report.events, |e| e.step);
            let better = best
                .as_ref()
                .is_none_or(|(b, bk)| step > b.step || (step == b.step && k < *bk));
            if better {
                best = Some((
                    Turn {
                        step,
                        entry,
                        stream: p.stream,
                        index: p.index,
                        value,
                        alternative: alt,
                    },
                    k,
                ));
            }
        }
    }
    TurnSearch {
        turn: best.map(|(t, _)| t),
        decisions: points.len(),
        searched,
        too_long: false,
    }
}
