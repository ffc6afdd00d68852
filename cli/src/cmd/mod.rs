//! One module per subcommand.

pub mod advise;
pub mod bench;
pub mod check;
pub mod common;
pub mod completions;
pub mod diff;
pub mod learn;
pub mod list;
pub mod man;
pub mod merge;
pub mod models;
pub mod replay;
pub mod report;
pub mod shrink;
pub mod sweep;
pub mod verify;
