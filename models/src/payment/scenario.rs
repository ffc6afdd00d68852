//! The payment model's tables in a scenario file: `[client]`,
//! `[client.retry]`, `[client.budget]`, `[client.breaker]`,
//! `[client.reconcile]`, `[service]`,
//! `[bank]` and `[[operations]]`. With `client.actors` above 1 the claims
//! system is that many client actors, `client-1` to `client-N`, with the
//! `[client]` settings each, the operations dealt out among them in turn.

#[path = "scenario_load.rs"]
mod load;

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
}

impl Default for BankDto {
    fn default() -> Self {
        BankDto {
            accepts_key: true,
            key_retention_ms: 0,
            status_query: false,
            status_lag_ms: 0,
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
    let restarts = Restarts::of(input.text, &names);
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
        actors,
        actors_hint: match clients {
            1 => "",
            _ => " (with client.actors above 1 the clients are client-1, client-2, ...)",
        },
    })
}

/// The settings behind [`bank_resend_ms`], as the warning names them.
const BANK_RESEND_SETTINGS: &str = "service.bank_max_attempts and service.bank_timeout_ms";

/// Whether the service asks the bank's status before each re-send (and, in
/// the state modes, before the first transfer too).
fn queries_bank(service: &ServiceConfig) -> bool {
    service.query_before_retry || service.mode != Mode::Action
}

/// One execution's bank call, in bank timeouts, counted from the request
/// (`service_bank.rs`): `(last transfer sent, call given up)`. Each attempt
/// waits up to a timeout; an attempt that asks the status first sends its
/// transfer only once the answer is in, which may come just before that
/// timeout, and then waits a full timeout more for the transfer. So with
/// `n` attempts: transfers only, the last at `n - 1` timeouts and the end at
/// `n`; a status query before each re-send, `2(n - 1)` and `2n - 1`; the
/// state modes, which ask before the first transfer too, `2n - 1` and `2n`.
fn bank_call_timeouts(service: &ServiceConfig) -> (u64, u64) {
    let n = u64::from(service.bank_max_attempts.max(1));
    match (service.mode, service.query_before_retry) {
        (Mode::Action, false) => (n - 1, n),
        (Mode::Action, true) => (2 * (n - 1), 2 * n - 1),
        (Mode::State | Mode::StateConditional, _) => (2 * n - 1, 2 * n),
    }
}

/// How long after it first sends one request's transfer the service may
/// still re-send it to the bank with the same key ([`bank_call_timeouts`];
/// in the state modes the first transfer may go out at once, so the span is
/// the last one's). A conditional transfer (`mode = "state-conditional"`)
/// cannot pay twice whatever the bank remembers, so its re-sends do not
/// count; a plain one after a status query can, when the reading was stale
/// or a transfer was still on its way.
fn bank_resend_ms(service: &ServiceConfig) -> u64 {
    if service.mode == Mode::StateConditional || service.bank_max_attempts <= 1 {
        return 0;
    }
    let (last, _) = bank_call_timeouts(service);
    (service.bank_timeout_us / sim::US_PER_MS).saturating_mul(last)
}

/// What the scenario's `[crashes.X]` tables say about the actors the rules
/// ask about: how long each stays down, if it can crash at all.
#[derive(Clone, Debug, Default)]
pub(crate) struct Restarts {
    /// The service's `(restart_ms_min, restart_ms_max)`.
    pub service_ms: Option<(u64, u64)>,
    /// The client actors that can crash, by name, with their
    /// `(restart_ms_min, restart_ms_max)`, in the clients' order.
    pub clients_ms: Vec<(String, (u64, u64))>,
}

impl Restarts {
    /// From the scenario `text`, whose service is the actor `service` and
    /// whose client actors are `clients`.
    pub(crate) fn of(text: &str, clients: &[String]) -> Restarts {
        use crate::core::hazard::restart_ms;
        Restarts {
            service_ms: restart_ms(text, "service"),
            clients_ms: clients
                .iter()
                .filter_map(|c| restart_ms(text, c).map(|r| (c.clone(), r)))
                .collect(),
        }
    }
}

/// The gaps in a payment design that its settings show (docs/design-warnings.md).
/// `configs` are the client actors (every one with the design's settings,
/// each with its share of the operations), `clients` their names, for the
/// delays of their links; `restarts` the crashes the scenario sets.
pub(crate) fn hazards(
    configs: &[ClientConfig],
    service: &ServiceConfig,
    bank: &BankConfig,
    delays: &crate::core::hazard::Delays,
    restarts: &Restarts,
    (clients, books): (&[String], bool),
) -> Vec<crate::core::Hazard> {
    use crate::core::hazard::{key_retention, KeyMemory, TAKEN_AS_NEW};
    let client = &configs[0];
    let mut out = Vec::new();
    out.extend(timestamp_key_collides(configs, restarts));
    // Whether the bank's key memory outlasts the client's retries: the only
    // thing left between a retry and a second transfer once the service has
    // deleted its key (`on_bank_timeout = "delete-key"`).
    let mut bank_covers_client = false;
    // A timestamp key is minted when the operation starts and carried by
    // every retry of it, as a stable key is.
    if matches!(client.key, KeyPolicy::Stable | KeyPolicy::Timestamp { .. }) {
        // One operation's copies all come from its one client.
        let spread = |via: &[&str]| {
            clients
                .iter()
                .map(|c| {
                    let path: Vec<&str> = std::iter::once(c.as_str())
                        .chain(via.iter().copied())
                        .collect();
                    delays.spread_ms(&[path])
                })
                .max()
                .unwrap_or(0)
        };
        let mut layers = Vec::new();
        if service.idempotency != Idempotency::None {
            layers.push(KeyMemory::of_us(
                "service.retention_ms",
                service.retention_us,
                spread(&["service"]),
            ));
        }
        // The bank's key keeps the money to one transfer, but not a booking
        // the service announces downstream (`books`, the chain): only the
        // service's own key stops a retry from being booked again.
        let bank_dedups = service.pass_key_to_bank && bank.accepts_key;
        let bank_layer = KeyMemory::of_us(
            "bank.key_retention_ms",
            bank.key_retention_us,
            spread(&["service", "bank"]),
        )
        .resent_for(bank_resend_ms(service), BANK_RESEND_SETTINGS);
        if bank_dedups && !books {
            layers.push(bank_layer);
        }
        // A client that crashes resumes its operations from its own
        // storage: without a window, nothing bounds its retries in time.
        let restart = restarts
            .clients_ms
            .iter()
            .max_by_key(|(_, (_, max_ms))| *max_ms)
            .filter(|_| client.retry.window_ms == 0 && client.retry.max_attempts > 1);
        let mut span = match restart {
            Some((_, (_, max_ms))) => client
                .retry
                .longest_span_with_restarts_ms(client.timeout_ms, *max_ms),
            None => client.retry.longest_span_ms(client.timeout_ms),
        };
        let resumed = restart.map(|(name, (_, max_ms))| {
            format!(
                "the client retries, each of its {} retries possibly after a restart of up to {} ([crashes.{name}] restart_ms_max) and a new wait, since client.retry sets no window_ms to bound them in time,",
                client.retry.max_attempts - 1,
                crate::core::hazard::about_ms(*max_ms)
            )
        });
        let mut who = resumed.as_deref().unwrap_or("the client retries");
        // A re-drive with the same key is one more retry, rounds later.
        if let Some(r) = client
            .reconcile
            .as_ref()
            .filter(|r| r.redrive_key == super::reconcile::RedriveKey::Same && r.max_rounds > 0)
        {
            let rounds = r.after_ms.saturating_mul(u64::from(r.max_rounds));
            span = span.map(|s| s.saturating_mul(2).saturating_add(rounds));
            who = match resumed {
                Some(_) => {
                    "the client (resuming after its restarts) and its reconciliation job retry"
                }
                None => "the client and its reconciliation job retry",
            };
        }
        // The gap opens when the layer that remembers longest forgets: a bank
        // that keeps the key longer than the service (or alone) reports a
        // transfer under a key it forgot, and the service forgetting first
        // shows nothing of that gap; with equal memories the service's
        // report of a retry it forgot marks it.
        let service_keeps_us = match service.idempotency {
            Idempotency::None => Some(0),
            _ => (service.retention_us > 0).then_some(service.retention_us),
        };
        let bank_last = bank_dedups
            && !books
            && bank.key_retention_us > 0
            && service_keeps_us.is_some_and(|kept_us| bank.key_retention_us > kept_us);
        let shown_by = if bank_last {
            Some(super::situations::BANK_KEY_EXPIRED)
        } else {
            (service.idempotency != Idempotency::None)
                .then_some(super::situations::RETRY_AFTER_KEY_EXPIRED)
        };
        let mut retention = key_retention(
            &layers,
            span,
            who,
            TAKEN_AS_NEW,
            shown_by,
            "payment-key-expired-before-retry",
        );
        if let Some(h) = retention.as_mut().filter(|_| books && bank_dedups) {
            h.text.push_str(
                " (the bank's key keeps the money to one transfer, but the service books the retry again and announces the booking: accounting books the claim twice)",
            );
            h.example = "chain-booked-again-after-key-expired";
        }
        bank_covers_client = bank_dedups
            && key_retention(&[bank_layer], span, who, TAKEN_AS_NEW, None, "").is_none();
        // The service's key table answers the client's retries, but not the
        // service's own re-sends within one execution: only the bank can tell
        // those from a new transfer, so its memory must outlast them too.
        if retention.is_none() && bank_dedups && !books {
            // Every copy of a re-send leaves from the service: its link's spread only.
            out.extend(bank_key_below_resends(
                service,
                bank,
                delays.spread_ms(&[vec!["service", "bank"]]),
            ));
        }
        out.extend(retention);
    }
    out.extend(lease_hazard(service));
    out.extend(status_lag_hazard(
        service,
        bank,
        restarts.service_ms,
        delays.spread_ms(&[vec!["service", "bank"]]),
    ));
    let bank_dedups = service.pass_key_to_bank && bank.accepts_key;
    out.extend(deleted_on_timeout(service, bank_dedups, bank_covers_client));
    out
}

/// A key minted from the clock (`client.key = "timestamp"`) names a time
/// bucket, not an operation: two operations started in one bucket, by any
/// of the client actors, carry one key. The rule fires for every timestamp
/// key, whatever the scenario's start times: those are the workload this
/// scenario samples, not something the design ensures, and a key that is
/// unique only while no two claims start together is unique by luck (a
/// batch, a second instance of the claims system, a backlog after an
/// outage). The text says whether this scenario's own operations meet in a
/// bucket (every run then collides), start within a bucket's width of each
/// other (a shift of the clock puts them in one), or start together after a
/// client's restart (operations that had not started when it went down all
/// start when it is back).
fn timestamp_key_collides(
    configs: &[ClientConfig],
    restarts: &Restarts,
) -> Option<crate::core::Hazard> {
    use crate::core::hazard::about_ms;
    let KeyPolicy::Timestamp { bucket_ms } = configs.first()?.key else {
        return None;
    };
    let bucket_ms = bucket_ms.max(1);
    let mut starts: Vec<(u64, u32)> = configs
        .iter()
        .flat_map(|c| c.ops.iter().map(|o| (o.start_ms, o.claim)))
        .collect();
    starts.sort_unstable();
    let at = |ms: u64| match ms {
        0 => "0 s".to_string(),
        ms => about_ms(ms),
    };
    let same = starts
        .windows(2)
        .find(|w| w[0].0 / bucket_ms == w[1].0 / bucket_ms);
    let closest = starts.windows(2).min_by_key(|w| w[1].0 - w[0].0);
    let here = if let Some(w) = same {
        format!(
            "here claims {} and {} start at {} and {}, in one bucket: every run gives them one key",
            w[0].1,
            w[1].1,
            at(w[0].0),
            at(w[1].0)
        )
    } else if let Some(w) = closest.filter(|w| w[1].0 - w[0].0 < bucket_ms) {
        format!(
            "here claims {} and {} start {} apart, closer than one bucket though in two: a clock a little earlier or later puts them in one",
            w[0].1,
            w[1].1,
            about_ms(w[1].0 - w[0].0)
        )
    } else if let Some((name, _)) = restarts.clients_ms.first().filter(|_| starts.len() > 1) {
        format!(
            "here the scenario crashes the client ([crashes.{name}]): the operations that had not started when it went down all start when it is back, in one bucket"
        )
    } else {
        let apart = match closest {
            Some(w) => format!(
                "no two operations here start within one bucket (the closest {} apart)",
                about_ms(w[1].0 - w[0].0)
            ),
            None => "this scenario starts one operation".to_string(),
        };
        format!(
            "{apart}, so no run here shares a key, but nothing in the design keeps two claims out of one bucket: the key is unique only by luck (a batch, a second instance of the claims system, a backlog after an outage start claims together)"
        )
    };
    Some(crate::core::Hazard {
        id: crate::core::hazard::TIMESTAMP_KEY_COLLIDES,
        text: format!(
            "the client mints its key from the clock (client.key = \"timestamp\", buckets of {} by client.key_bucket_ms): the key names a time bucket, not an operation, and two operations started in one bucket carry one key, so the second is refused as a reuse of the first's key or answered with the first's result; {here}",
            about_ms(bucket_ms)
        ),
        // The ledger judges a shared key the moment it reaches the service
        // (one-key-one-operation), before the key table could report
        // key-collision: a run that reaches the gap is a violation itself.
        shown_by: None,
        example: "payment-timestamp-key",
    })
}

/// The bank forgets a key before the service's last re-send of one
/// execution's transfer reaches it: that re-send is paid again, however
/// long the service keeps its own key.
fn bank_key_below_resends(
    service: &ServiceConfig,
    bank: &BankConfig,
    spread_ms: u64,
) -> Option<crate::core::Hazard> {
    use crate::core::hazard::{key_retention, KeyMemory};
    let resend_ms = bank_resend_ms(service);
    if resend_ms == 0 {
        return None;
    }
    let bank_only = KeyMemory::of_us("bank.key_retention_ms", bank.key_retention_us, spread_ms);
    let mut h = key_retention(
        &[bank_only],
        Some(resend_ms),
        "the service re-sends a transfer to the bank",
        "a re-send after that is taken for a new transfer and paid again",
        Some(super::situations::BANK_KEY_EXPIRED),
        "payment-bank-key-expired-before-resend",
    )?;
    h.text.push_str(&format!(
        " ({BANK_RESEND_SETTINGS}{}; the service's own key table answers the client's retries, not these)",
        if queries_bank(service) {
            ", each re-send after a status answer that may take a timeout"
        } else {
            ""
        }
    ));
    Some(h)
}

/// A key deleted when the bank stays silent, with nothing after the service
/// to tell the retry's transfer from the first: the bank may have paid.
/// A bank that takes the key and remembers it for as long as the client
/// retries (`bank_covers_client`) tells them apart; one that forgets sooner
/// does not, whatever the service's own retention says: the service has
/// deleted its key.
fn deleted_on_timeout(
    service: &ServiceConfig,
    bank_dedups: bool,
    bank_covers_client: bool,
) -> Option<crate::core::Hazard> {
    // A conditional transfer pays only what is missing, whatever the key.
    let conditional = service.mode == Mode::StateConditional;
    if !service.delete_key_on_bank_timeout
        || service.idempotency == Idempotency::None
        || bank_covers_client
        || conditional
    {
        return None;
    }
    Some(crate::core::Hazard {
        id: crate::core::hazard::KEY_DELETED_ON_TIMEOUT,
        text: format!(
            "the service deletes a key when the bank stays silent to its last attempt (service.on_bank_timeout = \"delete-key\"), but silence is not failure: the bank may have paid, and the client's retry under the same key is executed again, {}",
            if bank_dedups {
                "and the bank forgets the key (bank.key_retention_ms) before the client's last retry can reach it: nothing stops the second transfer then"
            } else {
                "with no key at the bank to stop the second transfer"
            }
        ),
        shown_by: Some(super::situations::KEY_DELETED_ON_BANK_TIMEOUT),
        example: "payment-key-deleted-on-timeout",
    })
}

/// A status answer read sooner after a transfer than the bank's replica
/// shows it (`bank.status_lag_ms`): "0 EUR paid" for a claim that was paid,
/// and the service pays again. Every read the service makes comes after a
/// transfer it may follow by at least one of (docs/design-warnings.md):
///
/// - a status query before a re-send (`query_before_retry`, or the `state`
///   mode, which asks before every transfer): the transfer before it re-armed
///   the bank timeout, so the query leaves a full `bank_timeout_ms` later;
/// - a restarted service's recovery query (`query_on_recovery`, or the
///   `state` mode): the crash came after the transfer, the restart at least
///   `restart_ms_min` after the crash;
/// - a lease takeover's query (the same settings): the key's lock was taken
///   before the execution's first transfer (after it, by `processing_ms`,
///   for split-booking-first, which calls the bank before it stores the
///   key) and its last transfer left at most [`bank_call_timeouts`]' first
///   count of timeouts after that, so the takeover at `lease_ms` asks that
///   much less than a lease after it.
///
/// Each less the spread of the service→bank link, which both the transfer
/// and the query travel. A transfer shows once its age reaches the lag
/// (`BankStorage::paid_eur_seen`), so a lag equal to the shortest time
/// is still current. Silent for a conditional transfer (checked against the
/// ledger itself) and for a bank that deduplicates by the key handed on (a
/// stale "not paid" then costs a dedup hit; how long the bank remembers is
/// the key-retention rule's business). Two executions of one claim at once,
/// and a query that overtakes a transfer still on its way, are other gaps.
fn status_lag_hazard(
    service: &ServiceConfig,
    bank: &BankConfig,
    service_restart_ms: Option<(u64, u64)>,
    spread_ms: u64,
) -> Option<crate::core::Hazard> {
    use crate::core::hazard::{about_ms, shown_ms};
    let us = sim::US_PER_MS;
    let bank_dedups = service.pass_key_to_bank && bank.accepts_key;
    if bank.status_lag_us == 0 || service.mode == Mode::StateConditional || bank_dedups {
        return None;
    }
    let spread_us = spread_ms.saturating_mul(us);
    let timeout = about_ms(service.bank_timeout_us / us);
    // Only a key table that leaves a key "in progress" has one to recover
    // or to take over.
    let in_progress = matches!(
        service.idempotency,
        Idempotency::ClaimSameTx | Idempotency::SplitBookingFirst
    );
    let asks_first = service.query_on_recovery || service.mode == Mode::State;
    let mut reads: Vec<(u64, String)> = Vec::new();
    if service.bank_max_attempts > 1 && queries_bank(service) {
        let setting = match service.mode {
            Mode::Action => "service.query_before_retry",
            _ => "service.mode",
        };
        reads.push((
            service.bank_timeout_us,
            format!("the status query before a re-send, one bank timeout ({timeout}, service.bank_timeout_ms) after the transfer it follows ({setting})"),
        ));
    }
    if let Some((restart_min_ms, _)) = service_restart_ms.filter(|_| in_progress && asks_first) {
        reads.push((
            restart_min_ms.saturating_mul(us),
            format!(
                "the query of a restarted service's recovery, as soon as {} after the crash that followed the transfer ([crashes.service] restart_ms_min)",
                about_ms(restart_min_ms)
            ),
        ));
    }
    if service.lease_us > 0 && in_progress && asks_first {
        let (last, _) = bank_call_timeouts(service);
        let last_us = service.bank_timeout_us.saturating_mul(last);
        let before_lock_us = match service.idempotency {
            Idempotency::SplitBookingFirst => service.processing_us,
            _ => 0,
        };
        reads.push((
            service.lease_us.saturating_sub(last_us.saturating_add(before_lock_us)),
            format!(
                "the query of a lease takeover, {} (service.lease_ms) after the key was locked, when the execution it takes over may have sent its last transfer {} after the lock",
                about_ms(service.lease_us / us),
                about_ms(last_us.saturating_add(before_lock_us) / us)
            ),
        ));
    }
    let (earliest_us, what) = reads.into_iter().min_by_key(|r| r.0)?;
    let gap_us = earliest_us.saturating_sub(spread_us);
    if bank.status_lag_us <= gap_us {
        return None;
    }
    // The shortest time exactly: it is what a lag must stay within.
    let (lag_ms, gap_ms) = (bank.status_lag_us / us, gap_us / us);
    let lag = shown_ms(lag_ms, about_ms(lag_ms) == about_ms(gap_ms));
    let gap = shown_ms(gap_ms, true);
    let spread = match spread_ms {
        0 => String::new(),
        ms => format!(
            ", less the {} by which the transfer can be slower to reach the bank than the query (the delay ranges in [network])",
            about_ms(ms)
        ),
    };
    Some(crate::core::Hazard {
        id: crate::core::hazard::STATUS_LAG_ABOVE_READ_DELAY,
        text: format!(
            "the bank's status answers lag its ledger by {lag} (bank.status_lag_ms), but the service can read one as soon as {gap} after a transfer landed: {what}{spread}; a transfer younger than the lag reads as \"0 EUR paid\", and the service pays again"
        ),
        shown_by: Some(super::situations::STATUS_READ_STALE),
        example: "payment-query-reads-stale-replica",
    })
}

/// A lease on an "in progress" key that can run out while its bank call is
/// still under way: a duplicate then takes the key over and calls the bank
/// too, two executions of one operation.
fn lease_hazard(service: &ServiceConfig) -> Option<crate::core::Hazard> {
    use crate::core::hazard::{about_ms, about_pair};
    let (_, timeouts) = bank_call_timeouts(service);
    let call_us = service
        .bank_timeout_us
        .saturating_mul(timeouts)
        .saturating_add(service.processing_us);
    if service.lease_us == 0
        || service.lease_us >= call_us
        || service.idempotency == Idempotency::None
    {
        return None;
    }
    let ms = |us: u64| us / sim::US_PER_MS;
    let (lease, call) = about_pair(ms(service.lease_us), ms(call_us));
    let timeout = about_ms(ms(service.bank_timeout_us));
    let attempts = service.bank_max_attempts;
    // Say what the call's length is made of, each part with its setting.
    let mut parts = match (service.mode, service.query_before_retry) {
        (Mode::Action, false) => format!(
            "{attempts} attempts of {timeout}, service.bank_max_attempts and service.bank_timeout_ms"
        ),
        (Mode::Action, true) => format!(
            "{attempts} attempts of {timeout}, each after the first a status query and a transfer that may each take that long: service.bank_max_attempts, service.bank_timeout_ms and service.query_before_retry"
        ),
        _ => format!(
            "{attempts} attempts of a status query and a transfer that may each take {timeout}: service.bank_max_attempts, service.bank_timeout_ms and service.mode"
        ),
    };
    if service.processing_us > 0 {
        parts.push_str(&format!(
            ", after {} of processing (service.processing_ms)",
            about_ms(ms(service.processing_us))
        ));
    }
    Some(crate::core::Hazard {
        id: crate::core::hazard::LEASE_BELOW_CALL,
        text: format!(
            "an \"in progress\" key's lease runs out after {lease} (service.lease_ms), but its bank call may take {call} ({parts}): a duplicate that arrives after the lease takes the key over and calls the bank while the first execution still does"
        ),
        shown_by: Some(super::situations::LEASE_TAKEN_FROM_RUNNING),
        example: "payment-lease-too-short",
    })
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
        status_lag_us: duration_us(
            d.bank.status_lag_ms,
            DAY_MS,
            path(&["bank", "status_lag_ms"]),
        )?,
    };
    if bank.status_lag_us > 0 && !bank.status_query {
        return Err(invalid(
            path(&["bank", "status_lag_ms"]),
            "a lag of the bank's status answers, but the bank answers no status queries",
            "add status_query = true to [bank], or remove status_lag_ms",
        )
        .into());
    }
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
    let mut claims: BTreeSet<u32> = BTreeSet::new();
    for (i, o) in ops.iter().enumerate() {
        let at = |k| vec![Seg::Key("operations"), Seg::Index(i), Seg::Key(k)];
        count_in(o.repeat, 1, MAX_OPERATIONS, at("repeat"), "operations")?;
        duration_us(o.every_ms, DAY_MS, at("every_ms"))?;
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
            if !claims.insert(claim) {
                let what = match n {
                    0 => format!("claim {claim} appears twice"),
                    _ => format!(
                        "claim {claim} (repetition {} of this table) is already another operation's",
                        n + 1
                    ),
                };
                return Err(invalid(
                    at("claim"),
                    what,
                    "each operation needs its own claim number",
                ));
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
    if s.recover_ms > 0 && s.workers == 0 {
        return Err(invalid(
            at("recover_ms"),
            "a promise to recover from overload needs a capacity, and this service has no workers limit",
            "give the service workers (and a queue_max), or remove recover_ms",
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
        recover_ms: duration_us(s.recover_ms, 30 * DAY_MS, at("recover_ms"))
            .map(|_| s.recover_ms as u32)?,
        mode,
        query_before_retry: s.query_before_retry,
        // Asking is possible only where the bank answers.
        query_on_recovery: s.query_on_recovery && b.status_query,
        delete_key_on_bank_timeout: one_of(
            &s.on_bank_timeout,
            &[("keep-in-progress", false), ("delete-key", true)],
            at("on_bank_timeout"),
        )?,
    })
}
