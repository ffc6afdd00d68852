//! The plug-in interface: what a model declares so that the loader, the
//! ledger and the command line can work with it without knowing it.

use super::input::LoadError;
use super::obs::Layer;
use sim::{SituationId, TimeUs};

/// A named situation a model's actors report.
#[derive(Debug, PartialEq, Eq)]
pub struct SituationDoc {
    /// Its id, as the registry numbers it (`registry::Declares`).
    pub id: SituationId,
    /// Stable: scenario files and JSON use it.
    pub name: &'static str,
    /// One sentence: the mechanism that happened.
    pub doc: &'static str,
}

/// A load figure: what a sweep's `attempts/op` and `LAYER/op` columns,
/// check's `load:` line and `[expect] max_load` count, named as they say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadOf {
    /// Client attempts, per client operation.
    Attempts,
    /// What a layer received, per what the layer says (`Layer::per`).
    Layer(&'static Layer),
}

impl LoadOf {
    /// The loads a model counts, in the order of its metrics.
    pub fn of_metrics(metrics: &[Metric]) -> impl Iterator<Item = LoadOf> + '_ {
        metrics.iter().filter_map(|m| match m {
            Metric::AttemptsPerOperation => Some(LoadOf::Attempts),
            Metric::ReceivedPerOperation(layer) => Some(LoadOf::Layer(layer)),
            _ => None,
        })
    }

    /// `attempts`, or the layer's name.
    pub fn name(self) -> &'static str {
        match self {
            LoadOf::Attempts => "attempts",
            LoadOf::Layer(l) => l.name,
        }
    }

    /// What it is per.
    pub fn per(self) -> super::Per {
        match self {
            LoadOf::Attempts => super::Per::Operation,
            LoadOf::Layer(l) => l.per,
        }
    }

    /// Its count in a sweep's tally.
    pub fn count(self, t: &sim::Tally) -> u64 {
        let (name, slot) = match self {
            LoadOf::Attempts => (super::ledger::counter::ATTEMPTS, 0),
            LoadOf::Layer(l) => (super::ledger::counter::RECEIVED, usize::from(l.index)),
        };
        t.counter(name)
            .and_then(|v| v.get(slot))
            .copied()
            .unwrap_or(0)
    }

    /// Count per operation (or event) in a sweep's tally; `None` when none ran.
    pub fn ratio(self, t: &sim::Tally) -> Option<f64> {
        let of = t
            .counter(self.per().counter())
            .and_then(|v| v.first())
            .copied()
            .unwrap_or(0);
        (of > 0).then(|| self.count(t) as f64 / of as f64)
    }
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
    /// Client attempts in a run, all operations together, mean over runs:
    /// the total work of a run (the "calls" of AWS's backoff experiment).
    AttemptsPerRun,
    /// From a run's first intent to its last operation's end, mean over the
    /// runs in which every operation ended (the "completion time" of AWS's
    /// backoff experiment).
    CompletionTime,
    /// Requests a layer refused because it was full, per operation.
    ShedPerOperation(&'static Layer),
    /// Share of the requests a layer's workers took whose client had
    /// already stopped waiting for them.
    Wasted(&'static Layer),
    /// How long after the faults stopped a layer still shed requests or
    /// worked for nobody, averaged over runs.
    OverloadAfterFaults(&'static Layer),
    /// Retries that clients' budgets refused, per operation.
    RetriesDenied,
    /// Attempts that clients' open breakers refused, per operation.
    FastFailed,
}

/// What a model's loader gets besides the text: the shared limits it must
/// respect (no operation may start after the run's time limit).
#[derive(Clone, Copy, Debug)]
pub struct BuildInput<'a> {
    /// The scenario text with overrides applied; the model parses its own
    /// tables from it (unknown keys inside them are errors).
    pub text: &'a str,
    /// When faults stop (the run's `fault_phase_ms`).
    pub fault_phase_us: TimeUs,
    /// The run's time limit: no operation may start after it.
    pub max_time_us: TimeUs,
    /// The scenario file's folder, where relative paths in it point (an
    /// external program); `None` for a scenario that is no file (built in).
    pub dir: Option<&'a std::path::Path>,
    /// The network's delays by actor name, for the design warnings.
    pub delays: &'a super::design_warning::Delays,
}

/// The actors a model built from a scenario, in world order.
pub struct Built<N> {
    /// Each actor's name and the actor, in world order.
    pub actors: Vec<(String, N)>,
    /// Ends the help of an unknown-actor error, e.g. how to get more consumers.
    pub actors_hint: &'static str,
    /// Gaps in the design its settings show, whether or not a run reaches them.
    pub design_warnings: Vec<super::DesignWarning>,
    /// Keys the settings leave without effect, written in the file or not:
    /// the loader reports those the scenario writes (`core::unused`).
    pub unused: Vec<super::Unused>,
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
    /// The message kinds its actors send: what `[[network.links]] kinds` may name.
    fn message_kinds(&self) -> Vec<&'static str>;
    /// The situations its actors report, with their names and meaning.
    fn situations(&self) -> &'static [SituationDoc];
    /// The `sweep` columns that mean something for it.
    fn metrics(&self) -> &'static [Metric];
    /// The catalog scenario `idemsim bench --all` measures for this model, its
    /// reference design; `None` means the model's first holding scenario.
    fn reference_scenario(&self) -> Option<&'static str> {
        None
    }
    /// The real systems' defaults it offers as `preset = "..."` in its tables.
    fn presets(&self) -> &'static [super::preset::Preset] {
        &[]
    }
    /// The protections `idemsim advise` may add to a failing design of this
    /// model, each with its safe value (`core::repair`); none by default.
    fn repairs(&self) -> &'static [super::Repair] {
        &[]
    }
    /// Its keys whose meaning changed in a version of the scenario format:
    /// an older file is refused, one naming no format is warned, each time
    /// naming the change (`scenario::format`).
    fn meaning_changes(&self) -> &'static [MeaningChange] {
        &[]
    }
}

/// A key whose meaning changed in a version of the scenario format.
#[derive(Debug)]
pub struct MeaningChange {
    /// The first format version with today's meaning.
    pub since: u64,
    /// The full key path: `bank.status_query`.
    pub key: &'static str,
    /// The value whose meaning changed, as TOML: `true`.
    pub value: &'static str,
    /// Keys that, written beside it, say which meaning the file wants.
    pub unless: &'static [&'static str],
    /// What the value meant before `since`.
    pub before: &'static str,
    /// What it means since, and how to ask for the old meaning.
    pub now: &'static str,
}
