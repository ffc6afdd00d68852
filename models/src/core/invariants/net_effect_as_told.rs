use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::{Ending, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "net-effect-as-told",
    doc: "Where a compensation is in play (an operation told \"cancelled\", or one with an effect \
          taken back), what is left of its effects once the reversals are taken off, the net \
          effect, is what its client was finally told: nothing for \"cancelled\" (a charge that \
          landed after the compensation looked, and stays), the amount asked for \"done\" (a \
          refund of a payment the client was told went through). Judged at the end of the run, \
          when every late effect and refund has landed; an operation without a reversal and \
          not cancelled is the other invariants' business.",
};

/// Judged at the end only: a charge and its refund are apart for a while
/// in a correct design.
pub const JUDGES: &[ObsKind] = &[];

pub const AT_END: AtEnd = Some(|_, r| disagrees(r).is_some());

pub fn observe(_: &Seen<'_>) -> Option<Violation> {
    None
}

pub fn finish(l: &Ledger, _: TimeUs) -> Option<Violation> {
    let (r, told, owed) = l.ops.values().find_map(disagrees)?;
    let unit = r.op.space.unit.map_or(String::new(), |u| format!(" {u}"));
    violation(
        &INVARIANT,
        r.op.key(),
        format!(
            "{} was told {told}, but {}{unit} of its effects is left at the end ({} landed, {} taken back), where {owed}{unit} would be true",
            r.op,
            r.net_total(),
            r.effects,
            r.reversals
        ),
    )
}

/// What `r`'s client was told, and the net effect that makes it true, if
/// the net effect is another.
fn disagrees(r: &OpRecord) -> Option<(&OpRecord, &'static str, i128)> {
    let (told, owed) = match r.ending {
        Some(Ending::Cancelled) => ("cancelled", 0),
        Some(Ending::Done) if r.reversals > 0 => ("done", i128::from(r.payload)),
        _ => return None,
    };
    (r.net_total() != owed).then_some((r, told, owed))
}
