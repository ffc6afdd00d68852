use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::{Ending, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-untold-effect",
    doc: "An operation's effect landed, but its client gave it up without a dead letter, so no \
          person is told: the client's records say the claim is open while the world says it is \
          paid, and the next payment by hand is the duplicate. For an operation whose intent is \
          a state (a DELETE: the resource is gone), the state seen holding as an attempt was \
          answered counts as landed. Judged at the end of the healing phase, like \
          no-lost-effect, its twin for a silent give-up with nothing landed.",
};

/// Judged only at the end. A silent give-up is a violation whatever lands,
/// but which one depends on what finally landed: an attempt still on its
/// way when the client gave up can land after it, turning the
/// `no-lost-effect` cell into this one. At the end each silent give-up sits
/// in exactly one cell (a second effect or another payload were judged as
/// they landed), so the two invariants never both claim an operation.
pub const JUDGES: &[ObsKind] = &[];

pub const AT_END: AtEnd = Some(breaks_at_end);

/// An operation given up silently with an effect, or its state held.
fn breaks_at_end(_: &Ledger, r: &OpRecord) -> bool {
    r.ending == Some(Ending::Abandoned) && (r.effects > 0 || r.held > 0)
}

pub fn observe(_: &Seen<'_>) -> Option<Violation> {
    None
}

pub fn finish(l: &Ledger, _: TimeUs) -> Option<Violation> {
    let r = l
        .ops
        .values()
        .find(|r| breaks_at_end(l, r))?;
    let op = r.op;
    let message = match r.first_effect {
        Some((_, payload)) => format!(
            "{op} was given up without a dead-letter record, but its {} of {} landed: its client's records say it is open, and no person is told",
            r.site.map_or("effect", |s| s.name),
            op.payload(payload)
        ),
        None => format!(
            "{op} was given up without a dead-letter record, but what it asks already held when attempt {} was answered: its client's records say it is open, and no person is told",
            r.held
        ),
    };
    violation(&INVARIANT, op.key(), message)
}
