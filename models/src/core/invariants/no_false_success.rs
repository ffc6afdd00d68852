use super::{violation, Invariant};
use crate::core::ledger::Ledger;
use crate::core::obs::Obs;
use sim::{ActorId, TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-false-success",
    doc: "A client was told its operation is done while nothing has landed in the outside world \
          (a \"handled\" key without its booking). Judged the moment the client is told.",
};

pub fn observe(l: &Ledger, _: TimeUs, _: ActorId, obs: &Obs) -> Option<Violation> {
    let Obs::ToldDone { op, .. } = *obs else {
        return None;
    };
    if l.effects(op) > 0 {
        return None;
    }
    violation(
        &INVARIANT,
        op.key(),
        format!("the client was told {op} is done, but nothing took effect"),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
