//! How traces write an observation: one line each, in the words of the
//! model's operations.

use super::{Change, Obs};
use std::fmt;

impl fmt::Display for Obs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Obs::Intent { .. }
            | Obs::AttemptSent { .. }
            | Obs::Received { .. }
            | Obs::Effect { .. }
            | Obs::StateHeld { .. }
            | Obs::Attempt { .. }
            | Obs::ToldDone { .. }
            | Obs::Ended { .. }
            | Obs::Reversal { .. } => self.fmt_operation(f),
            Obs::Committed { .. }
            | Obs::Accepted { .. }
            | Obs::DeadLettered { .. }
            | Obs::ValueWritten { .. }
            | Obs::Superseded { .. }
            | Obs::NewVersion { .. } => self.fmt_event(f),
            Obs::ExecStart { .. }
            | Obs::ExecEnd { .. }
            | Obs::ExecutorsLost
            | Obs::Deployed { .. }
            | Obs::Handled { .. }
            | Obs::EffectBy { .. }
            | Obs::DedupStore { .. }
            | Obs::Work { .. }
            | Obs::Shed { .. }
            | Obs::RetryDenied { .. }
            | Obs::FastFailed { .. } => self.fmt_service(f),
        }
    }
}

impl Obs {
    /// What happened to a client's operation, in the words of traces.
    fn fmt_operation(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Obs::Intent { op, payload, .. } => {
                write!(f, "intent: {op}, {}", op.payload(payload))
            }
            Obs::AttemptSent { op, attempt } => write!(f, "attempt {attempt} for {op} sent"),
            Obs::Received { layer, op, key } => {
                write!(f, "{} receives a request for {op} [{key}]", layer.name)
            }
            Obs::Effect { site, op, payload } => {
                write!(
                    f,
                    "EFFECT {} of {} for {op}",
                    site.name,
                    op.payload(payload)
                )
            }
            Obs::StateHeld { op, attempt, .. } => write!(
                f,
                "STATE HELD: what {op} asks already holds, seen answering attempt {attempt}"
            ),
            Obs::Attempt {
                op,
                attempt,
                outcome,
            } => write!(f, "attempt {attempt} for {op}: {}", outcome.as_str()),
            Obs::ToldDone { op, payload } => {
                write!(f, "told: {op} is done ({})", op.payload(payload))
            }
            Obs::Ended { op, ending } => write!(f, "{op} ended: {}", ending.as_str()),
            Obs::Reversal { site, op, payload } => write!(
                f,
                "REVERSAL: {} of {} taken back for {op}",
                site.name,
                op.payload(payload)
            ),
            _ => unreachable!("Display::fmt sorts the kinds"),
        }
    }

    /// What happened to an event owed by a commit, or to a resource's versions.
    fn fmt_event(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Obs::Committed {
                op,
                entity,
                value,
                version,
            } => write!(f, "committed: {entity} = {value} (v{version}), {op} owed"),
            Obs::Accepted { op } => write!(f, "queued: {op}"),
            Obs::DeadLettered { op } => write!(f, "DEAD LETTER: {op}"),
            Obs::ValueWritten {
                entity,
                value,
                version,
                ..
            } => write!(f, "WRITE at consumer: {entity} = {value} (v{version})"),
            Obs::Superseded { op } => write!(f, "{op} superseded by a newer version"),
            Obs::NewVersion {
                op,
                entity,
                version,
                change: Change::Edit { read, .. },
                ..
            } => write!(
                f,
                "{entity} is now v{version}, written by {op} from a read of v{read}"
            ),
            Obs::NewVersion {
                op,
                entity,
                version,
                ..
            } => write!(f, "{entity} is now v{version}, written by {op}"),
            _ => unreachable!("Display::fmt sorts the kinds"),
        }
    }

    /// What a service, its dedup store, its workers or a client's budget and breaker did.
    fn fmt_service(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Obs::ExecStart { key } => write!(f, "executing the request of key {key}"),
            Obs::ExecEnd { key } => write!(f, "execution of key {key} finished"),
            Obs::ExecutorsLost => write!(f, "every execution of this process died with it"),
            Obs::Deployed { version } => {
                write!(
                    f,
                    "v{version} deployed: it handles what arrives from now on"
                )
            }
            Obs::Handled {
                op,
                attempt,
                version,
            } => match attempt {
                0 => write!(f, "v{version} takes {op}"),
                n => write!(f, "v{version} takes {op} [attempt {n}]"),
            },
            Obs::EffectBy { op, version } => {
                write!(f, "the next effect on {op} is v{version}'s request")
            }
            Obs::DedupStore { keys, bound } => {
                let s = if keys == 1 { "" } else { "s" };
                write!(f, "dedup store holds {keys} key{s} (bound {bound})")
            }
            Obs::Work {
                layer, op, attempt, ..
            } => write!(f, "{} works on attempt {attempt} for {op}", layer.name),
            Obs::Shed { layer, op, .. } => {
                write!(
                    f,
                    "{} is full: sheds the request for {op} (503)",
                    layer.name
                )
            }
            Obs::RetryDenied { op } => {
                write!(f, "retry budget spent: no retry of {op}")
            }
            Obs::FastFailed { op } => {
                write!(f, "circuit breaker open: {op} fails fast, not sent")
            }
            _ => unreachable!("Display::fmt sorts the kinds"),
        }
    }
}
