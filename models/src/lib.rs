//! idemsim's models: the actors, their design variants, and the effect ledger.
//!
//! Layering (no cycles): [`core`] knows no model; each model folder
//! ([`payment`], [`messaging`], [`http`], [`contention`]) depends on `core` alone, a composed
//! model ([`chain`]) on `core` and the models it composes; every model is
//! generic over the world's message type; [`registry`] lists the models and
//! builds the world's message and actor enums; [`scenario`] loads scenario
//! files through the registry. Actors report effects where they land in the outside world;
//! the ledger judges runs on those alone.

#![warn(missing_docs)]
// Functions stay short (70 code lines, clippy.toml); CI denies warnings.
#![warn(clippy::too_many_lines)]

pub mod chain;
pub mod contention;
pub mod core;
pub mod external;
pub mod http;
pub mod messaging;
pub mod payment;
pub mod registry;
pub mod scenario;

pub use crate::core::{Ledger, Obs};
pub use registry::{Msg, Node, NodeState, NodeStorage, NodeTimer, System, ACTOR_KINDS};
pub use scenario::{Scenario, ScenarioError};
