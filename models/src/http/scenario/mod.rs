//! The HTTP model's tables in a scenario file: `[client]` (with
//! `[client.retry]`, `client.rs`), `[server]` (`server.rs`), `[[resources]]`
//! and `[[requests]]` (`requests.rs`). Every client named in `[[requests]]`
//! is an actor with the `[client]` settings, or its group's written over
//! them (`[client.groups.NAME]`, `groups.rs`); the server is the actor
//! `server`. `unused.rs` and `warnings.rs` read the validated tables.

mod client;
mod groups;
mod requests;
mod server;
mod unused;
mod warnings;

use super::{Client, ProgramServer, Server};
use crate::core::input::{LoadError, DAY_MS};
use crate::core::{BuildInput, Built, Carries};
use client::ClientDto;
use requests::{default_client, RequestDto, ResourceDto};
use serde::Deserialize;
use server::ServerDto;

pub(crate) const TABLES: &[&str] = &["client", "server", "resources", "requests"];

/// Most requests, and most resources, in one scenario.
pub(crate) const MAX_REQUESTS: u64 = 1000;
pub(crate) const MAX_RESOURCES: u64 = 1000;
/// Most clients: each is an actor.
pub(crate) const MAX_CLIENTS: usize = 64;

const SERVER: &str = "server";

#[derive(Deserialize, Debug)]
#[serde(default)]
struct FileDto {
    client: ClientDto,
    server: ServerDto,
    resources: Vec<ResourceDto>,
    requests: Vec<RequestDto>,
}

impl Default for FileDto {
    fn default() -> Self {
        FileDto {
            client: ClientDto::default(),
            server: ServerDto::default(),
            resources: vec![ResourceDto {
                id: 4711,
                value: 1000,
            }],
            requests: vec![RequestDto {
                client: default_client(),
                method: "post".into(),
                resource: None,
                value: Some(1200),
                start_ms: 0,
                retry_value: None,
            }],
        }
    }
}

/// The HTTP model's actors from its tables: the clients the requests
/// name, then the server. Each table is checked in the order its errors
/// have always come in.
pub(crate) fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Client<W>> + From<Server<W>> + From<ProgramServer<W>>,
    W: Carries<super::Msg>,
{
    let d: FileDto = toml::from_str(input.text)?;
    let program = server::program_of(&d.server, input)?;
    let initial = requests::resources(&d.resources)?;
    let clients = requests::clients(&d.requests, &initial, input.max_time_us)?;
    let settings = client::Settings::try_from(&d.client)?;
    let server_id = clients.len() as sim::ActorId;
    // A program is told the resources in its `start` (protocol 3).
    let start_fields = crate::http::program::start_fields(&initial);
    let server = server::server(&d.server, initial)?;
    let mut design_warnings = warnings::design_warnings(
        &settings.config(server_id, Vec::new()),
        &server,
        &clients,
        input.delays,
        input.text,
    );
    design_warnings.extend(warnings::window_too_short(
        &settings.retry.policy,
        settings.timeout_ms(),
        &clients,
        input.delays,
    ));
    let unused = unused::unused(&d);
    let mut actors: Vec<(String, N)> = if d.client.groups.is_empty() {
        clients
            .into_iter()
            .map(|(name, requests)| {
                let config = settings.config(server_id, requests);
                (name, N::from(Client::new(config)))
            })
            .collect()
    } else {
        let raw: toml::Table = toml::from_str(input.text)?;
        let configs = groups::configs(&raw, &clients, server_id)?;
        clients
            .into_iter()
            .zip(configs)
            .map(|((name, _), config)| (name, N::from(Client::new(config))))
            .collect()
    };
    let server = match program {
        // A user's program in the server's place (docs/protocol.md).
        Some(p) => {
            let names = actors.iter().map(|a| a.0.clone()).chain([SERVER.into()]);
            let mut cfg = crate::external::keys::config_for(SERVER, &p, names.collect());
            cfg.start_fields = start_fields;
            N::from(ProgramServer::new(cfg))
        }
        None => N::from(Server::new(server)),
    };
    actors.push((SERVER.to_string(), server));
    Ok(Built {
        actors,
        actors_hint: " (each client named in [[requests]] is an actor)",
        design_warnings,
        unused,
    })
}
