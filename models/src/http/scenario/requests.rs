//! `[[resources]]` and `[[requests]]`: the claims the server starts with,
//! and the requests, each sent by the client it names (every client named
//! is an actor).

use super::{MAX_CLIENTS, MAX_REQUESTS, MAX_RESOURCES, SERVER};
use crate::core::input::{invalid, one_of, start_us, Invalid, Seg};
use crate::http::{Action, RequestSpec};
use serde::Deserialize;
use sim::TimeUs;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct ResourceDto {
    pub(super) id: u32,
    #[serde(default)]
    pub(super) value: u32,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct RequestDto {
    #[serde(default = "default_client")]
    pub(super) client: String,
    pub(super) method: String,
    pub(super) resource: Option<u32>,
    pub(super) value: Option<u32>,
    #[serde(default)]
    pub(super) start_ms: u64,
    #[serde(default)]
    pub(super) retry_value: Option<u32>,
}

pub(super) fn default_client() -> String {
    "client".into()
}

/// The clients `requests` name, in the order of their first request, each
/// with its requests; `initial` are the resources the server starts with.
pub(super) fn clients(
    requests: &[RequestDto],
    initial: &[(u32, u32)],
    max_time_us: TimeUs,
) -> Result<Vec<(String, Vec<RequestSpec>)>, Invalid> {
    if requests.is_empty() || requests.len() as u64 > MAX_REQUESTS {
        return Err(invalid(
            vec![Seg::Key("requests")],
            format!(
                "{} requests: a scenario has 1 to {MAX_REQUESTS}",
                requests.len()
            ),
            "give [[requests]] tables with method, resource and value",
        ));
    }
    // A request may act on an initial resource, or on one a PUT writes.
    let mut known: Vec<u32> = initial.iter().map(|r| r.0).collect();
    known.extend(
        requests
            .iter()
            .filter(|r| r.method == "put")
            .filter_map(|r| r.resource),
    );
    let mut clients: Vec<(String, Vec<RequestSpec>)> = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        let at = vec![Seg::Key("requests"), Seg::Index(i), Seg::Key("client")];
        client_name(&r.client, at.clone())?;
        let spec = request(r, i, &known, max_time_us)?;
        let n = clients.len();
        match clients.iter_mut().find(|c| c.0 == r.client) {
            Some(c) => c.1.push(spec),
            None if n == MAX_CLIENTS => {
                return Err(invalid(
                    at,
                    format!("more than {MAX_CLIENTS} clients: each is an actor"),
                    "let clients make several requests each",
                ))
            }
            None => clients.push((r.client.clone(), vec![spec])),
        }
    }
    Ok(clients)
}

fn client_name(name: &str, at: Vec<Seg>) -> Result<(), Invalid> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        return Err(invalid(
            at,
            format!("\"{name}\" is not a client name"),
            "name clients with lowercase letters, digits and dashes, starting with a letter: \"alice\", \"editor-2\"",
        ));
    }
    if name == SERVER {
        return Err(invalid(
            at,
            "\"server\" is the resource server's name",
            "give the client another name, e.g. \"client\"",
        ));
    }
    Ok(())
}

pub(super) fn resources(d: &[ResourceDto]) -> Result<Vec<(u32, u32)>, Invalid> {
    if d.len() as u64 > MAX_RESOURCES {
        return Err(invalid(
            vec![Seg::Key("resources")],
            format!(
                "{} resources: a scenario has at most {MAX_RESOURCES}",
                d.len()
            ),
            "use fewer [[resources]] tables",
        ));
    }
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(d.len());
    for (i, r) in d.iter().enumerate() {
        let at = vec![Seg::Key("resources"), Seg::Index(i), Seg::Key("id")];
        if r.id == 0 || r.id > u32::MAX / 2 {
            return Err(invalid(
                at,
                format!("resource id {} is out of range", r.id),
                format!("use an id from 1 to {}", u32::MAX / 2),
            ));
        }
        if out.iter().any(|o| o.0 == r.id) {
            return Err(invalid(
                at,
                format!("resource /claims/{} appears twice", r.id),
                "give each [[resources]] table its own id",
            ));
        }
        out.push((r.id, r.value));
    }
    out.sort_unstable();
    Ok(out)
}

/// One `[[requests]]` table, validated; `known` are the resources it may name.
fn request(
    r: &RequestDto,
    i: usize,
    known: &[u32],
    max_time_us: TimeUs,
) -> Result<RequestSpec, Invalid> {
    let at = |k| vec![Seg::Key("requests"), Seg::Index(i), Seg::Key(k)];
    let action = one_of(
        &r.method,
        &[
            ("post", Action::Create),
            ("put", Action::Replace),
            ("patch", Action::Increment),
            ("delete", Action::Delete),
            ("edit", Action::Edit),
        ],
        at("method"),
    )?;
    let resource = resource_of(r, action, &at, known)?;
    let value = value_of(r, action, &at)?;
    start_us(r.start_ms, max_time_us, at("start_ms"), "request")?;
    let retry_value = retry_value_of(r, action, &at)?;
    Ok(RequestSpec {
        id: i as u32 + 1,
        action,
        resource,
        value,
        start_ms: r.start_ms,
        retry_value,
    })
}

/// The resource a request acts on: none for a POST (the server picks its
/// id, 0 until then), any id for a PUT, a known one for the others.
fn resource_of(
    r: &RequestDto,
    action: Action,
    at: &dyn Fn(&'static str) -> Vec<Seg>,
    known: &[u32],
) -> Result<u32, Invalid> {
    let method = r.method.to_uppercase();
    let resource = match (action, r.resource) {
        (Action::Create, Some(_)) => {
            return Err(invalid(
                at("resource"),
                "a POST creates a new resource under /claims, and the server picks its id",
                "remove `resource`, or use method = \"put\" to write a resource you name",
            ))
        }
        (Action::Create, None) => 0,
        (_, None) => {
            return Err(invalid(
                at("method"),
                format!("a {method} names the resource it acts on"),
                "add resource = 4711 (an id from [[resources]])",
            ))
        }
        (Action::Replace, Some(id)) => id,
        (_, Some(id)) if known.contains(&id) => id,
        (_, Some(id)) => {
            return Err(invalid(
                at("resource"),
                format!("no resource /claims/{id}: neither in [[resources]] nor written by a PUT"),
                format!("add a [[resources]] table with id = {id}, or name a resource that exists"),
            ))
        }
    };
    // 0 is no id: a POST's resource is 0 until the server picks one.
    if resource > u32::MAX / 2 || r.resource == Some(0) {
        return Err(invalid(
            at("resource"),
            format!("resource id {resource} is out of range"),
            format!("use an id from 1 to {}", u32::MAX / 2),
        ));
    }
    Ok(resource)
}

/// The value a request sends: none for a DELETE, at least 1 for an amount
/// to add.
fn value_of(
    r: &RequestDto,
    action: Action,
    at: &dyn Fn(&'static str) -> Vec<Seg>,
) -> Result<u32, Invalid> {
    let method = r.method.to_uppercase();
    Ok(match (action, r.value) {
        (Action::Delete, Some(_)) => {
            return Err(invalid(
                at("value"),
                "a DELETE has no body",
                "remove `value`",
            ))
        }
        (Action::Delete, None) => 0,
        (_, None) => {
            return Err(invalid(
                at("method"),
                format!("a {method} needs the value it sends"),
                "add value = 1200",
            ))
        }
        (Action::Increment | Action::Edit, Some(0)) => {
            return Err(invalid(
                at("value"),
                "adding 0 changes nothing",
                "write the amount to add, at least 1",
            ))
        }
        (_, Some(v)) => v,
    })
}

/// The value a request's retries send instead of `value`: only a request
/// whose body the client writes itself (a POST, a PUT, a PATCH) has one.
fn retry_value_of(
    r: &RequestDto,
    action: Action,
    at: &dyn Fn(&'static str) -> Vec<Seg>,
) -> Result<Option<u32>, Invalid> {
    let method = r.method.to_uppercase();
    match (action, r.retry_value) {
        (_, None) => Ok(None),
        (Action::Delete, Some(_)) => Err(invalid(
            at("retry_value"),
            "a DELETE has no body for a retry to change",
            "remove `retry_value`",
        )),
        (Action::Edit, Some(_)) => Err(invalid(
            at("retry_value"),
            "an edit's retry computes its body from a new read",
            "remove `retry_value`, or use method = \"put\" or \"patch\" to send a body you choose",
        )),
        (Action::Increment, Some(0)) => Err(invalid(
            at("retry_value"),
            "adding 0 changes nothing",
            "write the amount the retry adds, at least 1",
        )),
        (_, Some(v)) if Some(v) == r.value => Err(invalid(
            at("retry_value"),
            format!("the {method}'s retries would send its value, {v}, again: nothing changes"),
            "remove `retry_value`, or give the value the retries send instead",
        )),
        (_, Some(v)) => Ok(Some(v)),
    }
}
