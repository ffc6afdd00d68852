use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::Ledger;
use crate::core::obs::{Obs, ObsKind};
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "dedup-store-bounded",
    doc: "A dedup store grew over the capacity the scenario gives it (`max_keys`, an inbox's \
          `inbox_max_rows`): it holds every key for its retention, so it needs room for the keys \
          that arrive in one retention (without limit when keys never expire). Judged on every insert.",
};

pub const JUDGES: &[ObsKind] = &[ObsKind::DedupStore];

/// Judges nothing at the end of a run.
pub const AT_END: AtEnd = None;

pub fn observe(s: &Seen<'_>) -> Option<Violation> {
    let Obs::DedupStore { keys, bound } = *s.obs else {
        return None;
    };
    if bound == 0 || keys <= bound {
        return None;
    }
    violation(
        &INVARIANT,
        0,
        format!(
            "the dedup store holds {keys} keys, over its bound of {bound}: it keeps each key for its retention, and more keys arrive within one retention than it has room for (without limit when keys never expire)"
        ),
    )
}

pub fn finish(_: &Ledger, _: TimeUs) -> Option<Violation> {
    None
}
