use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-phantom-refund",
    doc: "A phantom refund: a compensation landed for an operation none of whose effects had landed: \
          it takes back what was never given (the refund of a charge that never happened gives \
          the money away). A compensation decided on a timeout, without asking where the effect \
          lands, breaks it whenever the request was lost before it took effect. Judged the \
          moment the reversal lands.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Reversal];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::Reversal { site, op, payload } = *s.obs else {
        return None;
    };
    // A record with an effect, or none at all: only a reversal of nothing
    // breaks this one (a second one is `no-duplicate-refund`'s).
    if s.rec.is_some_and(|r| r.effects > 0) {
        return None;
    }
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "{} of {} for {op}, whose effect never landed: taken back what was never given",
            site.name,
            op.payload(payload)
        ),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
