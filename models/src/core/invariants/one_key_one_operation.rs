use super::{violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "one-key-one-operation",
    doc: "One idempotency key reached a service for two different business operations (a \
          timestamp key shared by two claims in one millisecond). Whatever the service then \
          does, one of them is answered with the other's result or refused for someone else's \
          key. Judged when the second operation's request arrives.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Received];

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::Received { layer, op, key } = *s.obs else {
        return None;
    };
    let first = s.key_first?;
    if first == op {
        return None;
    }
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
