use super::{AtEnd, violation, Invariant, Seen};
use crate::core::ledger::{Ledger, OpRecord};
use crate::core::obs::ObsKind;
use sim::{TimeUs, Violation};

pub static INVARIANT: Invariant = Invariant {
    name: "books-agree",
    doc: "Where bookings downstream announce what a client asked for (the chain's accounting \
          books each paid claim from a \"payment booked\" event), the books agree with the \
          effect itself once the run is over, retries, recovery and reconciliation done: for \
          every such operation the amounts its bookings add up to equal what landed for it (the \
          bank's transfers), so a booking without a transfer and a transfer without a booking \
          both break it. Judged at the end of the run, only in a run that books any operation \
          downstream.",
};

/// Judged at the end only: a booking and its transfer may be apart for a
/// while (the booking commits before the bank call) in a correct design.
pub const JUDGES: &[ObsKind] = &[];

pub const AT_END: AtEnd = Some(breaks_at_end);

/// An operation a client asked for whose bookings add up to another
/// amount than its effects, in a run that booked some operation
/// downstream (in any other, every payment would be one).
fn breaks_at_end(l: &Ledger, r: &OpRecord) -> bool {
    l.booked && r.intended && r.announced_total != r.effect_total
}

pub fn observe(_: &Seen<'_>) -> Option<Violation> {
    None
}

pub fn finish(l: &Ledger, _: TimeUs) -> Option<Violation> {
    // A run where no operation a client asked for was booked downstream
    // keeps no books (the payment model, the messaging model's entities).
    if !l.ops.values().any(|r| r.intended && r.announced > 0) {
        return None;
    }
    let r = l.ops.values().find(|r| breaks_at_end(l, r))?;
    violation(&INVARIANT, r.op.key(), disagreement(r))
}

fn disagreement(r: &OpRecord) -> String {
    let unit = r.op.space.unit.map_or(String::new(), |u| format!(" {u}"));
    let (booked, paid) = (r.announced_total, r.effect_total);
    // Named where it lands (`its transfers add up to`), or said to be missing.
    let landed = match r.site {
        Some(site) => format!("its {}s add up to {paid}{unit}", site.name),
        None => "nothing landed for it".to_string(),
    };
    let why = if paid == 0 {
        "booked before the effect was certain, and never made true nor taken back"
    } else if booked == 0 {
        "an effect nobody booked"
    } else {
        "the books and the effect differ"
    };
    format!(
        "at the end of the run the books hold {booked}{unit} for {} ({} booking{}), and {landed}: {why}",
        r.op,
        r.announced,
        if r.announced == 1 { "" } else { "s" }
    )
}
