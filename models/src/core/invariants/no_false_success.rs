use super::{violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-false-success",
    doc: "A client was told its operation is done while nothing has landed in the outside world \
          (a \"handled\" key without its booking). Judged the moment the client is told.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::ToldDone];

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::ToldDone { op, .. } = *s.obs else {
        return None;
    };
    if s.rec.is_some_and(|r| r.effects > 0) {
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
