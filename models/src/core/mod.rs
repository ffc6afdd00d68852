//! What every model shares: business operations, the observations actors
//! report, the effect ledger and its invariants, the plug-in interface, and
//! the components models are built from (retry policy and its scenario table,
//! retry budget, circuit breaker, a client's record of an operation, windowed
//! dedup store, slot pool).
//! Nothing here knows a model.

pub mod breaker;
pub mod budget;
pub mod client_op;
pub mod dedup;
pub mod design_warning;
pub mod hist;
pub mod ids;
pub mod input;
pub mod invariants;
pub mod landings;
pub mod ledger;
pub mod model;
pub mod obs;
pub mod op;
mod oracle;
pub(crate) mod overlay;
pub mod preset;
pub mod repair;
pub mod retry;
pub mod retry_table;
pub mod shown;
pub mod slots;
pub mod table;
pub mod unused;
pub mod wire;

pub use design_warning::DesignWarning;
pub use ledger::Ledger;
pub use model::{BuildInput, Built, LoadOf, MeaningChange, Metric, ModelSpec, SituationDoc};
pub use obs::{AttemptOutcome, Change, Ending, Layer, Obs, Per, Site};
pub use op::{Key, Op, Space};
pub use preset::{Allowed, Preset, PresetRule, PresetSetting};
pub use repair::Repair;
pub use unused::Unused;
pub use wire::{Carries, Ends};
