//! The HTTP model's design warnings (docs/design-warnings.md): a server
//! that forgets an Idempotency-Key while a client may still retry, and a
//! retry window too short for one attempt.

use super::SERVER;
use crate::core::client_op::Persistence;
use crate::core::design_warning::Delays;
use crate::core::retry::RetryPolicy;
use crate::core::DesignWarning;
use crate::http::{Action, ClientConfig, DeleteNotFound, PutMode, RequestSpec, ServerConfig};

/// Each client actor's name and requests.
type Clients = [(String, Vec<RequestSpec>)];

/// What a repeat after the key is gone costs, by the requests the
/// scenario sends: it is executed as new.
struct Stakes {
    /// A POST, a PATCH, or a PUT that adds: the effect lands again.
    adds_again: bool,
    /// A read-modify-write retried reads its own landed write back, and the
    /// ETag it reads is current: If-Match lets the second PUT through.
    edits_again: bool,
    /// A DELETE's repeat changes nothing, but only the stored 204 told the
    /// client it had deleted; without it the repeat answers 404.
    delete_fails: bool,
}

impl Stakes {
    fn of(client: &ClientConfig, server: &ServerConfig, clients: &Clients) -> Stakes {
        let requests = || clients.iter().flat_map(|c| &c.1);
        let has = |action: Action| requests().any(|r| r.action == action);
        Stakes {
            adds_again: has(Action::Create)
                || has(Action::Increment)
                || (has(Action::Replace) && server.put == PutMode::Add),
            edits_again: has(Action::Edit),
            delete_fails: has(Action::Delete) && client.delete_404 == DeleteNotFound::Failed,
        }
    }

    fn any(&self) -> bool {
        self.adds_again || self.edits_again || self.delete_fails
    }

    /// What a retry after the key is gone does, as the warning says it.
    fn then(&self, if_match: bool) -> String {
        let mut then = String::from("a retry after that is taken for a new request");
        if self.adds_again || self.edits_again {
            then.push_str(" and takes effect again");
        }
        if self.edits_again {
            then.push_str(if if_match {
                " (an edit's retry reads its own write back and adds to it again: the ETag it reads is current, so If-Match lets the PUT through)"
            } else {
                " (an edit's retry reads its own write back and adds to it again)"
            });
        }
        if self.delete_fails {
            then.push_str(if self.adds_again || self.edits_again {
                "; "
            } else {
                ": "
            });
            then.push_str("a DELETE's retry finds nothing left to delete and is answered 404, which the client records as failed (client.delete_404 = \"failed\") although its first attempt deleted the resource");
        }
        then
    }

    /// The catalog scenario that shows it: where only DELETEs are at stake,
    /// the failure the runs show is a false failure.
    fn example(&self) -> &'static str {
        if self.adds_again || self.edits_again {
            "http-key-expired-before-retry"
        } else {
            "http-delete-404-as-failure"
        }
    }
}

/// The gaps in an HTTP design that its settings show: a server that forgets
/// an Idempotency-Key while a client may still retry a request whose repeat
/// either takes effect again (a POST, a PATCH, a PUT that adds, an edit) or
/// gets an answer the client takes for a failure (a DELETE's 404, where the
/// client reads it as failed).
///
/// `text` is the scenario, for the `[crashes.X]` tables of its clients: a
/// client that crashes resumes its pending requests from its own storage
/// when it is back, and without a retry window nothing bounds its retries
/// in time.
pub(super) fn design_warnings(
    client: &ClientConfig,
    server: &ServerConfig,
    clients: &Clients,
    delays: &Delays,
    text: &str,
) -> Vec<DesignWarning> {
    let stakes = Stakes::of(client, server, clients);
    if !client.idempotency_key || !server.keys || !stakes.any() {
        return Vec::new();
    }
    // One request's copies all come from its one client.
    let spread_ms = clients
        .iter()
        .map(|c| delays.spread_ms(&[vec![c.0.as_str(), SERVER]]))
        .max()
        .unwrap_or(0);
    let layer = crate::core::design_warning::KeyMemory::of_us(
        "server.key_retention_ms",
        server.key_retention_us,
        spread_ms,
    );
    let (span, retries) = retry_span(&client.persistence, clients, delays, text);
    crate::core::design_warning::key_retention(
        &[layer],
        span,
        &retries,
        &stakes.then(client.if_match),
        Some(crate::http::situations::KEY_EXPIRED),
        stakes.example(),
    )
    .into_iter()
    .collect()
}

/// How long a client's retries of one request can go on, and who retries,
/// as the warning says it: the client actor that stays down longest, if
/// any can crash and its retries have no window to bound them in time,
/// and an edit's GET before each PUT.
fn retry_span(
    p: &Persistence,
    clients: &Clients,
    delays: &Delays,
    text: &str,
) -> (Option<u64>, String) {
    let restart = clients
        .iter()
        .filter_map(|c| {
            crate::core::design_warning::restart_ms(text, &c.0).map(|(_, max)| (&c.0, max))
        })
        .max_by_key(|(_, max_ms)| *max_ms)
        .filter(|_| p.retry.window_ms == 0 && p.retry.max_attempts > 1);
    let read_ms = edit_read_ms(clients, delays, p.timeout_ms);
    let span = match restart {
        Some((_, max_ms)) => p
            .retry
            .longest_span_with_restarts_ms(p.timeout_ms.saturating_add(read_ms.1), max_ms),
        None if read_ms.1 == 0 => p.retry.longest_span_ms(p.timeout_ms),
        None => edit_span_ms(&p.retry, p.timeout_ms, read_ms),
    };
    let resumed = restart.map(|(name, max_ms)| {
        format!(
            "a client retries, each of its {} retries possibly after a restart of up to {} ([crashes.{name}] restart_ms_max) and a new wait, since client.retry sets no window_ms to bound them in time,",
            p.retry.max_attempts - 1,
            crate::core::design_warning::about_ms(max_ms)
        )
    });
    let mut retries = resumed.unwrap_or_else(|| "a client retries".to_string());
    if read_ms.1 > 0 {
        let comma = retries.ends_with(',');
        if comma {
            retries.pop();
        }
        retries.push_str(&format!(
            " (an edit's PUT, which carries the key, leaves when its GET is answered, up to {} into the attempt, and waits a whole timeout from there)",
            crate::core::design_warning::about_ms(read_ms.1)
        ));
        if comma {
            retries.push(',');
        }
    }
    (span, retries)
}

/// A retry window too short for one attempt and its answer, on the
/// fastest client's round trip (an edit's PUT leaves after its GET's
/// answer: its lost answer times out that round trip later than a lost
/// GET's).
pub(super) fn window_too_short(
    retry: &RetryPolicy,
    timeout_ms: u64,
    clients: &Clients,
    delays: &Delays,
) -> Option<DesignWarning> {
    let round_trip_ms = |c: &(String, Vec<RequestSpec>)| delays.path_ms(&[&c.0, SERVER, &c.0]).0;
    let answer_ms = clients.iter().map(round_trip_ms).min().unwrap_or(0);
    let read_ms = clients
        .iter()
        .filter(|c| c.1.iter().any(|r| r.action == Action::Edit))
        .map(round_trip_ms)
        .min()
        .unwrap_or(0);
    crate::core::retry_table::window_too_short_after_read(
        retry,
        "client",
        timeout_ms,
        answer_ms,
        read_ms,
        Some(crate::http::situations::REQUEST_DEAD_LETTERED),
        // No catalog scenario fails by it: the operations it ends are
        // dead-lettered or told unknown, honestly, not judged wrong.
        "",
    )
}

/// How long an edit's GET can hold back the PUT that carries its key,
/// `(shortest, longest)` over the clients that edit (`(0, 0)` where none
/// does): the round trip to the server and back, at most `timeout_ms`,
/// since an answer after the timeout finds the attempt over. The PUT leaves
/// when the GET's answer arrives and re-arms the timeout, so an edit's
/// attempt can last that much more than one timeout.
fn edit_read_ms(clients: &Clients, delays: &Delays, timeout_ms: u64) -> (u64, u64) {
    clients
        .iter()
        .filter(|c| c.1.iter().any(|r| r.action == Action::Edit))
        .map(|c| {
            let (lo, hi) = delays.path_ms(&[c.0.as_str(), SERVER, c.0.as_str()]);
            (lo.min(timeout_ms), hi.min(timeout_ms))
        })
        .fold(None, |acc: Option<(u64, u64)>, (lo, hi)| {
            Some(acc.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))))
        })
        .unwrap_or((0, 0))
}

/// How long after an edit's first PUT its last retry's PUT can leave,
/// whose GET's round trip may take `read_ms` = `(shortest, longest)`: the
/// key is stored from the first PUT on, so the first attempt's read does
/// not count, and every later attempt's does. By attempts, each gap between
/// two starts is a read, a timeout and a wait; by the window, the last
/// attempt starts `window_ms - timeout_ms` after the first at the latest,
/// its read drawn up to the longest after a first one drawn the shortest.
fn edit_span_ms(
    retry: &RetryPolicy,
    timeout_ms: u64,
    (read_min_ms, read_max_ms): (u64, u64),
) -> Option<u64> {
    let unwindowed = RetryPolicy {
        window_ms: 0,
        ..*retry
    };
    let by_attempts = unwindowed.longest_span_ms(timeout_ms.saturating_add(read_max_ms));
    let by_window = (retry.window_ms > 0).then(|| {
        retry
            .window_ms
            .saturating_sub(timeout_ms)
            .saturating_add(read_max_ms - read_min_ms)
    });
    match (by_attempts, by_window) {
        (Some(a), Some(w)) => Some(a.min(w)),
        (a, w) => a.or(w),
    }
}
