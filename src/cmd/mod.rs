//! One module per subcommand.

pub mod check;
pub mod diff;
pub mod list;
pub mod replay;
pub mod sweep;
