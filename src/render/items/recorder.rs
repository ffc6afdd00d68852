//! Raw engine entries to items, as a run records them.

use super::types::{Item, Name, What};
use super::what::{what_of, Counted};
use crate::render::EntryOf;
use models::core::wire::WorldMessage;
use models::{Msg, NodeTimer, Obs};
use sim::{TraceKind, World};
use std::collections::{BTreeMap, VecDeque};

/// Items a trace keeps from the start of a run, and as many from its end.
/// Between the two it keeps only effects (up to `MAX_MIDDLE_EFFECTS`), and
/// one [`What::Elided`] item for each stretch it left out. An item takes
/// about 200 bytes with its message and text: a run may be allowed a billion
/// events (`max_steps`), and a replay of it must not need a billion items.
pub const TRACE_END_ITEMS: usize = 100_000;
/// Effects kept between a long trace's two ends: every effect of a run that
/// stops at its first violation, whatever happened before it.
pub(crate) const MAX_MIDDLE_EFFECTS: usize = 10_000;

/// A stretch of entries not kept, still open.
struct Gap {
    first_entry: u64,
    entries: u64,
    first_step: u64,
    last_step: u64,
    time_us: u64,
}

/// Where each entry of a run went: its item's index in the finished list.
/// Item `i` is entry `i` unless the run was longer than the trace keeps.
pub struct EntryMap {
    /// Entries kept from the start (all of them when nothing was left out).
    head: u64,
    /// The entry of each item after the head and before the tail: kept
    /// effects, and the first entry of each gap for its `Elided` item.
    middle: Vec<u64>,
    /// The first entry of the tail, and its item.
    tail_entry: u64,
    tail_item: usize,
}

impl EntryMap {
    /// The item showing entry `entry`: the entry's own, or the `Elided` item
    /// of the gap it fell into.
    pub fn item(&self, entry: u64) -> usize {
        if entry < self.head {
            return entry as usize;
        }
        if entry >= self.tail_entry {
            return self.tail_item + (entry - self.tail_entry) as usize;
        }
        let after = self.middle.partition_point(|&e| e <= entry);
        self.head as usize + after.saturating_sub(1)
    }
}

/// The items of a run, the operations' names by key, and where each entry went.
pub struct Kept<M, T> {
    /// The items, every step closed.
    pub items: Vec<Item<M, T>>,
    /// Each operation's name by its key.
    pub ops: BTreeMap<u64, String>,
    /// Entry index to item index.
    pub map: EntryMap,
}

/// What the entries of one engine step did; a delivery's note depends on
/// what else its step did (an effect landed, which messages it sent), and
/// the model of the message writes it.
struct StepFacts<M> {
    /// An effect was observed in this step.
    effect: bool,
    /// The messages this step sent (or tried to send).
    sent: Vec<M>,
}

impl<M: WorldMessage> StepFacts<M> {
    fn new() -> Self {
        StepFacts {
            effect: false,
            sent: Vec::new(),
        }
    }

    fn see<T>(&mut self, e: &EntryOf<M, T>) {
        match &e.kind {
            TraceKind::Observe {
                // A reversal (a refund) lands like an effect: its message
                // needs no note saying why nothing happened.
                obs: Obs::Effect { .. } | Obs::ValueWritten { .. } | Obs::Reversal { .. },
                ..
            } => self.effect = true,
            TraceKind::Send { msg, .. } | TraceKind::Drop { msg, .. } => {
                self.sent.push(msg.clone())
            }
            _ => {}
        }
    }

    /// The note of a delivery of `msg` in a step that did these things.
    fn note(&self, msg: &M) -> Option<&'static str> {
        msg.delivery_note(self.effect, &self.sent)
    }

    fn clear(&mut self) {
        self.effect = false;
        self.sent.clear();
    }
}

/// Turns trace entries into items as a run records them, so a long replay
/// never holds its raw entries and its items at once, and time stays linear
/// (a step's deliveries get their notes when the step ends). Memory is
/// bounded: past [`TRACE_END_ITEMS`] items, the recorder keeps a window of
/// the last ones and, of those that leave the window, only effects.
pub(crate) struct ItemRecorder<M = Msg, T = NodeTimer> {
    names: Vec<Name>,
    /// The items so far: the head, then (once the run is long) kept effects
    /// and `Elided` items.
    items: Vec<Item<M, T>>,
    /// Keep every item (for callers that hold the raw entries anyway).
    keep_all: bool,
    /// Items kept at each end: [`TRACE_END_ITEMS`] but in tests.
    window: usize,
    /// Entries pushed so far.
    entries: u64,
    /// The head is full: new items go to `tail`.
    spilled: bool,
    tail: VecDeque<Item<M, T>>,
    tail_entry: u64,
    middle: Vec<u64>,
    middle_effects: usize,
    gap: Option<Gap>,
    effects: Vec<Counted>,
    /// Each operation's name, the first time an observation names it.
    ops: BTreeMap<u64, String>,
    step: u64,
    facts: StepFacts<M>,
    /// Deliveries of the current step (their entries), waiting for their notes.
    pending: Vec<u64>,
}

impl<M: WorldMessage, T: Clone> ItemRecorder<M, T> {
    /// A recorder for a run of `world` (its actors' names), keeping at most
    /// about `2 × TRACE_END_ITEMS` items.
    pub fn new(world: &World) -> Self {
        ItemRecorder {
            names: world
                .actor_names
                .iter()
                .map(|n| Name::from(n.as_str()))
                .collect(),
            items: Vec::new(),
            keep_all: false,
            window: TRACE_END_ITEMS,
            entries: 0,
            spilled: false,
            tail: VecDeque::new(),
            tail_entry: 0,
            middle: Vec::new(),
            middle_effects: 0,
            gap: None,
            effects: Vec::new(),
            ops: BTreeMap::new(),
            step: 0,
            facts: StepFacts::new(),
            pending: Vec::new(),
        }
    }

    /// A recorder that keeps one item per entry, for callers that hold the
    /// raw entries already (and bound them themselves): item `i` is entry `i`.
    pub fn keeping_all(world: &World) -> Self {
        let mut r = ItemRecorder::new(world);
        r.keep_all = true;
        r
    }

    fn close_step(&mut self) {
        let ItemRecorder {
            pending,
            facts,
            items,
            tail,
            spilled,
            tail_entry,
            window,
            ..
        } = self;
        for entry in pending.drain(..) {
            // A delivery that left the tail's window before its step ended
            // is not kept: it needs no note.
            let item = if !*spilled || entry < *window as u64 {
                items.get_mut(entry as usize)
            } else {
                entry
                    .checked_sub(*tail_entry)
                    .and_then(|at| tail.get_mut(at as usize))
            };
            if let Some(Item {
                what: What::Deliver { msg, note, .. },
                ..
            }) = item
            {
                *note = facts.note(msg);
            }
        }
        facts.clear();
    }

    /// Keeps `item`, the item of entry number `self.entries - 1`.
    fn keep(&mut self, item: Item<M, T>) {
        if self.keep_all || !self.spilled && self.items.len() < self.window {
            self.items.push(item);
            return;
        }
        if !self.spilled {
            self.spilled = true;
            self.tail_entry = self.entries - 1;
        }
        self.tail.push_back(item);
        if self.tail.len() > self.window {
            let old = self.tail.pop_front().expect("the tail is not empty");
            let entry = self.tail_entry;
            self.tail_entry += 1;
            self.leave(old, entry);
        }
    }

    /// `item` (of entry `entry`) leaves the tail's window: an effect stays
    /// while there is room, anything else joins the open gap.
    fn leave(&mut self, item: Item<M, T>, entry: u64) {
        if matches!(item.what, What::Effect { .. }) && self.middle_effects < MAX_MIDDLE_EFFECTS {
            self.close_gap();
            self.middle_effects += 1;
            self.middle.push(entry);
            self.items.push(item);
            return;
        }
        match &mut self.gap {
            Some(g) => {
                g.entries += 1;
                g.last_step = item.step;
            }
            None => {
                self.gap = Some(Gap {
                    first_entry: entry,
                    entries: 1,
                    first_step: item.step,
                    last_step: item.step,
                    time_us: item.time_us,
                })
            }
        }
    }

    fn close_gap(&mut self) {
        let Some(g) = self.gap.take() else { return };
        self.middle.push(g.first_entry);
        self.items.push(Item {
            step: g.first_step,
            time_us: g.time_us,
            actor: Name::from(""),
            actor_id: 0,
            what: What::Elided {
                entries: g.entries,
                first_step: g.first_step,
                last_step: g.last_step,
            },
        });
    }

    /// The items, every step closed, the operations' names by key, and
    /// where each entry went.
    pub fn finish(mut self) -> Kept<M, T> {
        self.close_step();
        self.close_gap();
        let head = if self.spilled {
            self.window as u64
        } else {
            self.items.len() as u64
        };
        let tail_item = self.items.len();
        let tail_entry = if self.spilled {
            self.tail_entry
        } else {
            self.entries
        };
        self.items.extend(self.tail);
        Kept {
            items: self.items,
            ops: self.ops,
            map: EntryMap {
                head,
                middle: self.middle,
                tail_entry,
                tail_item,
            },
        }
    }

    pub(super) fn push(&mut self, e: EntryOf<M, T>) {
        if e.step != self.step {
            self.close_step();
            self.step = e.step;
        }
        // Step 0 (the mix and the starts) is not a handler's step: no notes.
        if e.step > 0 {
            self.facts.see(&e);
        }
        match &e.kind {
            TraceKind::Deliver { .. } if e.step > 0 => self.pending.push(self.entries),
            TraceKind::Observe { obs, .. } => {
                if let Some(op) = obs.op() {
                    self.ops.entry(op.key()).or_insert_with(|| op.to_string());
                }
            }
            _ => {}
        }
        let (actor, what) = what_of(&e.kind, &self.names, &mut self.effects);
        let name = |a: u32| self.names[a as usize].clone();
        let item = Item {
            step: e.step,
            time_us: e.time_us,
            actor: name(actor),
            actor_id: actor,
            what,
        };
        self.entries += 1;
        self.keep(item);
    }
}

impl<M: WorldMessage, T: Clone> sim::Tracer<M, Obs, T> for ItemRecorder<M, T> {
    const ENABLED: bool = true;
    fn record(&mut self, entry: EntryOf<M, T>) {
        self.push(entry);
    }
}

/// Resolves raw entries; item `i` is raw entry `i`, so indices carry over.
pub fn items<M: WorldMessage, T: Clone>(
    world: &World,
    entries: &[EntryOf<M, T>],
) -> Vec<Item<M, T>> {
    let mut r = ItemRecorder::keeping_all(world);
    r.items.reserve(entries.len());
    for e in entries {
        r.push(e.clone());
    }
    r.finish().items
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::Entry;
    use models::core::Op;
    use models::payment::{CLAIM, TRANSFER};
    use sim::TraceEntry;

    fn entry(step: u64, kind: TraceKind<Msg, Obs, NodeTimer>) -> Entry {
        TraceEntry {
            time_us: step * 1_000,
            step,
            kind,
        }
    }

    fn crash(step: u64) -> Entry {
        entry(step, TraceKind::Crash { actor: 1 })
    }

    fn effect(step: u64) -> Entry {
        let op = Op::new(&CLAIM, 4711);
        let obs = Obs::Effect {
            site: &TRANSFER,
            op,
            payload: 1200,
        };
        entry(step, TraceKind::Observe { actor: 2, obs })
    }

    fn world() -> World {
        crate::catalog::load("payment-stable-key", &[])
            .expect("a catalog scenario loads")
            .system
            .world
    }

    /// Entries 0..20, one per step, with effects at entries 9 and 12, kept
    /// through a window of 3 items at each end.
    fn long_run() -> Kept<Msg, NodeTimer> {
        let mut r = ItemRecorder::new(&world());
        r.window = 3;
        for step in 0..20 {
            r.push(if step == 9 || step == 12 {
                effect(step)
            } else {
                crash(step)
            });
        }
        r.finish()
    }

    #[test]
    fn a_long_run_keeps_both_ends_its_effects_and_marks_each_gap() {
        let kept = long_run();
        let shape: Vec<String> = kept
            .items
            .iter()
            .map(|it| match &it.what {
                What::Elided {
                    entries,
                    first_step,
                    last_step,
                } => format!("gap {entries} #{first_step}-#{last_step}"),
                w => format!("{} #{}", w.kind(), it.step),
            })
            .collect();
        assert_eq!(
            shape,
            [
                "crash #0",
                "crash #1",
                "crash #2",
                "gap 6 #3-#8",
                "effect #9",
                "gap 2 #10-#11",
                "effect #12",
                "gap 4 #13-#16",
                "crash #17",
                "crash #18",
                "crash #19",
            ]
        );
        // The second effect is still numbered as the operation's second.
        assert!(matches!(kept.items[6].what, What::Effect { n: 2, .. }));
    }

    #[test]
    fn every_entry_maps_to_its_item_or_to_the_gap_that_took_it() {
        let kept = long_run();
        let items: Vec<usize> = (0..20).map(|e| kept.map.item(e)).collect();
        assert_eq!(
            items,
            [0, 1, 2, 3, 3, 3, 3, 3, 3, 4, 5, 5, 6, 7, 7, 7, 7, 8, 9, 10]
        );
    }

    #[test]
    fn a_run_within_the_window_keeps_every_entry_as_its_own_item() {
        let mut r = ItemRecorder::new(&world());
        r.window = 3;
        for step in 0..6 {
            r.push(crash(step));
        }
        let kept = r.finish();
        assert_eq!(kept.items.len(), 6);
        assert!(kept.items.iter().all(|it| it.what.kind() == "crash"));
        assert_eq!(
            (0..6).map(|e| kept.map.item(e)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn keeping_all_never_leaves_anything_out() {
        let mut r = ItemRecorder::keeping_all(&world());
        r.window = 3;
        for step in 0..20 {
            r.push(crash(step));
        }
        assert_eq!(r.finish().items.len(), 20);
    }

    #[test]
    fn middle_effects_past_their_bound_join_the_gap() {
        let mut r = ItemRecorder::new(&world());
        r.window = 1;
        r.middle_effects = MAX_MIDDLE_EFFECTS - 1;
        for step in 0..6 {
            r.push(effect(step));
        }
        let kinds: Vec<&str> = r.finish().items.iter().map(|it| it.what.kind()).collect();
        // Entry 0 is the head, 5 the tail; of 1..=4 one effect fits.
        assert_eq!(kinds, ["effect", "effect", "elided", "effect"]);
    }
}
