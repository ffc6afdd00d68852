//! The messaging half of the catalog: a producer that changes its state and
//! must publish an event (dual write, or a transactional outbox with a relay),
//! a durable broker with acks, a visibility timeout, a dead-letter queue and
//! an optional publish dedup window, and consumers that share one database
//! (the `consumer-db` actor) with an inbox, a unique key or a set-value handler.
//!
//! Every database transaction is one step of the actor that owns the database;
//! a consumer's transaction is a request to `consumer-db` and its reply, so a
//! crash or a lost reply can fall between the commit and the ack. Effects are
//! observed where they land: in `consumer-db`, never in the consumer that
//! believes it handled a message. Each event is one business operation; the
//! entity it changes matters only for `state-converges`.

mod broker;
mod consumer;
mod consumer_db;
mod msg;
mod presets;
mod producer;
mod program;
mod relay;
mod relay_program;
mod repairs;
pub(crate) mod republish;
pub mod rules;
pub(crate) mod scenario;
pub mod situations;
mod warnings;

pub use broker::{
    AtMaxDeliveries, Broker, BrokerConfig, BrokerStorage, BrokerTimer, QMsg, QStatus,
};
pub use consumer::{
    AckMode, Consumer, ConsumerConfig, ConsumerState, ConsumerTimer, Handler, MAX_CONSUMER_VERSIONS,
};
pub use consumer_db::{ConsumerDb, ConsumerDbStorage, InboxConfig};
pub use msg::{Event, Msg, TxKind, TxResult};
pub use producer::{
    EventSpec, Producer, ProducerConfig, ProducerState, ProducerStorage, ProducerTimer, WriteMode,
};
pub use program::{ConsumerRole, ProgramConsumer};
pub use relay::{InFlight, OutboxRow, Relay, RelayState, RelayTimer};
pub use relay_program::{ProgramRelay, RelayRole};

use crate::core::ids::{layer_index, space_code, Declares};
use crate::core::input::LoadError;
use crate::core::{BuildInput, Built, Layer, Metric, ModelSpec, Per, Site, SituationDoc, Space};

/// Events, numbered by their outbox row.
pub static EVENT: Space = Space {
    code: space_code::<Messaging>(0),
    noun: "event",
    id_prefix: "#",
    unit: None,
    key_prefix: "event",
    published: true,
};

/// The business entities events change (a claim, a customer's address).
pub static ENTITY: Space = Space {
    code: space_code::<Messaging>(1),
    noun: "entity",
    id_prefix: "",
    unit: None,
    key_prefix: "entity",
    published: false,
};

/// The effect: a write in the consumers' database.
pub static CONSUMER_WRITE: Site = Site {
    name: "consumer write",
};

/// Deliveries a consumer received per event.
pub static CONSUMER_LAYER: Layer = Layer {
    index: layer_index::<Messaging>(0),
    name: "consumer",
    per: Per::Event,
};

/// An ack that asks for its result, as the consumers' [`crate::core::Ends`]
/// name it: on the wire it is of the kind `ack`, like a plain one, but only
/// it is answered with an `ack-result`, so a link carries that reply only to
/// a consumer that asks (not a kind a `[[network.links]]` entry may name).
pub const ACK_WITH_RESULT: &str = "ack-with-result";

/// The messaging model, as the registry lists it.
pub struct Messaging;

static METRICS: &[Metric] = &[
    Metric::Duplicated,
    Metric::Lost,
    Metric::ReceivedPerOperation(&CONSUMER_LAYER),
    Metric::TimeToEffect,
];

/// What the model numbers locally; the registry gives the global numbers.
impl Declares for Messaging {
    const SITUATIONS: u16 = situations::COUNT;
    const SPACES: &'static [&'static Space] = &[&EVENT, &ENTITY];
    const LAYERS: &'static [&'static Layer] = &[&CONSUMER_LAYER];
    const RULES: &'static [&'static str] = rules::ALL;
}

impl<N> ModelSpec<N> for Messaging
where
    N: sim::Actor
        + From<Producer<N::Msg>>
        + From<Broker<N::Msg>>
        + From<Consumer<N::Msg>>
        + From<ConsumerDb<N::Msg>>
        + From<ProgramConsumer<N::Msg>>
        + From<ProgramRelay<N::Msg>>,
    N::Msg: crate::core::Carries<Msg>,
{
    fn name(&self) -> &'static str {
        "messaging"
    }

    fn about(&self) -> &'static str {
        "a producer, a broker and consumers: dual writes, outbox, inbox, acks, dead letters"
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
        Some("messaging-outbox-inbox")
    }

    fn presets(&self) -> &'static [crate::core::Preset] {
        presets::PRESETS
    }
}
