//! The invariants: one file each, with its name, what it means, and how it
//! judges an observation (`observe`, against the ledger as it stood before)
//! and the end of a run (`finish`). The list below is the only registry:
//! [`ALL`], the dispatch and the docs are all derived from it.

use super::ledger::Ledger;
use super::obs::Obs;
use sim::{ActorId, TimeUs, Violation};

/// An invariant as people and scenario files know it.
#[derive(Debug, PartialEq, Eq)]
pub struct Invariant {
    /// The stable name scenario files and JSON use.
    pub name: &'static str,
    /// One paragraph: which cell of the truth table it judges, and when.
    pub doc: &'static str,
}

macro_rules! invariants {
    ($($module:ident),+ $(,)?) => {
        $(mod $module;)+

        /// Every invariant, in the order they judge an observation.
        pub static ALL: &[&Invariant] = &[$(&$module::INVARIANT),+];

        /// The first invariant `obs` breaks, judged before the ledger records it.
        #[inline]
        pub fn observe_all(
            ledger: &Ledger,
            now_us: TimeUs,
            actor: ActorId,
            obs: &Obs,
        ) -> Option<Violation> {
            $(
                if let Some(v) = $module::observe(ledger, now_us, actor, obs) {
                    return Some(v);
                }
            )+
            None
        }

        /// The first invariant the end of the run breaks.
        pub fn finish_all(ledger: &Ledger, now_us: TimeUs) -> Option<Violation> {
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
    no_phantom_event,
    state_converges,
    no_lost_update,
    load_recovers,
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
