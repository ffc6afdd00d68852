//! Shrinking a failing run to a locally minimal one, generic over every [`Model`].
//!
//! It works on the run's recorded decisions ([`Record`]), never on the model:
//! a record is one list of decision values per stream, every list of numbers
//! is a valid run (replay reads zeros past the end and clamps values), and zero
//! is always the least eventful value. So shrinking is Hypothesis's reduction:
//! delete spans of decisions, cut streams short, set single values to zero and
//! lower the rest by binary search; rerun each candidate; keep it when the run
//! still fails with the same [`Signature`] and its record is smaller.
//!
//! "Smaller" is the order [`smaller_run`]: fewer nonzero decisions first, then
//! a smaller sum of values, then fewer events, then a shorter record, then
//! lexicographic. A candidate is kept only if its run also has at most
//! [`EVENTS_GROWTH_MAX`] times the original run's events: a fault the
//! failure does not need goes even when the run gets longer without it, and
//! a shrunk trace is never more than twice as long as the one it came from.
//! Every kept change strictly descends this well-founded
//! order, so shrinking terminates; a budget of reruns (and whatever the caller
//! adds through `should_stop`, such as wall time) caps its cost anyway. When
//! the passes reach a fixpoint within the budget, the result is locally
//! minimal: zeroing any one remaining nonzero decision (a lost message, a
//! duplicate, a crash, a delay above the link's minimum, a drawn fault rate)
//! changes the signature or makes the run more than twice as long as the
//! original, because
//! such a candidate, had it kept the failure, would have been smaller and kept.
//!
//! Everything here is deterministic: the same failing record always shrinks to
//! the same record. Shrinking runs with [`NoTrace`], off the sweep's hot path.
//!
//! [`Model`]: crate::engine::Model
//! [`Record`]: crate::choice::Record
//! [`NoTrace`]: crate::trace::NoTrace

mod common;
mod passes;
mod turn;

pub use common::{
    max_shrunk_events, record_seed, replay, replay_unrecorded, smaller, smaller_run, ShrinkLimits,
    ShrinkProgress, Shrunk, Signature, Stopped, EVENTS_GROWTH_MAX,
};
pub use passes::{shrink, shrink_seed, shrink_seed_with, shrink_with};
pub use turn::{point_of_no_return, point_of_no_return_within, Turn, TurnSearch};

use crate::choice::{StreamId, StreamKind, StreamLayout};
use crate::world::World;

/// The stable name of a stream, as repro files key their choices:
/// `swarm`, `link:service->client`, `crash:service`, `actor:client`.
pub fn stream_name(world: &World, stream: StreamId) -> String {
    let layout = StreamLayout {
        actors: world.actor_count(),
    };
    let name = |a: u32| world.actor_names[a as usize].as_str();
    match layout.kind(stream) {
        StreamKind::Swarm => "swarm".into(),
        StreamKind::Link { from, to } => format!("link:{}->{}", name(from), name(to)),
        StreamKind::Crash { actor } => format!("crash:{}", name(actor)),
        StreamKind::Actor { actor } => format!("actor:{}", name(actor)),
    }
}

/// The stream a name from [`stream_name`] refers to in `world`.
pub fn stream_by_name(world: &World, name: &str) -> Option<StreamId> {
    let layout = StreamLayout {
        actors: world.actor_count(),
    };
    (0..layout.count() as StreamId).find(|&s| stream_name(world, s) == name)
}

#[cfg(test)]
mod tests;
