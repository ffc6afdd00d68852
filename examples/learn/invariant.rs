//! Exercise 18 of idemsim's learning path: write the invariant. Edit this
//! file, then let idemsim judge it:
//!
//! ```sh
//! cargo run --example learn -- invariant
//! ```
//!
//! Your invariant sees every observation of a run as an actor reports it
//! (`models::Obs`: an attempt, an effect where it landed, what a client was
//! told, how an operation ended, ...), made anew for each run. It must fire
//! on every run of `payment-retry-without-key` in which a payment takes
//! effect twice, and stay silent on its other runs and on every run of the
//! same design with an idempotency key claimed by the service (exercise 1's
//! answer). On the first seed where it is wrong, the grader prints what it
//! said, or should have said, and the run's trace.
//!
//! As it stands it never fires. The reference solution is
//! `invariant_solution.rs`: read it after you tried.

use idemsim::learn::invariant::Invariant;
use models::Obs;

/// Your invariant's memory of one run.
#[derive(Default)]
pub struct Mine {}

impl Invariant for Mine {
    fn observe(&mut self, obs: &Obs) -> Option<String> {
        // TODO: fire (return Some(sentence)) when one operation takes effect twice.
        let _ = obs;
        None
    }
}
