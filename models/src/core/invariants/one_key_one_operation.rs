use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use crate::core::op::Op;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "one-key-one-operation",
    doc: "One idempotency key reached a service for two different business operations (a \
          timestamp key shared by two claims in one millisecond). Whatever the service then \
          does, one of them is answered with the other's result or refused for someone else's \
          key. Judged when the second operation's request arrives.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Received];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::Received { op, .. } = *s.obs else {
        return None;
    };
    let first = s.key_first?;
    if first == op {
        return None;
    }
    reused(s.obs, first)
}

/// The violation of a key reused for `first`'s: out of line, so that the
/// check above, on every request received, does not copy the key and the
/// operation out for a message it never writes.
#[cold]
#[inline(never)]
fn reused(obs: &Obs, first: Op) -> Option<Violation> {
    let Obs::Received { layer, op, key } = *obs else {
        return None;
    };
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "the {} received key {key} for {op}, but the key already stands for {first}: one key must name one business operation",
            layer.name
        ),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
