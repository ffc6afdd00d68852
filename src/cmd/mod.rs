//! One module per subcommand.

pub mod bench;
pub mod check;
pub mod list;
pub mod merge;
pub mod replay;
