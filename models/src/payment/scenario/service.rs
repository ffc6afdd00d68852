//! `[service]`: the payment service's key table, its bank calls and its
//! capacity, converted into a [`ServiceConfig`] (the `[bank]` settings it
//! depends on: whether the bank answers status queries).

use super::bank::BankDto;
use super::DAY_MS;
use crate::core::input::{
    count_in, duration_us, invalid, one_of, path, positive_duration_us, Invalid, Seg,
    MAX_DURATION_MS,
};
use crate::payment::service::{MAX_QUEUE, MAX_WORKERS};
use crate::payment::{Concurrent, Idempotency, Mode, ServiceConfig};
use serde::Deserialize;
use sim::ActorId;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct ServiceDto {
    pub(super) idempotency: String,
    pub(super) retention_ms: u64,
    pub(super) fingerprint_check: bool,
    pub(super) pass_key_to_bank: bool,
    pub(super) bank_timeout_ms: u64,
    pub(super) bank_max_attempts: u64,
    pub(super) lease_ms: u64,
    pub(super) concurrent: String,
    pub(super) processing_ms: u64,
    pub(super) max_keys: u64,
    /// `max_in_flight` is its older name.
    #[serde(alias = "max_in_flight")]
    pub(super) workers: u64,
    pub(super) queue_max: u64,
    pub(super) drop_expired: bool,
    pub(super) recover_ms: u64,
    pub(super) mode: String,
    pub(super) query_before_retry: bool,
    pub(super) query_on_recovery: bool,
    pub(super) on_bank_timeout: String,
    /// A user's program in the service's place (docs/protocol.md).
    pub(super) program: Option<Vec<String>>,
    pub(super) handler_timeout_ms: u64,
    pub(super) state_folder: bool,
}

/// The built-in service's keys, which a program in its place replaces.
const BUILT_IN_SERVICE_KEYS: &[&str] = &[
    "idempotency",
    "retention_ms",
    "fingerprint_check",
    "pass_key_to_bank",
    "bank_timeout_ms",
    "bank_max_attempts",
    "lease_ms",
    "concurrent",
    "processing_ms",
    "max_keys",
    "workers",
    "max_in_flight",
    "queue_max",
    "drop_expired",
    "recover_ms",
    "mode",
    "query_before_retry",
    "query_on_recovery",
    "on_bank_timeout",
];

/// `[service] program`, checked (see `external::keys`).
pub(super) fn program_of(
    s: &ServiceDto,
    input: &crate::core::BuildInput<'_>,
) -> Result<Option<(crate::external::Program, u64)>, Invalid> {
    let keys = crate::external::keys::ProgramKeys {
        table: "service",
        argv: s.program.as_deref(),
        handler_timeout_ms: s.handler_timeout_ms,
        state_folder: s.state_folder,
        built_in: BUILT_IN_SERVICE_KEYS,
    };
    let written = |key: &str| super::bank::written_in(input.text, "service", key);
    crate::external::keys::program_of(&keys, written, input.dir)
}

impl Default for ServiceDto {
    fn default() -> Self {
        ServiceDto {
            idempotency: "claim-same-tx".into(),
            retention_ms: 30 * DAY_MS,
            fingerprint_check: true,
            pass_key_to_bank: true,
            bank_timeout_ms: 5_000,
            bank_max_attempts: 3,
            lease_ms: 0,
            concurrent: "reject".into(),
            processing_ms: 0,
            max_keys: 10_000,
            workers: 0,
            queue_max: 0,
            drop_expired: false,
            recover_ms: 0,
            mode: "action".into(),
            query_before_retry: false,
            query_on_recovery: true,
            on_bank_timeout: "keep-in-progress".into(),
            program: None,
            handler_timeout_ms: crate::external::keys::default_handler_timeout_ms(),
            state_folder: false,
        }
    }
}

fn at(key: &'static str) -> Vec<Seg> {
    path(&["service", key])
}

/// `[service]`, for a service that calls the bank at `bank`. Each key is
/// checked in the order its errors have always come in.
pub(super) fn service(
    s: &ServiceDto,
    b: &BankDto,
    bank: ActorId,
) -> Result<ServiceConfig, Invalid> {
    let (idempotency, concurrent, mode) = choices(s, b)?;
    let retention_us = duration_us(s.retention_ms, MAX_DURATION_MS, at("retention_ms"))?;
    let bank_timeout_us = positive_duration_us(
        s.bank_timeout_ms,
        DAY_MS,
        at("bank_timeout_ms"),
        "write bank_timeout_ms = 5000",
    )?;
    let bank_max_attempts = count_in(
        s.bank_max_attempts,
        1,
        100,
        at("bank_max_attempts"),
        "attempts",
    )? as u32;
    let lease_us = duration_us(s.lease_ms, 30 * DAY_MS, at("lease_ms"))?;
    let capacity = Capacity::of(s)?;
    Ok(ServiceConfig {
        bank,
        idempotency,
        retention_us,
        fingerprint_check: s.fingerprint_check,
        pass_key_to_bank: s.pass_key_to_bank,
        bank_timeout_us,
        bank_max_attempts,
        lease_us,
        concurrent,
        processing_us: capacity.processing_us,
        max_keys: capacity.max_keys,
        workers: capacity.workers,
        queue_max: capacity.queue_max,
        drop_expired: s.drop_expired,
        recover_ms: capacity.recover_ms,
        mode,
        // Asking is possible only where the bank answers.
        query_before_retry: s.query_before_retry && b.status_query,
        // Asking is possible only where the bank answers.
        query_on_recovery: s.query_on_recovery && b.status_query,
        delete_key_on_bank_timeout: one_of(
            &s.on_bank_timeout,
            &[("keep-in-progress", false), ("delete-key", true)],
            at("on_bank_timeout"),
        )?,
        // Labelled by `Service::with_rollouts` when the service has versions.
        version: 0,
    })
}

/// The service's key table, what it does with a concurrent duplicate, and
/// whether it transfers an action or reads the bank's state first.
fn choices(s: &ServiceDto, b: &BankDto) -> Result<(Idempotency, Concurrent, Mode), Invalid> {
    let idempotency = one_of(
        &s.idempotency,
        &[
            ("none", Idempotency::None),
            ("check-then-act", Idempotency::CheckThenAct),
            ("claim-same-tx", Idempotency::ClaimSameTx),
            ("split-key-first", Idempotency::SplitKeyFirst),
            ("split-booking-first", Idempotency::SplitBookingFirst),
        ],
        at("idempotency"),
    )?;
    let concurrent = one_of(
        &s.concurrent,
        &[("reject", Concurrent::Reject), ("wait", Concurrent::Wait)],
        at("concurrent"),
    )?;
    let mode = one_of(
        &s.mode,
        &[
            ("action", Mode::Action),
            ("state", Mode::State),
            ("state-conditional", Mode::StateConditional),
        ],
        at("mode"),
    )?;
    // A query before a re-send to a bank that answers none, and a promise
    // to recover from overload without a capacity, are settings without
    // effect (`unused`), not refusals: `--set bank.status_query=false` or
    // `--set service.workers=0` of a file that has them is a variant.
    // Reading the state from a bank that gives none is no design at all.
    if mode != Mode::Action && !b.status_query {
        return Err(invalid(
            at("mode"),
            "\"state instead of action\" reads what is paid from the bank, but the bank answers no status queries",
            "add status_query = true to [bank]",
        ));
    }
    Ok((idempotency, concurrent, mode))
}

/// The service's work and capacity: how long a request takes, how many
/// keys, workers and queued requests it holds, how soon it recovers.
struct Capacity {
    processing_us: u64,
    max_keys: u32,
    workers: u32,
    queue_max: u32,
    recover_ms: u32,
}

impl Capacity {
    fn of(s: &ServiceDto) -> Result<Capacity, Invalid> {
        Ok(Capacity {
            processing_us: duration_us(s.processing_ms, DAY_MS, at("processing_ms"))?,
            max_keys: count_in(s.max_keys, 0, 10_000_000, at("max_keys"), "keys")? as u32,
            workers: count_in(
                s.workers,
                0,
                u64::from(MAX_WORKERS),
                at("workers"),
                "workers",
            )? as u32,
            queue_max: count_in(
                s.queue_max,
                0,
                u64::from(MAX_QUEUE),
                at("queue_max"),
                "queued requests",
            )? as u32,
            // Without workers nothing is reported as load: no promise to judge.
            recover_ms: duration_us(s.recover_ms, 30 * DAY_MS, at("recover_ms")).map(|_| {
                if s.workers == 0 {
                    0
                } else {
                    s.recover_ms as u32
                }
            })?,
        })
    }
}
