use super::{violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-false-success",
    doc: "A client was told its operation is done while nothing has landed in the outside world \
          (a \"handled\" key without its booking). An operation whose intent is a state (a \
          DELETE: the resource is gone) is also done truly when the answer the client was told \
          was produced while that state held, whoever brought it about. Judged the moment the \
          client is told.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::ToldDone];

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::ToldDone { op, .. } = *s.obs else {
        return None;
    };
    if s.rec.is_some_and(|r| r.effects > 0 || r.held_when_answered()) {
        return None;
    }
    let message = match s.rec.map_or(0, |r| r.held) {
        0 => format!("the client was told {op} is done, but nothing took effect"),
        // What it asks held once, but not when this answer was made.
        held => format!(
            "the client was told {op} is done, but nothing took effect, and the state it asks for \
             was last seen holding by attempt {held}, not by the attempt answered"
        ),
    };
    violation(&INVARIANT, op.key(), message)
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
