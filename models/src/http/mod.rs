//! HTTP resource semantics: clients send requests to a resource server over
//! a lossy network and retry them after a timeout. What a retry does depends
//! on the method's semantics as implemented: a PUT that replaces and a DELETE
//! are naturally idempotent (a repeat finds the resource already as it
//! asks); a POST that creates and a PATCH that adds are not, unless the
//! request carries an Idempotency-Key the server honours. Two editors who
//! read, modify and write one resource lose an update unless the write is
//! conditional on the ETag they read (If-Match, 412 Precondition Failed).
//!
//! Each request a client makes is one business operation (`request #3`);
//! its effect is the change it makes to a resource, observed at the server
//! where it lands, with the resource's new version for `no-lost-update`.

mod client;
mod msg;
mod program;
mod repairs;
mod scenario;
mod server;
pub mod situations;

pub use client::{
    Action, Client, ClientConfig, ClientState, ClientStorage, ClientTimer, DeleteNotFound, Phase,
    RequestSpec, Requests, RetryBody,
};
pub use msg::{Method, Msg, Precondition, Read, Request, Status};
pub use program::{ProgramServer, ServerRole, CHANGE};
pub use server::{Fingerprint, PutMode, Resource, Server, ServerConfig, ServerStorage, Stored};

use crate::core::ids::{layer_index, space_code, Declares};
use crate::core::input::LoadError;
use crate::core::{BuildInput, Built, Layer, Metric, ModelSpec, Per, Site, SituationDoc, Space};

/// The requests clients make, one business operation each; their
/// Idempotency-Keys are minted as `req-3-01`.
pub static REQUEST: Space = Space {
    code: space_code::<Http>(0),
    noun: "request",
    id_prefix: "#",
    unit: None,
    key_prefix: "req",
    published: false,
};

/// The server's resources, as the versions of `no-lost-update` name them.
pub static RESOURCE: Space = Space {
    code: space_code::<Http>(1),
    noun: "resource",
    id_prefix: "/claims/",
    unit: None,
    key_prefix: "res",
    published: false,
};

/// The effects, by what the request did to a resource.
pub static CREATION: Site = Site { name: "creation" };
/// A PUT replaced a resource's value.
pub static WRITE: Site = Site { name: "write" };
/// An edit's PUT wrote a value computed from a read.
pub static EDIT: Site = Site { name: "edit" };
/// A PATCH added to a value.
pub static INCREMENT: Site = Site { name: "increment" };
/// A DELETE removed a resource.
pub static DELETION: Site = Site { name: "deletion" };

/// Requests the server received per operation.
pub static SERVER_LAYER: Layer = Layer {
    index: layer_index::<Http>(0),
    name: "server",
    per: Per::Operation,
};

/// The HTTP model (`model = "http"`): clients and a server with resources, keys and ETags.
pub struct Http;

static METRICS: &[Metric] = &[
    Metric::Duplicated,
    Metric::Lost,
    Metric::Unknown,
    Metric::AttemptsPerOperation,
    Metric::ReceivedPerOperation(&SERVER_LAYER),
    Metric::PeakPerSecond(&SERVER_LAYER),
    Metric::TimeToEffect,
    Metric::DedupKeys,
];

/// What the model numbers locally; the registry gives the global numbers.
impl Declares for Http {
    const SITUATIONS: u16 = situations::COUNT;
    const SPACES: &'static [&'static Space] = &[&REQUEST, &RESOURCE];
    const LAYERS: &'static [&'static Layer] = &[&SERVER_LAYER];
    const RULES: &'static [&'static str] = &[];
}

impl<N> ModelSpec<N> for Http
where
    N: sim::Actor + From<Client<N::Msg>> + From<Server<N::Msg>> + From<ProgramServer<N::Msg>>,
    N::Msg: crate::core::Carries<Msg>,
{
    fn name(&self) -> &'static str {
        "http"
    }

    fn about(&self) -> &'static str {
        "HTTP clients and a resource server: POST, PUT, PATCH, DELETE, Idempotency-Key, If-Match"
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
        Some("http-delete-retried")
    }

    fn presets(&self) -> &'static [crate::core::Preset] {
        PRESETS
    }
}

/// `[server] preset = "stripe"`: the server keeps Idempotency-Key answers as
/// Stripe documents (docs.stripe.com/api/idempotent_requests, API v1).
static PRESETS: &[crate::core::Preset] = &[crate::core::Preset {
    table: "server",
    name: "stripe",
    system: "Stripe API v1 idempotent requests (Idempotency-Key header)",
    settings: &[
        crate::core::PresetSetting {
            key: "server.idempotency_keys",
            value: "true",
            source: "Stripe saves the first answer under an Idempotency-Key and returns it to retries with the same key",
        },
        crate::core::PresetSetting {
            key: "server.key_retention_ms",
            value: "86400000",
            source: "keys may be pruned once they are at least 24 hours old; a key reused after that is a new request (modelled at exactly 24 h)",
        },
        crate::core::PresetSetting {
            key: "server.fingerprint",
            value: "\"body\"",
            source: "the idempotency layer compares the incoming parameters with the original request's and errors if they are not the same (idempotency_error)",
        },
    ],
    rules: &[],
    not_modelled: "Stripe's error for changed parameters (idempotency_error, a 400 as Stripe's own SDKs read it) is answered here with the IETF draft's 422; both are final errors, retried only by a client with client.retry.retry_final_errors = true. The replayed 500 and API v2's retry-to-completion are not modelled.",
}];
