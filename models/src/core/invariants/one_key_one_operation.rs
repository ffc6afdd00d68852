use super::{violation, Invariant};
use crate::core::ledger::Ledger;
use crate::core::obs::Obs;
use sim::{ActorId, TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "one-key-one-operation",
    doc: "One idempotency key reached a service for two different business operations (a \
          timestamp key shared by two claims in one millisecond). Whatever the service then \
          does, one of them is answered with the other's result or refused for someone else's \
          key. Judged when the second operation's request arrives.",
};

pub fn observe(l: &Ledger, _: TimeUs, _: ActorId, obs: &Obs) -> Option<Violation> {
    let Obs::Received { layer, op, key } = *obs else {
        return None;
    };
    if !key.is_some() {
        return None;
    }
    let first = l.keys[crate::core::table::index_of(&l.keys, &key)?];
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
