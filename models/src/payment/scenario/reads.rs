//! The bank's status reads a payment design acts on, and the two gaps
//! between a transfer and a read that follows it: a replica that does not
//! show the transfer yet (`status-lag-above-read-delay`), and a query that
//! reaches the bank before the transfer itself (`status-query-overtakes-transfer`).
//! Either way the bank answers "0 EUR paid" for a claim that is, or is
//! about to be, paid, and whoever asked pays again.

use super::facts::{bank_call_timeouts, queries_bank, Restarts};
use crate::core::design_warning::{about_ms, shown_ms, Delays};
use crate::payment::reconcile::{Ask, RedriveKey};
use crate::payment::{BankConfig, ClientConfig, Idempotency, KeyPolicy, Mode, ServiceConfig};

/// Who acts on a read's "not paid".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reader {
    /// The service, which sends the transfer again (with a key the bank
    /// does not deduplicate on).
    Service,
    /// The client's reconciliation job, which re-drives the claim in a way
    /// no layer recognises (why not, with the settings).
    Job(&'static str),
}

/// One read of the bank's status that follows a transfer.
#[derive(Clone, Debug)]
pub(super) struct Read {
    pub reader: Reader,
    /// From the latest the transfer it follows can land to the earliest the
    /// query can reach the bank, in µs: below 0, the query can get there first.
    pub gap_us: i64,
    /// What the read is, with the settings that time it.
    pub what: String,
    /// How late the transfer can land, with the settings that make it so.
    pub late: String,
    /// The same, as the lag rule says it after the read: ", less ...".
    pub less: String,
    /// Where the transfer is when the read comes first: "still on its way".
    pub coming: &'static str,
    /// The catalog scenario in which this read comes before its transfer
    /// and the claim is paid twice.
    pub overtaken_in: &'static str,
}

const ON_ITS_WAY: &str = "still on its way";

/// Every read a design acts on, each where acting on a wrong "not paid"
/// pays twice. None for a conditional transfer (the bank checks it against
/// its ledger, whatever was read). The service's reads:
///
/// - a status query before a re-send (`query_before_retry`, or the `state`
///   mode, which asks before every transfer): the transfer before it re-armed
///   the bank timeout, so the query leaves a full `bank_timeout_ms` later;
/// - a restarted service's recovery query (`query_on_recovery`, or the
///   `state` mode): the crash came after the transfer, the restart at least
///   `restart_ms_min` after the crash (the end of the fault phase too);
/// - a lease takeover's query (the same settings): the key's lock was taken
///   before the execution's first transfer (after it, by `processing_ms`,
///   for split-booking-first, which calls the bank before it stores the
///   key) and its last transfer left at most [`bank_call_timeouts`]' first
///   count of timeouts after that, so the takeover at `lease_ms` asks that
///   much less than a lease after it.
///
/// Each less the spread of the service→bank link, which both the transfer
/// and the query travel; and only where the bank does not deduplicate by
/// the key handed on (a wrong "not paid" then costs a dedup hit; how long
/// the bank remembers is the key-retention rule's business).
///
/// The client's reconciliation job ([`job_read`]) reads the bank too, and
/// its re-drive pays again where no layer recognises it.
pub(super) fn bank_reads(
    configs: &[ClientConfig],
    service: &ServiceConfig,
    bank: &BankConfig,
    delays: &Delays,
    restarts: &Restarts,
    clients: &[String],
) -> Vec<Read> {
    if service.mode == Mode::StateConditional || !bank.status_query {
        return Vec::new();
    }
    let bank_dedups = service.pass_key_to_bank && bank.accepts_key;
    let mut reads = match bank_dedups {
        true => Vec::new(),
        false => service_reads(service, delays, restarts),
    };
    if let Some(client) = configs.first() {
        reads.extend(job_read(client, service, bank, delays, clients));
    }
    reads.extend(job_read_beside_recovery(
        configs, service, bank, delays, restarts, clients,
    ));
    reads
}

/// The service's own reads of the bank (a query before a re-send, a
/// recovery's, a lease takeover's), where the bank does not deduplicate
/// the transfers they follow by a key.
fn service_reads(service: &ServiceConfig, delays: &Delays, restarts: &Restarts) -> Vec<Read> {
    let us = sim::US_PER_MS;
    let mut reads = Vec::new();
    let (late, less, spread_us) = transfer_spread(delays);
    let mut read = |read_us: u64, what: String| {
        reads.push(Read {
            reader: Reader::Service,
            gap_us: i64::try_from(read_us)
                .unwrap_or(i64::MAX)
                .saturating_sub(spread_us),
            what,
            late: late.clone(),
            less: less.clone(),
            coming: ON_ITS_WAY,
            overtaken_in: "payment-status-query-overtakes-transfer",
        })
    };
    let timeout = about_ms(service.bank_timeout_us / us);
    // Only a key table that leaves a key "in progress" has one to recover
    // or to take over.
    let in_progress = matches!(
        service.idempotency,
        Idempotency::ClaimSameTx | Idempotency::SplitBookingFirst
    );
    let asks_first = service.query_on_recovery || service.mode == Mode::State;
    if service.bank_max_attempts > 1 && queries_bank(service) {
        let setting = match service.mode {
            Mode::Action => "service.query_before_retry",
            _ => "service.mode",
        };
        read(
            service.bank_timeout_us,
            format!("the status query before a re-send, one bank timeout ({timeout}, service.bank_timeout_ms) after the transfer it follows ({setting})"),
        );
    }
    if let Some((restart_min_ms, _)) = restarts.service_ms.filter(|_| in_progress && asks_first) {
        read(
            restart_min_ms.saturating_mul(us),
            format!(
                "the query of a restarted service's recovery, as soon as {} after the crash that followed the transfer ([crashes.service] restart_ms_min)",
                about_ms(restart_min_ms)
            ),
        );
    }
    if service.lease_us > 0 && in_progress && asks_first {
        let (last, _) = bank_call_timeouts(service);
        let last_us = service.bank_timeout_us.saturating_mul(last);
        let before_lock_us = match service.idempotency {
            Idempotency::SplitBookingFirst => service.processing_us,
            _ => 0,
        };
        read(
            service.lease_us.saturating_sub(last_us.saturating_add(before_lock_us)),
            format!(
                "the query of a lease takeover, {} (service.lease_ms) after the key was locked, when the execution it takes over may have sent its last transfer {} after the lock",
                about_ms(service.lease_us / us),
                about_ms(last_us.saturating_add(before_lock_us) / us)
            ),
        );
    }
    reads
}

/// How much later than a query a transfer can reach the bank over the
/// service→bank link: `(late, less, spread_us)`, the first two as a read's
/// `late` and `less` say it.
fn transfer_spread(delays: &Delays) -> (String, String, i64) {
    let spread_ms = delays.spread_ms(&[vec!["service", "bank"]]);
    let late = format!(
        "the transfer can take {} longer to reach the bank than the query (the service→bank delay range in [network])",
        about_ms(spread_ms)
    );
    let less = match spread_ms {
        0 => String::new(),
        ms => format!(
            ", less the {} by which the transfer can be slower to reach the bank than the query (the delay ranges in [network])",
            about_ms(ms)
        ),
    };
    let spread_us = i64::try_from(spread_ms.saturating_mul(sim::US_PER_MS)).unwrap_or(i64::MAX);
    (late, less, spread_us)
}

/// Why the reconciliation job's re-drive of `client` pays again when a
/// transfer did land: no layer tells it from a new payment. `None` where
/// one does (the same key, which the service's key table or the bank's
/// dedup recognises: how long they remember is the key-retention rule's
/// business).
fn unrecognised_redrive(
    client: &ClientConfig,
    service: &ServiceConfig,
    bank: &BankConfig,
) -> Option<&'static str> {
    let r = client.reconcile.as_ref()?;
    if r.redrive_key == RedriveKey::New {
        return Some("under a key no layer has seen (client.reconcile.redrive_key = \"new\")");
    }
    if !matches!(
        client.key,
        KeyPolicy::Stable | KeyPolicy::Claim | KeyPolicy::Timestamp { .. }
    ) {
        return Some(
            "under a key that no layer has seen (client.key sends none that stays the same)",
        );
    }
    let bank_dedups = service.pass_key_to_bank && bank.accepts_key;
    (service.idempotency == Idempotency::None && !bank_dedups).then_some(
        "under the same key, which nothing keeps (service.idempotency = \"none\", and no key at the bank)",
    )
}

/// The reconciliation job's read (`client.reconcile` with `ask = "bank"`):
/// a "not paid" is re-driven in every round but the last, so it takes two
/// rounds for a read to be acted on. The transfer it may miss is the last
/// attempt's, or, from the third round on, the re-drive of the round
/// before; either lands at most the trip client → service → bank, the
/// service's `processing_ms` and its bank call's last transfer
/// ([`bank_call_timeouts`]) after it left the client. The first query leaves
/// `after_ms` after the dead letter, which may follow the last attempt at
/// once (a 503 or a 422 comes back at once); a later one `after_ms` after
/// the round before, whose answer, and the re-drive it prompts, may take the
/// longest round trip to the bank. A service restart's recovery, which may
/// send a transfer later still, is [`job_read_beside_recovery`]'s.
fn job_read(
    client: &ClientConfig,
    service: &ServiceConfig,
    bank: &BankConfig,
    delays: &Delays,
    clients: &[String],
) -> Option<Read> {
    let r = client
        .reconcile
        .as_ref()
        .filter(|r| r.ask == Ask::Bank && r.max_rounds >= 2)?;
    let why = unrecognised_redrive(client, service, bank)?;
    let us = sim::US_PER_MS;
    let (last, _) = bank_call_timeouts(service);
    let call_ms = (service.bank_timeout_us / us)
        .saturating_mul(last)
        .saturating_add(service.processing_us / us);
    let after_redrive = r.max_rounds >= 3;
    // The worst of the clients: each one's job asks about its own claims.
    let (gap_ms, late_ms, rtt_ms) = clients
        .iter()
        .map(|c| {
            let ask = delays.range_ms(c, "bank");
            let answer = delays.range_ms("bank", c);
            let trip = delays.path_ms(&[c.as_str(), "service", "bank"]);
            let late_ms = trip.1.saturating_add(call_ms);
            let rtt_ms = match after_redrive {
                true => ask.1.saturating_add(answer.1),
                false => 0,
            };
            let early = i128::from(r.after_ms) + i128::from(ask.0);
            (
                early - i128::from(late_ms) - i128::from(rtt_ms),
                late_ms,
                rtt_ms,
            )
        })
        .min_by_key(|t| t.0)?;
    let what = if after_redrive {
        format!(
            "the reconciliation job's query a round after a re-drive ({} later, client.reconcile.after_ms; max_rounds = {}, so it re-drives again), when the answer that prompted the re-drive may have taken up to {} to come back",
            about_ms(r.after_ms),
            r.max_rounds,
            about_ms(rtt_ms)
        )
    } else {
        format!(
            "the reconciliation job's first query, {} after the dead letter (client.reconcile.after_ms; max_rounds = 2, so it re-drives a \"not paid\"), which may follow the last attempt at once",
            about_ms(r.after_ms)
        )
    };
    let settings = "the client→service→bank delays, service.processing_ms and the service's bank call: service.bank_max_attempts and service.bank_timeout_ms";
    Some(Read {
        reader: Reader::Job(why),
        gap_us: i64::try_from(gap_ms.saturating_mul(i128::from(us))).unwrap_or(i64::MIN),
        what,
        late: format!(
            "the transfer it asks about may land {} after its request left the client ({settings})",
            about_ms(late_ms)
        ),
        less: format!(
            ", less the {} a transfer may take to land after its request left the client ({settings})",
            about_ms(late_ms)
        ),
        coming: ON_ITS_WAY,
        overtaken_in: "payment-reconcile-new-key",
    })
}

/// The reconciliation job's read against a restarted service's recovery: a
/// crash leaves the claim's key "in progress" (a bank call without an
/// answer leaves it so for good, unless `on_bank_timeout` deletes it), and
/// the restart drives it to an end with a transfer of its own (after
/// asking, with `query_on_recovery`: a re-drive still on its way, or a
/// second key of the claim recovered beside it, reads "not paid" too). A
/// job that re-drives under a key no layer has seen then pays a claim that
/// is about to be paid. The job's first query reaches the bank
/// `after_ms` after a dead letter, which comes after the claim started;
/// the recovery's last transfer lands when the service, down at the end of
/// the faults, is back `restart_ms_min` later, and its recovered bank call
/// sent that transfer ([`bank_call_timeouts`], one timeout more where it
/// asks first in action mode), plus the service→bank delay. Bounds of the
/// whole run, so the rule needs no crash to happen at a particular moment:
/// a job whose first query comes after every recovery's transfer landed
/// reads them all.
pub(super) fn job_read_beside_recovery(
    configs: &[ClientConfig],
    service: &ServiceConfig,
    bank: &BankConfig,
    delays: &Delays,
    restarts: &Restarts,
    clients: &[String],
) -> Option<Read> {
    let client = configs.first()?;
    let r = client
        .reconcile
        .as_ref()
        .filter(|r| r.ask == Ask::Bank && r.max_rounds >= 2)?;
    let why = unrecognised_redrive(client, service, bank)?;
    let keeps_in_progress = matches!(
        service.idempotency,
        Idempotency::ClaimSameTx | Idempotency::SplitBookingFirst
    ) && client.key != KeyPolicy::None;
    let (restart_min_ms, _) = restarts.service_ms.filter(|_| keeps_in_progress)?;
    let us = sim::US_PER_MS;
    let (last, _) = bank_call_timeouts(service);
    let asks_first = service.query_on_recovery && service.mode == Mode::Action;
    let call_ms = (service.bank_timeout_us / us).saturating_mul(last + u64::from(asks_first));
    let sent_ms = restarts
        .faults_end_ms
        .saturating_add(restart_min_ms)
        .saturating_add(call_ms);
    let land_ms = sent_ms.saturating_add(delays.range_ms("service", "bank").1);
    // The earliest first query of any client: its first claim's start, the
    // job's wait and the fastest trip to the bank.
    let (read_ms, start_ms) = configs
        .iter()
        .zip(clients)
        .filter_map(|(c, name)| {
            let start = c.ops.iter().map(|o| o.start_ms).min()?;
            let read = start
                .saturating_add(r.after_ms)
                .saturating_add(delays.range_ms(name, "bank").0);
            Some((read, start))
        })
        .min()?;
    let settings = "run.fault_phase_ms, [crashes.service] restart_ms_min, and the recovered bank call: service.bank_max_attempts, service.bank_timeout_ms and service.query_on_recovery";
    Some(Read {
        reader: Reader::Job(why),
        gap_us: i64::try_from(i128::from(read_ms).saturating_sub(i128::from(land_ms)).saturating_mul(i128::from(us)))
            .unwrap_or(i64::MIN),
        what: format!(
            "the reconciliation job's first query, as soon as {} into the run ({} after a dead letter, client.reconcile.after_ms, of a claim started at {}; max_rounds = {}, so it re-drives a \"not paid\")",
            about_ms(read_ms),
            about_ms(r.after_ms),
            match start_ms {
                0 => "0 s".to_string(),
                ms => about_ms(ms),
            },
            r.max_rounds
        ),
        late: format!(
            "a restarted service recovers the claim's key left \"in progress\" (by a bank that never answered, or by a crash) and sends its own transfer, which can land as late as {} into the run: the service can crash until the faults end at {}, be back {} later, send its recovered call's last transfer {} after that, and the transfer can take {} to reach the bank ({settings})",
            about_ms(land_ms),
            about_ms(restarts.faults_end_ms),
            about_ms(restart_min_ms),
            about_ms(call_ms),
            about_ms(delays.range_ms("service", "bank").1)
        ),
        less: format!(
            ", less the {} into the run at which a restarted service's recovery of the claim's key left \"in progress\" can land its own transfer ({settings})",
            about_ms(land_ms)
        ),
        coming: "that a recovery still sends",
        overtaken_in: "payment-reconcile-races-recovery",
    })
}

/// What acting on a wrong "not paid" costs, by whom.
fn pays_again(reader: Reader) -> String {
    match reader {
        Reader::Service => "the service pays again".into(),
        Reader::Job(why) => format!("the job re-drives the claim {why}: it is paid again"),
    }
}

/// The catalog scenario that shows a stale replica's "not paid" paid again,
/// whoever read it.
const STALE_EXAMPLE: &str = "payment-query-reads-stale-replica";

/// A status answer read sooner after a transfer than the bank's replica
/// shows it (`bank.status_lag_ms`): "0 EUR paid" for a claim that was paid.
/// A transfer shows once its age reaches the lag
/// (`BankStorage::paid_eur_seen`), so a lag equal to the shortest time is
/// still current. A read that can come before the transfer itself is
/// [`overtaking_design_warning`]'s, and no lag makes it later: such a read counts
/// as 0 here.
pub(super) fn status_lag_design_warning(
    reads: &[Read],
    bank: &BankConfig,
) -> Option<crate::core::DesignWarning> {
    let us = sim::US_PER_MS;
    if bank.status_lag_us == 0 {
        return None;
    }
    let read = reads.iter().min_by_key(|r| r.gap_us)?;
    let gap_us = u64::try_from(read.gap_us).unwrap_or(0);
    if bank.status_lag_us <= gap_us {
        return None;
    }
    // The shortest time exactly: it is what a lag must stay within.
    let (lag_ms, gap_ms) = (bank.status_lag_us / us, gap_us / us);
    let lag = shown_ms(lag_ms, about_ms(lag_ms) == about_ms(gap_ms));
    let gap = shown_ms(gap_ms, true);
    let who = match read.reader {
        Reader::Service => "the service",
        Reader::Job(_) => "the client's reconciliation job",
    };
    Some(crate::core::DesignWarning {
        id: crate::payment::rules::STATUS_LAG_ABOVE_READ_DELAY,
        text: format!(
            "the bank's status answers lag its ledger by {lag} (bank.status_lag_ms), but {who} can read one as soon as {gap} after a transfer landed: {}{}; a transfer younger than the lag reads as \"0 EUR paid\", and {}",
            read.what,
            read.less,
            pays_again(read.reader)
        ),
        shown_by: Some(crate::payment::situations::STATUS_READ_STALE),
        example: STALE_EXAMPLE,
        at: None,
    })
}

/// A status query that can reach the bank before the transfer it follows:
/// the bank answers "0 EUR paid" from a ledger that is current, and the
/// transfer lands after the answer. The queue takes two events of one
/// moment in the order they were sent, so a query arriving at the very
/// moment of the transfer finds it. Nothing in a run marks it (the bank
/// cannot tell a transfer on its way from one never sent), so the warning
/// names no situation.
pub(super) fn overtaking_design_warning(reads: &[Read]) -> Option<crate::core::DesignWarning> {
    let read = reads
        .iter()
        .filter(|r| r.gap_us < 0)
        .min_by_key(|r| r.gap_us)?;
    let ahead_ms = read.gap_us.unsigned_abs() / sim::US_PER_MS;
    Some(crate::core::DesignWarning {
        id: crate::payment::rules::STATUS_QUERY_OVERTAKES_TRANSFER,
        text: format!(
            "a status query can reach the bank up to {} before the transfer it follows: {}, but {}; the bank answers \"0 EUR paid\" for a transfer {}, and {}",
            shown_ms(ahead_ms, ahead_ms < 1000),
            read.what,
            read.late,
            read.coming,
            pays_again(read.reader)
        ),
        shown_by: None,
        example: read.overtaken_in,
        at: None,
    })
}
