//! The ledger as the simulator's oracle: each observation is looked up in
//! the ledger once, judged by the invariants that read its kind against the
//! records as they stood, then recorded. Here, so that the invariants read
//! the ledger and the ledger knows nothing of them.

use super::invariants::{self, Seen};
use super::ledger::{Ledger, COUNTERS};
use super::obs::Obs;
use sim::{ActorId, Counter, Outcome, TimeUs, Violation};

impl sim::Oracle for Ledger {
    type Obs = Obs;

    fn reset(&mut self) {
        self.clear();
    }

    fn observe(&mut self, now_us: TimeUs, actor: ActorId, obs: &Obs) -> Option<Violation> {
        let found = self.lookup(obs);
        let v = invariants::observe_all(&Seen {
            ledger: self,
            now_us,
            obs,
            rec: found.rec.map(|i| &self.ops[i]),
            key_first: found.key.map(|i| self.keys[i]),
        });
        // Recorded even when it broke an invariant: the run's numbers (a
        // second effect, a duplicate run) must count what happened.
        self.record(now_us, actor, obs, found);
        v
    }

    fn finish(&mut self, now_us: TimeUs) -> Option<Violation> {
        self.finished = true;
        invariants::finish_all(self, now_us)
    }

    fn counters(&self) -> &'static [Counter] {
        &COUNTERS
    }

    fn features(&self, out: &mut dyn FnMut(u64)) {
        Ledger::features(self, out)
    }

    fn count(&self, outcome: &Outcome, into: &mut [u64]) {
        self.fill(outcome, into)
    }
}
