//! idemsim's engine: a seeded, deterministic discrete-event simulator.
//!
//! It knows nothing about payments. It owns virtual time, the event queue, the
//! one recorded source of nondeterminism ([`choice`]), network faults, crashes,
//! the two phases of a run, limits, traces and the calls into a model's oracle.
//! A run is a pure function of its seed (or of its record): no wall clock, no
//! OS randomness, no hash-order iteration anywhere in here.

#![warn(missing_docs)]
// Functions stay short (70 code lines, clippy.toml); CI denies warnings.
#![warn(clippy::too_many_lines)]

pub mod actor;
pub mod bench;
pub mod chacha;
pub mod choice;
mod compose;
#[doc(hidden)]
pub use compose::{compose_kind_mismatch, compose_reset_aside};
pub mod coverage;
pub mod engine;
pub mod exhaustive;
pub mod explore;
#[cfg(test)]
mod laws;
mod plain;
pub mod shrink;
pub mod situation;
mod timer_slots;
pub mod trace;
pub mod world;

pub use actor::{
    Actor, ActorId, Command, Context, Ctx, Fresh, Message, Narrow, NoTimer, TimeUs, Timer,
    US_PER_MS, US_PER_S,
};
#[doc(hidden)]
pub use choice::with_record_bound;
pub use choice::{
    ChoicePoint, Choices, Record, StreamId, StreamKind, StreamLayout, MAX_LOGGED_POINTS,
    MAX_RECORDED_VALUES,
};
pub use coverage::{coverage_search, CoverageConfig, CoverageReport};
pub use engine::{
    Counter, EntryOf, FaultCounts, Limit, Merge, Model, MsgOf, ObsOf, Oracle, Outcome, RunReport,
    Sim, Source, TimerOf, Violation,
};
pub use explore::{
    explore, find_failure, guarded, inside_model, run_guarded, Failure, SeedRange, Summary, Tally,
};
pub use plain::{Judge, Plain, PlainOracle, Tick};
pub use shrink::{ShrinkLimits, Shrunk, Signature, Turn};
pub use situation::{SituationId, SituationSet, MAX_SITUATIONS};
pub use trace::{DropReason, Held, NoTrace, Recorder, TraceEntry, TraceKind, Tracer};
pub use world::{
    CrashConfig, KindFault, Limits, LinkConfig, Partition, PerMilleRange, RandomPartition, World,
    MAX_ACTORS,
};
