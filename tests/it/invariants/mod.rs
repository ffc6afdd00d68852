//! Each invariant, judged on observation sequences written from the domain:
//! the cases where it must fire, and the cases where a correct design must
//! leave it silent. The ledger sees only these observations, as in a run.

mod ledger;

mod books;
mod effects;
mod events;
mod lost_update;
mod refunds;
mod runs;

use models::core::invariants;

/// Each invariant has a test named after it in one of this target's files.
#[test]
fn every_invariant_has_cases_here() {
    let these = [
        include_str!("books.rs"),
        include_str!("effects.rs"),
        include_str!("events.rs"),
        include_str!("lost_update/mod.rs"),
        include_str!("lost_update/races.rs"),
        include_str!("refunds.rs"),
        include_str!("runs.rs"),
    ]
    .concat();
    for i in invariants::ALL {
        let test = format!("fn {}()", i.name.replace('-', "_"));
        assert!(these.contains(&test), "no test {test} for {}", i.name);
        assert!(!i.doc.is_empty());
    }
}
