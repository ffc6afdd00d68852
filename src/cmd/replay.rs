use crate::render;
use crate::scenarios::{self, UsageError};
use sim::{Recorder, Sim, Source};

#[derive(clap::Args)]
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file.
    scenario: String,
    /// The seed to replay.
    #[arg(long)]
    seed: u64,
    /// Override a scenario key before validation, e.g. client.key=stable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

pub fn run(a: Args) -> Result<u8, UsageError> {
    let overrides = scenarios::parse_overrides(&a.set)?;
    let s = scenarios::load(&a.scenario, &overrides)?;
    let mut sim = Sim::new(&s.system);
    let mut rec = Recorder::default();
    let report = sim.run(
        &s.system,
        Source::Seed {
            seed: a.seed,
            record: false,
        },
        &mut rec,
    );
    println!("# {} · seed {} · {} events", s.name, a.seed, report.events);
    print!("{}", render::text(&s.system.world, &rec.entries));
    println!("=> {}", render::outcome_sentence(&report.outcome));
    Ok(super::check::exit_code(&report.outcome))
}
