use super::{violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::ObsKind;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-phantom-event",
    doc: "A broker accepted an event whose state change never committed (published before a \
          commit that then failed): consumers act on something that did not happen. Judged at \
          the end of the healing phase.",
};

/// Judged only at the end.
pub const JUDGES: &[ObsKind] = &[];

pub fn observe(_: &Seen<'_>) -> Option<Violation> {
    None
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
