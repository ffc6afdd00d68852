//! The invariants: one file each, with its name, what it means, which kinds
//! of observation it judges (`JUDGES`), how it judges one (`observe`, against
//! the ledger as it stood before) and the end of a run (`finish`). The list
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
}

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

        /// The first invariant the end of the run breaks.
        pub(crate) fn finish_all(ledger: &Ledger, now_us: TimeUs) -> Option<Violation> {
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
