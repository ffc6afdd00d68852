use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Ending, Obs, ObsKind};
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

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    match *s.obs {
        Obs::Ended {
            op,
            ending: Ending::Failed,
        } => {
            let r = s.rec?;
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
        Obs::Effect { site, op, payload } => {
            let r = s.rec?;
            if r.ending != Some(Ending::Failed) {
                return None;
            }
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
        _ => None,
    }
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
