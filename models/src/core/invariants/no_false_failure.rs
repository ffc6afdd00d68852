use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::{Ending, Obs, ObsKind, Site};
use crate::core::op::Op;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-false-failure",
    doc: "A client's final knowledge says its operation failed (a dead letter marked \"failed, \
          nothing was executed\") while its effect landed: an operator acting on it would pay \
          again. For an operation whose intent is a state (a DELETE: the resource is gone), \
          \"failed\" is false too when the answer it concluded from was produced while that \
          state held: the operator would delete again whatever is at that id by then. A dead \
          letter whose outcome is unknown is honest and does not break this.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Ended, ObsKind::Effect];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

/// Inline where an effect or an ending is judged: the tests are a compare
/// each, the judgement of a failed ending and the messages out of line.
#[inline(always)]
pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    match *s.obs {
        Obs::Ended {
            op,
            ending: Ending::Failed,
        } => failed(op, s.rec?),
        Obs::Effect { site, op, payload } => {
            if s.rec?.ending != Some(Ending::Failed) {
                return None;
            }
            landed_after_failed(site, op, payload)
        }
        _ => None,
    }
}

/// `op`, whose record is `r`, ended as failed.
#[cold]
#[inline(never)]
fn failed(op: Op, r: &OpRecord) -> Option<Violation> {
    let Some((_, payload)) = r.first_effect else {
        if !r.held_when_answered() {
            return None;
        }
        return violation(
            &INVARIANT,
            op.key(),
            format!(
                "{op} was recorded as failed, but what it asks already held when attempt {} was answered",
                r.held
            ),
        );
    };
    let site = r.site.map_or("effect", |s| s.name);
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "{op} was recorded as failed, but its {site} of {} landed",
            op.payload(payload)
        ),
    )
}

/// An effect of `op`, of `payload`, landed at `site` after it ended as failed.
#[cold]
#[inline(never)]
fn landed_after_failed(site: &Site, op: Op, payload: u32) -> Option<Violation> {
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "{op} was recorded as failed, then its {} of {} landed",
            site.name,
            op.payload(payload)
        ),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
