//! Bad input files for `replay --repro`, `report --repro`, `merge` and
//! `diff`, found by fuzzing them: each case is a file a user may really hold
//! (edited, truncated, from another run, from someone else), with the exit
//! code and the words it must produce. Every case runs through the shared
//! `support::run_case`, which also fails on a panic, on a hang, and on an
//! exit-2 message without a fix; `helpers::check` adds the words it must
//! not show.
//!
//! Its cases are grouped by the file they feed in, with the scenario files
//! and shards they share in `helpers`.

mod helpers;

mod merge;
mod regressions;
mod repros;
mod scenario_files;
