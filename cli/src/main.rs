//! The `idemsim` binary: parses the command line, runs one command and turns
//! its result into an exit code. Scenarios, runs, shrinking, traces, reports
//! and repro files are the `idemsim` library's (src/lib.rs); the commands here
//! only read flags, call it and print.

// Every function here is short (the limit is in clippy.toml); this keeps it
// so under `clippy -D warnings`.
#![warn(clippy::too_many_lines)]

mod alloc_count;
mod cmd;

use clap::{Parser, Subcommand};
use idemsim::{catalog, exit, out};
use std::process::ExitCode;

/// Counts allocations while `idemsim bench` measures them; otherwise one load per allocation.
#[global_allocator]
static ALLOC: alloc_count::CountingAlloc = alloc_count::CountingAlloc;

#[derive(Parser)]
#[command(
    name = "idemsim",
    version,
    about = "Seeded, deterministic simulation of at-least-once delivery and idempotency",
    long_about = "idemsim runs clients, lossy networks, services and banks under many seeded \
schedules and checks that every business effect happens exactly once.\n\n\
Exit codes: 0 holds, 1 invariant violated, 2 bad usage or scenario file, 3 inconclusive."
)]
struct Cli {
    /// A folder of scenario .toml files to use on top of the built-in ones
    /// (repeatable; the first wins; also IDEMSIM_SCENARIOS, separated like PATH).
    #[arg(
        long = "scenarios",
        id = "scenario_dirs",
        value_name = "DIR",
        global = true
    )]
    scenarios: Vec<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run many seeds of a scenario and give the verdict.
    Check(cmd::check::Args),
    /// Print the full trace of one run.
    Replay(cmd::replay::Args),
    /// Shrink a failing seed to a minimal run; print it, write a repro file.
    Shrink(cmd::shrink::Args),
    /// Write one run as a self-contained HTML report: diagram, states, ledger.
    Report(cmd::report::Args),
    /// List the scenarios with their summary and expected verdict.
    List(cmd::list::Args),
    /// What every model declares (tables, message kinds, situations) and the invariants.
    Models(cmd::models::Args),
    /// Measure schedules/s, events/s and peak memory against the bare event loop.
    Bench(cmd::bench::Args),
    /// Combine the --json summaries of `check --shard I/N` runs into one.
    Merge(cmd::merge::Args),
    /// Run design variants (the cross product of --set values) on the same seeds and compare them.
    Sweep(cmd::sweep::Args),
    /// Replay one run's decisions under another design and show both traces side by side.
    Diff(cmd::diff::Args),
    /// Run every scenario against its [expect]; exit 0 only if all match.
    Verify(cmd::verify::Args),
    /// Find the smallest sets of settings that make a failing scenario hold, ranked by cost.
    Advise(cmd::advise::Args),
    /// List the learning path's exercises; `learn check N` grades an answer.
    Learn(cmd::learn::Args),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::Args),
    /// Print the man page, or write one page per command into a folder.
    Man(cmd::man::Args),
}

fn main() -> ExitCode {
    // A panic inside a model is reported as a failure of its seed; printing
    // each one as it happens would bury the summary of a sweep.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !sim::inside_model() {
            default_hook(info);
        }
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { exit::BAD_INPUT } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    catalog::set_folders(cli.scenarios);
    let result = match cli.command {
        Command::Check(a) => cmd::check::run(a),
        Command::Replay(a) => cmd::replay::run(a),
        Command::List(a) => cmd::list::run(a),
        Command::Models(a) => cmd::models::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Sweep(a) => cmd::sweep::run(a),
        Command::Diff(a) => cmd::diff::run(a),
        Command::Shrink(a) => cmd::shrink::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::Advise(a) => cmd::advise::run(a),
        Command::Learn(a) => cmd::learn::run(a),
        Command::Completions(a) => {
            cmd::completions::run(a, <Cli as clap::CommandFactory>::command())
        }
        Command::Man(a) => cmd::man::run(a, <Cli as clap::CommandFactory>::command()),
    };
    out::flush();
    let code = match result {
        // Output that could not be written (other than to a closed pipe) is a failed command.
        Ok(_) if out::stdout_failed() => ExitCode::from(exit::BAD_INPUT),
        Ok(code) => ExitCode::from(idemsim::signals::exit_code(code)),
        Err(e) => {
            idemsim::eout!("{e}");
            if !e.to_string().ends_with('\n') {
                idemsim::eoutln!();
            }
            ExitCode::from(exit::BAD_INPUT)
        }
    };
    // After the result: an error stays the first line of stderr.
    for note in idemsim::catalog::take_notes() {
        idemsim::eoutln!("{note}");
    }
    code
}
