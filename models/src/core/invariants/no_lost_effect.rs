use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::{Ending, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-lost-effect",
    doc: "An owed effect never happened and nobody will know: a client gave up silently and \
          nothing landed, or a committed state change's event was neither handled nor put in a \
          dead-letter queue (acked before its commit, discarded by the broker). Judged at the \
          end of the healing phase.",
};

/// Judged only at the end.
pub const JUDGES: &[ObsKind] = &[];

pub const AT_END: AtEnd = Some(breaks_at_end);

/// An operation or owed event whose effect is lost.
fn breaks_at_end(_: &Ledger, r: &OpRecord) -> bool {
    (r.intended || r.committed) && r.lost()
}

pub fn observe(_: &Seen<'_>) -> Option<Violation> {
    None
}

pub fn finish(l: &Ledger, _: TimeUs) -> Option<Violation> {
    let r = l
        .ops
        .values()
        .find(|r| breaks_at_end(l, r))?;
    let message = if r.committed {
        let entity = r.entity.map_or_else(String::new, |e| format!(" to {e}"));
        format!(
            "the change{entity} committed, but no consumer handled {} and it is in no dead-letter queue",
            r.op
        )
    } else if r.ending == Some(Ending::Abandoned) {
        format!(
            "{} was given up without a dead-letter record and nothing took effect",
            r.op
        )
    } else {
        format!("{} was reported done but nothing took effect by the end", r.op)
    };
    violation(&INVARIANT, r.op.key(), message)
}
