//! The contention model's keys in a scenario file: `clients` (how many
//! contend) and `[client]` (with `[client.retry]`, the shared retry table).
//! The clients are the actors `client-1` to `client-N`; the row is the actor
//! `resource`.

use super::{Client, ClientConfig, Resource};
use crate::core::input::{count_in, duration_us, invalid, path, LoadError, Seg};
use crate::core::retry_table::RetryDto;
use crate::core::{BuildInput, Built, Carries};
use serde::Deserialize;

pub const TABLES: &[&str] = &["clients", "client"];

/// Most clients: each is an actor, and the world's links are an N × N table.
/// AWS's simulator went up to 190.
pub const MAX_CLIENTS: u64 = 200;
/// Most writes in one scenario, all clients together.
pub const MAX_WRITES: u64 = 1000;
// Write ids run from 1 to MAX_WRITES; the row's request-id set must hold each.
const _: () = assert!(MAX_WRITES < super::resource::RequestIds::CAPACITY as u64);
const DAY_MS: u64 = 24 * 3600 * 1000;

#[derive(Deserialize, Debug)]
#[serde(default)]
struct FileDto {
    clients: u64,
    client: ClientDto,
}

impl Default for FileDto {
    fn default() -> Self {
        FileDto {
            clients: 10,
            client: ClientDto::default(),
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ClientDto {
    writes: u64,
    cas: bool,
    request_id: bool,
    timeout_ms: u64,
    first_retry_exponent: u64,
    retry: RetryDto,
}

impl Default for ClientDto {
    fn default() -> Self {
        ClientDto {
            writes: 1,
            cas: true,
            request_id: false,
            timeout_ms: 0,
            first_retry_exponent: 0,
            retry: RetryDto::default(),
        }
    }
}

pub const RESOURCE: &str = "resource";

pub fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Client<W>> + From<Resource<W>>,
    W: Carries<super::Msg>,
{
    let d: FileDto = toml::from_str(input.text)?;
    let clients = count_in(d.clients, 1, MAX_CLIENTS, path(&["clients"]), "clients")?;
    let c = &d.client;
    let cat = |k| path(&["client", k]);
    let writes = count_in(c.writes, 1, MAX_WRITES, cat("writes"), "writes per client")?;
    if clients.saturating_mul(writes) > MAX_WRITES {
        return Err(invalid(
            cat("writes"),
            format!(
                "{clients} clients × {writes} writes = {} writes: a scenario has at most {MAX_WRITES}",
                clients * writes
            ),
            format!(
                "lower client.writes to {} or fewer, or use fewer clients",
                MAX_WRITES / clients
            ),
        )
        .into());
    }
    duration_us(c.timeout_ms, DAY_MS, cat("timeout_ms"))?;
    if c.first_retry_exponent > 1 {
        return Err(invalid(
            cat("first_retry_exponent"),
            format!("{} is not a first retry's exponent here", c.first_retry_exponent),
            "write 0 (the first retry waits base_ms, as in every model) or 1 (it waits 2 × base_ms, as in AWS's backoff simulator)",
        )
        .into());
    }
    let first_retry_exponent = c.first_retry_exponent as u32;
    let retry = c.retry.build("client", c.timeout_ms)?;
    if retry.retry_final_errors {
        return Err(invalid(
            vec![
                Seg::Key("client"),
                Seg::Key("retry"),
                Seg::Key("retry_final_errors"),
            ],
            "a contended write has no final errors: a conflict is always worth another read",
            "remove retry_final_errors",
        )
        .into());
    }
    let resource = clients as sim::ActorId;
    let mut actors: Vec<(String, N)> = (0..clients)
        .map(|k| {
            let first = (k * writes) as u32 + 1;
            let cfg = ClientConfig {
                resource,
                retry: retry.policy,
                timeout_ms: c.timeout_ms,
                dead_letter: retry.dead_letter,
                cas: c.cas,
                request_id: c.request_id,
                first_retry_exponent,
                writes: (first..first + writes as u32).collect(),
            };
            (format!("client-{}", k + 1), N::from(Client::new(cfg)))
        })
        .collect();
    actors.push((RESOURCE.to_string(), N::from(Resource::new())));
    Ok(Built {
        actors,
        actors_hint: " (the clients are client-1 to client-N, N being `clients`)",
        hazards: Vec::new(),
        unused: c.retry.unused("client"),
    })
}
