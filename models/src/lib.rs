//! idemsim's actors, their design variants, and the domain's invariants.
//!
//! Depends on `sim`; `sim` never depends on this crate. Actors report effects
//! where they land in the outside world (the bank's transfers, a consumer's
//! handled events); the [`ledger`] judges runs on those alone.

pub mod ledger;
pub mod messaging;
pub mod msg;
pub mod node;
pub mod payment;
pub mod scenario;
pub mod situation;

pub use ledger::{Ledger, Obs};
pub use msg::Msg;
pub use node::{Node, System};
pub use scenario::{Scenario, ScenarioError};
