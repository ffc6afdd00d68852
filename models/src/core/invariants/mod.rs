//! The invariants: one file each, with its name, what it means, which kinds
//! of observation it judges (`JUDGES`), how it judges one (`observe`, against
//! the ledger as it stood before), which records can break it at the end
//! of a run (`AT_END`) and how it judges the end (`finish`). The list
//! below is the only registry: [`ALL`], the dispatch and the docs are all
//! derived from it.

use super::ledger::{Ledger, OpRecord};
use super::obs::{Obs, ObsKind};
use super::op::Op;
use sim::{TimeUs, Violation};

/// An invariant as people and scenario files know it.
#[derive(Debug, PartialEq, Eq)]
pub struct Invariant {
    /// The stable name scenario files and JSON use.
    pub name: &'static str,
    /// One paragraph: which cell of the truth table it judges, and when.
    pub doc: &'static str,
}

/// One observation as the invariants judge it: with the ledger as it stood
/// before, and what the ledger looked up about it once for all of them.
pub(crate) struct Seen<'a> {
    /// The ledger before it records `obs`.
    pub ledger: &'a Ledger,
    /// When `obs` was reported.
    pub now_us: TimeUs,
    /// The observation.
    pub obs: &'a Obs,
    /// The record of the operation `obs` is about, when its kind reads one
    /// and the ledger has it.
    pub rec: Option<&'a OpRecord>,
    /// For a request that carries a key already known: the operation the
    /// key was first used for.
    pub key_first: Option<Op>,
    /// For an operation's first effect, when it is an event about another
    /// operation the ledger has: that operation's record, which the effect
    /// announces ([`Found::about`](super::ledger::Found)).
    pub about: Option<&'a OpRecord>,
}

/// What an invariant judged at the end of a run asks of each record of the
/// ledger: true for a record its `finish` could find breaking it (it may be
/// true for more), and so for at least one record of every run whose end
/// breaks it. `None` for an invariant whose `finish` judges nothing.
pub(crate) type AtEnd = Option<fn(&Ledger, &OpRecord) -> bool>;

/// Whether `kinds` holds the kind numbered `kind`; a `const fn`, so the
/// dispatch decides it at compile time.
const fn judges(kinds: &[ObsKind], kind: u8) -> bool {
    let mut i = 0;
    while i < kinds.len() {
        if kinds[i] as u8 == kind {
            return true;
        }
        i += 1;
    }
    false
}

macro_rules! invariants {
    ($($module:ident),+ $(,)?) => {
        $(mod $module;)+

        /// Every invariant, in the order they judge an observation.
        pub static ALL: &[&Invariant] = &[$(&$module::INVARIANT),+];

        /// Every invariant's [`AtEnd`], in the order of [`ALL`].
        #[cfg(test)]
        static ALL_AT_END: &[AtEnd] = &[$($module::AT_END),+];

        /// The first invariant that judges observations of the kind numbered
        /// `KIND` and that `seen` breaks, in the order of [`ALL`], judged
        /// before the ledger records it: the others are not asked. Debug builds ask them too, and insist they find
        /// nothing, so an invariant that misses a kind in its `JUDGES` fails
        /// the tests instead of going quiet.
        #[inline(always)]
        pub(crate) fn judge<const KIND: u8>(seen: &Seen<'_>) -> Option<Violation> {
            $(
                if const { judges($module::JUDGES, KIND) } {
                    if let Some(v) = $module::observe(seen) {
                        return Some(v);
                    }
                } else {
                    debug_assert!(
                        $module::observe(seen).is_none(),
                        concat!(stringify!($module), " judges a kind missing from its JUDGES"),
                    );
                }
            )+
            None
        }

        /// The first invariant the end of the run breaks. One pass over
        /// the records first asks every invariant's [`AtEnd`] at once: in
        /// a run that holds, none is true and that is all (nine passes,
        /// one per invariant judged at the end, were 380 instructions per
        /// run of `chain-outbox-inbox`). Otherwise each invariant judges
        /// the end in the order of [`ALL`], as before. Debug builds judge
        /// it so every time, and insist that nothing breaks where no
        /// `AtEnd` said it might.
        pub(crate) fn finish_all(ledger: &Ledger, now_us: TimeUs) -> Option<Violation> {
            let suspect = ledger
                .ops
                .values()
                .any(|r| false $(|| $module::AT_END.is_some_and(|breaks| breaks(ledger, r)))+);
            if !suspect {
                debug_assert!(
                    judge_end(ledger, now_us).is_none(),
                    "an invariant's finish found a violation its AT_END does not name"
                );
                return None;
            }
            judge_end(ledger, now_us)
        }

        /// Each invariant's `finish`, in the order of [`ALL`]: the first
        /// violation.
        fn judge_end(ledger: &Ledger, now_us: TimeUs) -> Option<Violation> {
            $(
                if let Some(v) = $module::finish(ledger, now_us) {
                    return Some(v);
                }
            )+
            None
        }
    };
}

invariants! {
    no_duplicate_effect,
    no_mismatched_payload,
    no_false_success,
    no_false_failure,
    one_key_one_operation,
    operation_ends,
    at_most_one_executor,
    dedup_store_bounded,
    no_lost_effect,
    no_untold_effect,
    no_phantom_event,
    state_converges,
    no_lost_update,
    load_recovers,
    books_agree,
    no_phantom_refund,
    no_duplicate_refund,
    net_effect_as_told,
}

/// The invariant named `name`.
pub fn by_name(name: &str) -> Option<&'static Invariant> {
    ALL.iter().copied().find(|i| i.name == name)
}

/// The names of every invariant, in registry order.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|i| i.name).collect()
}

// Cold: a run breaks an invariant once at most, so the branches that lead
// here are laid out of the way of the judgements that find nothing.
#[cold]
#[inline(never)]
fn violation(inv: &Invariant, operation: u64, message: String) -> Option<Violation> {
    Some(Violation {
        invariant: inv.name,
        operation,
        message,
    })
}

/// Durations in violation messages: "65 s", "3 min", "2 d".
fn human(us: TimeUs) -> String {
    let ms = us / 1000;
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 120_000 {
        format!("{} s", ms / 1000)
    } else if ms < 7_200_000 {
        format!("{} min", ms / 60_000)
    } else if ms < 172_800_000 {
        format!("{} h", ms / 3_600_000)
    } else {
        format!("{} d", ms / 86_400_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::obs::Ending;
    use crate::messaging::{CONSUMER_WRITE, ENTITY, EVENT};
    use crate::payment::{CLAIM, TRANSFER};
    use sim::Oracle;

    /// One of a few observations about two claims, two events and an
    /// entity, picked by `n`; `None` for an ending the claim already had
    /// (an operation ends once).
    fn pick(n: u64, ended: &mut [bool; 2]) -> Option<Obs> {
        let c = (n / 16 % 2) as usize;
        let claim = Op::new(&CLAIM, c as u32 + 1);
        let event = Op::new(&EVENT, (n / 32 % 2) as u32 + 1);
        let entity = [Op::new(&ENTITY, 1), claim][(n / 64 % 2) as usize];
        let amount = [100, 60][(n / 128 % 2) as usize];
        let version = (n / 256 % 2) as u32 + 1;
        Some(match n % 16 {
            0 | 1 => Obs::Intent {
                op: claim,
                payload: 100,
                window_ms: 0,
            },
            2 => Obs::Effect {
                site: &TRANSFER,
                op: claim,
                payload: amount,
            },
            3 => Obs::ToldDone {
                op: claim,
                payload: 100,
            },
            4..=7 if !ended[c] => {
                ended[c] = true;
                let endings = [
                    Ending::Done,
                    Ending::Abandoned,
                    Ending::Cancelled,
                    Ending::Failed,
                ];
                Obs::Ended {
                    op: claim,
                    ending: endings[(n % 4) as usize],
                }
            }
            4..=7 => return None,
            8 | 9 => Obs::Committed {
                op: event,
                entity,
                value: amount,
                version,
            },
            10 => Obs::Accepted { op: event },
            11 => Obs::DeadLettered { op: event },
            12 => Obs::Effect {
                site: &CONSUMER_WRITE,
                op: event,
                payload: amount,
            },
            13 => Obs::ValueWritten {
                op: event,
                entity,
                value: amount,
                version,
            },
            _ => Obs::Reversal {
                site: &TRANSFER,
                op: claim,
                payload: amount,
            },
        })
    }

    /// Two runs the random ones below seldom reach: an entity the
    /// consumers hold at an older value, and a payment nobody booked in a
    /// run that books another.
    fn fixed_runs() -> [Vec<Obs>; 2] {
        let (c1, c2) = (Op::new(&CLAIM, 1), Op::new(&CLAIM, 2));
        let (e1, entity) = (Op::new(&EVENT, 1), Op::new(&ENTITY, 1));
        let paid = |c: Op| {
            [
                Obs::Intent {
                    op: c,
                    payload: 100,
                    window_ms: 0,
                },
                Obs::Effect {
                    site: &TRANSFER,
                    op: c,
                    payload: 100,
                },
                Obs::ToldDone {
                    op: c,
                    payload: 100,
                },
                Obs::Ended {
                    op: c,
                    ending: Ending::Done,
                },
            ]
        };
        let event = |about: Op| Obs::Committed {
            op: e1,
            entity: about,
            value: 100,
            version: 1,
        };
        let stale = vec![
            event(entity),
            Obs::Accepted { op: e1 },
            Obs::ValueWritten {
                op: e1,
                entity,
                value: 60,
                version: 1,
            },
        ];
        let mut unbooked = paid(c1).to_vec();
        unbooked.extend([
            event(c1),
            Obs::Accepted { op: e1 },
            Obs::Effect {
                site: &CONSUMER_WRITE,
                op: e1,
                payload: 100,
            },
        ]);
        unbooked.extend(paid(c2));
        [stale, unbooked]
    }

    /// Random observations from `pick`, 0 to 15 of them.
    fn random_run(state: &mut u64) -> Vec<Obs> {
        let mut next = || {
            *state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            *state >> 40
        };
        let mut ended = [false; 2];
        let len = next() >> 20;
        (0..len).filter_map(|_| pick(next(), &mut ended)).collect()
    }

    /// The invariant the end of `run` breaks, if it gets there, after
    /// checking that the pass names a record for it and that `finish_all`
    /// names the same violation as every `finish` in order.
    fn judged_at_end(run: &[Obs]) -> Option<&'static str> {
        let mut ledger = Ledger::default();
        ledger.reset();
        for (step, obs) in (0..).zip(run) {
            if ledger.observe(step * 1000, 0, obs).is_some() {
                return None;
            }
        }
        let all = judge_end(&ledger, 10_000).map(|v| v.invariant);
        // The pass itself, not `finish_all`: its debug assertion would
        // fail first and say less.
        let suspect = ledger.ops.values().any(|r| {
            ALL_AT_END
                .iter()
                .any(|at| at.is_some_and(|f| f(&ledger, r)))
        });
        if let Some(name) = all {
            assert!(suspect, "{name} breaks, but no AT_END names a record");
        }
        assert_eq!(finish_all(&ledger, 10_000).map(|v| v.invariant), all);
        all
    }

    /// The one pass over the records finds every violation at the end that
    /// the invariants' own `finish`, in order, find: in two fixed runs and
    /// 4,000 random ones, each of the invariants judged at the end fires in
    /// some, and `finish_all` always names the violation `judge_end` names.
    /// Fails when an `AT_END` misses a record its `finish` finds (the
    /// ledger's `booked` flag never set, one predicate left `None`).
    #[test]
    fn the_pass_at_the_end_misses_no_violation() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let runs = fixed_runs()
            .into_iter()
            .chain((0..4000).map(|_| random_run(&mut state)));
        let fired: std::collections::BTreeSet<_> =
            runs.filter_map(|run| judged_at_end(&run)).collect();
        let at_end = ALL_AT_END.iter().zip(ALL).filter(|(at, _)| at.is_some());
        for (_, inv) in at_end {
            assert!(
                fired.contains(inv.name),
                "{} never fired: {fired:?}",
                inv.name
            );
        }
    }
}
