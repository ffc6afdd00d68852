//! Grading code a learner wrote in Rust: their actor in a model of their
//! own, swept with idemsim's shrinker (`examples/learn/`, `cargo run
//! --example learn -- actor`).

use super::{find, Fault, GIVE_UP_SECTION};
use crate::render::run::LedgerModel;
use crate::testing::Check;
use models::core::ledger::counter::ABANDONED;

/// Grades a learner's model against exercise `id`'s seeds: `Ok` with one
/// line when every seed holds, the exercise's faults fired and nothing was
/// given up silently; otherwise what is wrong, with the lowest failing seed
/// and its shrunk trace, and where the book explains it.
///
/// # Panics
/// If `id` is not an exercise.
pub fn grade_model<M: LedgerModel + Sync>(
    id: u32,
    name: &str,
    model: &M,
) -> Result<String, String> {
    let ex = find(id).expect("an exercise's number");
    let summary = Check::new(name, model)
        .seeds(0..ex.seeds)
        .shrink_max_runs(2_000)
        .run()
        .map_err(|failure| {
            format!(
                "exercise {id}: wrong: {name} breaks an invariant\n{failure}\nhint: read {}\n",
                ex.section
            )
        })?;
    let faults = summary.tally.faults;
    if let Some(f) = ex.faults.iter().find(|f| f.count(&faults) == 0) {
        return Err(format!(
            "exercise {id}: wrong: no fault of kind `{}` fired, so nothing was tested\nhint: read {}\n",
            Fault::as_str(*f),
            super::FAULTS_SECTION
        ));
    }
    let abandoned = summary.tally.counter(ABANDONED).map_or(0, |c| c[0]);
    if abandoned > 0 {
        return Err(format!(
            "exercise {id}: wrong: {abandoned} operations were given up silently\nhint: read {GIVE_UP_SECTION}\n"
        ));
    }
    Ok(format!(
        "exercise {id}: right: {name} holds on seeds 0..{} with {} lost, {} duplicated and {} crashes",
        ex.seeds, faults.lost, faults.duplicated, faults.crashed
    ))
}
