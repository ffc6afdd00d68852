//! The serde shapes of the tables every scenario shares (`[expect]`,
//! `[run]`, `[network]`, `[crashes]`), with their defaults. They depend on
//! nothing else in the loader, so the modules that check them (`common`,
//! `network`, `links`, `routes`) all point here and never at each other.

use crate::core::input::{PerMille, DAY_MS};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The shared part of a scenario file; the model's own tables are parsed by
/// the model (unknown top-level keys are caught by the loader).
#[derive(Deserialize, Debug)]
pub(super) struct CommonDto {
    /// The scenario format the file was written for (`scenario::format`).
    #[serde(default)]
    pub(super) format: Option<u64>,
    pub(super) summary: String,
    #[serde(default = "default_model")]
    pub(super) model: String,
    /// Optional: a design being explored states no verdict yet.
    #[serde(default)]
    pub(super) expect: Option<ExpectDto>,
    #[serde(default)]
    pub(super) run: RunDto,
    #[serde(default)]
    pub(super) network: NetworkDto,
    #[serde(default)]
    pub(super) crashes: BTreeMap<String, CrashDto>,
}

fn default_model() -> String {
    "payment".into()
}

/// One protection: an override, several applied together, or a table
/// naming the invariant their removal must break.
#[derive(Deserialize, Debug, Clone)]
#[serde(
    untagged,
    deny_unknown_fields,
    expecting = "this is not a protection: write an override \"key=value\", a list of overrides removed together, or { set = \"key=value\", breaks = \"invariant\" }"
)]
pub(super) enum ProtectionDto {
    One(String),
    Together(Vec<String>),
    Table {
        set: OneOrMore,
        #[serde(default)]
        breaks: Option<String>,
    },
}

#[derive(Deserialize, Debug, Clone)]
#[serde(
    untagged,
    expecting = "`set` is an override \"key=value\" or a list of them"
)]
pub(super) enum OneOrMore {
    One(String),
    More(Vec<String>),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct ExpectDto {
    pub(super) verdict: String,
    pub(super) invariant: Option<String>,
    #[serde(default)]
    pub(super) situations: Vec<String>,
    #[serde(default)]
    pub(super) protections: Vec<ProtectionDto>,
    /// Most work a holding run may take per operation, by name (`attempts`,
    /// or a layer: `consumer = 6`).
    #[serde(default)]
    pub(super) max_load: BTreeMap<String, toml::Value>,
    /// Design warnings the settings are meant to carry, by id.
    #[serde(default)]
    pub(super) warnings: Vec<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct RunDto {
    pub(super) runs: u64,
    /// How `check` and `verify` search: "seeds" or "coverage"; `None` when
    /// the file leaves it out (then `check` runs its portfolio).
    pub(super) strategy: Option<String>,
    pub(super) fault_phase_ms: u64,
    pub(super) max_steps: u64,
    pub(super) max_time_ms: u64,
    pub(super) max_queue: u64,
}

impl Default for RunDto {
    fn default() -> Self {
        RunDto {
            runs: 1000,
            strategy: None,
            fault_phase_ms: 120_000,
            max_steps: 100_000,
            max_time_ms: 365 * DAY_MS,
            max_queue: 10_000,
        }
    }
}
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct NetworkDto {
    #[serde(default)]
    pub(super) loss_per_mille: PerMille,
    #[serde(default)]
    pub(super) duplicate_per_mille: PerMille,
    #[serde(default = "one")]
    pub(super) delay_ms_min: u64,
    #[serde(default = "fifty")]
    pub(super) delay_ms_max: u64,
    /// Above 0: a normal delay around the middle of the range, with this
    /// standard deviation (`LinkConfig::delay_sd_us`).
    #[serde(default)]
    pub(super) delay_sd_ms: u64,
    #[serde(default)]
    pub(super) links: Vec<LinkDto>,
    #[serde(default)]
    pub(super) partitions: Vec<PartitionDto>,
    /// Swarm testing: the chance per seed of one random partition between two actors.
    #[serde(default)]
    pub(super) random_partition_per_mille: PerMille,
    #[serde(default = "thousand")]
    pub(super) random_partition_ms_min: u64,
    #[serde(default = "thirty_thousand")]
    pub(super) random_partition_ms_max: u64,
}

impl Default for NetworkDto {
    fn default() -> Self {
        NetworkDto {
            loss_per_mille: PerMille::default(),
            duplicate_per_mille: PerMille::default(),
            delay_ms_min: one(),
            delay_ms_max: fifty(),
            delay_sd_ms: 0,
            links: Vec::new(),
            partitions: Vec::new(),
            random_partition_per_mille: PerMille::default(),
            random_partition_ms_min: thousand(),
            random_partition_ms_max: thirty_thousand(),
        }
    }
}

fn one() -> u64 {
    1
}
fn fifty() -> u64 {
    50
}
fn thousand() -> u64 {
    1000
}
fn thirty_thousand() -> u64 {
    30_000
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct LinkDto {
    /// The sender; left out, every actor.
    pub(super) from: Option<String>,
    /// The receiver; left out, every actor.
    pub(super) to: Option<String>,
    /// Only these message kinds get this entry's loss, duplication and delays.
    pub(super) kinds: Option<Vec<String>>,
    pub(super) loss_per_mille: Option<PerMille>,
    pub(super) duplicate_per_mille: Option<PerMille>,
    pub(super) delay_ms_min: Option<u64>,
    pub(super) delay_ms_max: Option<u64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct PartitionDto {
    pub(super) between: Vec<String>,
    #[serde(default)]
    pub(super) one_way: bool,
    pub(super) start_ms: u64,
    pub(super) end_ms: u64,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct CrashDto {
    #[serde(default)]
    pub(super) crash_per_mille: PerMille,
    #[serde(default)]
    pub(super) restart_ms_min: u64,
    #[serde(default)]
    pub(super) restart_ms_max: u64,
}
