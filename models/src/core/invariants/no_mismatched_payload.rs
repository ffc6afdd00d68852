use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind, Site};
use crate::core::op::Op;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-mismatched-payload",
    doc: "What landed is not what was asked: an effect executed with another payload than its \
          operation's, or a client told \"done\" for a payload other than the one that landed \
          (a stored result replayed for a changed request). Compares the client's request with \
          the effect in the outside world, never with a service's echo.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Effect, ObsKind::ToldDone];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

/// Inline where an effect or a "done" is judged: the test is a compare,
/// the message is built out of line.
#[inline(always)]
pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    match *s.obs {
        Obs::Effect { site, op, payload } => {
            let r = s.rec?;
            if !r.intended || payload == r.payload {
                return None;
            }
            executed_otherwise(site, op, payload, r.payload)
        }
        Obs::ToldDone { op, payload } => {
            let (_, landed) = s.rec?.first_effect?;
            if landed == payload {
                return None;
            }
            told_otherwise(op, payload, landed)
        }
        _ => None,
    }
}

/// An effect of `op` executed with `payload`, its operation asked for `asked`.
#[cold]
#[inline(never)]
fn executed_otherwise(site: &Site, op: Op, payload: u32, asked: u32) -> Option<Violation> {
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "{op} was executed as a {} of {}, but its operation is {}: another payload was executed",
            site.name,
            op.payload(payload),
            op.payload(asked)
        ),
    )
}

/// A "done" for `payload` on `op`, where `landed` landed.
#[cold]
#[inline(never)]
fn told_otherwise(op: Op, payload: u32, landed: u32) -> Option<Violation> {
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "a request for {} on {op} was answered \"done\", but what landed is {}",
            op.payload(payload),
            op.payload(landed)
        ),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
