//! The effect ledger: the oracle that judges every run.
//!
//! It keeps one record per business operation: what the business wanted, what
//! landed in the outside world (effects, observed where they land, never
//! where a service believes it caused them), and what the client was finally
//! told. The invariants (`core/invariants/`) judge each observation
//! against the records as they stood before it, and the records once more at
//! the end of the healing phase (`core/oracle.rs` puts the two together).
//! This file holds the tables and how an observation finds its record; what
//! each kind of observation changes is recorded by concern: `operations`
//! (a client's operation), `events` (an event owed by a commit), `keys`
//! (idempotency keys and executions), `versions` (resource versions) and
//! `load` (each layer's load).

mod attribution;
mod events;
mod keys;
mod load;
mod metrics;
mod op_record;
mod operations;
mod versions;

pub use attribution::{Attributed, Attribution};
pub use metrics::counter;
pub(crate) use metrics::COUNTERS;
pub use op_record::OpRecord;
pub use versions::Version;

use super::obs::{Obs, MAX_LAYERS};
use super::op::{Key, Op};
use super::table::{self, Table};
use load::{LayerLoad, Rate};
use sim::{ActorId, TimeUs, Violation};

/// What the ledger looks up about an observation before judging it: found
/// once, then read by every invariant that judges it and by `record`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Found {
    /// Where the record of the operation it is about sits in `ops`.
    pub(crate) rec: Option<usize>,
    /// For a request that carries a key: where the key sits in `keys`.
    pub(crate) key: Option<usize>,
    /// For an operation's first effect, when the record says it is an
    /// event about another operation: where that operation's record sits,
    /// the one the effect announces (books). `no-duplicate-effect` judges
    /// it and `record` counts the announcement, both through this one
    /// look-up.
    pub(crate) about: Option<usize>,
}

/// The oracle of every model.
#[derive(Debug, Default)]
pub struct Ledger {
    /// One record per operation and per entity.
    pub ops: Table<Op, OpRecord>,
    /// The first operation each key was used for.
    pub keys: Table<Key, Op>,
    /// Executions running now: the key and the actor (service process) running it.
    pub(crate) executors: Vec<(Key, ActorId)>,
    /// The most keys any dedup store reported holding.
    pub peak_dedup_keys: u32,
    /// Resource versions: (resource, version) → the write that made it.
    pub versions: Table<(Op, u32), Version>,
    /// The newest version of each resource.
    pub(crate) heads: Table<Op, u32>,
    /// Operations judged by the state they ask for that found it holding at
    /// a version of a resource, as ((resource, version), operation): a PUT
    /// that found its body in place, a DELETE that found the resource gone.
    /// A write computed from a read older than that version replaces their
    /// state as surely as it replaces the version's writer's.
    pub(crate) holders: Vec<((Op, u32), Op)>,
    /// Operations whose write was replaced by a write computed from an older
    /// read (one that never saw it), with the operation that replaced it.
    pub overwritten: Table<Op, Op>,
    rates: [Rate; MAX_LAYERS],
    load: [LayerLoad; MAX_LAYERS],
    /// Retries that clients' budgets refused, attempts that their open
    /// breakers refused.
    retries_denied: u32,
    fast_failed: u32,
    /// When the fault phase ends and healing starts: a layer's promise to
    /// recover is measured from here. Not reset between runs.
    pub(crate) healing_us: TimeUs,
    /// The healing phase ended and `finish` ran: liveness can be judged.
    pub finished: bool,
    /// Some operation a client asked for was booked downstream (an event
    /// about it took effect): `books-agree` judges only such runs.
    pub(crate) booked: bool,
    /// Where operations looked up lately sit in `ops`, one slot per low bits
    /// of their id: runs interleave observations about a few operations
    /// (25 clients contending for one row), whose ids mostly differ there.
    /// Never cleared: a slot is checked against `ops` before it is trusted.
    /// Only the look-up of an observation (`&mut self`) updates them.
    hints: [usize; HINTS],
    /// Which version of a rolled-out actor handled what (`attribution.rs`);
    /// empty in a run without rollouts.
    attributions: Vec<Attribution>,
    /// The violation the observation being judged broke, kept here for the
    /// oracle to hand back (`oracle.rs`): each kind's function says only
    /// whether there is one. Empty between observations.
    pub(crate) broken: Option<Violation>,
}

/// Slots of [`Ledger::hints`].
const HINTS: usize = 32;

/// Operations (and keys) a ledger has room for before its first run.
const OPS_CAPACITY: usize = 64;

impl Ledger {
    /// The slot of `hints` that remembers where `op` sits.
    #[inline(always)]
    fn hint_slot(op: Op) -> usize {
        op.id as usize % HINTS
    }

    /// Whether `h` is where `op` sits in `ops`.
    #[inline(always)]
    fn holds(&self, h: usize, op: Op) -> bool {
        self.ops.get_index(h).is_some_and(|(k, _)| *k == op)
    }

    /// The index of `op` in `ops`, trying where it was found last first,
    /// and remembering where a search found it. Every observation about an
    /// operation asks this: the hint's check stays inline, the search out of
    /// line.
    #[inline(always)]
    fn find(&mut self, op: Op) -> Option<usize> {
        let h = self.hints[Self::hint_slot(op)];
        if self.holds(h, op) {
            return Some(h);
        }
        self.search(op)
    }

    #[inline(never)]
    fn search(&mut self, op: Op) -> Option<usize> {
        let i = table::index_of(&self.ops, &op)?;
        self.hints[Self::hint_slot(op)] = i;
        Some(i)
    }

    /// [`find`](Self::find) for a reader, which remembers nothing: the
    /// hints are plain numbers the observations' look-up keeps, not cells,
    /// as a cell anywhere in the ledger makes every `&Ledger` one that a
    /// call may write through, for the compiler.
    fn find_ref(&self, op: Op) -> Option<usize> {
        let h = self.hints[Self::hint_slot(op)];
        if self.holds(h, op) {
            return Some(h);
        }
        table::index_of(&self.ops, &op)
    }

    /// The ledger of a world whose faults stop at `fault_phase_us`.
    pub fn healing_from(fault_phase_us: TimeUs) -> Ledger {
        let mut ledger = Ledger {
            healing_us: fault_phase_us,
            ..Ledger::default()
        };
        // Room for the operations and keys of most runs from the start:
        // cleared, not freed, between runs, the tables grew to the most a
        // run had so far, and a rare run with more allocated in the middle
        // of a warm sweep (once in 100,000 runs of messaging-outbox-inbox).
        ledger.ops.reserve(OPS_CAPACITY);
        ledger.keys.reserve(OPS_CAPACITY);
        ledger
    }

    /// The record of `op`, if anything was observed about it.
    pub fn get(&self, op: Op) -> Option<&OpRecord> {
        self.find_ref(op).map(|i| self.op_at(i))
    }

    /// Effects of `op` so far.
    pub fn effects(&self, op: Op) -> u32 {
        self.get(op).map_or(0, |r| r.effects)
    }

    fn rec(&mut self, op: Op) -> &mut OpRecord {
        let at = self.find(op);
        self.rec_at(at, op)
    }

    /// The record of `op`, found at `at` already, or a new one.
    #[inline(always)]
    fn rec_at(&mut self, at: Option<usize>, op: Op) -> &mut OpRecord {
        match at {
            Some(i) => self.op_at_mut(i),
            None => self.insert(op),
        }
    }

    /// A new record for `op`: once per operation and run, out of line.
    #[inline(never)]
    fn insert(&mut self, op: Op) -> &mut OpRecord {
        let (i, _) = self.ops.insert_full(op, OpRecord::new(op));
        self.hints[Self::hint_slot(op)] = i;
        self.op_at_mut(i)
    }

    /// The record at `i`, an index the lookup found. Through the table's
    /// slice: one bounds check, inlined, where `IndexMap`'s own `Index`
    /// checks twice and formats its panic, and so stayed a call on every
    /// observation.
    #[inline(always)]
    pub(crate) fn op_at(&self, i: usize) -> &OpRecord {
        &self.ops.as_slice()[i]
    }

    /// [`op_at`](Self::op_at), to change.
    #[inline(always)]
    pub(crate) fn op_at_mut(&mut self, i: usize) -> &mut OpRecord {
        &mut self.ops.as_mut_slice()[i]
    }

    /// Where the record sits of the operation that an effect of `op`,
    /// whose record is at `i`, announces: only its first effect does, and
    /// only when `op` is an event committed about another operation.
    /// Half of chain's effects announce the claim their event books.
    #[inline(always)]
    fn announces(&mut self, i: usize, op: Op) -> Option<usize> {
        let r = self.op_at(i);
        if r.effects != 0 {
            return None;
        }
        let about = r.entity.filter(|&e| e != op)?;
        self.find(about)
    }

    /// Looks up the record (and the key) that the invariants judging `obs`
    /// and `record` read: the kinds that name an operation without reading
    /// its record look nothing up. The list repeats part of [`Obs::op`] on
    /// purpose: going through it and filtering out the kinds that read no
    /// record cost 0.9 % more instructions in `payment-stable-key`.
    #[inline(always)]
    pub(crate) fn lookup(&mut self, obs: &Obs) -> Found {
        match *obs {
            Obs::Received { op, key, .. } => Found {
                rec: self.find(op),
                key: if key.is_some() {
                    table::index_of(&self.keys, &key)
                } else {
                    None
                },
                about: None,
            },
            Obs::Effect { op, .. } => {
                let rec = self.find(op);
                Found {
                    rec,
                    key: None,
                    about: rec.and_then(|i| self.announces(i, op)),
                }
            }
            Obs::Intent { op, .. }
            | Obs::AttemptSent { op, .. }
            | Obs::StateHeld { op, .. }
            | Obs::Attempt { op, .. }
            | Obs::ToldDone { op, .. }
            | Obs::Ended { op, .. }
            | Obs::Committed { op, .. }
            | Obs::Accepted { op }
            | Obs::DeadLettered { op }
            | Obs::ValueWritten { op, .. }
            | Obs::Superseded { op }
            | Obs::Work { op, .. }
            | Obs::Reversal { op, .. } => Found {
                rec: self.find(op),
                key: None,
                about: None,
            },
            Obs::NewVersion { .. }
            | Obs::ExecStart { .. }
            | Obs::ExecEnd { .. }
            | Obs::ExecutorsLost
            | Obs::Deployed { .. }
            | Obs::Handled { .. }
            | Obs::EffectBy { .. }
            | Obs::DedupStore { .. }
            | Obs::Shed { .. }
            | Obs::RetryDenied { .. }
            | Obs::FastFailed { .. } => Found::default(),
        }
    }

    /// Records `obs`, which the invariants have already judged; `found` is
    /// what [`Ledger::lookup`] found about it. Each kind goes to the part
    /// of the ledger it changes.
    #[inline(always)]
    pub(crate) fn record(&mut self, now_us: TimeUs, actor: ActorId, obs: &Obs, found: Found) {
        let at = found.rec;
        match *obs {
            Obs::Intent {
                op,
                payload,
                window_ms,
            } => self.intent(at, (now_us, actor), op, payload, window_ms),
            Obs::AttemptSent { op, attempt } => self.attempt_sent(at, op, attempt),
            Obs::Received { layer, op, key } => {
                // Read once: after the count's store LLVM read the layer's
                // index again, and checked it against the rates' bounds.
                let layer_at = usize::from(layer.index);
                self.rec_at(at, op).received[layer_at] += 1;
                self.key_used(key, op, found.key.is_some());
                self.arrived(layer_at, now_us);
            }
            Obs::Effect { site, op, payload } => {
                self.effect((at, found.about), now_us, site, op, payload)
            }
            Obs::StateHeld {
                op,
                attempt,
                entity,
                version,
            } => self.state_held(at, op, attempt, entity, version),
            Obs::Attempt {
                op,
                attempt,
                outcome,
            } => self.attempt(at, op, attempt, outcome),
            Obs::ToldDone { op, payload } => self.told_done(at, op, payload),
            Obs::Ended { op, ending } => self.ended(at, now_us, op, ending),
            Obs::Committed {
                op,
                entity,
                value,
                version,
            } => self.committed(at, now_us, op, entity, (value, version)),
            Obs::Accepted { op } => self.rec_at(at, op).accepted = true,
            Obs::DeadLettered { op } => self.dead_lettered(at, op),
            Obs::ValueWritten {
                op,
                entity,
                value,
                version,
            } => self.value_written(at, now_us, op, entity, (value, version)),
            Obs::Superseded { op } => self.rec_at(at, op).superseded = true,
            Obs::NewVersion {
                op,
                entity,
                version,
                value,
                change,
            } => self.new_version(op, entity, version, value, change),
            Obs::ExecStart { key } => self.exec_start(key, actor),
            Obs::ExecEnd { key } => self.exec_end(key, actor),
            Obs::ExecutorsLost => self.executors_lost(actor),
            // Which version handled what is the trace's: the actor's lines
            // after this one. No invariant asks for it.
            Obs::Deployed { .. } => {}
            Obs::Handled {
                op,
                attempt,
                version,
            } => self.handled(op, attempt, version),
            Obs::EffectBy { op, version } => self.effect_by(op, version),
            Obs::DedupStore { keys, .. } => self.dedup_store(keys),
            Obs::Work { layer, attempt, .. } => self.work(at, now_us, layer, attempt),
            Obs::Shed { layer, .. } => self.shed(now_us, layer),
            Obs::RetryDenied { .. } => self.retries_denied += 1,
            Obs::FastFailed { .. } => self.fast_failed += 1,
            Obs::Reversal { op, payload, .. } => self.reversal(at, op, payload),
        }
    }

    /// Forgets the run: the tables keep their room for the next.
    pub(crate) fn clear(&mut self) {
        self.ops.clear();
        self.keys.clear();
        self.executors.clear();
        self.peak_dedup_keys = 0;
        self.versions.clear();
        self.heads.clear();
        self.holders.clear();
        self.overwritten.clear();
        self.rates = [Rate::default(); MAX_LAYERS];
        self.load = [LayerLoad::default(); MAX_LAYERS];
        self.retries_denied = 0;
        self.fast_failed = 0;
        self.finished = false;
        self.booked = false;
        self.attributions.clear();
        self.broken = None;
    }
}
