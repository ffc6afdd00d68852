use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::{Obs, ObsKind, Site};
use crate::core::op::Op;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-duplicate-effect",
    doc: "Two or more effects landed for one business operation (two transfers for one claim, \
          one event handled twice, two events about one paid claim booked downstream). Judged \
          the moment the second effect lands, or, for an event that took effect before its \
          commit said what it is about, the moment of that commit.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Effect, ObsKind::Committed];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

/// Inline where an effect is judged: the two tests an effect passes are a
/// few instructions, and the messages of a violation are built out of line.
#[inline(always)]
pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let (site, op, payload) = match *s.obs {
        Obs::Effect { site, op, payload } => (site, op, payload),
        // An event published before its commit can take effect before the
        // commit says what it is about: the commit is then the moment its
        // effect counts for that operation.
        Obs::Committed { op, entity, .. } => {
            let r = s.rec.filter(|r| !r.committed && r.effects > 0)?;
            return committed_after_effect(s, r.site?, op, entity);
        }
        _ => return None,
    };
    let r = s.rec?;
    if r.effects == 0 {
        // The lookup found the operation this first effect announces.
        let about = s.about.filter(|a| a.intended)?;
        return booked_again(site, op, about);
    }
    effect_again(site, op, r, payload)
}

/// A second effect of `op`, of `payload`, landed at `site`; `r` is its
/// record before it.
#[cold]
#[inline(never)]
fn effect_again(site: &Site, op: Op, r: &OpRecord, payload: u32) -> Option<Violation> {
    let n = r.effects + 1;
    let total = r.effect_total + u64::from(payload);
    let message = match op.space.unit {
        Some(unit) => format!(
            "{} #{n} for {op}: {total} {unit} in total for one operation",
            site.name
        ),
        // The space's noun: "one event", or a user model's "one webhook".
        None => format!(
            "{} #{n} for {op}: one {} took effect {n} times",
            site.name, op.space.noun
        ),
    };
    violation(&INVARIANT, op.key(), message)
}

/// Event `op`, whose effect landed before its commit, turns out to be
/// about `entity`: its effect counts now. Rare (an event published before
/// its commit), so it looks `entity` up itself.
#[cold]
#[inline(never)]
fn committed_after_effect(s: &Seen<'_>, site: &Site, op: Op, entity: Op) -> Option<Violation> {
    if entity == op {
        return None;
    }
    let about = s.ledger.get(entity).filter(|r| r.intended)?;
    booked_again(site, op, about)
}

/// The first effect of event `op`, landed at `site`, announces the
/// business operation of record `about`, which a client asked for: a
/// duplicate when another event about it took effect already (the payment
/// service booked one claim twice, and accounting booked both: each event
/// once, the claim twice).
#[inline(always)]
fn booked_again(site: &Site, op: Op, about: &OpRecord) -> Option<Violation> {
    let first = about.first_announcement?;
    booked_again_message(site, op, about, first)
}

/// [`booked_again`]'s violation.
#[cold]
#[inline(never)]
fn booked_again_message(site: &Site, op: Op, about: &OpRecord, first: Op) -> Option<Violation> {
    let message = format!(
        "{} for {op} books {} again, after {first}: one {} took effect {} times downstream",
        site.name,
        about.op,
        about.op.space.noun,
        about.announced + 1
    );
    violation(&INVARIANT, about.op.key(), message)
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
