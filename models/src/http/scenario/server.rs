//! `[server]`: whether the resource server stores Idempotency-Keys, how
//! long and how many, what it compares a known key's request on, and what
//! a PUT does.

use super::DAY_MS;
use crate::core::input::{count_in, duration_us, one_of, path, Invalid, MAX_DURATION_MS};
use crate::http::{Fingerprint, PutMode, ServerConfig};
use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct ServerDto {
    pub(super) idempotency_keys: bool,
    pub(super) key_retention_ms: u64,
    pub(super) max_keys: u64,
    pub(super) put: String,
    fingerprint: String,
    /// A user's program in the server's place (docs/protocol.md).
    pub(super) program: Option<Vec<String>>,
    pub(super) handler_timeout_ms: u64,
    pub(super) state_folder: bool,
}

/// The built-in server's keys, which a program in its place replaces.
const BUILT_IN_SERVER_KEYS: &[&str] = &[
    "idempotency_keys",
    "key_retention_ms",
    "max_keys",
    "put",
    "fingerprint",
];

/// `[server] program`, checked (see `external::keys`).
pub(super) fn program_of(
    s: &ServerDto,
    input: &crate::core::BuildInput<'_>,
) -> Result<Option<(crate::external::Program, u64)>, Invalid> {
    let keys = crate::external::keys::ProgramKeys {
        table: "server",
        argv: s.program.as_deref(),
        handler_timeout_ms: s.handler_timeout_ms,
        state_folder: s.state_folder,
        built_in: BUILT_IN_SERVER_KEYS,
    };
    let written = |key: &str| {
        input.text.parse::<toml::Table>().is_ok_and(|t| {
            t.get("server")
                .and_then(toml::Value::as_table)
                .is_some_and(|c| c.contains_key(key))
        })
    };
    crate::external::keys::program_of(&keys, written, input.dir)
}

impl Default for ServerDto {
    fn default() -> Self {
        ServerDto {
            idempotency_keys: true,
            key_retention_ms: DAY_MS,
            max_keys: 10_000,
            put: "replace".into(),
            fingerprint: "none".into(),
            program: None,
            handler_timeout_ms: crate::external::keys::default_handler_timeout_ms(),
            state_folder: false,
        }
    }
}

/// `[server]`, for a server that starts with the resources `resources`.
pub(super) fn server(s: &ServerDto, resources: Vec<(u32, u32)>) -> Result<ServerConfig, Invalid> {
    let sat = |k| path(&["server", k]);
    Ok(ServerConfig {
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
        fingerprint: one_of(
            &s.fingerprint,
            &[
                ("none", Fingerprint::None),
                ("body", Fingerprint::Body),
                ("fields", Fingerprint::Fields),
            ],
            sat("fingerprint"),
        )?,
        resources,
    })
}
