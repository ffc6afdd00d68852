//! The plug-in interface: what a model declares so that the loader, the
//! ledger and the command line can work with it without knowing it.

use super::input::LoadError;
use super::obs::Layer;
use sim::{SituationId, TimeUs};

/// A named situation a model's actors report.
#[derive(Debug, PartialEq, Eq)]
pub struct SituationDoc {
    pub id: SituationId,
    /// Stable: scenario files and JSON use it.
    pub name: &'static str,
    /// One sentence: the mechanism that happened.
    pub doc: &'static str,
}

/// A column `sweep` can show: each model lists those that mean something for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Runs in which some operation took effect twice or more.
    Duplicated,
    /// Runs in which some owed effect is missing at the end.
    Lost,
    /// Share of operations that ended "unknown", for a person to reconcile.
    Unknown,
    /// Client attempts per operation.
    AttemptsPerOperation,
    /// Requests a layer received per operation (retries multiply across layers).
    ReceivedPerOperation(&'static Layer),
    /// A layer's busiest second, averaged over runs.
    PeakPerSecond(&'static Layer),
    /// From intent (or commit) to first effect, p50 and p99.
    TimeToEffect,
    /// The most keys a dedup store held.
    DedupKeys,
}

/// What a model's loader gets besides the text: the shared limits it must
/// respect (no operation may start after the run's time limit).
#[derive(Clone, Copy, Debug)]
pub struct BuildInput<'a> {
    /// The scenario text with overrides applied; the model parses its own
    /// tables from it (unknown keys inside them are errors).
    pub text: &'a str,
    pub fault_phase_us: TimeUs,
    pub max_time_us: TimeUs,
}

/// The actors a model built from a scenario, in world order.
pub struct Built<N> {
    pub actors: Vec<(String, N)>,
    /// Ends the help of an unknown-actor error, e.g. how to get more consumers.
    pub actors_hint: &'static str,
}

/// A model: one folder under `models/src`, one line in the registry.
pub trait ModelSpec<N>: Sync {
    /// `model = "..."` in scenario files.
    fn name(&self) -> &'static str;
    /// One line for `idemsim models` and the docs.
    fn about(&self) -> &'static str;
    /// The top-level keys this model adds to the shared ones
    /// (`summary`, `model`, `expect`, `run`, `network`, `crashes`).
    fn tables(&self) -> &'static [&'static str];
    /// Parses and validates the model's tables into actors.
    fn build(&self, input: &BuildInput<'_>) -> Result<Built<N>, LoadError>;
    fn situations(&self) -> &'static [SituationDoc];
    fn metrics(&self) -> &'static [Metric];
    /// The catalog scenario `idemsim bench --all` measures for this model, its
    /// reference design; `None` means the model's first holding scenario.
    fn reference_scenario(&self) -> Option<&'static str> {
        None
    }
}
