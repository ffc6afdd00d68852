//! The contention model's keys in a scenario file: `clients` (how many
//! contend) and `[client]` (with `[client.retry]`, the shared retry table).
//! The clients are the actors `client-1` to `client-N`; the row is the actor
//! `resource`.

use super::{Client, ClientConfig, Resource};
use crate::core::input::{count_in, duration_us, invalid, path, Invalid, LoadError, Seg, DAY_MS};
use crate::core::retry::{Jitter, RetryPolicy};
use crate::core::retry_table::{Retry, RetryDto};
use crate::core::{BuildInput, Built, Carries};
use serde::Deserialize;

pub(crate) const TABLES: &[&str] = &["clients", "client"];

/// Most clients: each is an actor, and the world's links are an N × N table.
/// AWS's simulator went up to 190.
pub const MAX_CLIENTS: u64 = 200;
/// Most writes in one scenario, all clients together.
pub const MAX_WRITES: u64 = 1000;
// Write ids run from 1 to MAX_WRITES; the row's request-id set must hold each.
const _: () = assert!(MAX_WRITES < super::resource::RequestIds::CAPACITY as u64);

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

pub(crate) const RESOURCE: &str = "resource";

/// `clients` and `[client]`, checked: how many clients contend, how many
/// writes each makes, and how each retries.
struct Settings {
    clients: u64,
    writes: u64,
    first_retry_exponent: u32,
    retry: Retry,
}

impl TryFrom<&FileDto> for Settings {
    type Error = Invalid;

    fn try_from(d: &FileDto) -> Result<Settings, Invalid> {
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
            ));
        }
        duration_us(c.timeout_ms, DAY_MS, cat("timeout_ms"))?;
        if c.first_retry_exponent > 1 {
            return Err(invalid(
                cat("first_retry_exponent"),
                format!("{} is not a first retry's exponent here", c.first_retry_exponent),
                "write 0 (the first retry waits base_ms, as in every model) or 1 (it waits 2 × base_ms, as in AWS's backoff simulator)",
            ));
        }
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
            ));
        }
        Ok(Settings {
            clients,
            writes,
            first_retry_exponent: c.first_retry_exponent as u32,
            retry,
        })
    }
}

/// The contention model's actors: `client-1` to `client-N`, then the row.
pub(crate) fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Client<W>> + From<Resource<W>>,
    W: Carries<super::Msg>,
{
    let d: FileDto = toml::from_str(input.text)?;
    let s = Settings::try_from(&d)?;
    let c = &d.client;
    let resource = s.clients as sim::ActorId;
    let mut actors: Vec<(String, N)> = (0..s.clients)
        .map(|k| {
            let first = (k * s.writes) as u32 + 1;
            let cfg = ClientConfig {
                resource,
                retry: s.retry.policy,
                timeout_ms: c.timeout_ms,
                dead_letter: s.retry.dead_letter,
                cas: c.cas,
                request_id: c.request_id,
                first_retry_exponent: s.first_retry_exponent,
                writes: (first..first + s.writes as u32).collect(),
            };
            (format!("client-{}", k + 1), N::from(Client::new(cfg)))
        })
        .collect();
    actors.push((RESOURCE.to_string(), N::from(Resource::new())));
    // Every attempt reads the row, then writes: the write leaves a read's
    // round trip into its attempt, and its lost answer times out that much
    // later than a lost read's.
    let round_trip_ms = actors[..actors.len() - 1]
        .iter()
        .map(|(name, _)| input.delays.path_ms(&[name, RESOURCE, name]).0)
        .min()
        .unwrap_or(0);
    let design_warnings = crate::core::retry_table::window_too_short_after_read(
        &s.retry.policy,
        "client",
        c.timeout_ms,
        round_trip_ms,
        round_trip_ms,
        Some(super::situations::WRITE_DEAD_LETTERED),
        // No catalog scenario sets a window.
        "",
    );
    Ok(Built {
        actors,
        actors_hint: " (the clients are client-1 to client-N, N being `clients`)",
        design_warnings: design_warnings.into_iter().collect(),
        unused: unused(c, &s.retry.policy, input.text),
    })
}

/// The keys of `[client]` its other settings (and, for the request id, the
/// faults the file sets) leave without effect: what shapes a retry's wait
/// where the wait does not grow by an exponent; what is done with a write
/// given up where none is; a request id where no write can come twice.
/// `retry` is the table as built: policy "none" is one attempt, "fixed" a
/// multiplier of 1.
fn unused(c: &ClientDto, retry: &RetryPolicy, text: &str) -> Vec<crate::core::Unused> {
    use crate::core::Unused;
    let mut out = c.retry.unused("client");
    let at = |k| ["client", "retry", k];
    // Each wait is min(cap, base · m^n) jittered (`RetryPolicy::wait`): the
    // exponent n only matters where some retry is made, m is 2, base is
    // not 0 and the jitter reads n.
    let exponent_unread: Option<(Vec<[&'static str; 3]>, &str)> = if retry.max_attempts == 1 {
        Some((
            vec![at("policy"), at("max_attempts")],
            "makes no retry (policy = \"none\", or max_attempts = 1)",
        ))
    } else if retry.multiplier < 2 {
        Some((
            vec![at("policy")],
            "waits base_ms every time (policy = \"fixed\"), whatever the exponent",
        ))
    } else if retry.base_ms == 0 {
        Some((
            vec![at("base_ms")],
            "makes every wait 0 (base_ms = 0), whatever the exponent",
        ))
    } else if retry.jitter == Jitter::Decorrelated {
        Some((
            vec![at("jitter")],
            "draws each wait from the one before (jitter = \"decorrelated\"), not from an exponent",
        ))
    } else {
        None
    };
    if let Some((because, why)) = exponent_unread {
        let because: Vec<&[&'static str]> = because.iter().map(|b| &b[..]).collect();
        out.push(
            Unused::new(
                &["client", "first_retry_exponent"],
                &because,
                format!("[client.retry] {why}"),
                "remove it, or back off exponentially: policy = \"exponential\", base_ms above 0, and jitter \"none\", \"full\" or \"equal\"",
            )
            .unless("0"),
        );
    }
    // The contended write is given up only by its retry policy: a cap on
    // attempts or a window (policy "none" is a cap of one attempt).
    if retry.max_attempts == 0 && retry.window_ms == 0 {
        out.push(Unused::new(
            &["client", "retry", "dead_letter"],
            &[&at("max_attempts"), &at("window_ms"), &at("policy")],
            "the client retries until its write lands (max_attempts = 0 and no window_ms), so no write is ever given up",
            "remove it, or bound the retries: max_attempts = 10, or a window_ms",
        ));
    }
    if c.request_id && !write_can_come_twice(c, text) {
        out.push(
            Unused::new(
                &["client", "request_id"],
                &[&["client", "timeout_ms"], &["network"], &["crashes"]],
                "no write can reach the row twice: the client waits for every answer (client.timeout_ms = 0), no client crashes, and the network duplicates nothing, so the row never meets an id it holds",
                "remove it, or let a write come again: client.timeout_ms = 100 with loss, or duplicate_per_mille in [network]",
            )
            .unless("false"),
        );
    }
    out
}

/// Whether a write can reach the row a second time under the scenario
/// `text`: a retry after an attempt timed out (`client.timeout_ms`), a
/// client that restarts with its write pending and resumes it, or a network
/// copy. Any duplication the file sets counts, whatever link or kinds it
/// names; a file that does not parse counts as one that can.
fn write_can_come_twice(c: &ClientDto, text: &str) -> bool {
    if c.timeout_ms > 0 {
        return true;
    }
    let Ok(doc) = text.parse::<toml::Table>() else {
        return true;
    };
    let above_zero = |v: Option<&toml::Value>| match v {
        Some(toml::Value::Array(a)) => a.iter().any(|x| x.as_integer().is_some_and(|i| i > 0)),
        Some(v) => v.as_integer().is_some_and(|i| i > 0),
        None => false,
    };
    let crashes = doc.get("crashes").and_then(toml::Value::as_table);
    let client_crashes = crashes
        .into_iter()
        .flatten()
        .any(|(name, t)| name.starts_with("client") && above_zero(t.get("crash_per_mille")));
    let network = doc.get("network").and_then(toml::Value::as_table);
    let duplicates = network.is_some_and(|n| {
        above_zero(n.get("duplicate_per_mille"))
            || n.get("links")
                .and_then(toml::Value::as_array)
                .into_iter()
                .flatten()
                .any(|l| above_zero(l.get("duplicate_per_mille")))
    });
    client_crashes || duplicates
}

#[cfg(test)]
mod tests {
    use super::{FileDto, Settings, MAX_WRITES};
    use crate::core::input::path;

    fn settings(text: &str) -> Result<Settings, crate::core::input::Invalid> {
        let d: FileDto = toml::from_str(text).unwrap();
        Settings::try_from(&d)
    }

    #[test]
    fn the_writes_of_all_clients_together_are_bounded() {
        let Ok(ok) = settings("clients = 10\n[client]\nwrites = 100") else {
            panic!("10 clients of 100 writes are the most there may be");
        };
        assert_eq!(ok.clients * ok.writes, MAX_WRITES);
        let e = settings("clients = 11\n[client]\nwrites = 100")
            .err()
            .unwrap();
        assert_eq!(e.path, path(&["client", "writes"]));
        assert!(e.message.contains("1100 writes"), "{}", e.message);
    }

    #[test]
    fn a_first_retry_exponent_is_0_or_1() {
        let one = settings("[client]\nfirst_retry_exponent = 1");
        assert_eq!(one.map(|s| s.first_retry_exponent).ok(), Some(1));
        let e = settings("[client]\nfirst_retry_exponent = 2")
            .err()
            .unwrap();
        assert_eq!(e.path, path(&["client", "first_retry_exponent"]));
    }
}
