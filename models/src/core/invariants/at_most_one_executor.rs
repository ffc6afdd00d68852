use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use crate::core::op::Key;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "at-most-one-executor",
    doc: "Two executions of the request bound to one key ran at the same time (check-then-act \
          without an \"in progress\" state, a lease shorter than the call it guards). Judged \
          when the second one starts.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::ExecStart];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::ExecStart { key } = *s.obs else {
        return None;
    };
    if !s.ledger.executors.iter().any(|(k, _)| *k == key) {
        return None;
    }
    let operation = match key {
        Key::Op { op, .. } => op.key(),
        Key::Time { .. } | Key::None => 0,
    };
    violation(
        &INVARIANT,
        operation,
        format!("a second execution of key {key} started while the first still runs"),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
