//! The integration tests of the idemsim package, as one test binary: one
//! module per area, all sharing the harness in `support` (loading scenarios,
//! sweeping seeds, running the binary, scratch folders under the target
//! directory). One binary links idemsim once instead of once per file.
//!
//! `cargo test --test it` runs them all; `cargo test --test it shrink::`
//! runs one area.

mod support;

mod advise;
mod book;
mod browser_widths;
mod catalog;
mod chain;
mod check_protections;
mod chrome;
mod ci_recipe;
mod cli;
mod cli_edges;
mod cli_inputs;
mod contention;
mod conventions;
mod design_warnings;
mod determinism;
mod docs;
mod expect_reach;
mod external;
mod formats;
mod fuzz;
mod html;
mod http;
mod input;
mod invariants;
mod jitter;
mod json_doc;
mod learn;
mod library;
mod load;
mod messaging;
mod module_cycles;
mod network;
mod perf_cli;
mod reconcile;
mod regressions;
mod render_parsers;
mod rollouts;
mod scale;
mod seed_flags;
mod settings_without_effect;
mod shrink;
mod shrink_as_check;
mod signals;
mod skips;
mod stale_reads;
mod state_panel;
mod sweep;
mod tidy;
