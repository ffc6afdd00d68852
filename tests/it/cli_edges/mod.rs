//! Command-line edges (issue 10): each case is a command line a user or a
//! script may really give, with the exit code and the words it must produce.
//! Every case runs through the shared `support::run_case`, which also fails on
//! a panic, on a hang, and on an exit-2 message without a fix.
//!
//! Its cases are grouped by what they check, with the shards and user
//! scenarios several groups share in `helpers`.

mod helpers;

mod defects;
mod expect;
mod files;
mod limits;
mod output;
mod overrides;
