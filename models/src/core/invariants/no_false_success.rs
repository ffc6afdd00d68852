use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::ObsKind;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-false-success",
    doc: "A client was told its operation is done, and by the end of the run nothing has landed \
          in the outside world (a \"handled\" key without its booking). An operation whose \
          intent is a state (a DELETE: the resource is gone) is also done truly when the answer \
          the client concluded from was produced while that state held, whoever brought it \
          about. Judged at the end of the healing phase: a \"done\" said before the effect \
          landed is true once it lands, and false only if it never does.",
};

/// Judged only at the end: what the client was finally told against what
/// finally landed, as the operation's truth table asks.
pub const JUDGES: &[ObsKind] = &[];

pub const AT_END: AtEnd = Some(breaks_at_end);

/// An operation told done with no effect, whose state did not hold when the answer was made.
fn breaks_at_end(_: &Ledger, r: &OpRecord) -> bool {
    r.told_done.is_some() && r.effects == 0 && !r.held_when_answered()
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
    let message = match r.held {
        0 => format!("the client was told {op} is done, but nothing took effect by the end"),
        // What it asks held once, but not when this answer was made.
        held => format!(
            "the client was told {op} is done, but nothing took effect by the end, and the state \
             it asks for was last seen holding by attempt {held}, not by the attempt answered"
        ),
    };
    violation(&INVARIANT, op.key(), message)
}
