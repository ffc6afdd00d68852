//! The `idemsim` command line as a library: the commands, the trace and
//! report formats, and the scenario catalog. The binary (`src/main.rs`) only
//! parses arguments; tests and users call these modules directly.

pub mod alloc_count;
pub mod cmd;
pub mod progress;
pub mod render;
pub mod scenarios;

/// Exit codes: outcome classes, documented in the README.
pub mod exit {
    pub const HOLDS: u8 = 0;
    pub const VIOLATION: u8 = 1;
    pub const BAD_INPUT: u8 = 2;
    pub const INCONCLUSIVE: u8 = 3;
}
