//! The payment model's design warnings (docs/design-warnings.md): the gaps
//! its settings show, before any run reaches them.

use super::facts::{bank_call_timeouts, queries_bank, Restarts};
use crate::core::design_warning::Delays;
use crate::payment::{BankConfig, ClientConfig, Idempotency, KeyPolicy, Mode, ServiceConfig};

/// The settings behind [`bank_resend_ms`], as the warning names them.
const BANK_RESEND_SETTINGS: &str = "service.bank_max_attempts and service.bank_timeout_ms";

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

/// The gaps in a payment design that its settings show (docs/design-warnings.md).
/// `configs` are the client actors (every one with the design's settings,
/// each with its share of the operations), `clients` their names, for the
/// delays of their links; `restarts` the crashes the scenario sets.
pub(crate) fn design_warnings(
    configs: &[ClientConfig],
    service: &ServiceConfig,
    bank: &BankConfig,
    delays: &Delays,
    restarts: &Restarts,
    (clients, books): (&[String], bool),
) -> Vec<crate::core::DesignWarning> {
    let client = &configs[0];
    let mut out = Vec::new();
    out.extend(timestamp_key_collides(configs, service, restarts));
    let answer_ms = clients
        .iter()
        .map(|c| delays.path_ms(&[c, "service", c]).0)
        .min()
        .unwrap_or(0);
    out.extend(crate::core::retry_table::window_too_short(
        &client.retry,
        "client",
        client.timeout_ms,
        answer_ms,
        Some(super::super::situations::CLIENT_DEAD_LETTERED),
        // No catalog scenario fails by it: the operations it ends are
        // dead-lettered or told unknown, honestly, not judged wrong.
        "",
    ));
    // Whether the bank's key memory outlasts the client's retries: the only
    // thing left between a retry and a second transfer once the service has
    // deleted its key (`on_bank_timeout = "delete-key"`).
    let mut bank_covers_client = false;
    // A timestamp key is minted when the operation starts and carried by
    // every retry of it, as a stable key is.
    if matches!(
        client.key,
        KeyPolicy::Stable | KeyPolicy::Claim | KeyPolicy::Timestamp { .. }
    ) {
        let keys = Keys {
            client,
            service,
            bank,
            delays,
            clients,
            books,
        };
        let (retention, covers) = keys.retention_design_warnings(restarts);
        out.extend(retention);
        bank_covers_client = covers;
    }
    out.extend(lease_design_warning(service));
    // The bank's status reads the design acts on: a replica behind the
    // ledger, or a query ahead of the transfer it follows.
    let reads = super::reads::bank_reads(configs, service, bank, delays, restarts, clients);
    out.extend(super::reads::status_lag_design_warning(&reads, bank));
    out.extend(super::reads::overtaking_design_warning(&reads));
    let bank_dedups = service.pass_key_to_bank && bank.accepts_key;
    out.extend(deleted_on_timeout(service, bank_dedups, bank_covers_client));
    out
}

/// What the key-retention rules read of a design whose client keeps one
/// key for all retries of an operation.
struct Keys<'a> {
    client: &'a ClientConfig,
    service: &'a ServiceConfig,
    bank: &'a BankConfig,
    delays: &'a Delays,
    clients: &'a [String],
    /// The service announces its bookings downstream (the chain).
    books: bool,
}

impl Keys<'_> {
    /// Whether each layer's key memory outlasts the retries it must
    /// recognise; and whether the bank's outlasts the client's retries.
    fn retention_design_warnings(
        &self,
        restarts: &Restarts,
    ) -> (Vec<crate::core::DesignWarning>, bool) {
        use crate::core::design_warning::{key_retention, KeyMemory, TAKEN_AS_NEW};
        let (service, bank, books) = (self.service, self.bank, self.books);
        let service_layer = (service.idempotency != Idempotency::None).then(|| {
            KeyMemory::of_us(
                "service.retention_ms",
                service.retention_us,
                self.spread_ms(&["service"]),
            )
        });
        let mut layers: Vec<KeyMemory> = service_layer.into_iter().collect();
        // The bank's key keeps the money to one transfer, but not a booking
        // the service announces downstream (`books`, the chain): only the
        // service's own key stops a retry from being booked again.
        let bank_dedups = service.pass_key_to_bank && bank.accepts_key;
        let bank_layer = KeyMemory::of_us(
            "bank.key_retention_ms",
            bank.key_retention_us,
            self.spread_ms(&["service", "bank"]),
        )
        .resent_for(bank_resend_ms(service), BANK_RESEND_SETTINGS);
        if bank_dedups && !books {
            layers.push(bank_layer);
        }
        let (span, who) = retry_span(self.client, restarts);
        let mut retention = key_retention(
            &layers,
            span,
            &who,
            TAKEN_AS_NEW,
            self.shown_by(bank_dedups),
            "payment-key-expired-before-retry",
        );
        let covered = retention.is_none();
        // The bank's key keeps the money to one transfer, not the service's
        // own work: a service that forgot the key executes the retry again,
        // however long the bank remembers (the source's rule is the service's
        // keys outliving the retries, not some layer's).
        if bank_dedups && (books || covered) {
            if let Some(layer) = service_layer {
                retention = service_key_below_retries(layer, span, &who, books).or(retention);
            }
        }
        let mut out = Vec::new();
        // The service's key table answers the client's retries, but not the
        // service's own re-sends within one execution: only the bank can tell
        // those from a new transfer, so its memory must outlast them too.
        if covered && bank_dedups && !books {
            // Every copy of a re-send leaves from the service: its link's spread only.
            out.extend(bank_key_below_resends(
                service,
                bank,
                self.delays.spread_ms(&[vec!["service", "bank"]]),
            ));
        }
        out.extend(retention);
        (out, bank_dedups && bank_layer.covers(span))
    }

    /// The widest spread of the path from a client through `via`: one
    /// operation's copies all come from its one client.
    fn spread_ms(&self, via: &[&str]) -> u64 {
        self.clients
            .iter()
            .map(|c| {
                let path: Vec<&str> = std::iter::once(c.as_str())
                    .chain(via.iter().copied())
                    .collect();
                self.delays.spread_ms(&[path])
            })
            .max()
            .unwrap_or(0)
    }

    /// The situation that shows the gap. It opens when the layer that
    /// remembers longest forgets: a bank that keeps the key longer than the
    /// service (or alone) reports a transfer under a key it forgot, and the
    /// service forgetting first shows nothing of that gap; with equal
    /// memories the service's report of a retry it forgot marks it.
    fn shown_by(&self, bank_dedups: bool) -> Option<sim::SituationId> {
        let (service, bank) = (self.service, self.bank);
        let service_keeps_us = match service.idempotency {
            Idempotency::None => Some(0),
            _ => (service.retention_us > 0).then_some(service.retention_us),
        };
        let bank_last = bank_dedups
            && !self.books
            && bank.key_retention_us > 0
            && service_keeps_us.is_some_and(|kept_us| bank.key_retention_us > kept_us);
        if bank_last {
            Some(crate::payment::situations::BANK_KEY_EXPIRED)
        } else {
            (service.idempotency != Idempotency::None)
                .then_some(crate::payment::situations::RETRY_AFTER_KEY_EXPIRED)
        }
    }
}

/// How long the client's retries of one operation can go on, and who
/// retries, as the warnings say it: a client that crashes resumes its
/// operations from its own storage (without a window, nothing bounds its
/// retries in time), and a re-drive with the same key is one more retry.
fn retry_span(client: &ClientConfig, restarts: &Restarts) -> (Option<u64>, String) {
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
            crate::core::design_warning::about_ms(*max_ms)
        )
    });
    // A re-drive with the same key is one more retry, rounds later. The
    // job starts from the dead letter, which comes a whole timeout after
    // the last attempt: a retry span shorter than one timeout (one
    // attempt, or a window below two timeouts) does not cover that.
    let Some(r) = client.reconcile.as_ref().filter(|r| {
        r.redrive_key == crate::payment::reconcile::RedriveKey::Same && r.max_rounds > 0
    }) else {
        return (span, resumed.unwrap_or_else(|| "the client retries".into()));
    };
    let rounds = r.after_ms.saturating_mul(u64::from(r.max_rounds));
    span = span.map(|s| {
        s.saturating_add(s.max(client.timeout_ms))
            .saturating_add(rounds)
    });
    let who = match resumed {
        Some(_) => "the client (resuming after its restarts) and its reconciliation job retry",
        None => "the client and its reconciliation job retry",
    };
    (span, who.to_string())
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
    service: &ServiceConfig,
    restarts: &Restarts,
) -> Option<crate::core::DesignWarning> {
    use crate::core::design_warning::about_ms;
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
    Some(crate::core::DesignWarning {
        id: crate::payment::rules::TIMESTAMP_KEY_COLLIDES,
        text: format!(
            "the client mints its key from the clock (client.key = \"timestamp\", buckets of {} by client.key_bucket_ms): the key names a time bucket, not an operation, and two operations started in one bucket carry one key, so the second is refused as a reuse of the first's key or answered with the first's result; {here}",
            about_ms(bucket_ms)
        ),
        // A service with a key table reports a second claim's request that
        // finds the key stored for the first (`key-collision`), as it
        // arrives, where the ledger judges the run a violation
        // (one-key-one-operation): a run that reaches the gap is a violation
        // itself. Without a key table nothing marks it; the ledger's verdict
        // still does, and so does a second claim that arrives while the
        // first's key is not stored yet (check-then-act) or no longer is.
        shown_by: (service.idempotency != Idempotency::None)
            .then_some(crate::payment::situations::KEY_COLLISION),
        example: "payment-timestamp-key",
        at: None,
    })
}

/// The service forgets a key while the client still retries with it, and the
/// bank, which deduplicates by the key handed on, recognises the retry's
/// transfer: the money leaves once, but the service executes the retry
/// again, and in the chain (`books`) announces a second booking.
fn service_key_below_retries(
    layer: crate::core::design_warning::KeyMemory,
    span_ms: Option<u64>,
    who: &str,
    books: bool,
) -> Option<crate::core::DesignWarning> {
    let at = crate::core::input::path(&["service", "retention_ms"]);
    let mut h = crate::core::design_warning::layer_key_retention(
        (layer, "the service", at),
        span_ms,
        who,
        match books {
            true => crate::core::design_warning::TAKEN_AS_NEW,
            false => "a retry after that is taken for a new request and executed again",
        },
        Some(crate::payment::situations::RETRY_AFTER_KEY_EXPIRED),
        "chain-booked-again-after-key-expired",
    )?;
    h.text.push_str(if books {
        " (the bank's key keeps the money to one transfer, but the service books the retry again and announces the booking: accounting books the claim twice)"
    } else {
        " (the bank's key keeps the money to one transfer, but the service executes the retry a second time: it books the payment again and calls the bank, whose key alone keeps the second transfer out)"
    });
    Some(h)
}

/// The bank forgets a key before the service's last re-send of one
/// execution's transfer reaches it: that re-send is paid again, however
/// long the service keeps its own key.
fn bank_key_below_resends(
    service: &ServiceConfig,
    bank: &BankConfig,
    spread_ms: u64,
) -> Option<crate::core::DesignWarning> {
    use crate::core::design_warning::{key_retention, KeyMemory};
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
        Some(crate::payment::situations::BANK_KEY_EXPIRED),
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
) -> Option<crate::core::DesignWarning> {
    // A conditional transfer pays only what is missing, whatever the key.
    let conditional = service.mode == Mode::StateConditional;
    if !service.delete_key_on_bank_timeout
        || service.idempotency == Idempotency::None
        || bank_covers_client
        || conditional
    {
        return None;
    }
    Some(crate::core::DesignWarning {
        id: crate::payment::rules::KEY_DELETED_ON_TIMEOUT,
        text: format!(
            "the service deletes a key when the bank stays silent to its last attempt (service.on_bank_timeout = \"delete-key\"), but silence is not failure: the bank may have paid, and the client's retry under the same key is executed again, {}",
            if bank_dedups {
                "and the bank forgets the key (bank.key_retention_ms) before the client's last retry can reach it: nothing stops the second transfer then"
            } else {
                "with no key at the bank to stop the second transfer"
            }
        ),
        shown_by: Some(crate::payment::situations::KEY_DELETED_ON_BANK_TIMEOUT),
        example: "payment-key-deleted-on-timeout",
        at: None,
    })
}

/// A lease on an "in progress" key that can run out while its bank call is
/// still under way: a duplicate then takes the key over and calls the bank
/// too, two executions of one operation.
fn lease_design_warning(service: &ServiceConfig) -> Option<crate::core::DesignWarning> {
    use crate::core::design_warning::{about_ms, about_pair};
    let (_, timeouts) = bank_call_timeouts(service);
    let call_us = service
        .bank_timeout_us
        .saturating_mul(timeouts)
        .saturating_add(service.processing_us);
    // Equal is no margin: at that instant the order of events decides
    // between the call's last timeout and a takeover (`service_keys.rs`),
    // but real instances' clocks differ, and the order is a race.
    if service.lease_us == 0
        || service.lease_us > call_us
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
    let text = if service.lease_us == call_us {
        format!(
            "an \"in progress\" key's lease runs out after {lease} (service.lease_ms), exactly as long as its bank call may take ({parts}): at that very moment this model lets the order of events decide between the call's last timeout and a duplicate's takeover, but the service's instances read their own clocks, and with any skew between them a duplicate that arrives as the lease runs out takes the key over and calls the bank while the first execution still does: equal is a race; make the lease strictly longer than the call, with a margin for clock skew"
        )
    } else {
        format!(
            "an \"in progress\" key's lease runs out after {lease} (service.lease_ms), but its bank call may take {call} ({parts}): a duplicate that arrives after the lease takes the key over and calls the bank while the first execution still does"
        )
    };
    Some(crate::core::DesignWarning {
        id: crate::payment::rules::LEASE_BELOW_CALL,
        text,
        shown_by: Some(crate::payment::situations::LEASE_TAKEN_FROM_RUNNING),
        example: "payment-lease-too-short",
        at: None,
    })
}
