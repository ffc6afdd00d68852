use super::{violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-phantom-event",
    doc: "Consumers act on an event that did not happen: a broker accepted an event whose state \
          change never committed (published before a commit that then failed), judged at the end \
          of the healing phase; or an effect landed for an event no broker ever accepted (a \
          consumer program that writes for an event id nobody published), judged the moment it \
          lands. Only operations with a publish step are judged so: a claim or a request is \
          never published.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Effect];

/// An event reaches a consumer only after a broker stored it, so an effect
/// for one no broker accepted was not caused by a delivery: whatever the
/// consumer did, it did for nothing that was published.
pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::Effect { site, op, .. } = *s.obs else {
        return None;
    };
    if !op.space.published || s.rec.is_some_and(|r| r.accepted) {
        return None;
    }
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "{} for {op}, which no broker ever accepted: nothing published it",
            site.name
        ),
    )
}

pub fn finish(l: &Ledger, _: TimeUs) -> Option<Violation> {
    let r = l.ops.values().find(|r| r.accepted && !r.committed)?;
    violation(
        &INVARIANT,
        r.op.key(),
        format!(
            "{} was published, but the state change it announces never committed",
            r.op
        ),
    )
}
