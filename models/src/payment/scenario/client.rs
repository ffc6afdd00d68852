//! `[client]`: the claims system's key, timeout and retries, with the
//! tables beneath it (`load.rs`, `followup.rs`), converted into a [`ClientConfig`] that
//! carries every operation (`operations.rs`; `parts` deals them out).

use super::followup::{CompensateDto, ReconcileDto};
use super::load::{BreakerDto, BudgetDto};
use super::operations::{self, OpDto};
use super::DAY_MS;
use crate::core::input::{one_of, path, positive_duration_us, Invalid};
use crate::core::retry_table::RetryDto;
use crate::payment::{ClientConfig, KeyPolicy};
use serde::Deserialize;
use sim::{ActorId, TimeUs};
use std::collections::BTreeMap;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct ClientDto {
    pub(super) actors: u64,
    pub(super) key: String,
    pub(super) key_bucket_ms: u64,
    pub(super) timeout_ms: u64,
    pub(super) timeout_means: String,
    pub(super) overloaded_means: String,
    pub(super) retry: RetryDto,
    pub(super) budget: Option<BudgetDto>,
    pub(super) breaker: Option<BreakerDto>,
    pub(super) reconcile: Option<ReconcileDto>,
    pub(super) compensate: Option<CompensateDto>,
    /// `[client.groups.NAME]`: read as tables, written over `[client]`
    /// (`versions.rs`).
    pub(super) groups: BTreeMap<String, toml::Table>,
}

impl Default for ClientDto {
    fn default() -> Self {
        ClientDto {
            actors: 1,
            key: "stable".into(),
            key_bucket_ms: 1000,
            timeout_ms: 10_000,
            timeout_means: "unknown".into(),
            overloaded_means: "failed".into(),
            retry: RetryDto::default(),
            budget: None,
            breaker: None,
            reconcile: None,
            compensate: None,
            groups: BTreeMap::new(),
        }
    }
}

/// `[client]` and `[[operations]]`, for a client that calls the service at
/// `service`, with operations starting before `max_time_us`. The checks
/// run in the order their errors have always come: the key, the timeout,
/// the retries, the operations, what a timeout and an overload mean.
pub(super) fn client(
    c: &ClientDto,
    ops: &[OpDto],
    max_time_us: TimeUs,
    service: ActorId,
) -> Result<ClientConfig, Invalid> {
    let at = |k| path(&["client", k]);
    let key = key_of(c)?;
    positive_duration_us(
        c.timeout_ms,
        DAY_MS,
        at("timeout_ms"),
        "the articles' client waits 10 s: timeout_ms = 10000",
    )?;
    let retry = c.retry.build("client", c.timeout_ms)?;
    let specs = operations::specs(ops, max_time_us)?;
    let timeout_means_failed = one_of(
        &c.timeout_means,
        &[("unknown", false), ("failed", true)],
        at("timeout_means"),
    )?;
    let overloaded_means_unknown = one_of(
        &c.overloaded_means,
        &[("failed", false), ("unknown", true)],
        at("overloaded_means"),
    )?;
    Ok(ClientConfig {
        service,
        timeout_ms: c.timeout_ms,
        key,
        retry: retry.policy,
        retry_final_errors: retry.retry_final_errors,
        dead_letter: retry.dead_letter,
        timeout_means_failed,
        overloaded_means_unknown,
        budget: c
            .budget
            .as_ref()
            .map(BudgetDto::build)
            .transpose()?
            .flatten(),
        breaker: c
            .breaker
            .as_ref()
            .map(BreakerDto::build)
            .transpose()?
            .flatten(),
        ops: specs,
        reconcile: None,
        compensate: None,
    })
}

/// `client.key`, with `key_bucket_ms` checked for every key policy, not
/// only the one that reads it.
fn key_of(c: &ClientDto) -> Result<KeyPolicy, Invalid> {
    let at = |k| path(&["client", k]);
    positive_duration_us(
        c.key_bucket_ms,
        DAY_MS,
        at("key_bucket_ms"),
        "write key_bucket_ms = 1000",
    )?;
    Ok(match c.key.as_str() {
        "timestamp" => KeyPolicy::Timestamp {
            bucket_ms: c.key_bucket_ms,
        },
        other => one_of(
            other,
            &[
                ("stable", KeyPolicy::Stable),
                ("per-attempt", KeyPolicy::PerAttempt),
                ("claim", KeyPolicy::Claim),
                ("none", KeyPolicy::None),
                ("timestamp", KeyPolicy::None),
            ],
            at("key"),
        )?,
    })
}
