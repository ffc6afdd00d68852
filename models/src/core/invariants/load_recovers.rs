use super::{AtEnd, human, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Layer, Obs, ObsKind};
use crate::core::op::Op;
use sim::{TimeUs, Violation, US_PER_MS};

pub static INVARIANT: Invariant = Invariant {
    name: "load-recovers",
    doc: "Once the faults stop, a layer that promises a recovery time (`service.recover_ms`, `bank.recover_ms`) is \
          back to normal within it: from then on it sheds no request because it is full, and its \
          workers take no request whose client has already stopped waiting for it (work for \
          nobody). A layer still saturated after its trigger is gone is held there by the load \
          itself, usually by retries: a metastable failure. Judged on every shed and every \
          request a worker takes, against the end of the fault phase.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::Shed, ObsKind::Work];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

/// Most layers promise nothing: that check stays inline, the judgement out
/// of line.
#[inline]
pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    match s.obs {
        Obs::Shed { recover_ms, .. } | Obs::Work { recover_ms, .. } if *recover_ms > 0 => judge(s),
        _ => None,
    }
}

#[inline(never)]
fn judge(s: &Seen<'_>) -> Option<Violation> {
    let (l, now_us) = (s.ledger, s.now_us);
    let (layer, op, recover_ms, what) = match *s.obs {
        Obs::Shed {
            layer,
            op,
            recover_ms,
        } => (layer, op, recover_ms, "shed a request for".to_string()),
        Obs::Work {
            layer,
            op,
            attempt,
            recover_ms,
        } if s.rec.is_some_and(|r| r.stopped_waiting(attempt)) => (
            layer,
            op,
            recover_ms,
            format!("worked on attempt {attempt} of"),
        ),
        _ => return None,
    };
    if recover_ms == 0 {
        return None;
    }
    let by_us = l
        .healing_us
        .saturating_add(u64::from(recover_ms) * US_PER_MS);
    if now_us <= by_us {
        return None;
    }
    overloaded(layer, op, &what, now_us - l.healing_us, recover_ms)
}

fn overloaded(
    layer: &Layer,
    op: Op,
    what: &str,
    after_us: TimeUs,
    recover_ms: u32,
) -> Option<Violation> {
    let whom = if what.starts_with("worked") {
        ", whose client had stopped waiting for it"
    } else {
        ": it was full"
    };
    violation(
        &INVARIANT,
        op.key(),
        format!(
            "the {} {what} {op}{whom}, {} after the fault phase ended (run.fault_phase_ms); it promised to recover within {}: the load itself holds it there (retries, or requests arriving faster than its workers finish them)",
            layer.name,
            human(after_us),
            human(u64::from(recover_ms) * US_PER_MS)
        ),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
