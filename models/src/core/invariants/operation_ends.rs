use super::{AtEnd, human, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation, US_PER_MS};

pub static INVARIANT: Invariant = Invariant {
    name: "operation-ends",
    doc: "Every operation a client starts ends (done, failed, or a dead letter) by the end of \
          the run; no attempt follows a final error (a rejected input never becomes valid); and \
          no attempt is sent after the client's retry window closed.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::AttemptSent];

pub const AT_END: AtEnd = Some(breaks_at_end);

/// An operation a client started that never ended.
fn breaks_at_end(_: &Ledger, r: &OpRecord) -> bool {
    r.intended && r.ending.is_none()
}

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::AttemptSent { .. } = *s.obs else {
        return None;
    };
    let r = s.rec?;
    let elapsed_us = s.now_us.saturating_sub(r.started_us);
    if r.rejected || (r.window_ms > 0 && elapsed_us > r.window_ms.saturating_mul(US_PER_MS)) {
        return broken(s.obs, r, elapsed_us);
    }
    None
}

/// The violation of an attempt sent after a final error or outside the
/// retry window: out of line, so that the check above, on every attempt
/// sent, does not keep the operation and the attempt on the stack for a
/// message it never writes.
#[cold]
#[inline(never)]
fn broken(obs: &Obs, r: &OpRecord, elapsed_us: TimeUs) -> Option<Violation> {
    let Obs::AttemptSent { op, attempt } = *obs else {
        return None;
    };
    let message = if r.rejected {
        format!(
            "{op} was retried (attempt {attempt}) after a final error: a rejected input never becomes valid, the operation had to end"
        )
    } else {
        format!(
            "attempt {attempt} of {op} was sent {} after the operation started, outside its retry window of {}",
            human(elapsed_us),
            human(r.window_ms * US_PER_MS)
        )
    };
    violation(&INVARIANT, op.key(), message)
}

pub fn finish(l: &Ledger, now_us: TimeUs) -> Option<Violation> {
    let r = l
        .ops
        .values()
        .find(|r| breaks_at_end(l, r))?;
    violation(
        &INVARIANT,
        r.op.key(),
        format!(
            "{} never ended: neither done, failed nor a dead letter after {}",
            r.op,
            human(now_us.saturating_sub(r.started_us))
        ),
    )
}
