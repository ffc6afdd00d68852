//! The arguments of `idemsim check`.

use idemsim::testing::shown::Plan;
use sim::exhaustive::Bounds;
use sim::SeedRange;

use crate::cmd::common::{parse_seeds, parse_shard};

#[derive(clap::Args)]
/// The arguments of `idemsim check`.
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file [default: payment-stable-key].
    pub(super) scenario: Option<String>,
    /// Number of seeds to run, 1 to 10^12 [default: the scenario's run.runs].
    #[arg(long, conflicts_with = "seeds")]
    pub(super) runs: Option<u64>,
    /// Seed range A..B (B exclusive) or A..=B (B inclusive), at most 10^12 seeds;
    /// A..=18446744073709551615 ends at the last seed.
    #[arg(long, value_parser = parse_seeds)]
    pub(super) seeds: Option<SeedRange>,
    /// Check one seed alone: the range N..=N.
    #[arg(long, value_name = "N", conflicts_with_all = ["runs", "seeds"])]
    pub(super) seed: Option<u64>,
    /// Run only shard I of N (0-based) of the seed range; `idemsim merge` combines the shards' --json output.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, conflicts_with = "exhaustive")]
    pub(super) shard: Option<(u64, u64)>,
    /// Worker threads [default: all cores]. The output does not depend on it.
    #[arg(long)]
    pub(super) jobs: Option<usize>,
    /// JSON Lines on stdout; human text goes to stderr.
    #[arg(long)]
    pub(super) json: bool,
    /// Override a scenario key before validation, e.g. client.retry.max_attempts=3.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(super) set: Vec<String>,
    /// Do not shrink the lowest failing seed (see docs/shrinking.md).
    #[arg(long)]
    pub(super) no_shrink: bool,
    /// Write the lowest failing run (shrunk unless --no-shrink) as a repro file.
    #[arg(long, value_name = "FILE")]
    pub(super) repro_out: Option<String>,
    /// Most candidate reruns shrinking may spend [default: 20000].
    #[arg(long, value_name = "N")]
    pub(super) shrink_max_runs: Option<u32>,
    /// Most wall-clock milliseconds shrinking may take [default: 30000].
    #[arg(long, value_name = "MS")]
    pub(super) shrink_budget_ms: Option<u64>,
    /// Write the HTML report of the lowest failing run (shrunk unless --no-shrink) into DIR
    /// (see docs/report.md).
    #[arg(long, value_name = "DIR")]
    pub(super) html: Option<std::path::PathBuf>,
    /// Enumerate every schedule with at most --max-faults faults instead of sampling seeds.
    #[arg(long, conflicts_with_all = ["runs", "seeds", "seed"])]
    pub(super) exhaustive: bool,
    #[command(flatten)]
    pub(super) regressions: idemsim::regressions::Flags,
    /// Most non-zero decisions (lost or duplicated messages, crashes, maximal delays) per schedule.
    #[arg(long, value_name = "K", default_value_t = 2, requires = "exhaustive")]
    pub(super) max_faults: u32,
    /// Bound on the schedules exhaustive mode runs; hitting it is "inconclusive".
    #[arg(long, default_value_t = Bounds::default().max_schedules, requires = "exhaustive")]
    pub(super) max_schedules: u64,
    /// Bound on the events of all exhaustive schedules together; hitting it is "inconclusive".
    #[arg(long, default_value_t = Bounds::default().max_events, requires = "exhaustive")]
    pub(super) max_events: u64,
    /// With an external program (docs/protocol.md): run this many first seeds
    /// twice before the sweep and stop if the program answers differently (0 skips).
    #[arg(long, value_name = "N", default_value_t = idemsim::external::DETERMINISM_SEEDS)]
    pub(super) determinism_seeds: u64,
    /// How to search the runs: every seed, then exhaustive search to fault
    /// bound 3 and a coverage-guided search, a quarter of the budget each
    /// (portfolio); every seed alone (seeds); or coverage-guided mutation of
    /// recorded decisions, --runs schedules at most, from the seed range's
    /// start (coverage) [default: the scenario's run.strategy, else
    /// portfolio]. Coverage takes no --shard, whether it comes from this
    /// flag or from the file's run.strategy.
    // (check.rs refuses the pair, since the file's run.strategy counts too.)
    #[arg(long, value_enum, conflicts_with = "exhaustive")]
    pub(super) strategy: Option<StrategyArg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
/// The `--strategy` values.
pub enum StrategyArg {
    /// Every seed of the range, then exhaustive and coverage-guided search.
    Portfolio,
    /// Every seed of the range.
    Seeds,
    /// Coverage-guided mutation of recorded decisions.
    Coverage,
}

/// How `check` searches: `--strategy`, else the file's `run.strategy`, else
/// the portfolio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Search {
    /// The seed sweep, then (with `portfolio`) the portfolio's searches.
    Seeds { portfolio: bool },
    /// The coverage-guided search.
    Coverage,
}

impl Search {
    /// What `--strategy` (`arg`) and the scenario `s` ask for: without
    /// the flag, what `s` states, else the portfolio
    /// (`idemsim::testing::shown::Plan`, which `shrink` follows too).
    pub(super) fn of(arg: Option<StrategyArg>, s: &models::Scenario) -> Search {
        match arg {
            Some(StrategyArg::Coverage) => Search::Coverage,
            Some(StrategyArg::Seeds) => Search::Seeds { portfolio: false },
            Some(StrategyArg::Portfolio) => Search::Seeds { portfolio: true },
            None => match Plan::of(s) {
                Plan::Coverage => Search::Coverage,
                Plan::Seeds => Search::Seeds { portfolio: false },
                // Nothing names a strategy: the portfolio finds rare bugs too.
                Plan::Portfolio => Search::Seeds { portfolio: true },
            },
        }
    }
}
