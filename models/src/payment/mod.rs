//! The payment chain of the source articles: the claims system (client) asks
//! the payment service to pay claim 4711; the service books it and has the
//! bank (the payment provider) transfer the money. Each actor's design
//! variants live in its configuration.

mod bank;
mod client;
mod compensate;
mod msg;
mod presets;
mod program;
mod reconcile;
mod refund;
mod repairs;
pub mod rules;
pub(crate) mod scenario;
mod service;
mod service_program;
pub mod situations;

pub use bank::{Bank, BankConfig, BankStorage};
pub use client::{
    Claims, Client, ClientConfig, ClientOp, ClientState, ClientStorage, ClientTimer, KeyPolicy,
    OpSpec, OpStatus,
};
pub use compensate::{CompensateConfig, RefundWhen};
pub use msg::{Msg, PayStatus, RefundResult, TransferResult};
pub use program::{BankRole, ProgramBank};
pub use reconcile::{Ask, ReconcileConfig, RedriveKey, MAX_ROUNDS};
pub use service::{
    Concurrent, Idempotency, KeyRow, KeyState, Mode, Queued, Service, ServiceConfig, ServiceState,
    ServiceStorage, ServiceTimer, MAX_BANK_CALLS, MAX_QUEUE, MAX_STEPS, MAX_WORKERS,
    SERVICE_TIMER_SLOTS,
};
pub use service_program::{ProgramService, ServiceRole};

use crate::core::ids::{layer_index, space_code, Declares};
use crate::core::input::LoadError;
use crate::core::{BuildInput, Built, Layer, Metric, ModelSpec, Per, Site, SituationDoc, Space};

/// Claims, paid in euros; keys are minted as `zahl-4711-01`.
pub static CLAIM: Space = Space {
    code: space_code::<Payment>(0),
    noun: "claim",
    id_prefix: "",
    unit: Some("EUR"),
    key_prefix: "zahl",
    published: false,
};

/// The effect: money leaving the bank.
pub static TRANSFER: Site = Site { name: "transfer" };

/// A compensation: money a transfer paid, refunded at the bank.
pub static REFUND: Site = Site { name: "refund" };

/// Layers that receive payment requests.
pub static SERVICE_LAYER: Layer = Layer {
    index: layer_index::<Payment>(0),
    name: "service",
    per: Per::Operation,
};
/// Transfers the bank received, per claim.
pub static BANK_LAYER: Layer = Layer {
    index: layer_index::<Payment>(1),
    name: "bank",
    per: Per::Operation,
};

/// The payment model, as the registry knows it.
pub struct Payment;

/// Every layer's requests per operation (client attempts, service, bank:
/// retries at two layers multiply), then the load columns, which stay empty
/// (and out of the table) unless the service has a capacity or the clients
/// a budget or a breaker.
static METRICS: &[Metric] = &[
    Metric::Duplicated,
    Metric::Lost,
    Metric::Unknown,
    Metric::AttemptsPerOperation,
    Metric::ReceivedPerOperation(&SERVICE_LAYER),
    Metric::ReceivedPerOperation(&BANK_LAYER),
    Metric::PeakPerSecond(&SERVICE_LAYER),
    Metric::ShedPerOperation(&SERVICE_LAYER),
    Metric::Wasted(&SERVICE_LAYER),
    Metric::OverloadAfterFaults(&SERVICE_LAYER),
    Metric::RetriesDenied,
    Metric::FastFailed,
    Metric::TimeToEffect,
    Metric::DedupKeys,
];

/// What the model numbers locally; the registry gives the global numbers.
impl Declares for Payment {
    const SITUATIONS: u16 = situations::COUNT;
    const SPACES: &'static [&'static Space] = &[&CLAIM];
    const LAYERS: &'static [&'static Layer] = &[&SERVICE_LAYER, &BANK_LAYER];
    const RULES: &'static [&'static str] = rules::ALL;
}

impl<N> ModelSpec<N> for Payment
where
    N: sim::Actor
        + From<Client<N::Msg>>
        + From<Service<N::Msg>>
        + From<Bank<N::Msg>>
        + From<ProgramBank<N::Msg>>
        + From<ProgramService<N::Msg>>,
    N::Msg: crate::core::Carries<Msg>,
{
    fn name(&self) -> &'static str {
        "payment"
    }

    fn about(&self) -> &'static str {
        "a claims system, a payment service and a bank: idempotency keys, retries, dedup stores, load"
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

    fn reference_scenario(&self) -> Option<&'static str> {
        Some("payment-stable-key")
    }

    fn presets(&self) -> &'static [crate::core::Preset] {
        presets::PRESETS
    }

    fn meaning_changes(&self) -> &'static [crate::core::MeaningChange] {
        MEANING_CHANGES
    }
}

/// The payment keys whose meaning changed (docs/scenario-format.md, "Format versions").
pub(crate) static MEANING_CHANGES: &[crate::core::MeaningChange] = &[crate::core::MeaningChange {
    since: 2,
    key: "bank.status_query",
    value: "true",
    unless: &["service.query_before_retry"],
    before: "it also made the service ask the bank before every re-send",
    now: "it only lets the bank answer status queries, and asking before every re-send is service.query_before_retry = true (format 1's meaning)",
}];
