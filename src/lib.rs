//! The `idemsim` command line as a library: the commands, the trace and
//! report formats, and the scenario catalog. The binary (`src/main.rs`) only
//! parses arguments; tests and users call these modules directly.

#![warn(missing_docs)]
// Functions stay short (70 code lines, clippy.toml); CI denies warnings.
#![warn(clippy::too_many_lines)]

pub mod advise;
pub mod catalog;
pub mod external;
pub mod learn;
pub mod meaning;
pub mod minimize;
pub mod out;
pub mod progress;
pub mod regressions;
pub mod render;
pub mod repro;
pub mod shell;
pub mod signals;
pub mod stats;
pub mod testing;

/// The catalog's name before 0.2: [`catalog`]. Kept so code written against
/// `idemsim::scenarios` still builds; `models::scenario` is one scenario's
/// format, this was always the set of them.
#[doc(hidden)]
pub use catalog as scenarios;

/// The guide to idemsim as a library (`docs/library.md`): the actor, a
/// minimal model, sweeps, shrinking, traces, repro files, tests and proptest.
/// Its code blocks run as doctests.
#[doc = include_str!("../docs/library.md")]
pub mod guide {}

/// Exit codes: outcome classes, documented in the README.
pub mod exit {
    /// Every run holds.
    pub const HOLDS: u8 = 0;
    /// An invariant was violated (or a model panicked) in at least one run.
    pub const VIOLATION: u8 = 1;
    /// Bad usage or a bad scenario file.
    pub const BAD_INPUT: u8 = 2;
    /// No violation, but some run hit a limit.
    pub const INCONCLUSIVE: u8 = 3;
}
