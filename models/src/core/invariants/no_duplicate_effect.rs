use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
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

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let (site, op, payload) = match *s.obs {
        Obs::Effect { site, op, payload } => (site, op, payload),
        // An event published before its commit can take effect before the
        // commit says what it is about: the commit is then the moment its
        // effect counts for that operation.
        Obs::Committed { op, entity, .. } => {
            let r = s.rec.filter(|r| !r.committed && r.effects > 0)?;
            return announced_again(s, r.site?, op, Some(entity));
        }
        _ => return None,
    };
    let r = s.rec?;
    if r.effects == 0 {
        return announced_again(s, site, op, r.entity);
    }
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

/// The first effect of event `op`, about `entity`: a duplicate when the
/// entity is a business operation a client asked for and another event about
/// it took effect already (the payment service booked one claim twice, and
/// accounting booked both: each event once, the claim twice).
fn announced_again(
    s: &Seen<'_>,
    site: &Site,
    op: Op,
    entity: Option<Op>,
) -> Option<Violation> {
    let about = entity.filter(|&e| e != op)?;
    let r = s.ledger.get(about).filter(|r| r.intended)?;
    let first = r.first_announcement?;
    let message = format!(
        "{} for {op} books {about} again, after {first}: one {} took effect {} times downstream",
        site.name,
        about.space.noun,
        r.announced + 1
    );
    violation(&INVARIANT, about.key(), message)
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
