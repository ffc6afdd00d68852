//! The keys of an HTTP scenario that its other settings leave without
//! effect (`core::unused`).

use super::{ClientDto, FileDto, ServerDto};
use crate::core::Unused;

/// The keys the other settings leave without effect (`core::unused`): a
/// setting for a kind of request the scenario never sends, and the server's
/// key store where no key is stored.
pub(super) fn unused(d: &FileDto) -> Vec<Unused> {
    let (c, s) = (&d.client, &d.server);
    let mut out = c.retry.unused("client");
    let sends = |m: &str| d.requests.iter().any(|r| r.method == m);
    // An edit writes with a PUT too, which `server.put` applies.
    for (key, table, methods, what) in [
        (
            "put",
            "server",
            &["put", "edit"][..],
            "a PUT (method = \"put\", or an \"edit\", which writes with one)",
        ),
        (
            "if_match",
            "client",
            &["edit"][..],
            "an edit (method = \"edit\": its PUT is the only conditional request)",
        ),
        (
            "delete_404",
            "client",
            &["delete"][..],
            "a DELETE (method = \"delete\")",
        ),
        (
            "conditional_writes",
            "client",
            &["put", "patch", "delete"][..],
            "a PUT, a PATCH or a DELETE (method = \"put\", \"patch\" or \"delete\": an edit has its own If-Match, client.if_match)",
        ),
    ] {
        if !methods.iter().any(|m| sends(m)) {
            let u = Unused::new(
                &[table, key],
                &[&["requests"]],
                format!("no [[requests]] entry is {what}"),
                format!(
                    "remove it, or add a [[requests]] table with method = \"{}\"",
                    methods[0]
                ),
            );
            // No edit sends no conditional request: `if_match = false` says so.
            out.push(if key == "if_match" || key == "conditional_writes" {
                u.unless("false")
            } else {
                u
            });
        }
    }
    key_store_unused(c, s, &mut out);
    out
}

/// The server's key store, where no key is stored; the client's key,
/// where the server ignores it.
fn key_store_unused(c: &ClientDto, s: &ServerDto, out: &mut Vec<Unused>) {
    let store = if !s.idempotency_keys {
        Some((
            &["server", "idempotency_keys"][..],
            "the server stores no keys (server.idempotency_keys = false)",
        ))
    } else if !c.idempotency_key {
        Some((&["client", "idempotency_key"][..], "the client sends no Idempotency-Key (client.idempotency_key = false), so the server has none to store"))
    } else {
        None
    };
    if let Some((because, why)) = store {
        out.extend(Unused::each(
            &["server"],
            &["key_retention_ms", "max_keys", "fingerprint"],
            &[because],
            why,
            "remove it, or keep keys: idempotency_key = true in [client] and idempotency_keys = true in [server]",
        ));
    }
    if !s.idempotency_keys && c.idempotency_key {
        out.push(
            Unused::new(
                &["client", "idempotency_key"],
                &[&["server", "idempotency_keys"]],
                "the server ignores the header (server.idempotency_keys = false)",
                "remove it, or let the server store keys: idempotency_keys = true in [server]",
            )
            .unless("false"),
        );
    }
}
