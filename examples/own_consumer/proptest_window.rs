//! proptest with idemsim: proptest varies a design parameter, idemsim
//! explores the schedules of each design and shrinks a failing one.
//!
//! ```sh
//! cargo run --release --example proptest_window
//! ```
//!
//! The consumer of the `own_consumer` example keeps the ids it handled in its
//! database, in the effect's transaction, but only the last `keep` of them.
//! With as many ids as events it holds; with fewer, a redelivery after the
//! visibility timeout finds its id evicted and writes again. proptest shrinks
//! `keep` to the smallest failing value, idemsim the schedule to the smallest
//! failing run, and the failure message is that run's trace with a repro line.

mod consumer;
mod window;

fn main() {
    window::print_search();
}
