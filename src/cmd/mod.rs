//! One module per subcommand.

pub mod check;
pub mod list;
pub mod replay;
pub mod verify;
