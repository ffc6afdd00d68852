//! One module per subcommand.

pub mod check;
pub mod diff;
pub mod list;
pub mod replay;
pub mod shrink;
pub mod sweep;
pub mod verify;
