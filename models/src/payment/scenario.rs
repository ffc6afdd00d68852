//! The payment model's tables in a scenario file: `[client]`,
//! `[client.retry]`, `[client.budget]`, `[client.breaker]`,
//! `[client.reconcile]`, `[service]`,
//! `[bank]` and `[[operations]]`. With `client.actors` above 1 the claims
//! system is that many client actors, `client-1` to `client-N`, with the
//! `[client]` settings each, the operations dealt out among them in turn.

#[path = "scenario_load.rs"]
mod load;
#[path = "scenario_reads.rs"]
mod reads;
#[path = "scenario_unused.rs"]
mod unused;
#[path = "scenario_warnings.rs"]
mod warnings;

pub(crate) use warnings::{hazards, Restarts};

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
use load::{BreakerDto, BudgetDto, ReconcileDto};
use serde::Deserialize;
use sim::ActorId;
use std::collections::BTreeSet;
use unused::unused;

pub const TABLES: &[&str] = &["client", "service", "bank", "operations"];

/// Most operations in one scenario, over all its clients.
pub const MAX_OPERATIONS: u64 = 1000;
/// Most client actors: the world holds at most `sim::MAX_ACTORS`, two of
/// them the service and the bank.
pub const MAX_CLIENTS: u64 = 250;
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
    actors: u64,
    key: String,
    key_bucket_ms: u64,
    timeout_ms: u64,
    timeout_means: String,
    overloaded_means: String,
    retry: RetryDto,
    budget: Option<BudgetDto>,
    breaker: Option<BreakerDto>,
    reconcile: Option<ReconcileDto>,
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
    /// `max_in_flight` is its older name.
    #[serde(alias = "max_in_flight")]
    workers: u64,
    queue_max: u64,
    drop_expired: bool,
    recover_ms: u64,
    mode: String,
    query_before_retry: bool,
    query_on_recovery: bool,
    on_bank_timeout: String,
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
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct BankDto {
    accepts_key: bool,
    key_retention_ms: u64,
    status_query: bool,
    status_lag_ms: u64,
    status_by: String,
}

impl Default for BankDto {
    fn default() -> Self {
        BankDto {
            accepts_key: true,
            key_retention_ms: 0,
            status_query: false,
            status_lag_ms: 0,
            status_by: "claim".into(),
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct OpDto {
    claim: u32,
    /// Which payment of the claim: two tables may share a claim with
    /// distinct payment numbers (`zahl-4711-02` is payment 2).
    #[serde(default = "one")]
    payment: u64,
    amount_eur: u32,
    #[serde(default)]
    start_ms: u64,
    retry_amount_eur: Option<u32>,
    /// This operation `repeat` times, claims `claim`, `claim + 1`, ...,
    /// each starting `every_ms` after the one before.
    #[serde(default = "one")]
    repeat: u64,
    #[serde(default)]
    every_ms: u64,
}

fn one() -> u64 {
    1
}

fn default_operations() -> Vec<OpDto> {
    vec![OpDto {
        claim: 4711,
        payment: 1,
        amount_eur: 1200,
        start_ms: 0,
        retry_amount_eur: None,
        repeat: 1,
        every_ms: 0,
    }]
}

pub fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Client<W>> + From<Service<W>> + From<Bank<W>>,
    W: Carries<super::Msg>,
{
    let d: FileDto = toml::from_str(input.text)?;
    let clients = count_in(
        d.client.actors,
        1,
        MAX_CLIENTS,
        path(&["client", "actors"]),
        "client actors",
    )? as usize;
    let (service_id, bank_id) = (clients as ActorId, clients as ActorId + 1);
    let (configs, service, bank) = parts(&d, input, clients, service_id, bank_id)?;
    // Every client has the same settings: the first one's are the design's.
    let names: Vec<String> = match clients {
        1 => vec!["client".to_string()],
        _ => (1..=clients).map(|i| format!("client-{i}")).collect(),
    };
    let unused = unused(&d);
    let restarts = Restarts::of(input.text, &names, input.fault_phase_us);
    let hazards = hazards(
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
    actors.push(("service".to_string(), N::from(Service::new(service))));
    actors.push(("bank".to_string(), N::from(Bank::new(bank))));
    Ok(Built {
        hazards,
        unused,
        actors,
        actors_hint: match clients {
            1 => "",
            _ => " (with client.actors above 1 the clients are client-1, client-2, ...)",
        },
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
    // A composed model's later hops key their records by the claim alone.
    if let Some(i) = d.operations.iter().position(|o| o.payment != 1) {
        return Err(invalid(
            vec![Seg::Key("operations"), Seg::Index(i), Seg::Key("payment")],
            "a second payment of a claim: this model pays each claim once",
            "remove `payment`, and give the payment a claim of its own",
        )
        .into());
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
    let mut client = client(&d.client, &d.operations, input, service)?;
    if let Some(r) = &d.client.reconcile {
        client.reconcile = Some(r.build(d.bank.status_query, service, bank)?);
    }
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
    let service = self::service(&d.service, &d.bank, bank)?;
    let bank = BankConfig {
        accepts_key: d.bank.accepts_key,
        key_retention_us: duration_us(
            d.bank.key_retention_ms,
            MAX_DURATION_MS,
            path(&["bank", "key_retention_ms"]),
        )?,
        status_query: d.bank.status_query,
        status_by_payment: one_of(
            &d.bank.status_by,
            &[("claim", false), ("payment", true)],
            path(&["bank", "status_by"]),
        )?,
        status_lag_us: duration_us(
            d.bank.status_lag_ms,
            DAY_MS,
            path(&["bank", "status_lag_ms"]),
        )?,
    };
    Ok((configs, service, bank))
}

fn client(
    c: &ClientDto,
    ops: &[OpDto],
    input: &BuildInput<'_>,
    service: ActorId,
) -> Result<ClientConfig, Invalid> {
    let at = |k| path(&["client", k]);
    // Checked for every key policy, not only the one that reads it.
    positive_duration_us(
        c.key_bucket_ms,
        DAY_MS,
        at("key_bucket_ms"),
        "write key_bucket_ms = 1000",
    )?;
    let key = match c.key.as_str() {
        "timestamp" => KeyPolicy::Timestamp {
            bucket_ms: c.key_bucket_ms,
        },
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
    let total: u64 = ops
        .iter()
        .map(|o| o.repeat.max(1))
        .fold(0, u64::saturating_add);
    if ops.is_empty() || total > MAX_OPERATIONS {
        return Err(invalid(
            vec![Seg::Key("operations")],
            format!("{total} operations: a scenario has 1 to {MAX_OPERATIONS}"),
            "give [[operations]] tables with claim and amount_eur (and `repeat` for many alike)",
        ));
    }
    let mut specs: Vec<OpSpec> = Vec::with_capacity(total as usize);
    let mut claims: BTreeSet<(u32, u8)> = BTreeSet::new();
    for (i, o) in ops.iter().enumerate() {
        let at = |k| vec![Seg::Key("operations"), Seg::Index(i), Seg::Key(k)];
        count_in(o.repeat, 1, MAX_OPERATIONS, at("repeat"), "operations")?;
        duration_us(o.every_ms, DAY_MS, at("every_ms"))?;
        let payment = payment_number(o.payment, at("payment"))?;
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
        for n in 0..o.repeat {
            let claim = o.claim.checked_add(n as u32).ok_or_else(|| {
                invalid(
                    at("repeat"),
                    format!(
                        "{} operations from claim {} run past the largest claim number, {}",
                        o.repeat,
                        o.claim,
                        u32::MAX
                    ),
                    "start from a smaller claim, or repeat fewer times",
                )
            })?;
            if !claims.insert((claim, payment)) {
                return Err(twice(claim, payment, n, at));
            }
            let (start_ms, where_) = match o
                .every_ms
                .checked_mul(n)
                .and_then(|d| d.checked_add(o.start_ms))
            {
                Some(ms) if n == 0 => (ms, "start_ms"),
                Some(ms) => (ms, "every_ms"),
                None => (u64::MAX, "every_ms"),
            };
            start_us(start_ms, input.max_time_us, at(where_), "operation")?;
            specs.push(OpSpec {
                claim,
                payment,
                amount_eur: o.amount_eur,
                start_ms,
                retry_amount_eur: o.retry_amount_eur,
            });
        }
    }
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
    })
}

/// Payment numbers run as the key's last two digits do: 01 to 99.
fn payment_number(payment: u64, at: Vec<Seg>) -> Result<u8, Invalid> {
    match u8::try_from(payment) {
        Ok(p @ 1..=99) => Ok(p),
        _ => Err(invalid(
            at,
            format!("payment {payment}: the range is 1 to 99 (payment 01 to 99 of a claim)"),
            "write a number from 1 to 99: 1 for a claim's first payment, 2 for its second",
        )),
    }
}

/// Claim `claim`'s payment `payment` is already another operation's, met
/// again at repetition `n` of a table.
fn twice(claim: u32, payment: u8, n: u64, at: impl Fn(&'static str) -> Vec<Seg>) -> Invalid {
    let (which, place) = match payment {
        1 => (format!("claim {claim}"), at("claim")),
        p => (format!("claim {claim} payment {p:02}"), at("payment")),
    };
    let what = match n {
        0 => format!("{which} appears twice"),
        _ => format!(
            "{which} (repetition {} of this table) is already another operation's",
            n + 1
        ),
    };
    invalid(
        place,
        what,
        "each operation needs its own claim number, or its own payment number of a shared claim (payment = 2)",
    )
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
        workers: count_in(
            s.workers,
            0,
            u64::from(super::service::MAX_WORKERS),
            at("workers"),
            "workers",
        )? as u32,
        queue_max: count_in(
            s.queue_max,
            0,
            u64::from(super::service::MAX_QUEUE),
            at("queue_max"),
            "queued requests",
        )? as u32,
        drop_expired: s.drop_expired,
        // Without workers nothing is reported as load: no promise to judge.
        recover_ms: duration_us(s.recover_ms, 30 * DAY_MS, at("recover_ms")).map(|_| {
            if s.workers == 0 {
                0
            } else {
                s.recover_ms as u32
            }
        })?,
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
    })
}
