//! Bad input files for `replay --repro`, `report --repro`, `merge` and
//! `diff`, found by fuzzing them: each case is a file a user may really hold
//! (edited, truncated, from another run, from someone else), with the exit
//! code and the words it must produce. Every case runs through the shared
//! `common::run_case`, which also fails on a panic, on a hang, and on an
//! exit-2 message without a fix; `support::check` adds the words it must
//! not show.
//!
//! One test binary; its cases are grouped by the file they feed in, with
//! the scratch folders, scenario files and shards they share in `support`.

#[path = "../common/mod.rs"]
mod common;
mod support;

mod merge;
mod regressions;
mod repros;
mod scenario_files;
