//! The reference solution of exercise 18 (`cargo run --example learn --
//! invariant --solution`), graded by this example's tests: one business
//! operation, one effect. Retries, attempts and duplicates on the way are
//! all allowed; only a second effect where the money lands is a failure.

use idemsim::learn::invariant::Invariant;
use models::core::Op;
use models::Obs;
use std::collections::BTreeMap;

/// The effects seen so far, per operation.
#[derive(Default)]
pub struct OneEffect {
    effects: BTreeMap<Op, u32>,
}

impl Invariant for OneEffect {
    fn observe(&mut self, obs: &Obs) -> Option<String> {
        let Obs::Effect { op, payload, .. } = obs else {
            return None;
        };
        let n = self.effects.entry(*op).or_default();
        *n += 1;
        (*n > 1).then(|| format!("{op} took effect {n} times (this one: {payload})"))
    }
}
