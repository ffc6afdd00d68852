use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::ObsKind;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "state-converges",
    doc: "After healing, a consumer's copy of an entity differs from the newest committed write \
          (an old event overwrote a newer value). Judged per entity, not per event, at the end \
          of the healing phase.",
};

/// Judged only at the end.
pub const JUDGES: &[ObsKind] = &[];

pub const AT_END: AtEnd = Some(breaks_at_end);

/// An entity the consumers hold at another value than its newest
/// committed write, which is not in a dead-letter queue.
fn breaks_at_end(_: &Ledger, r: &OpRecord) -> bool {
    match (r.current, r.newest) {
        (Some((_, held)), Some((_, newest))) => !r.newest_dead && held != newest,
        _ => false,
    }
}

pub fn observe(_: &Seen<'_>) -> Option<Violation> {
    None
}

pub fn finish(l: &Ledger, _: TimeUs) -> Option<Violation> {
    let r = l.ops.values().find(|r| breaks_at_end(l, r))?;
    let ((_, held), (version, newest)) = (r.current?, r.newest?);
    violation(
        &INVARIANT,
        r.op.key(),
        format!(
            "after healing the consumer holds {} = {held}, but the newest committed write is {newest} (v{version})",
            r.op
        ),
    )
}
