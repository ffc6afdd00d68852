use super::{violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Ending, Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-false-failure",
    doc: "A client's final knowledge says its operation failed (a dead letter marked \"failed, \
          nothing was executed\") while its effect landed: an operator acting on it would pay \
          again. A dead letter whose outcome is unknown is honest and does not break this.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Ended, ObsKind::Effect];

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    match *s.obs {
        Obs::Ended {
            op,
            ending: Ending::Failed,
        } => {
            let r = s.rec?;
            let (_, payload) = r.first_effect?;
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
