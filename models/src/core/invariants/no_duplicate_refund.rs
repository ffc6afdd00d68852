use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-duplicate-refund",
    doc: "A compensation (a refund) landed for an operation whose effects the reversals before \
          it had already taken back in full: one refund counted twice, so more went back than \
          ever landed. A refund is an operation like any other: retried, or duplicated by the \
          network, without an idempotency key of its own, it lands twice. Judged the moment the \
          extra reversal lands.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Reversal];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::Reversal { site, op, payload } = *s.obs else {
        return None;
    };
    let r = s.rec.filter(|r| r.effects > 0)?;
    let landed = r.net_total() + i128::from(r.reversal_total);
    let back = i128::from(r.reversal_total) + i128::from(payload);
    if back <= landed {
        return None;
    }
    let unit = op.space.unit.map_or(String::new(), |u| format!(" {u}"));
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "{} #{} for {op}: {back}{unit} taken back of {landed}{unit} that landed",
            site.name,
            r.reversals + 1
        ),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
