//! The payment model's tables in a scenario file: `[client]`,
//! `[client.retry]`, `[client.budget]`, `[client.breaker]`,
//! `[client.reconcile]`, `[service]`,
//! `[bank]` and `[[operations]]`. With `client.actors` above 1 the claims
//! system is that many client actors, `client-1` to `client-N`, with the
//! `[client]` settings each, the operations dealt out among them in turn.

mod bank;
mod client;
mod facts;
mod followup;
mod load;
mod operations;
mod reads;
mod rollouts;
mod service;
mod unused;
mod versions;
mod warnings;

pub(crate) use facts::Restarts;
pub(crate) use warnings::design_warnings;

use super::{Bank, BankConfig, Client, ClientConfig, Service, ServiceConfig};
use crate::core::input::{count_in, invalid, path, LoadError, DAY_MS};
use crate::core::{BuildInput, Built, Carries};
use bank::BankDto;
use client::ClientDto;
use operations::{default_operations, OpDto};
use serde::Deserialize;
use service::ServiceDto;
use sim::ActorId;
use unused::unused;

pub(crate) const TABLES: &[&str] = &["client", "service", "bank", "operations", "rollouts"];

/// Most operations in one scenario, over all its clients.
pub(crate) const MAX_OPERATIONS: u64 = 1000;
/// Most client actors: the world holds at most `sim::MAX_ACTORS`, two of
/// them the service and the bank.
pub(crate) const MAX_CLIENTS: u64 = 250;

#[derive(Deserialize, Debug, Default)]
#[serde(default)]
struct FileDto {
    client: ClientDto,
    service: ServiceDto,
    bank: BankDto,
    #[serde(default = "default_operations")]
    operations: Vec<OpDto>,
    rollouts: std::collections::BTreeMap<String, rollouts::RolloutDto>,
}

pub(crate) fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Client<W>>
        + From<Service<W>>
        + From<Bank<W>>
        + From<super::ProgramBank<W>>
        + From<super::ProgramService<W>>,
    W: Carries<super::Msg>,
{
    let d: FileDto = toml::from_str(input.text)?;
    let bank_program = bank::program_of(&d.bank, input)?;
    let service_program = service::program_of(&d.service, input)?;
    let versions::Parts {
        names,
        clients: configs,
        service,
        later,
        bank,
    } = match versions::versioned(&d) {
        true => versions::parts(&d, input)?,
        false => plain(&d, input)?,
    };
    let unused = unused(&d);
    let restarts = Restarts::of(input.text, &names, input.fault_phase_us);
    let design_warnings = design_warnings(
        &configs,
        &service,
        &bank,
        input.delays,
        &restarts,
        (&names, false),
    );
    let mut actors: Vec<(String, N)> = configs
        .into_iter()
        .zip(names)
        .map(|(c, name)| (name, N::from(Client::new(c))))
        .collect();
    let names: Vec<String> = actors
        .iter()
        .map(|a| a.0.clone())
        .chain(["service".into(), "bank".into()])
        .collect();
    let service = match service_program {
        // A user's program in the service's place (docs/protocol.md).
        Some(p) => {
            no_service_rollouts(&later)?;
            let cfg = crate::external::keys::config_for("service", &p, names.clone());
            N::from(super::ProgramService::new(cfg))
        }
        None => N::from(Service::with_rollouts(service, later)),
    };
    actors.push(("service".to_string(), service));
    let bank = match bank_program {
        // A user's program in the bank's place (docs/protocol.md).
        Some(p) => {
            let cfg = crate::external::keys::config_for("bank", &p, names);
            N::from(super::ProgramBank::new(cfg))
        }
        None => N::from(Bank::new(bank)),
    };
    actors.push(("bank".to_string(), bank));
    Ok(Built {
        design_warnings,
        unused,
        actors,
        actors_hint: match d.client.actors {
            _ if versions::versioned(&d) => {
                " (a client group NAME is client-NAME, its rollout R client-NAME-R)"
            }
            1 => "",
            _ => " (with client.actors above 1 the clients are client-1, client-2, ...)",
        },
    })
}

/// A program in the service's place has no later versions: a rollout
/// changes the built-in service's settings, which a program replaces.
fn no_service_rollouts(later: &[(sim::TimeUs, super::ServiceConfig)]) -> Result<(), LoadError> {
    if later.is_empty() {
        return Ok(());
    }
    Err(invalid(
        path(&["rollouts"]),
        "a rollout of the service changes the built-in service's settings, and service.program replaces it",
        "delete the service's rollout, or roll out the program's own options in a sweep (--set service.program=[...])",
    )
    .into())
}

/// `client.actors` clients with the `[client]` settings each, the first
/// `client`, or `client-1` to `client-N`; the service and the bank.
fn plain(d: &FileDto, input: &BuildInput<'_>) -> Result<versions::Parts, LoadError> {
    let clients = count_in(
        d.client.actors,
        1,
        MAX_CLIENTS,
        path(&["client", "actors"]),
        "client actors",
    )? as usize;
    let (service_id, bank_id) = (clients as ActorId, clients as ActorId + 1);
    let (configs, service, bank) = parts(d, input, clients, service_id, bank_id)?;
    let names: Vec<String> = match clients {
        1 => vec!["client".to_string()],
        _ => (1..=clients).map(|i| format!("client-{i}")).collect(),
    };
    Ok(versions::Parts {
        names,
        clients: configs,
        service,
        later: Vec::new(),
        bank,
    })
}

/// The keys of `[client]`, `[service]` and `[bank]` that the other
/// settings leave without effect (`core::unused`), for a scenario whose
/// tables parsed (a composed model reads them too).
pub(crate) fn unused_in(text: &str) -> Vec<crate::core::Unused> {
    toml::from_str::<FileDto>(text).map_or_else(|_| Vec::new(), |d| unused(&d))
}

/// The claims system, the payment service and the bank, from the tables
/// `[client]`, `[service]`, `[bank]` and `[[operations]]` (a composed
/// model has these too): the client calls the service at `service`, the
/// service the bank at `bank`. A composed model has one client actor.
pub(crate) fn hops(
    input: &BuildInput<'_>,
    service: ActorId,
    bank: ActorId,
) -> Result<(ClientConfig, ServiceConfig, BankConfig), LoadError> {
    let d: FileDto = toml::from_str(input.text)?;
    if !d.client.groups.is_empty() {
        return Err(invalid(
            path(&["client", "groups"]),
            "client groups: this model has one claims system",
            "remove [client.groups]; groups of clients are a payment-model scenario",
        )
        .into());
    }
    if d.client.actors != 1 {
        return Err(invalid(
            path(&["client", "actors"]),
            format!(
                "{} client actors: this model has one claims system",
                d.client.actors
            ),
            "remove `actors` from [client]; many clients are a payment-model scenario",
        )
        .into());
    }
    // The composed models run the built-in bank and service: a program there would be ignored.
    for (table, key) in ["bank", "service"].into_iter().flat_map(|t| {
        crate::external::keys::PROGRAM_KEYS
            .iter()
            .map(move |k| (t, *k))
    }) {
        if bank::written_in(input.text, table, key) {
            return Err(invalid(
                path(&[table, key]),
                format!("this model runs its built-in {table}: {table}.{key} is for a program in the {table}'s place, which only the payment model takes"),
                format!("delete the line, or run the program with model = \"payment\" and [{table}] program = [...]"),
            )
            .into());
        }
    }
    let (mut clients, service, bank) = parts(&d, input, 1, service, bank)?;
    Ok((clients.remove(0), service, bank))
}

/// The configurations of `clients` client actors (the operations dealt out
/// among them in turn), the service and the bank.
fn parts(
    d: &FileDto,
    input: &BuildInput<'_>,
    clients: usize,
    service: ActorId,
    bank: ActorId,
) -> Result<(Vec<ClientConfig>, ServiceConfig, BankConfig), LoadError> {
    let mut client = client::client(&d.client, &d.operations, input.max_time_us, service)?;
    followup::jobs(
        (d.client.reconcile.as_ref(), d.client.compensate.as_ref()),
        &d.bank,
        (service, bank),
        &mut client,
    )?;
    let ops = client.ops.len();
    if ops < clients {
        return Err(invalid(
            path(&["client", "actors"]),
            format!("{clients} client actors share {ops} operations: some would have none"),
            format!("give at most {ops} actors, or more operations (`repeat` in [[operations]])"),
        )
        .into());
    }
    let mut configs: Vec<ClientConfig> = (0..clients)
        .map(|_| ClientConfig {
            ops: Vec::with_capacity(ops.div_ceil(clients)),
            ..client.clone()
        })
        .collect();
    for (k, spec) in client.ops.iter().enumerate() {
        configs[k % clients].ops.push(*spec);
    }
    let service = service::service(&d.service, &d.bank, bank)?;
    let bank = BankConfig::try_from(&d.bank)?;
    Ok((configs, service, bank))
}
