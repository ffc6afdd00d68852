use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
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

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    match *s.obs {
        Obs::Effect { site, op, payload } => {
            let r = s.rec?;
            if !r.intended || payload == r.payload {
                return None;
            }
            violation(
                &INVARIANT,
                op.key(),
                format!(
                    "{op} was executed as a {} of {}, but its operation is {}: another payload was executed",
                    site.name,
                    op.payload(payload),
                    op.payload(r.payload)
                ),
            )
        }
        Obs::ToldDone { op, payload } => {
            let (_, landed) = s.rec?.first_effect?;
            if landed == payload {
                return None;
            }
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
        _ => None,
    }
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
