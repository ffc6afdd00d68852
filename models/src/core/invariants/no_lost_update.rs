use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Change, Obs, ObsKind};
use crate::core::op::Op;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "no-lost-update",
    doc: "A client was told its write is done, but another write, computed from an older read \
          of the same resource, replaced it without having seen it (a read-modify-write without \
          If-Match): the update is silently gone. Only an update the replaced state still \
          carried counts: the newest write, and the writes it built on (a PATCH on the value \
          before it, an edit on the value it read), down to a blind PUT. A write that depends \
          on no read (a blind PUT: the last writer wins) does not break this between requests \
          that overlap; a late attempt of a PUT whose client was told done before the replaced \
          write's request began does, as no order that respects real time gives it. Nor does an edit \
          whose result a serial \
          order of the writes gives (each edit applied to the value it read, each blind PUT \
          setting its own): the same value from another route loses nothing. Judged the \
          moment both facts hold.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::ToldDone, ObsKind::NewVersion];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

/// Inline where a "done" or a version is judged: a run that replaced no
/// write, and a write that can replace nothing unseen, pass with a test
/// each; the searches and the messages are out of line.
#[inline(always)]
pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let l = s.ledger;
    match *s.obs {
        // Nothing replaced yet: nothing lost.
        Obs::ToldDone { op, .. } if !l.overwritten.is_empty() => told_done(l, op),
        Obs::NewVersion {
            op,
            entity,
            value,
            change,
            ..
        } => {
            // Nothing to search for (the record skips it too).
            if !l.may_replace_unseen(entity, change) {
                return None;
            }
            new_version(l, (op, entity, value, change))
        }
        _ => None,
    }
}

/// The client of `op` was told it is done: lost if its write was replaced.
#[cold]
#[inline(never)]
fn told_done(l: &Ledger, op: Op) -> Option<Violation> {
    let by = *l.overwritten.get(&op)?;
    let how = if l.late_over(by, op) {
        "a late attempt, though it was told done before this request began"
    } else {
        "one computed from an older read"
    };
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "the client was told {op} is done, but {by} had already replaced its write with {how}: the update is lost"
        ),
    )
}

/// `op` wrote `entity` to `value` by `change`, which may replace a
/// version its read never saw.
#[cold]
#[inline(never)]
fn new_version(l: &Ledger, (op, entity, value, change): (Op, Op, u32, Change)) -> Option<Violation> {
    let read = change.read();
    let (version, by) = l
        .unseen_writes(op, entity, value, change)
        .find(|(_, w)| l.get(*w).is_some_and(|r| r.told_done.is_some()))?;
    let how = if read == 0 {
        format!("with a late attempt, though it was told done before {by} began,")
    } else {
        format!("from a read of v{read},")
    };
    violation(
        &INVARIANT,
        by.key(),
        format!(
            "{op} wrote {entity} {how} over v{version} by {by}, whose client was told it is done: that update is lost"
        ),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
