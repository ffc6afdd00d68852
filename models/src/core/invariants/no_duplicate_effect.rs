use super::{violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-duplicate-effect",
    doc: "Two or more effects landed for one business operation (two transfers for one claim, \
          one event handled twice). Judged the moment the second effect lands.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Effect];

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::Effect { site, op, payload } = *s.obs else {
        return None;
    };
    let r = s.rec?;
    if r.effects == 0 {
        return None;
    }
    let n = r.effects + 1;
    let total = r.effect_total + u64::from(payload);
    let message = match op.space.unit {
        Some(unit) => format!(
            "{} #{n} for {op}: {total} {unit} in total for one operation",
            site.name
        ),
        // The space's noun: "one event", or a user model's "one webhook".
        None => format!(
            "{} #{n} for {op}: one {} took effect {n} times",
            site.name, op.space.noun
        ),
    };
    violation(&INVARIANT, op.key(), message)
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
