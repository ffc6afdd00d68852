//! The exercise where the learner writes the invariant (exercise 18): their
//! judge of a run's observations must fire on every run of a failing design
//! where idemsim's own judge finds an operation that took effect twice, and
//! stay silent on every run of the design that holds.
//!
//! ```
//! use idemsim::learn::invariant::{grade, Invariant};
//! use models::Obs;
//!
//! /// Fires on everything: wrong, and the grader says where.
//! #[derive(Default)]
//! struct Always;
//! impl Invariant for Always {
//!     fn observe(&mut self, obs: &Obs) -> Option<String> {
//!         matches!(obs, Obs::Effect { .. }).then(|| "an effect".into())
//!     }
//! }
//! let wrong = grade::<Always>().unwrap_err();
//! assert!(wrong.contains("seed"), "{wrong}");
//! ```

use super::find;
use crate::catalog::{self, UsageError};
use crate::render::{formats, run::trace_of_seed};
use models::{Node, Obs, Scenario, System};
use sim::{ActorId, Model, Oracle, Outcome, Sim, TimeUs, Violation, World};
use std::marker::PhantomData;

/// The exercise's number in [`super::EXERCISES`].
pub const EXERCISE: u32 = 18;

/// The failing design the invariant must catch: a retry without a key.
pub const FAILING: &str = "payment-retry-without-key";

/// The invariant of idemsim's that finds the failures it must catch.
pub const CATCHES: &str = "no-duplicate-effect";

/// The name a learner's invariant has in traces and messages.
pub const NAME: &str = "your-invariant";

/// A learner's invariant: a judge of one run's observations, made anew
/// (`Default`) for every run.
pub trait Invariant: Default {
    /// Judges one observation the moment an actor reports it: `Some`
    /// sentence fires, and ends the run.
    fn observe(&mut self, obs: &Obs) -> Option<String>;
    /// Judges the end of the run (after the healing phase).
    fn finish(&mut self) -> Option<String> {
        None
    }
}

/// The learner's invariant as the simulator's oracle.
pub struct Theirs<I>(I);

impl<I: Invariant> Oracle for Theirs<I> {
    type Obs = Obs;

    fn reset(&mut self) {
        self.0 = I::default();
    }

    fn observe(&mut self, _: TimeUs, _: ActorId, obs: &Obs) -> Option<Violation> {
        self.0.observe(obs).map(|m| Violation::new(NAME, 0, m))
    }

    fn finish(&mut self, _: TimeUs) -> Option<Violation> {
        self.0.finish().map(|m| Violation::new(NAME, 0, m))
    }
}

/// A scenario's actors and world, judged by the learner's invariant alone.
struct Judged<'a, I> {
    system: &'a System,
    invariant: PhantomData<fn() -> I>,
}

impl<I: Invariant> Model for Judged<'_, I> {
    type Node = Node;
    type Oracle = Theirs<I>;

    fn world(&self) -> &World {
        self.system.world()
    }

    fn nodes(&self) -> &[Node] {
        self.system.nodes()
    }

    fn new_oracle(&self) -> Theirs<I> {
        Theirs(I::default())
    }
}

/// Grades invariant `I`: `Ok` with one line when it fires on exactly the
/// runs of [`FAILING`] where [`CATCHES`] fires (silent on its runs that
/// hold) and on no run of the fixed design; otherwise the first seed where
/// it is wrong, what it said or should have said, and that seed's trace.
pub fn grade<I: Invariant>() -> Result<String, String> {
    let ex = find(EXERCISE).expect("the invariant exercise");
    let fixed: Vec<String> = super::find(1)
        .expect("exercise 1")
        .answer
        .iter()
        .map(|a| (*a).to_string())
        .collect();
    let load = |sets: &[String]| -> Result<Scenario, String> {
        let o = catalog::parse_overrides(sets).map_err(|UsageError(m)| m)?;
        catalog::load(FAILING, &o).map_err(|UsageError(m)| m)
    };
    let failing = load(&[])?;
    let holding = load(&fixed)?;
    let mut caught = 0;
    for (s, must_hold) in [(&failing, false), (&holding, true)] {
        let ours = &s.system;
        let theirs = Judged::<I> {
            system: ours,
            invariant: PhantomData,
        };
        let (mut our_sim, mut their_sim) = (Sim::new(ours), Sim::new(&theirs));
        for seed in 0..ex.seeds {
            let our = sim::run_guarded(&mut our_sim, ours, seed).outcome;
            let their = sim::run_guarded(&mut their_sim, &theirs, seed).outcome;
            let should =
                !must_hold && matches!(&our, Outcome::Violation(v) if v.invariant == CATCHES);
            let fired = match &their {
                Outcome::Violation(v) => Some(v.message.clone()),
                Outcome::Panicked(m) => {
                    return Err(format!(
                        "exercise {EXERCISE}: your invariant panicked on seed {seed} of {}: {m}",
                        s.name
                    ))
                }
                _ => None,
            };
            caught += u64::from(should && fired.is_some());
            if let Some(wrong) = mismatch(s, seed, should, &our, fired) {
                return Err(format!("{wrong}\nhint: read {}\n", ex.section));
            }
        }
    }
    Ok(format!(
        "exercise {EXERCISE}: right: your invariant caught all {caught} failing runs of {FAILING} and stayed silent on the rest, and on every run with {}",
        fixed.join(" ")
    ))
}

/// What is wrong with the learner's verdict on one seed, with its trace.
fn mismatch(
    s: &Scenario,
    seed: u64,
    should: bool,
    our: &Outcome,
    fired: Option<String>,
) -> Option<String> {
    let what = match (should, fired) {
        (true, None) => format!(
            "stays silent on seed {seed} of {}, where idemsim finds a {}",
            s.file,
            crate::render::outcome_sentence(our)
        ),
        (false, Some(m)) => format!(
            "fires on seed {seed} of {}, where no operation took effect twice: \"{m}\"",
            s.file
        ),
        _ => return None,
    };
    let (trace, _) = trace_of_seed(&s.system, &s.name, seed);
    Some(format!(
        "exercise {EXERCISE}: wrong: your invariant {what}\nthe run of seed {seed}, as idemsim's own judge sees it:\n{}",
        formats::text(&trace)
    ))
}
