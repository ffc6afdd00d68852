//! `[client]` (with `[client.retry]`): every client actor's timeout,
//! retries, Idempotency-Key and If-Match (an edit's, and conditional
//! PUT, PATCH and DELETE), how a retry's body is built, and what a
//! DELETE's 404 means.

use super::DAY_MS;
use crate::core::client_op::Persistence;
use crate::core::input::{one_of, path, positive_duration_us, Invalid};
use crate::core::retry_table::{Retry, RetryDto};
use crate::http::{ClientConfig, DeleteNotFound, RequestSpec, RetryBody};
use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct ClientDto {
    pub(super) timeout_ms: u64,
    pub(super) idempotency_key: bool,
    pub(super) if_match: bool,
    pub(super) conditional_writes: bool,
    retry_body: String,
    delete_404: String,
    pub(super) retry: RetryDto,
    /// `[client.groups.NAME]`: clients with settings of their own (`groups.rs`).
    pub(super) groups: toml::Table,
}

impl Default for ClientDto {
    fn default() -> Self {
        ClientDto {
            timeout_ms: 10_000,
            idempotency_key: true,
            if_match: true,
            conditional_writes: false,
            retry_body: "same".into(),
            delete_404: "done".into(),
            retry: RetryDto::default(),
            groups: toml::Table::new(),
        }
    }
}

/// `[client]`, checked: the settings every client actor shares.
pub(super) struct Settings<'a> {
    dto: &'a ClientDto,
    pub(super) retry: Retry,
    delete_404: DeleteNotFound,
    retry_body: RetryBody,
}

impl<'a> TryFrom<&'a ClientDto> for Settings<'a> {
    type Error = Invalid;

    fn try_from(c: &'a ClientDto) -> Result<Settings<'a>, Invalid> {
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
        let retry_body = one_of(
            &c.retry_body,
            &[
                ("same", RetryBody::Same),
                ("new-timestamp", RetryBody::NewTimestamp),
            ],
            cat("retry_body"),
        )?;
        Ok(Settings {
            dto: c,
            retry,
            delete_404,
            retry_body,
        })
    }
}

impl Settings<'_> {
    pub(super) fn timeout_ms(&self) -> u64 {
        self.dto.timeout_ms
    }

    /// A client actor's configuration: these settings, the server at
    /// `server`, and its own `requests`.
    pub(super) fn config(&self, server: sim::ActorId, requests: Vec<RequestSpec>) -> ClientConfig {
        ClientConfig {
            server,
            persistence: Persistence {
                retry: self.retry.policy,
                timeout_ms: self.dto.timeout_ms,
                dead_letter: self.retry.dead_letter,
            },
            idempotency_key: self.dto.idempotency_key,
            if_match: self.dto.if_match,
            conditional_writes: self.dto.conditional_writes,
            retry_body: self.retry_body,
            delete_404: self.delete_404,
            retry_final_errors: self.retry.retry_final_errors,
            requests,
        }
    }
}
