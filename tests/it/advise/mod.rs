//! `idemsim advise`: it finds the known fix of every failing catalog
//! scenario whose fix is a setting, its first-ranked fix holds under
//! `verify`'s budget (`fixes.rs`), and the command line's output, exit codes
//! and budget (`cli.rs`).

mod cli;
mod fixes;
