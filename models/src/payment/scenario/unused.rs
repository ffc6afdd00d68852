//! The keys of `[client]`, `[service]` and `[bank]` that the other
//! settings leave without effect (`core::unused`): the payment model's
//! list, which the chain's loader reads too.

use super::{BankDto, ClientDto, FileDto, ServiceDto};
use crate::core::Unused;

/// What [`unused_in`](super::unused_in) finds, from the parsed tables.
pub(super) fn unused(d: &FileDto) -> Vec<Unused> {
    let (c, s, b) = (&d.client, &d.service, &d.bank);
    let mut out = c.retry.unused("client");
    client_unused(c, &mut out);
    key_table_unused(s, b, &mut out);
    status_unused(s, b, &mut out);
    capacity_unused(s, &mut out);
    bank_capacity_unused(b, &mut out);
    bank_key_unused(c, s, b, &mut out);
    refund_unused(c, b, &mut out);
    out
}

/// `[bank] refuse_refund_beyond_paid`, which only refunds read, and only a
/// compensation job sends them.
fn refund_unused(c: &ClientDto, b: &BankDto, out: &mut Vec<Unused>) {
    if c.compensate.is_none() && b.refuse_refund_beyond_paid {
        out.push(
            Unused::new(
                &["bank", "refuse_refund_beyond_paid"],
                &[&["client", "compensate"]],
                "no refund is ever asked for: only a compensation job ([client.compensate]) sends one",
                "remove it, or give the client a compensation job: [client.compensate]",
            )
            .unless("false"),
        );
    }
}

/// `[client] key_bucket_ms`, which only a key from the clock reads.
fn client_unused(c: &ClientDto, out: &mut Vec<Unused>) {
    if c.key != "timestamp" {
        out.push(Unused::new(
            &["client", "key_bucket_ms"],
            &[&["client", "key"]],
            format!("only a key from the clock (client.key = \"timestamp\") has buckets, and client.key = \"{}\"", c.key),
            "remove it, or mint the key from the clock: client.key = \"timestamp\"",
        ));
    }
}

/// The key table's settings, without a key table; a recovery's query,
/// without a bank that answers it.
fn key_table_unused(s: &ServiceDto, b: &BankDto, out: &mut Vec<Unused>) {
    if s.idempotency == "none" {
        for (key, inert, what) in [
            ("retention_ms", None, "there is no key to forget"),
            ("max_keys", None, "there is no key to count"),
            (
                "fingerprint_check",
                Some("false"),
                "there is no stored request to compare a retry with",
            ),
            (
                "lease_ms",
                Some("0"),
                "no key is ever \"in progress\", so none is leased",
            ),
            (
                "concurrent",
                None,
                "no duplicate is seen as concurrent: each is executed",
            ),
            (
                "on_bank_timeout",
                None,
                "there is no key to keep or delete when the bank stays silent",
            ),
            (
                "query_on_recovery",
                Some("false"),
                "no key is left \"in progress\" to recover",
            ),
        ] {
            let u = Unused::new(
                &["service", key],
                &[&["service", "idempotency"]],
                format!("the service keeps no key table (service.idempotency = \"none\"): {what}"),
                "remove it, or give the service a key table: idempotency = \"claim-same-tx\"",
            );
            out.push(match inert {
                Some(v) => u.unless(v),
                None => u,
            });
        }
    } else if !b.status_query {
        out.push(Unused::new(
            &["service", "query_on_recovery"],
            &[&["bank", "status_query"]],
            "the bank answers no status queries (bank.status_query = false), so a recovering service cannot ask it",
            "remove it, or let the bank answer: add status_query = true to [bank]",
        ).unless("false"));
    }
}

/// The status queries and what they read, where the service never asks
/// or the bank never answers.
fn status_unused(s: &ServiceDto, b: &BankDto, out: &mut Vec<Unused>) {
    if s.bank_max_attempts == 1 && s.query_before_retry {
        out.push(Unused::new(
            &["service", "query_before_retry"],
            &[&["service", "bank_max_attempts"]],
            "the service calls the bank once (service.bank_max_attempts = 1) and never retries a transfer",
            "remove it, or let the service retry: bank_max_attempts = 3",
        ));
    } else if !b.status_query {
        // Refused until now, which made `--set bank.status_query=false` of
        // a file that asks an error instead of the variant it is: the
        // service then re-sends without asking.
        out.push(
            Unused::new(
                &["service", "query_before_retry"],
                &[&["bank", "status_query"]],
                "the bank answers no status queries (bank.status_query = false), so the service re-sends a transfer without asking",
                "remove it, or let the bank answer: add status_query = true to [bank]",
            )
            .unless("false"),
        );
    }
    if !b.status_query {
        // Refused until now; an ablation `bank.status_query=false` of a file
        // with a lag is a variant, and the lag then simply has no reader.
        out.push(
            Unused::new(
                &["bank", "status_lag_ms"],
                &[&["bank", "status_query"]],
                "the bank answers no status queries (bank.status_query = false), so no answer can lag",
                "remove it, or let the bank answer: add status_query = true to [bank]",
            )
            .unless("0"),
        );
        out.push(
            Unused::new(
                &["bank", "status_by"],
                &[&["bank", "status_query"]],
                "the bank answers no status queries (bank.status_query = false), so no answer counts by claim or by payment",
                "remove it, or let the bank answer: add status_query = true to [bank]",
            )
            .unless("\"claim\""),
        );
    }
}

/// The settings of a queue and of recovery from overload, without a
/// queue or a capacity.
fn capacity_unused(s: &ServiceDto, out: &mut Vec<Unused>) {
    // A service without `workers` has as many as it has slots (64), and a
    // queue behind them: only a queue of 0 leaves no request waiting.
    if s.queue_max == 0 {
        out.push(Unused::new(
            &["service", "drop_expired"],
            &[&["service", "queue_max"]],
            "the service queues no request (service.queue_max = 0): one that finds every worker busy is shed, so none waits while its deadline passes",
            "remove it, or give the service a queue: queue_max = 16 (with workers = 4)",
        ).unless("false"));
    }
    if s.workers == 0 {
        // Refused until now, which made `--set service.workers=0` of an
        // overload scenario an error instead of a variant.
        out.push(
            Unused::new(
                &["service", "recover_ms"],
                &[&["service", "workers"]],
                "the service has no workers limit (service.workers = 0), so it reports no load and promises no recovery: load-recovers judges nothing",
                "remove it, or give the service a capacity: workers = 4 (and a queue_max)",
            )
            .unless("0"),
        );
    }
}

/// `bank.recover_ms`, for a bank that takes every request.
fn bank_capacity_unused(b: &BankDto, out: &mut Vec<Unused>) {
    if b.capacity_per_s == 0 {
        out.push(
            Unused::new(
                &["bank", "recover_ms"],
                &[&["bank", "capacity_per_s"]],
                "the bank takes every request (bank.capacity_per_s = 0), so it sheds none and promises no recovery: load-recovers judges nothing",
                "remove it, or give the bank a capacity: capacity_per_s = 20",
            )
            .unless("0"),
        );
    }
}

/// The keys of a key handed on to the bank, where none reaches it or the
/// bank takes none.
fn bank_key_unused(c: &ClientDto, s: &ServiceDto, b: &BankDto, out: &mut Vec<Unused>) {
    if !b.accepts_key {
        out.push(
            Unused::new(
                &["service", "pass_key_to_bank"],
                &[&["bank", "accepts_key"]],
                "the bank takes no key (bank.accepts_key = false): a key passed on is ignored",
                "remove it, or let the bank deduplicate: accepts_key = true in [bank]",
            )
            .unless("false"),
        );
    }
    let bank_key = if !b.accepts_key {
        Some((
            &["bank", "accepts_key"][..],
            "the bank takes no key (bank.accepts_key = false)",
        ))
    } else if !s.pass_key_to_bank {
        Some((
            &["service", "pass_key_to_bank"][..],
            "the service passes no key to the bank (service.pass_key_to_bank = false)",
        ))
    } else if c.key == "none" {
        Some((
            &["client", "key"][..],
            "the client sends no key (client.key = \"none\"), so none reaches the bank",
        ))
    } else {
        None
    };
    if let Some((because, why)) = bank_key {
        out.push(Unused::new(
            &["bank", "key_retention_ms"],
            &[because],
            format!("{why}: the bank keeps no keys to forget"),
            "remove it, or let a key reach the bank",
        ));
    }
}
