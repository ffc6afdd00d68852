//! `idemsim replay`: the full trace of one run, from a seed or a repro file.

use idemsim::catalog::{self, UsageError};
use idemsim::render::formats::{self, Format};

#[derive(clap::Args)]
/// The arguments of `idemsim replay`.
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file; with
    /// --repro, the repro's scenario [default: the built-in it names, or its
    /// file in the repro's folder or below it].
    #[arg(required_unless_present = "repro")]
    scenario: Option<String>,
    /// The seed to replay.
    #[arg(long, required_unless_present = "repro", conflicts_with = "repro")]
    seed: Option<u64>,
    /// Replay a repro file written by `idemsim shrink --out` or `check --repro-out`.
    #[arg(long, value_name = "FILE")]
    repro: Option<String>,
    /// Trace format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Override a scenario key before validation, e.g. client.key=stable.
    #[arg(long = "set", value_name = "KEY=VALUE", conflicts_with = "repro")]
    set: Vec<String>,
    /// Instead of the trace, the lines an external program got (→) and wrote (←) (docs/protocol.md).
    #[arg(long, conflicts_with = "format")]
    transcript: bool,
}

/// Runs `idemsim replay`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    // The run: a repro's record, or a seed (`Err`), traced from the seed.
    let (s, run, source) = match &a.repro {
        Some(path) => {
            let l = idemsim::repro::load_repro(path, a.scenario.as_deref(), "replay")?;
            idemsim::signals::install_for(&l.scenario);
            (l.scenario, Ok(l.record), format!("repro file {path}"))
        }
        None => {
            let overrides = catalog::parse_overrides(&a.set)?;
            let name = a
                .scenario
                .as_deref()
                .expect("clap requires it without --repro");
            let s = catalog::load(name, &overrides)?;
            idemsim::signals::install_for(&s);
            let seed = a.seed.expect("clap requires it without --repro");
            (s, Err(seed), format!("seed {seed}"))
        }
    };
    if a.transcript {
        let record = match run {
            Ok(record) => record,
            Err(seed) => {
                let mut sim = sim::Sim::new(&s.system);
                let (record, _) = sim::shrink::record_seed(&mut sim, &s.system, seed);
                if sim.choices.recorded_overflowed() {
                    return Err(too_long_to_record(&source));
                }
                record
            }
        };
        let (text, report) = idemsim::external::transcript_text(&s, &record)?;
        if let Some(code) = idemsim::signals::broke_off("no transcript printed") {
            return Ok(code);
        }
        idemsim::out!("{text}");
        idemsim::external::check_outcome(&s, &source, &report.outcome)?;
        return Ok(super::common::exit_code(&report.outcome));
    }
    // A seed's run is traced from the seed: a long one is never recorded.
    let (trace, report) = match &run {
        Ok(record) => idemsim::minimize::traced(&s, record, source.clone(), None),
        Err(seed) => idemsim::minimize::traced_seed(&s, *seed),
    };
    if let Some(code) = idemsim::signals::broke_off("no trace printed") {
        return Ok(code);
    }
    idemsim::out!("{}", formats::render(a.format, &trace));
    idemsim::external::check_outcome(&s, &source, &report.outcome)?;
    Ok(super::common::exit_code(&report.outcome))
}

/// A run that makes more decisions than a record holds has no transcript:
/// a record cut short replays another run.
fn too_long_to_record(source: &str) -> UsageError {
    UsageError(format!(
        "error: {source}'s run makes more than {} decisions, too many to record for its transcript\nhelp: lower run.max_steps, or replay it without --transcript for its trace\n",
        sim::MAX_RECORDED_VALUES
    ))
}
