//! The insurer chain of the source articles, end to end: the claims system
//! (the payment model's client) asks the payment service to pay claim 4711;
//! the service claims the key "in progress", books the payment and, in the
//! same transaction, writes a "payment booked" row into its outbox; the bank
//! (the payment model's bank) transfers the money. The service's outbox relay
//! publishes the event to the broker (the messaging model's broker), which
//! delivers it at least once to the accounting consumers, who book it in
//! their database through an inbox (the messaging model's consumer and
//! database).
//!
//! Two kinds of business operation meet in one ledger: the claim, whose
//! effect is the transfer at the bank, and the event, whose effect is the
//! booking in accounting. Each must happen exactly once. The chain reuses the
//! actors of both models; its one new kind is the booking service, which
//! composes the payment service with the outbox relay.

mod booking;
mod repairs;
pub(crate) mod scenario;
pub mod situations;

pub use booking::{
    BookingConfig, BookingService, BookingState, BookingStorage, BookingTimer, Publish, Publishing,
    MAX_PUBLISHING,
};

use crate::core::ids::Declares;
use crate::core::input::LoadError;
use crate::core::wire::ModelMessage;
use crate::core::{BuildInput, Built, Carries, Metric, ModelSpec, Site, SituationDoc};
use crate::core::{Layer, Space};
use crate::{messaging, payment};

/// The second effect of the chain: the payment booked in accounting.
pub static ACCOUNTING_BOOKING: Site = Site {
    name: "booking in accounting",
};

/// The insurer chain model (`model = "chain"`): claims system, payment service with outbox, bank, broker and accounting.
pub struct Chain;

static METRICS: &[Metric] = &[
    Metric::Duplicated,
    Metric::Lost,
    Metric::Unknown,
    Metric::AttemptsPerOperation,
    Metric::ReceivedPerOperation(&payment::BANK_LAYER),
    Metric::ReceivedPerOperation(&messaging::CONSUMER_LAYER),
    Metric::TimeToEffect,
    Metric::DedupKeys,
];

/// What the model numbers locally; the registry gives the global numbers.
impl Declares for Chain {
    const SITUATIONS: u16 = situations::COUNT;
    const SPACES: &'static [&'static Space] = &[];
    const LAYERS: &'static [&'static Layer] = &[];
    const RULES: &'static [&'static str] = &[];
}

impl<N> ModelSpec<N> for Chain
where
    N: sim::Actor
        + From<payment::Client<N::Msg>>
        + From<BookingService<N::Msg>>
        + From<payment::Bank<N::Msg>>
        + From<messaging::Broker<N::Msg>>
        + From<messaging::Consumer<N::Msg>>
        + From<messaging::ConsumerDb<N::Msg>>,
    N::Msg: Carries<payment::Msg> + Carries<messaging::Msg>,
{
    fn name(&self) -> &'static str {
        "chain"
    }

    fn about(&self) -> &'static str {
        "the insurer chain end to end: claims system, payment service with outbox, bank, broker, accounting with inbox"
    }

    fn tables(&self) -> &'static [&'static str] {
        scenario::TABLES
    }

    fn build(&self, input: &BuildInput<'_>) -> Result<Built<N>, LoadError> {
        scenario::build(input)
    }

    fn message_kinds(&self) -> Vec<&'static str> {
        [payment::Msg::KINDS, messaging::Msg::KINDS].concat()
    }

    fn situations(&self) -> &'static [SituationDoc] {
        situations::all()
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
        Some("chain-outbox-inbox")
    }

    // Its client, service and bank are the payment model's, tables and all.
    fn meaning_changes(&self) -> &'static [crate::core::MeaningChange] {
        crate::payment::MEANING_CHANGES
    }
}
