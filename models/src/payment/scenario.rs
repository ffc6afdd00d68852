//! The payment model's tables in a scenario file: `[client]`,
//! `[client.retry]`, `[service]`, `[bank]` and `[[operations]]`.

use super::{
    Bank, BankConfig, Client, ClientConfig, Concurrent, Idempotency, KeyPolicy, Mode, OpSpec,
    Service, ServiceConfig,
};
use crate::core::input::{
    count_in, duration_us, invalid, one_of, path, positive_duration_us, start_us, Invalid,
    LoadError, Seg, MAX_DURATION_MS,
};
use crate::core::retry_table::RetryDto;
use crate::core::{BuildInput, Built, Carries};
use serde::Deserialize;
use sim::ActorId;

pub const TABLES: &[&str] = &["client", "service", "bank", "operations"];

/// Most operations one client runs.
pub const MAX_OPERATIONS: u64 = 1000;
const DAY_MS: u64 = 24 * 3600 * 1000;

#[derive(Deserialize, Debug, Default)]
#[serde(default)]
struct FileDto {
    client: ClientDto,
    service: ServiceDto,
    bank: BankDto,
    #[serde(default = "default_operations")]
    operations: Vec<OpDto>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ClientDto {
    key: String,
    key_bucket_ms: u64,
    timeout_ms: u64,
    timeout_means: String,
    retry: RetryDto,
}

impl Default for ClientDto {
    fn default() -> Self {
        ClientDto {
            key: "stable".into(),
            key_bucket_ms: 1000,
            timeout_ms: 10_000,
            timeout_means: "unknown".into(),
            retry: RetryDto::default(),
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct ServiceDto {
    idempotency: String,
    retention_ms: u64,
    fingerprint_check: bool,
    pass_key_to_bank: bool,
    bank_timeout_ms: u64,
    bank_max_attempts: u64,
    lease_ms: u64,
    concurrent: String,
    processing_ms: u64,
    max_keys: u64,
    max_in_flight: u64,
    mode: String,
    query_before_retry: bool,
    query_on_recovery: bool,
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
            max_in_flight: 0,
            mode: "action".into(),
            query_before_retry: false,
            query_on_recovery: true,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct BankDto {
    accepts_key: bool,
    key_retention_ms: u64,
    status_query: bool,
}

impl Default for BankDto {
    fn default() -> Self {
        BankDto {
            accepts_key: true,
            key_retention_ms: 0,
            status_query: false,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct OpDto {
    claim: u32,
    amount_eur: u32,
    #[serde(default)]
    start_ms: u64,
    retry_amount_eur: Option<u32>,
}

fn default_operations() -> Vec<OpDto> {
    vec![OpDto {
        claim: 4711,
        amount_eur: 1200,
        start_ms: 0,
        retry_amount_eur: None,
    }]
}

const ACTORS: [&str; 3] = ["client", "service", "bank"];

pub fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Client<W>> + From<Service<W>> + From<Bank<W>>,
    W: Carries<super::Msg>,
{
    let (client, service, bank) = hops(input, 1, 2)?;
    Ok(Built {
        actors: vec![
            (ACTORS[0].to_string(), N::from(Client::new(client))),
            (ACTORS[1].to_string(), N::from(Service::new(service))),
            (ACTORS[2].to_string(), N::from(Bank::new(bank))),
        ],
        actors_hint: "",
    })
}

/// The claims system, the payment service and the bank, from the tables
/// `[client]`, `[service]`, `[bank]` and `[[operations]]` (a composed
/// model has these too): the client calls the service at `service`, the
/// service the bank at `bank`.
pub(crate) fn hops(
    input: &BuildInput<'_>,
    service: ActorId,
    bank: ActorId,
) -> Result<(ClientConfig, ServiceConfig, BankConfig), LoadError> {
    let d: FileDto = toml::from_str(input.text)?;
    let client = client(&d.client, &d.operations, input, service)?;
    let service = self::service(&d.service, &d.bank, bank)?;
    let bank = BankConfig {
        accepts_key: d.bank.accepts_key,
        key_retention_us: duration_us(
            d.bank.key_retention_ms,
            MAX_DURATION_MS,
            path(&["bank", "key_retention_ms"]),
        )?,
        status_query: d.bank.status_query,
    };
    Ok((client, service, bank))
}

fn client(
    c: &ClientDto,
    ops: &[OpDto],
    input: &BuildInput<'_>,
    service: ActorId,
) -> Result<ClientConfig, Invalid> {
    let at = |k| path(&["client", k]);
    let key = match c.key.as_str() {
        "timestamp" => {
            positive_duration_us(
                c.key_bucket_ms,
                DAY_MS,
                at("key_bucket_ms"),
                "write key_bucket_ms = 1000",
            )?;
            KeyPolicy::Timestamp {
                bucket_ms: c.key_bucket_ms,
            }
        }
        other => one_of(
            other,
            &[
                ("stable", KeyPolicy::Stable),
                ("per-attempt", KeyPolicy::PerAttempt),
                ("none", KeyPolicy::None),
                ("timestamp", KeyPolicy::None),
            ],
            at("key"),
        )?,
    };
    positive_duration_us(
        c.timeout_ms,
        DAY_MS,
        at("timeout_ms"),
        "the articles' client waits 10 s: timeout_ms = 10000",
    )?;
    let retry = c.retry.build("client", c.timeout_ms)?;
    if ops.is_empty() || ops.len() as u64 > MAX_OPERATIONS {
        return Err(invalid(
            vec![Seg::Key("operations")],
            format!(
                "{} operations: a scenario has 1 to {MAX_OPERATIONS}",
                ops.len()
            ),
            "give [[operations]] tables with claim and amount_eur",
        ));
    }
    let mut specs: Vec<OpSpec> = Vec::with_capacity(ops.len());
    for (i, o) in ops.iter().enumerate() {
        let at = |k| vec![Seg::Key("operations"), Seg::Index(i), Seg::Key(k)];
        if specs.iter().any(|p| p.claim == o.claim) {
            return Err(invalid(
                at("claim"),
                format!("claim {} appears twice", o.claim),
                "each operation needs its own claim number",
            ));
        }
        for (k, v) in [
            ("amount_eur", Some(o.amount_eur)),
            ("retry_amount_eur", o.retry_amount_eur),
        ] {
            if v == Some(0) {
                return Err(invalid(
                    at(k),
                    "a payment of 0 EUR pays nothing",
                    "write an amount of at least 1",
                ));
            }
        }
        start_us(o.start_ms, input.max_time_us, at("start_ms"), "operation")?;
        specs.push(OpSpec {
            claim: o.claim,
            amount_eur: o.amount_eur,
            start_ms: o.start_ms,
            retry_amount_eur: o.retry_amount_eur,
        });
    }
    let timeout_means_failed = one_of(
        &c.timeout_means,
        &[("unknown", false), ("failed", true)],
        at("timeout_means"),
    )?;
    Ok(ClientConfig {
        service,
        timeout_ms: c.timeout_ms,
        key,
        retry: retry.policy,
        retry_final_errors: retry.retry_final_errors,
        dead_letter: retry.dead_letter,
        timeout_means_failed,
        ops: specs,
    })
}

fn service(s: &ServiceDto, b: &BankDto, bank: ActorId) -> Result<ServiceConfig, Invalid> {
    let at = |k| path(&["service", k]);
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
    if s.query_before_retry && !b.status_query {
        return Err(invalid(
            at("query_before_retry"),
            "the service is to ask the bank before a retry, but the bank answers no status queries",
            "add status_query = true to [bank], or remove query_before_retry",
        ));
    }
    if mode != Mode::Action && !b.status_query {
        return Err(invalid(
            at("mode"),
            "\"state instead of action\" reads what is paid from the bank, but the bank answers no status queries",
            "add status_query = true to [bank]",
        ));
    }
    Ok(ServiceConfig {
        bank,
        idempotency,
        retention_us: duration_us(s.retention_ms, MAX_DURATION_MS, at("retention_ms"))?,
        fingerprint_check: s.fingerprint_check,
        pass_key_to_bank: s.pass_key_to_bank,
        bank_timeout_us: positive_duration_us(
            s.bank_timeout_ms,
            DAY_MS,
            at("bank_timeout_ms"),
            "write bank_timeout_ms = 5000",
        )?,
        bank_max_attempts: count_in(
            s.bank_max_attempts,
            1,
            100,
            at("bank_max_attempts"),
            "attempts",
        )? as u32,
        lease_us: duration_us(s.lease_ms, 30 * DAY_MS, at("lease_ms"))?,
        concurrent,
        processing_us: duration_us(s.processing_ms, DAY_MS, at("processing_ms"))?,
        max_keys: count_in(s.max_keys, 0, 10_000_000, at("max_keys"), "keys")? as u32,
        max_in_flight: count_in(
            s.max_in_flight,
            0,
            super::service::MAX_BANK_CALLS as u64,
            at("max_in_flight"),
            "requests in flight",
        )? as u32,
        mode,
        query_before_retry: s.query_before_retry,
        // Asking is possible only where the bank answers.
        query_on_recovery: s.query_on_recovery && b.status_query,
    })
}
