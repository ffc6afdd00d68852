use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::{Obs, ObsKind};
use crate::core::op::Op;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-phantom-event",
    doc: "Consumers act on an event that did not happen: a broker accepted an event whose state \
          change never committed (published before a commit that then failed), judged at the end \
          of the healing phase; or an effect or a set-value write landed for an event no broker \
          ever accepted (a consumer program that writes for an event id nobody published), judged \
          the moment it lands. Only operations with a publish step are judged so: a claim or a request is \
          never published.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Effect, ObsKind::ValueWritten];

pub const AT_END: AtEnd = Some(breaks_at_end);

/// An event a broker accepted whose change never committed.
fn breaks_at_end(_: &Ledger, r: &OpRecord) -> bool {
    r.accepted && !r.committed
}

/// An event reaches a consumer only after a broker stored it, so an effect
/// for one no broker accepted was not caused by a delivery: whatever the
/// consumer did, it did for nothing that was published. A set-value write
/// is such an effect too, one that overwrites.
/// Inline where an effect or a write is judged: the test is two loads,
/// the message out of line.
#[inline(always)]
pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let op = match *s.obs {
        Obs::Effect { op, .. } | Obs::ValueWritten { op, .. } => op,
        _ => return None,
    };
    if !op.space.published || s.rec.is_some_and(|r| r.accepted) {
        return None;
    }
    never_accepted(s.obs, op)
}

/// `obs`, an effect or a write of event `op`, which no broker accepted.
#[cold]
#[inline(never)]
fn never_accepted(obs: &Obs, op: Op) -> Option<Violation> {
    // Named only once it fired: every effect of a run passes here.
    let what = match *obs {
        Obs::ValueWritten { entity, .. } => format!("the set-value write of {entity}"),
        Obs::Effect { site, .. } => site.name.to_string(),
        _ => unreachable!("matched above"),
    };
    violation(
        &INVARIANT,
        op.key(),
        format!("{what} for {op}, which no broker ever accepted: nothing published it"),
    )
}

pub fn finish(l: &Ledger, _: TimeUs) -> Option<Violation> {
    let r = l.ops.values().find(|r| breaks_at_end(l, r))?;
    violation(
        &INVARIANT,
        r.op.key(),
        format!(
            "{} was published, but the state change it announces never committed",
            r.op
        ),
    )
}
