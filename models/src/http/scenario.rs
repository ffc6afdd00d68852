//! The HTTP model's tables in a scenario file: `[client]` (with
//! `[client.retry]`), `[server]`, `[[resources]]` and `[[requests]]`. Every
//! client named in `[[requests]]` is an actor with the `[client]` settings;
//! the server is the actor `server`.

use super::{
    Action, Client, ClientConfig, DeleteNotFound, PutMode, RequestSpec, Server, ServerConfig,
};
use crate::core::client_op::Persistence;
use crate::core::input::{
    count_in, duration_us, invalid, one_of, path, positive_duration_us, start_us, Invalid,
    LoadError, Seg, MAX_DURATION_MS,
};
use crate::core::retry_table::RetryDto;
use crate::core::{BuildInput, Built, Carries};
use serde::Deserialize;

pub const TABLES: &[&str] = &["client", "server", "resources", "requests"];

/// Most requests, and most resources, in one scenario.
pub const MAX_REQUESTS: u64 = 1000;
pub const MAX_RESOURCES: u64 = 1000;
/// Most clients: each is an actor.
pub const MAX_CLIENTS: usize = 64;
const DAY_MS: u64 = 24 * 3600 * 1000;

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
            }],
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ClientDto {
    timeout_ms: u64,
    idempotency_key: bool,
    if_match: bool,
    delete_404: String,
    retry: RetryDto,
}

impl Default for ClientDto {
    fn default() -> Self {
        ClientDto {
            timeout_ms: 10_000,
            idempotency_key: true,
            if_match: true,
            delete_404: "done".into(),
            retry: RetryDto::default(),
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ServerDto {
    idempotency_keys: bool,
    key_retention_ms: u64,
    max_keys: u64,
    put: String,
}

impl Default for ServerDto {
    fn default() -> Self {
        ServerDto {
            idempotency_keys: true,
            key_retention_ms: DAY_MS,
            max_keys: 10_000,
            put: "replace".into(),
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ResourceDto {
    id: u32,
    #[serde(default)]
    value: u32,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RequestDto {
    #[serde(default = "default_client")]
    client: String,
    method: String,
    resource: Option<u32>,
    value: Option<u32>,
    #[serde(default)]
    start_ms: u64,
}

fn default_client() -> String {
    "client".into()
}

const SERVER: &str = "server";

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

fn resources(d: &[ResourceDto]) -> Result<Vec<(u32, u32)>, Invalid> {
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
    input: &BuildInput<'_>,
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
    let value = match (action, r.value) {
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
    };
    start_us(r.start_ms, input.max_time_us, at("start_ms"), "request")?;
    Ok(RequestSpec {
        id: i as u32 + 1,
        action,
        resource,
        value,
        start_ms: r.start_ms,
    })
}

/// The gaps in an HTTP design that its settings show: a server that forgets
/// an Idempotency-Key while a client may still retry a request whose repeat
/// either takes effect again (a POST, a PATCH, a PUT that adds, an edit) or
/// gets an answer the client takes for a failure (a DELETE's 404, where the
/// client reads it as failed).
///
/// `text` is the scenario, for the `[crashes.X]` tables of its clients: a
/// client that crashes resumes its pending requests from its own storage
/// when it is back, and without a retry window nothing bounds its retries
/// in time.
fn hazards(
    client: &ClientConfig,
    server: &ServerConfig,
    clients: &[(String, Vec<RequestSpec>)],
    delays: &crate::core::hazard::Delays,
    text: &str,
) -> Vec<crate::core::Hazard> {
    let requests = || clients.iter().flat_map(|c| &c.1);
    let has = |action: Action| requests().any(|r| r.action == action);
    // Each repeat after the key is gone is executed as new; what that costs
    // depends on the request.
    let adds_again = has(Action::Create)
        || has(Action::Increment)
        || (has(Action::Replace) && server.put == PutMode::Add);
    // A read-modify-write retried reads its own landed write back, and the
    // ETag it reads is current: If-Match lets the second PUT through.
    let edits_again = has(Action::Edit);
    // A DELETE's repeat changes nothing, but only the stored 204 told the
    // client it had deleted; without it the repeat answers 404.
    let delete_fails = has(Action::Delete) && client.delete_404 == DeleteNotFound::Failed;
    if !client.idempotency_key || !server.keys || !(adds_again || edits_again || delete_fails) {
        return Vec::new();
    }
    let mut then = String::from("a retry after that is taken for a new request");
    if adds_again || edits_again {
        then.push_str(" and takes effect again");
    }
    if edits_again {
        then.push_str(if client.if_match {
            " (an edit's retry reads its own write back and adds to it again: the ETag it reads is current, so If-Match lets the PUT through)"
        } else {
            " (an edit's retry reads its own write back and adds to it again)"
        });
    }
    if delete_fails {
        then.push_str(if adds_again || edits_again {
            "; "
        } else {
            ": "
        });
        then.push_str("a DELETE's retry finds nothing left to delete and is answered 404, which the client records as failed (client.delete_404 = \"failed\") although its first attempt deleted the resource");
    }
    let p = &client.persistence;
    // One request's copies all come from its one client.
    let spread_ms = clients
        .iter()
        .map(|c| delays.spread_ms(&[vec![c.0.as_str(), SERVER]]))
        .max()
        .unwrap_or(0);
    let layer = crate::core::hazard::KeyMemory::of_us(
        "server.key_retention_ms",
        server.key_retention_us,
        spread_ms,
    );
    // The client actor that stays down longest, if any can crash and its
    // retries have no window to bound them in time.
    let restart = clients
        .iter()
        .filter_map(|c| crate::core::hazard::restart_ms(text, &c.0).map(|(_, max)| (&c.0, max)))
        .max_by_key(|(_, max_ms)| *max_ms)
        .filter(|_| p.retry.window_ms == 0 && p.retry.max_attempts > 1);
    let read_ms = edit_read_ms(clients, delays, p.timeout_ms);
    let span = match restart {
        Some((_, max_ms)) => p
            .retry
            .longest_span_with_restarts_ms(p.timeout_ms.saturating_add(read_ms.1), max_ms),
        None if read_ms.1 == 0 => p.retry.longest_span_ms(p.timeout_ms),
        None => edit_span_ms(&p.retry, p.timeout_ms, read_ms),
    };
    let resumed = restart.map(|(name, max_ms)| {
        format!(
            "a client retries, each of its {} retries possibly after a restart of up to {} ([crashes.{name}] restart_ms_max) and a new wait, since client.retry sets no window_ms to bound them in time,",
            p.retry.max_attempts - 1,
            crate::core::hazard::about_ms(max_ms)
        )
    });
    let mut retries = resumed.unwrap_or_else(|| "a client retries".to_string());
    if read_ms.1 > 0 {
        let comma = retries.ends_with(',');
        if comma {
            retries.pop();
        }
        retries.push_str(&format!(
            " (an edit's PUT, which carries the key, leaves when its GET is answered, up to {} into the attempt, and waits a whole timeout from there)",
            crate::core::hazard::about_ms(read_ms.1)
        ));
        if comma {
            retries.push(',');
        }
    }
    crate::core::hazard::key_retention(
        &[layer],
        span,
        &retries,
        &then,
        Some(super::situations::KEY_EXPIRED),
        // Where only DELETEs are at stake, the failure the runs show is a false failure.
        if adds_again || edits_again {
            "http-key-expired-before-retry"
        } else {
            "http-delete-404-as-failure"
        },
    )
    .into_iter()
    .collect()
}

/// How long an edit's GET can hold back the PUT that carries its key,
/// `(shortest, longest)` over the clients that edit (`(0, 0)` where none
/// does): the round trip to the server and back, at most `timeout_ms`,
/// since an answer after the timeout finds the attempt over. The PUT leaves
/// when the GET's answer arrives and re-arms the timeout, so an edit's
/// attempt can last that much more than one timeout.
fn edit_read_ms(
    clients: &[(String, Vec<RequestSpec>)],
    delays: &crate::core::hazard::Delays,
    timeout_ms: u64,
) -> (u64, u64) {
    clients
        .iter()
        .filter(|c| c.1.iter().any(|r| r.action == Action::Edit))
        .map(|c| {
            let (lo, hi) = delays.path_ms(&[c.0.as_str(), SERVER, c.0.as_str()]);
            (lo.min(timeout_ms), hi.min(timeout_ms))
        })
        .fold(None, |acc: Option<(u64, u64)>, (lo, hi)| {
            Some(acc.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))))
        })
        .unwrap_or((0, 0))
}

/// How long after an edit's first PUT its last retry's PUT can leave,
/// whose GET's round trip may take `read_ms` = `(shortest, longest)`: the
/// key is stored from the first PUT on, so the first attempt's read does
/// not count, and every later attempt's does. By attempts, each gap between
/// two starts is a read, a timeout and a wait; by the window, the last
/// attempt starts `window_ms - timeout_ms` after the first at the latest,
/// its read drawn up to the longest after a first one drawn the shortest.
fn edit_span_ms(
    retry: &crate::core::retry::RetryPolicy,
    timeout_ms: u64,
    (read_min_ms, read_max_ms): (u64, u64),
) -> Option<u64> {
    let unwindowed = crate::core::retry::RetryPolicy {
        window_ms: 0,
        ..*retry
    };
    let by_attempts = unwindowed.longest_span_ms(timeout_ms.saturating_add(read_max_ms));
    let by_window = (retry.window_ms > 0).then(|| {
        retry
            .window_ms
            .saturating_sub(timeout_ms)
            .saturating_add(read_max_ms - read_min_ms)
    });
    match (by_attempts, by_window) {
        (Some(a), Some(w)) => Some(a.min(w)),
        (a, w) => a.or(w),
    }
}

/// The keys the other settings leave without effect (`core::unused`): a
/// setting for a kind of request the scenario never sends, and the server's
/// key store where no key is stored.
fn unused(d: &FileDto) -> Vec<crate::core::Unused> {
    use crate::core::Unused;
    let (c, s) = (&d.client, &d.server);
    let mut out = c.retry.unused("client");
    let sends = |m: &str| d.requests.iter().any(|r| r.method == m);
    // An edit writes with a PUT too, which `server.put` applies.
    for (key, table, methods, what) in [
        (
            "put",
            "server",
            &["put", "edit"][..],
            "a PUT (method = \"put\", or an \"edit\", which writes with one)",
        ),
        (
            "if_match",
            "client",
            &["edit"][..],
            "an edit (method = \"edit\": its PUT is the only conditional request)",
        ),
        (
            "delete_404",
            "client",
            &["delete"][..],
            "a DELETE (method = \"delete\")",
        ),
    ] {
        if !methods.iter().any(|m| sends(m)) {
            let u = Unused::new(
                &[table, key],
                &[&["requests"]],
                format!("no [[requests]] entry is {what}"),
                format!(
                    "remove it, or add a [[requests]] table with method = \"{}\"",
                    methods[0]
                ),
            );
            // No edit sends no conditional request: `if_match = false` says so.
            out.push(if key == "if_match" {
                u.unless("false")
            } else {
                u
            });
        }
    }
    let store = if !s.idempotency_keys {
        Some((
            &["server", "idempotency_keys"][..],
            "the server stores no keys (server.idempotency_keys = false)",
        ))
    } else if !c.idempotency_key {
        Some((&["client", "idempotency_key"][..], "the client sends no Idempotency-Key (client.idempotency_key = false), so the server has none to store"))
    } else {
        None
    };
    if let Some((because, why)) = store {
        out.extend(Unused::each(
            &["server"],
            &["key_retention_ms", "max_keys"],
            &[because],
            why,
            "remove it, or keep keys: idempotency_key = true in [client] and idempotency_keys = true in [server]",
        ));
    }
    if !s.idempotency_keys && c.idempotency_key {
        out.push(
            Unused::new(
                &["client", "idempotency_key"],
                &[&["server", "idempotency_keys"]],
                "the server ignores the header (server.idempotency_keys = false)",
                "remove it, or let the server store keys: idempotency_keys = true in [server]",
            )
            .unless("false"),
        );
    }
    out
}

pub fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Client<W>> + From<Server<W>>,
    W: Carries<super::Msg>,
{
    let d: FileDto = toml::from_str(input.text)?;
    let initial = resources(&d.resources)?;
    if d.requests.is_empty() || d.requests.len() as u64 > MAX_REQUESTS {
        return Err(invalid(
            vec![Seg::Key("requests")],
            format!(
                "{} requests: a scenario has 1 to {MAX_REQUESTS}",
                d.requests.len()
            ),
            "give [[requests]] tables with method, resource and value",
        )
        .into());
    }
    // A request may act on an initial resource, or on one a PUT writes.
    let mut known: Vec<u32> = initial.iter().map(|r| r.0).collect();
    known.extend(
        d.requests
            .iter()
            .filter(|r| r.method == "put")
            .filter_map(|r| r.resource),
    );
    let mut clients: Vec<(String, Vec<RequestSpec>)> = Vec::new();
    for (i, r) in d.requests.iter().enumerate() {
        let at = vec![Seg::Key("requests"), Seg::Index(i), Seg::Key("client")];
        client_name(&r.client, at.clone())?;
        let spec = request(r, i, &known, input)?;
        let n = clients.len();
        match clients.iter_mut().find(|c| c.0 == r.client) {
            Some(c) => c.1.push(spec),
            None if n == MAX_CLIENTS => {
                return Err(invalid(
                    at,
                    format!("more than {MAX_CLIENTS} clients: each is an actor"),
                    "let clients make several requests each",
                )
                .into())
            }
            None => clients.push((r.client.clone(), vec![spec])),
        }
    }

    let c = &d.client;
    let cat = |k| path(&["client", k]);
    positive_duration_us(
        c.timeout_ms,
        DAY_MS,
        cat("timeout_ms"),
        "write timeout_ms = 10000",
    )?;
    let retry = c.retry.build("client", c.timeout_ms)?;
    let delete_404 = one_of(
        &c.delete_404,
        &[
            ("done", DeleteNotFound::Done),
            ("failed", DeleteNotFound::Failed),
        ],
        cat("delete_404"),
    )?;
    let server_id = clients.len() as sim::ActorId;
    let config = |requests: Vec<RequestSpec>| ClientConfig {
        server: server_id,
        persistence: Persistence {
            retry: retry.policy,
            timeout_ms: c.timeout_ms,
            dead_letter: retry.dead_letter,
        },
        idempotency_key: c.idempotency_key,
        if_match: c.if_match,
        delete_404,
        retry_final_errors: retry.retry_final_errors,
        requests,
    };

    let s = &d.server;
    let sat = |k| path(&["server", k]);
    let server = ServerConfig {
        keys: s.idempotency_keys,
        key_retention_us: duration_us(
            s.key_retention_ms,
            MAX_DURATION_MS,
            sat("key_retention_ms"),
        )?,
        max_keys: count_in(s.max_keys, 0, 10_000_000, sat("max_keys"), "keys")? as u32,
        put: one_of(
            &s.put,
            &[("replace", PutMode::Replace), ("add", PutMode::Add)],
            sat("put"),
        )?,
        resources: initial,
    };

    let mut hazards = hazards(
        &config(Vec::new()),
        &server,
        &clients,
        input.delays,
        input.text,
    );
    let round_trip_ms =
        |c: &(String, Vec<RequestSpec>)| input.delays.path_ms(&[&c.0, SERVER, &c.0]).0;
    let answer_ms = clients.iter().map(round_trip_ms).min().unwrap_or(0);
    // An edit's PUT leaves after its GET's answer: its lost answer times out
    // that round trip later than a lost GET's.
    let read_ms = clients
        .iter()
        .filter(|c| c.1.iter().any(|r| r.action == Action::Edit))
        .map(round_trip_ms)
        .min()
        .unwrap_or(0);
    hazards.extend(crate::core::retry_table::window_too_short_after_read(
        &retry.policy,
        "client",
        c.timeout_ms,
        answer_ms,
        read_ms,
        Some(super::situations::REQUEST_DEAD_LETTERED),
        // No catalog scenario fails by it: the operations it ends are
        // dead-lettered or told unknown, honestly, not judged wrong.
        "",
    ));
    let unused = unused(&d);
    let mut actors: Vec<(String, N)> = clients
        .into_iter()
        .map(|(name, requests)| (name, N::from(Client::new(config(requests)))))
        .collect();
    actors.push((SERVER.to_string(), N::from(Server::new(server))));
    Ok(Built {
        actors,
        actors_hint: " (each client named in [[requests]] is an actor)",
        hazards,
        unused,
    })
}
