//! `[client.groups.NAME]` in the HTTP model: a client named in
//! `[[requests]]` (`client = "NAME"`) with settings of its own, written
//! over `[client]`, as an old app version beside a new one ("one editor
//! sends If-Match, one does not"). The requests already say which client
//! sends what, so a group is one client actor and its name is the actor's:
//! the trace, the report's lanes and the ledger's `started_by` say which
//! version sent each request.

use super::client::{ClientDto, Settings};
use crate::core::input::{did_you_mean, invalid, Invalid, Seg};
use crate::core::overlay::{known_keys, moved, overlay, typed};
use crate::http::{ClientConfig, RequestSpec};
use sim::ActorId;

/// The `[client]` keys a group may set: all of them.
const GROUP_KEYS: &[&str] = &[
    "timeout_ms",
    "idempotency_key",
    "if_match",
    "conditional_writes",
    "retry_body",
    "delete_404",
    "retry",
];

/// Where group `name` is in the file.
fn at(name: &str) -> Vec<Seg> {
    vec![
        Seg::Key("client"),
        Seg::Key("groups"),
        Seg::Name(name.to_string()),
    ]
}

/// Every group names a client of `[[requests]]` and only `[client]` keys.
fn check(groups: &toml::Table, clients: &[(String, Vec<RequestSpec>)]) -> Result<(), Invalid> {
    for (name, g) in groups {
        let Some(g) = g.as_table() else {
            return Err(invalid(
                at(name),
                format!("group `{name}` is no table"),
                format!("write [client.groups.{name}] with the keys of [client] it changes"),
            ));
        };
        if !clients.iter().any(|(c, _)| c == name) {
            let close = did_you_mean(name, clients.iter().map(|(c, _)| c.as_str()));
            return Err(invalid(
                at(name),
                format!("no client \"{name}\" in [[requests]]"),
                match close {
                    Some(c) => format!("did you mean [client.groups.{c}]?"),
                    None => format!(
                        "name the group after a client of [[requests]] (client = \"{name}\")"
                    ),
                },
            ));
        }
        if g.is_empty() {
            return Err(invalid(
                at(name),
                format!("group `{name}` changes nothing"),
                "give the settings this client has of its own: if_match = false",
            ));
        }
        known_keys(g, GROUP_KEYS, &at(name))?;
    }
    Ok(())
}

/// Each client's configuration: `[client]`, with its group's keys written
/// over it where it has a group, checked as `[client]` is.
pub(super) fn configs(
    raw: &toml::Table,
    clients: &[(String, Vec<RequestSpec>)],
    server: ActorId,
) -> Result<Vec<ClientConfig>, Invalid> {
    let mut base = match raw.get("client") {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => toml::Table::new(),
    };
    let groups = match base.remove("groups") {
        Some(toml::Value::Table(g)) => g,
        _ => toml::Table::new(),
    };
    check(&groups, clients)?;
    let mut out = Vec::with_capacity(clients.len());
    for (name, requests) in clients {
        let mut t = base.clone();
        let over = groups.get(name).and_then(toml::Value::as_table);
        if let Some(over) = over {
            overlay(&mut t, over);
        }
        let located = |e: Invalid| match over {
            Some(over) => moved(e, &["client"], over, &at(name)),
            None => e,
        };
        // `[client]` itself was read with the file: a wrong type here is
        // one the group wrote.
        let dto: ClientDto = typed(t, &at(name))?;
        let settings = Settings::try_from(&dto).map_err(located)?;
        out.push(settings.config(server, requests.clone()));
    }
    Ok(out)
}
