//! What each actor holds after each step, for the report's state panel.
//!
//! [`StateRecorder`] is a [`sim::Tracer`] that asks for snapshots. It keeps
//! the trace entries like a [`sim::Recorder`] and, per actor, the volatile
//! state and the durable storage as the rows of the panel's tables, with
//! units (`state_rows.rs`, which reads the model's own types through
//! `serde`: the registry's `NodeState` and `NodeStorage`). A snapshot that
//! did not change is not kept, and one that did is kept as one line hunk
//! against the previous one (most steps change a counter or a row), so a long
//! run stays small; the report's script rebuilds any step from the hunks.

use super::super::Entry;
use models::{Msg, NodeState, NodeStorage, NodeTimer, Obs};
use sim::{ActorId, Held as Snap, TraceEntry, Tracer};

/// How one part (state or storage) of one actor changed in one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delta {
    /// No change.
    Same,
    /// The actor is down: its volatile state is gone.
    Down,
    /// Lines `at..at + remove` of the previous text become `insert`.
    Hunk {
        /// First line replaced.
        at: usize,
        /// Lines removed.
        remove: usize,
        /// Lines put in their place.
        insert: Vec<String>,
    },
}

/// A step after which an actor's state or storage differs from before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The step.
    pub step: u64,
    /// The actor.
    pub actor: ActorId,
    /// How its volatile state changed.
    pub state: Delta,
    /// How its durable storage changed.
    pub storage: Delta,
}

#[derive(Default)]
struct Held {
    /// `None` before the first snapshot and while the actor is down.
    state: Option<Vec<String>>,
    storage: Vec<String>,
}

#[derive(Default)]
/// A tracer that keeps the entries and each actor's state and storage after every step, as the changes from the step before.
pub struct StateRecorder {
    /// Every trace entry.
    pub entries: Vec<Entry>,
    /// The changes, in step order.
    pub changes: Vec<Change>,
    /// Each actor whose state or storage could not be shown, with why (its
    /// panel shows the reason instead): empty for every built-in actor,
    /// which the report tests check.
    pub unshown: Vec<(ActorId, String)>,
    held: Vec<Held>,
}

impl StateRecorder {
    /// The rows of what an actor holds, read as the registry's type `T`;
    /// a value that cannot be shown is one line saying why, noted in
    /// [`StateRecorder::unshown`].
    fn rows_of<T: serde::Serialize + 'static>(
        &mut self,
        actor: ActorId,
        held: &dyn Snap,
    ) -> Vec<String> {
        let Some(value) = held.as_any().downcast_ref::<T>() else {
            let why = format!("not a {}", std::any::type_name::<T>());
            self.unshown.push((actor, why.clone()));
            return vec![format!("p0\t{why}")];
        };
        super::state_rows::rows(value).unwrap_or_else(|e| {
            self.unshown.push((actor, e.to_string()));
            vec![format!("p0\tcannot be shown: {e}")]
        })
    }
}

impl Tracer<Msg, Obs, NodeTimer> for StateRecorder {
    const ENABLED: bool = true;
    const SNAPSHOTS: bool = true;

    fn record(&mut self, entry: TraceEntry<Msg, Obs, NodeTimer>) {
        self.entries.push(entry);
    }

    fn snapshot(
        &mut self,
        step: u64,
        actor: ActorId,
        state: Option<&dyn Snap>,
        storage: &dyn Snap,
    ) {
        let a = actor as usize;
        if self.held.len() <= a {
            self.held.resize_with(a + 1, Held::default);
        }
        let state = state.map(|s| self.rows_of::<NodeState>(actor, s));
        let storage = self.rows_of::<NodeStorage>(actor, storage);
        let held = &mut self.held[a];
        let state_delta = match (&held.state, &state) {
            (_, None) => {
                if held.state.is_none() {
                    Delta::Same
                } else {
                    Delta::Down
                }
            }
            (before, Some(now)) => hunk(before.as_deref().unwrap_or(&[]), now),
        };
        let storage_delta = hunk(&held.storage, &storage);
        held.state = state;
        held.storage = storage;
        if state_delta != Delta::Same || storage_delta != Delta::Same {
            self.changes.push(Change {
                step,
                actor,
                state: state_delta,
                storage: storage_delta,
            });
        }
    }
}

/// The one hunk that turns `before` into `after`: their common first and
/// last lines stay, the lines between are replaced.
pub(crate) fn hunk(before: &[String], after: &[String]) -> Delta {
    if before == after {
        return Delta::Same;
    }
    let prefix = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let max_suffix = before.len().min(after.len()) - prefix;
    let suffix = before
        .iter()
        .rev()
        .zip(after.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    Delta::Hunk {
        at: prefix,
        remove: before.len() - prefix - suffix,
        insert: after[prefix..after.len() - suffix].to_vec(),
    }
}

/// Applies `d` to `text` (what the report's script does).
pub fn apply(text: &mut Option<Vec<String>>, d: &Delta) {
    match d {
        Delta::Same => {}
        Delta::Down => *text = None,
        Delta::Hunk { at, remove, insert } => {
            let t = text.get_or_insert_with(Vec::new);
            t.splice(*at..*at + *remove, insert.iter().cloned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(String::from).collect()
    }

    #[test]
    fn a_hunk_replaces_only_the_lines_that_changed() {
        let a = lines("x {\n  n: 1,\n  m: 2,\n}");
        let b = lines("x {\n  n: 5,\n  m: 2,\n}");
        assert_eq!(
            hunk(&a, &b),
            Delta::Hunk {
                at: 1,
                remove: 1,
                insert: vec!["  n: 5,".into()]
            }
        );
        assert_eq!(hunk(&a, &a), Delta::Same);
        for (x, y) in [(&a, &b), (&b, &a)] {
            let mut t = Some(x.clone());
            apply(&mut t, &hunk(x, y));
            assert_eq!(t.as_ref(), Some(y));
        }
        // Repeated lines: the prefix and the suffix must not overlap.
        let c = lines("a\na");
        let d = lines("a\na\na");
        let mut t = Some(c.clone());
        apply(&mut t, &hunk(&c, &d));
        assert_eq!(t, Some(d));
    }
}
