//! The ledger as the simulator's oracle: each observation is looked up in
//! the ledger once, judged by the invariants that read its kind against the
//! records as they stood, then recorded. Here, so that the invariants read
//! the ledger and the ledger knows nothing of them.

use super::invariants::{self, Seen};
use super::ledger::{Ledger, COUNTERS};
use super::obs::{observations, Obs, ObsKind, KINDS};
use sim::{ActorId, Counter, Outcome, TimeUs, Violation};

/// One observation of the kind numbered `KIND`: looked up, judged by the
/// invariants of that kind, recorded. One function per kind, called from
/// where the observation is made (see [`OBSERVE_BY_KIND`]); told that its
/// kind is `KIND`, the lookup and the record, which match on the
/// observation again, fold to that kind's arm, and it saves only the
/// registers that kind's work needs. True when `obs` broke an invariant,
/// whose violation then waits in [`Ledger::broken`]: a `bool` comes back in
/// a register, where an `Option<Violation>` (48 bytes) was written through
/// a pointer the caller passed and read back there, on every observation.
///
/// # Safety
///
/// `obs` must be of the kind numbered `KIND`. [`OBSERVE_BY_KIND`] calls
/// each kind's function with its own kind only: its entry `k` is
/// `observe_kind::<k>`, which a constant assertion checks when it is built.
/// The kind's test on entry was two instructions on every observation
/// (cmp and branch) for a mistake the table cannot make; debug builds
/// still test it.
#[inline(never)]
unsafe fn observe_kind<const KIND: u8>(
    ledger: &mut Ledger,
    now_us: TimeUs,
    actor: ActorId,
    obs: &Obs,
) -> bool {
    if obs.kind() as u8 != KIND {
        if cfg!(debug_assertions) {
            wrong_kind(KIND, obs);
        }
        // SAFETY: the caller guarantees the kind (this function's contract),
        // and debug builds check it just above.
        unsafe { std::hint::unreachable_unchecked() }
    }
    let found = ledger.lookup(obs);
    let v = {
        let ledger = &*ledger;
        invariants::judge::<KIND>(&Seen {
            ledger,
            now_us,
            obs,
            rec: found.rec.map(|i| ledger.op_at(i)),
            key_first: found.key.map(|i| ledger.keys.as_slice()[i]),
            about: found.about.map(|i| ledger.op_at(i)),
        })
    };
    if let Some(v) = v {
        record_broken(ledger, now_us, actor, obs, v);
        return true;
    }
    ledger.record(now_us, actor, obs, found);
    false
}

/// An observation handed to another kind's [`observe_kind`]: the table
/// [`OBSERVE_BY_KIND`] never does it, and debug builds check.
#[cold]
#[inline(never)]
fn wrong_kind(kind: u8, obs: &Obs) -> ! {
    unreachable!("observation {obs:?} handed to the oracle of kind {kind}")
}

/// Records an observation that broke an invariant and keeps the violation
/// for [`sim::Oracle::observe`] to hand back: recorded even so, as the
/// run's numbers (a second effect, a duplicate run) must count what
/// happened. Once per run at most, so out of line. It looks the
/// observation up again, which finds what [`observe_kind`] found (judging
/// changes nothing): handed the first look-up's [`Found`], every kind kept
/// it on the stack across the judging, four stores on every observation.
#[cold]
#[inline(never)]
fn record_broken(ledger: &mut Ledger, now_us: TimeUs, actor: ActorId, obs: &Obs, v: Violation) {
    let found = ledger.lookup(obs);
    ledger.record(now_us, actor, obs, found);
    ledger.broken = Some(v);
}

/// The violation [`observe_kind`] kept, handed back once: out of line, as
/// the run it ends is the one in which it happens.
#[cold]
#[inline(never)]
fn take_broken(ledger: &mut Ledger) -> Option<Violation> {
    ledger.broken.take()
}

/// How the oracle observes one kind: [`observe_kind`] of that kind, whose
/// caller must hand it an observation of that kind.
type ObserveFn = unsafe fn(&mut Ledger, TimeUs, ActorId, &Obs) -> bool;

/// Declares [`OBSERVE_BY_KIND`] from the list of [`observations!`].
macro_rules! observe_by_kind {
    (() $(
        $(#[$doc:meta])*
        $([$flag:ident])?
        $kind:ident $({ $($fields:tt)* })?
    ),+ $(,)?) => {
        /// Each kind's [`observe_kind`], in the order of [`ObsKind`]. A
        /// table, not a match: [`Ledger::observe`] is inlined where an
        /// observation is made, and there its kind, the index, is known, so
        /// the load folds to one direct call; a match of 26 calls inlined
        /// there made the actors' contexts too large to inline, where they
        /// matched on the kind once more.
        static OBSERVE_BY_KIND: [ObserveFn; KINDS] =
            [$(observe_kind::<{ ObsKind::$kind as u8 }>),+];

        // The table's entry `k` is `observe_kind::<k>`: the kinds in the
        // list's order are numbered 0, 1, 2, ... (what `observe_kind`'s
        // safety rests on). Checked when the crate is compiled.
        const _: () = {
            let order = [$(ObsKind::$kind),+];
            let mut k = 0;
            while k < KINDS {
                assert!(order[k] as usize == k, "ObsKind is numbered in the list's order");
                k += 1;
            }
        };
    };
}

observations!(observe_by_kind!());

impl sim::Oracle for Ledger {
    type Obs = Obs;

    fn reset(&mut self) {
        self.clear();
    }

    #[inline(always)]
    fn observe(&mut self, now_us: TimeUs, actor: ActorId, obs: &Obs) -> Option<Violation> {
        // One direct call where the kind is known. A jump table on the
        // kind, in one `observe` for all kinds, made every kind pay the
        // frame of the largest, and valgrind's branch model mispredicted
        // most of its jumps in chain, whose kinds come in no fixed order.
        // SAFETY: the entry of `obs`'s kind is that kind's `observe_kind`
        // (checked where the table is declared).
        if unsafe { OBSERVE_BY_KIND[obs.kind() as usize](self, now_us, actor, obs) } {
            return take_broken(self);
        }
        None
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contention::WRITE;
    use crate::core::obs::tests::one_of_each;
    use crate::core::obs::ALL_KINDS;
    use crate::core::op::Op;
    use crate::messaging::{CONSUMER_WRITE, EVENT};
    use crate::payment::{CLAIM, TRANSFER};
    use sim::Oracle;

    /// Every kind of observation reaches the function of its own kind,
    /// which judges and records it: observed one at a time, and all in a
    /// row, none is handed to another kind's function (which panics).
    /// Fails when the dispatch hands a kind to another's function, or
    /// when `Obs::kind` names the wrong kind.
    #[test]
    fn every_kind_is_observed_by_the_function_of_its_kind() {
        let all = one_of_each();
        let kinds: Vec<ObsKind> = all.iter().map(Obs::kind).collect();
        let mut sorted = kinds.clone();
        sorted.sort_by_key(|k| *k as u8);
        sorted.dedup();
        assert_eq!(sorted, ALL_KINDS, "the test observes every kind once");
        for obs in &all {
            let mut ledger = Ledger::default();
            ledger.reset();
            ledger.observe(1000, 0, obs);
        }
        let mut ledger = Ledger::default();
        ledger.reset();
        for (step, obs) in (0..).zip(&all) {
            ledger.observe(step * 1000, 0, obs);
        }
        let rec = ledger
            .get(Op::new(&WRITE, 1))
            .expect("the operation is recorded");
        // one_of_each has one effect and one reversal of the operation.
        assert_eq!((rec.effects, rec.reversals), (1, 1), "{rec:?}");
    }

    /// A violation found by a kind's function comes back from `observe`,
    /// with the observation that broke it recorded, and is not kept: the
    /// next observation, which breaks nothing, gives `None`. Fails when a
    /// kind's function says nothing broke after it found a violation, or
    /// when `observe` hands back something other than what it kept.
    #[test]
    fn a_violation_comes_back_from_observe_and_is_not_kept() {
        let op = Op::new(&CLAIM, 1);
        let effect = Obs::Effect {
            site: &TRANSFER,
            op,
            payload: 100,
        };
        let mut ledger = Ledger::default();
        ledger.reset();
        let intent = Obs::Intent {
            op,
            payload: 100,
            window_ms: 0,
        };
        assert!(ledger.observe(1000, 0, &intent).is_none());
        assert!(ledger.observe(2000, 0, &effect).is_none());
        let v = ledger
            .observe(3000, 0, &effect)
            .expect("a second effect breaks no-duplicate-effect");
        assert_eq!(v.invariant, "no-duplicate-effect");
        assert_eq!(v.operation, op.key());
        assert!(v.message.contains("#2"), "{}", v.message);
        assert_eq!(ledger.effects(op), 2, "the breaking effect is recorded");
        assert!(ledger.broken.is_none(), "{:?}", ledger.broken);
        let told = Obs::ToldDone { op, payload: 100 };
        assert_eq!(ledger.observe(4000, 0, &told), None);
    }

    /// Operations whose ids share a slot of the ledger's hints (ids 32
    /// apart), observed in turns, each keep their own record, through the
    /// observations' look-up and through `get`: a hint is a guess, checked
    /// before it is trusted. Fails when the hint's check trusts its slot
    /// without comparing the operation there.
    #[test]
    fn operations_sharing_a_hint_slot_keep_their_own_records() {
        let ops: Vec<Op> = (0..4).map(|n| Op::new(&CLAIM, 1 + 32 * n)).collect();
        let mut ledger = Ledger::default();
        ledger.reset();
        for (round, step) in (1..=3).zip((1..).step_by(10)) {
            for (n, &op) in (1..).zip(&ops) {
                let sent = Obs::AttemptSent {
                    op,
                    attempt: 10 * n + round,
                };
                assert_eq!(ledger.observe(step * 1000, 0, &sent), None);
            }
        }
        for (n, &op) in (1..).zip(&ops) {
            let rec = ledger.get(op).expect("each operation is recorded");
            assert_eq!((rec.op, rec.attempts), (op, 10 * n + 3));
        }
        assert!(ledger.get(Op::new(&CLAIM, 1 + 32 * 4)).is_none());
    }

    /// An event's first effect books the claim its commit names, once: the
    /// claim's record counts the announcement and the run is marked
    /// booked; the event's second effect books nothing more (it is a
    /// duplicate of the event), and the first effect of a second event
    /// about the claim is `no-duplicate-effect` on the claim. Fails when
    /// the look-up finds no claim for a first effect (`Found::about`), or
    /// finds one for a later effect.
    #[test]
    fn an_events_first_effect_books_its_claim_once() {
        let claim = Op::new(&CLAIM, 1);
        let events = [Op::new(&EVENT, 1), Op::new(&EVENT, 2)];
        let mut ledger = Ledger::default();
        ledger.reset();
        let intent = Obs::Intent {
            op: claim,
            payload: 1200,
            window_ms: 0,
        };
        assert_eq!(ledger.observe(1000, 0, &intent), None);
        for (version, op) in (1..).zip(events) {
            let committed = Obs::Committed {
                op,
                entity: claim,
                value: 1200,
                version,
            };
            assert_eq!(ledger.observe(2000, 1, &committed), None);
            assert_eq!(ledger.observe(2000, 2, &Obs::Accepted { op }), None);
        }
        let booking = |op| Obs::Effect {
            site: &CONSUMER_WRITE,
            op,
            payload: 1200,
        };
        assert_eq!(ledger.observe(3000, 3, &booking(events[0])), None);
        let rec = ledger.get(claim).expect("the claim is recorded");
        assert_eq!(
            (rec.announced, rec.announced_total, rec.first_announcement),
            (1, 1200, Some(events[0]))
        );
        assert!(ledger.booked, "the first booking marks the run");
        let again = ledger
            .observe(4000, 3, &booking(events[0]))
            .expect("the event took effect twice");
        assert_eq!(
            (again.invariant, again.operation),
            ("no-duplicate-effect", events[0].key())
        );
        assert_eq!(ledger.get(claim).map(|r| r.announced), Some(1));
        let v = ledger
            .observe(5000, 3, &booking(events[1]))
            .expect("a second event books the claim again");
        assert_eq!(
            (v.invariant, v.operation),
            ("no-duplicate-effect", claim.key())
        );
        assert!(v.message.contains("again, after"), "{}", v.message);
        assert_eq!(ledger.get(claim).map(|r| r.announced), Some(2));
    }
}
