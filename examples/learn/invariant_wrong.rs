//! Two wrong answers to exercise 18 that the tests grade: each must fail
//! with a seed and a trace.

use idemsim::learn::invariant::Invariant;
use models::core::Op;
use models::Obs;
use std::collections::BTreeMap;

/// Never fires: the exercise as it starts.
#[derive(Default)]
pub struct Silent;

impl Invariant for Silent {
    fn observe(&mut self, _: &Obs) -> Option<String> {
        None
    }
}

/// Fires on a second attempt: a retry is not a failure, and the fixed
/// design retries too.
#[derive(Default)]
pub struct NoRetry {
    attempts: BTreeMap<Op, u32>,
}

impl Invariant for NoRetry {
    fn observe(&mut self, obs: &Obs) -> Option<String> {
        let Obs::Attempt { op, .. } = obs else {
            return None;
        };
        let n = self.attempts.entry(*op).or_default();
        *n += 1;
        (*n > 1).then(|| format!("{op} was attempted {n} times"))
    }
}
