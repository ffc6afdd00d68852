//! Contention on one resource under optimistic concurrency: the experiment
//! of the AWS Architecture Blog post "Exponential Backoff And Jitter" (Marc
//! Brooker, 2015) and of its simulator, `aws-samples/aws-arch-backoff-simulator`.
//! N clients each make one write to one row. A write is a read, then a
//! compare-and-set on the version read; a client whose write finds the row
//! moved on backs off and tries again from a fresh read. The network is
//! reliable with small delays, so what the strategies change is contention:
//! how many calls all clients make in total, and how long until the last one
//! is done.
//!
//! Each write is one business operation (`write #3`); its effect is the
//! increment it lands at the resource, observed there, with the row's new
//! version for `no-lost-update`. A blind write (no compare-and-set) loses
//! updates, which that invariant catches.

mod client;
mod msg;
mod repairs;
mod resource;
mod scenario;
pub mod situations;

pub use client::{Client, ClientConfig, ClientState, ClientStorage, ClientTimer, Phase, AMOUNT};
pub use msg::Msg;
pub use resource::{Resource, ResourceStorage};
pub use scenario::{MAX_CLIENTS, MAX_WRITES};

use crate::core::ids::{layer_index, space_code, Declares};
use crate::core::input::LoadError;
use crate::core::{BuildInput, Built, Layer, Metric, ModelSpec, Per, Site, SituationDoc, Space};

/// The clients' writes, one business operation each.
pub static WRITE: Space = Space {
    code: space_code::<Contention>(0),
    noun: "write",
    id_prefix: "#",
    unit: None,
    key_prefix: "write",
    published: false,
};

/// The contended row, as the versions of `no-lost-update` name it.
pub static ROW: Space = Space {
    code: space_code::<Contention>(1),
    noun: "row",
    id_prefix: "#",
    unit: None,
    key_prefix: "row",
    published: false,
};

/// The effect of a write: its increment, landed on the row.
pub static UPDATE: Site = Site { name: "update" };

/// Writes (compare-and-set calls) the resource received per operation.
pub static RESOURCE_LAYER: Layer = Layer {
    index: layer_index::<Contention>(0),
    name: "resource",
    per: Per::Operation,
};

/// The contention model (`model = "contention"`): N clients compare-and-set one row.
pub struct Contention;

static METRICS: &[Metric] = &[
    Metric::Duplicated,
    Metric::Lost,
    Metric::AttemptsPerOperation,
    Metric::AttemptsPerRun,
    Metric::CompletionTime,
];

/// What the model numbers locally; the registry gives the global numbers.
impl Declares for Contention {
    const SITUATIONS: u16 = situations::COUNT;
    const SPACES: &'static [&'static Space] = &[&WRITE, &ROW];
    const LAYERS: &'static [&'static Layer] = &[&RESOURCE_LAYER];
    const RULES: &'static [&'static str] = &[];
}

impl<N> ModelSpec<N> for Contention
where
    N: sim::Actor + From<Client<N::Msg>> + From<Resource<N::Msg>>,
    N::Msg: crate::core::Carries<Msg>,
{
    fn name(&self) -> &'static str {
        "contention"
    }

    fn about(&self) -> &'static str {
        "N clients write one row with compare-and-set and back off on conflict (AWS's backoff and jitter experiment)"
    }

    fn tables(&self) -> &'static [&'static str] {
        scenario::TABLES
    }

    fn build(&self, input: &BuildInput<'_>) -> Result<Built<N>, LoadError> {
        scenario::build(input)
    }

    fn message_kinds(&self) -> Vec<&'static str> {
        <Msg as crate::core::wire::ModelMessage>::KINDS.to_vec()
    }

    fn situations(&self) -> &'static [SituationDoc] {
        situations::ALL
    }

    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn repairs(&self) -> &'static [crate::core::Repair] {
        repairs::REPAIRS
    }
    // Pinned, so that a scenario added before it in the catalog does not
    // change what `bench --all` measures for this model.
    fn reference_scenario(&self) -> Option<&'static str> {
        Some("contention-decorrelated-jitter")
    }
}
