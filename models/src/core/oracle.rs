//! The ledger as the simulator's oracle: each observation is looked up in
//! the ledger once, judged by the invariants that read its kind against the
//! records as they stood, then recorded. Here, so that the invariants read
//! the ledger and the ledger knows nothing of them.

use super::invariants::{self, Seen};
use super::ledger::{Found, Ledger, COUNTERS};
use super::obs::{observations, Obs, ObsKind};
use sim::{ActorId, Counter, Outcome, TimeUs, Violation};

/// One observation of the kind numbered `KIND`: looked up, judged by the
/// invariants of that kind, recorded. Stamped out once per kind and inlined
/// whole, so the lookup and the record, which match on the observation
/// again, fold to that kind's arm: one jump per observation, not three.
#[inline(always)]
fn observe_kind<const KIND: u8>(
    ledger: &mut Ledger,
    now_us: TimeUs,
    actor: ActorId,
    obs: &Obs,
) -> Option<Violation> {
    let found = ledger.lookup(obs);
    let v = invariants::judge::<KIND>(&Seen {
        ledger,
        now_us,
        obs,
        rec: found.rec.map(|i| ledger.op_at(i)),
        key_first: found.key.map(|i| ledger.keys.as_slice()[i]),
    });
    if v.is_some() {
        return record_broken(ledger, now_us, actor, obs, found, v);
    }
    ledger.record(now_us, actor, obs, found);
    None
}

/// Records an observation that broke an invariant and hands the violation
/// back: recorded even so, as the run's numbers (a second effect, a
/// duplicate run) must count what happened. Once per run at most, so out
/// of line: kept apart, the usual path writes its `None` straight into the
/// result, where it built the result on the stack and copied it out.
#[cold]
#[inline(never)]
fn record_broken(
    ledger: &mut Ledger,
    now_us: TimeUs,
    actor: ActorId,
    obs: &Obs,
    found: Found,
    v: Option<Violation>,
) -> Option<Violation> {
    ledger.record(now_us, actor, obs, found);
    v
}

/// Matches the observation on its kind, from the list of [`observations!`],
/// and hands it to that kind's [`observe_kind`].
macro_rules! observe_by_kind {
    (($ledger:expr, $now_us:expr, $actor:expr, $obs:expr) $(
        $(#[$doc:meta])*
        $([$flag:ident])?
        $kind:ident $({ $($fields:tt)* })?
    ),+ $(,)?) => {
        match $obs {
            $(Obs::$kind { .. } => {
                observe_kind::<{ ObsKind::$kind as u8 }>($ledger, $now_us, $actor, $obs)
            })+
        }
    };
}

impl sim::Oracle for Ledger {
    type Obs = Obs;

    fn reset(&mut self) {
        self.clear();
    }

    fn observe(&mut self, now_us: TimeUs, actor: ActorId, obs: &Obs) -> Option<Violation> {
        observations!(observe_by_kind!(self, now_us, actor, obs))
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
