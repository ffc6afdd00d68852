//! The effect ledger: the oracle that judges every run.
//!
//! It keeps one record per business operation: what the business wanted, what
//! landed in the outside world (effects, observed where they land, never
//! where a service believes it caused them), and what the client was finally
//! told. The invariants in [`super::invariants`] judge each observation
//! against the records as they stood before it, and the records once more at
//! the end of the healing phase.

mod metrics;
mod versions;

pub use metrics::counter;
pub use versions::Version;

use super::invariants::{self, Seen};
use super::obs::{Ending, Obs, Site, MAX_LAYERS};
use super::op::{Key, Op};
use super::table::{self, Table};
use sim::{ActorId, Counter, Outcome, TimeUs, Violation};
use std::cell::Cell;

/// Everything the ledger knows about one operation (or one entity).
#[derive(Clone, Copy, Debug)]
pub struct OpRecord {
    /// The operation (or entity) this record is about.
    pub op: Op,
    // --- what the business wanted, at its client
    /// A client reported an intent for it.
    pub intended: bool,
    /// The payload the client asked for.
    pub payload: u32,
    /// The window the operation must end within (0: none).
    pub window_ms: u64,
    /// When the intent was reported.
    pub started_us: TimeUs,
    /// Attempts the client sent.
    pub attempts: u32,
    /// The last attempt whose outcome the client recorded: it waits for no
    /// answer to this one or any before it.
    pub closed: u32,
    /// A final error (422) was answered: any later attempt retries a rejected input.
    pub rejected: bool,
    /// The payload of the attempt the client was told is done.
    pub told_done: Option<u32>,
    /// How it ended at its client, once it did.
    pub ending: Option<Ending>,
    /// When it ended.
    pub ended_us: TimeUs,
    /// Attempts sent when it ended last: a later one (a reconciliation
    /// job's re-drive) was sent after the ending, for its effect.
    pub ended_attempts: u32,
    // --- what landed in the outside world
    /// Effects that landed.
    pub effects: u32,
    /// Their payloads added up.
    pub effect_total: u64,
    /// Where they landed.
    pub site: Option<&'static Site>,
    /// When the first effect landed, and with which payload.
    pub first_effect: Option<(TimeUs, u32)>,
    /// The latest attempt whose answer was produced while the outside world
    /// already held the state the operation asks for (a DELETE that found
    /// its resource gone); 0: none. Not an effect.
    pub held: u32,
    // --- an event owed by a committed state change
    /// A producer committed the state change that owes this event.
    pub committed: bool,
    /// When.
    pub committed_us: TimeUs,
    /// The entity the change is about.
    pub entity: Option<Op>,
    /// The entity's version after the change.
    pub version: u32,
    /// A broker stored the event.
    pub accepted: bool,
    /// A broker dead-lettered it.
    pub dead: bool,
    /// A set-value write of it landed.
    pub written: bool,
    /// A newer version superseded it.
    pub superseded: bool,
    // --- an entity: the newest committed write and what the consumer holds
    /// For an entity: the newest committed (version, value).
    pub newest: Option<(u32, u32)>,
    /// Whether that newest event went to a dead-letter queue.
    pub newest_dead: bool,
    /// For an entity: the (version, value) the consumers' database holds.
    pub current: Option<(u32, u32)>,
    /// For an operation a client asked for: the events about it that took
    /// effect downstream (the chain's bookings in accounting of one claim).
    /// The payment happened once, so its booking must too.
    pub announced: u32,
    /// The first of those events.
    pub first_announcement: Option<Op>,
    // --- requests each layer received for this operation
    /// Requests each layer received for it, by [`Layer::index`](super::obs::Layer::index).
    pub received: [u32; MAX_LAYERS],
}

impl OpRecord {
    fn new(op: Op) -> OpRecord {
        OpRecord {
            op,
            intended: false,
            payload: 0,
            window_ms: 0,
            started_us: 0,
            attempts: 0,
            closed: 0,
            rejected: false,
            told_done: None,
            ending: None,
            ended_us: 0,
            ended_attempts: 0,
            effects: 0,
            effect_total: 0,
            site: None,
            first_effect: None,
            held: 0,
            committed: false,
            committed_us: 0,
            entity: None,
            version: 0,
            accepted: false,
            dead: false,
            written: false,
            superseded: false,
            newest: None,
            newest_dead: false,
            current: None,
            announced: 0,
            first_announcement: None,
            received: [0; MAX_LAYERS],
        }
    }

    /// The event took effect in some form: applied, written, or made moot by
    /// a newer version of its entity.
    pub fn handled(&self) -> bool {
        self.effects > 0 || self.written || self.superseded
    }

    /// An effect this operation owes and that nobody will ever deliver or
    /// reconcile: told done, or given up silently, or a committed event that is
    /// neither handled nor in a dead-letter queue.
    ///
    /// An operation judged by the state it asks for (a DELETE) owes nothing
    /// once that state was seen holding as one of its attempts was answered:
    /// the resource is gone, whoever removed it.
    pub fn lost(&self) -> bool {
        let client_owed = self.told_done.is_some() || self.ending == Some(Ending::Abandoned);
        let event_owed = self.committed && !self.dead;
        (client_owed && self.effects == 0 && self.held == 0) || (event_owed && !self.handled())
    }

    /// The answer the client concluded from last (the attempt it closed
    /// last, as a "done" or a "failed" is judged right after it) was
    /// produced while the state the operation asks for already held. The
    /// state is judged when the answer was made, not at the end of the run:
    /// a resource re-created since does not make a true "gone" false.
    pub fn held_when_answered(&self) -> bool {
        self.held != 0 && self.held == self.closed
    }

    /// The client no longer waits for an answer to attempt `attempt`: it
    /// recorded that attempt's outcome (a timeout too), sent a later one, or
    /// ended the operation. Work on it is work for nobody.
    ///
    /// An attempt sent after the operation ended (a reconciliation job's
    /// re-drive) is waited for by nobody's answer, but its effect is the
    /// job's point: it is work for nobody only once stale like any other.
    pub fn stopped_waiting(&self, attempt: u32) -> bool {
        (self.ending.is_some() && attempt <= self.ended_attempts)
            || attempt < self.attempts
            || (attempt > 0 && attempt <= self.closed)
    }
}

/// What the ledger looks up about an observation before judging it: found
/// once, then read by every invariant that judges it and by `record`.
#[derive(Clone, Copy, Debug, Default)]
struct Found {
    /// Where the record of the operation it is about sits in `ops`.
    rec: Option<usize>,
    /// For a request that carries a key: where the key sits in `keys`.
    key: Option<usize>,
}

/// Requests per second at one layer, tracked as they arrive.
#[derive(Clone, Copy, Debug, Default)]
struct Rate {
    second: u64,
    in_second: u32,
    peak: u32,
}

/// How one layer with a capacity fared in a run.
#[derive(Clone, Copy, Debug, Default)]
struct LayerLoad {
    /// Requests its workers took.
    work: u32,
    /// Of those, requests whose client had already stopped waiting.
    wasted: u32,
    /// Requests it refused because it was full.
    shed: u32,
    /// The last time it shed a request or worked for nobody.
    last_overload_us: Option<TimeUs>,
}

/// The oracle of every model.
#[derive(Debug, Default)]
pub struct Ledger {
    /// One record per operation and per entity.
    pub ops: Table<Op, OpRecord>,
    /// The first operation each key was used for.
    pub keys: Table<Key, Op>,
    /// Executions running now: the key and the actor (service process) running it.
    pub executors: Vec<(Key, ActorId)>,
    /// The most keys any dedup store reported holding.
    pub peak_dedup_keys: u32,
    /// Resource versions: (resource, version) → the write that made it.
    pub versions: Table<(Op, u32), Version>,
    /// The newest version of each resource.
    pub heads: Table<Op, u32>,
    /// Operations judged by the state they ask for that found it holding at
    /// a version of a resource, as ((resource, version), operation): a PUT
    /// that found its body in place, a DELETE that found the resource gone.
    /// A write computed from a read older than that version replaces their
    /// state as surely as it replaces the version's writer's.
    pub holders: Vec<((Op, u32), Op)>,
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
    pub healing_us: TimeUs,
    /// The healing phase ended and `finish` ran: liveness can be judged.
    pub finished: bool,
    /// Where operations looked up lately sit in `ops`, one slot per low bits
    /// of their id: runs interleave observations about a few operations
    /// (25 clients contending for one row), whose ids mostly differ there.
    /// Never cleared: a slot is checked against `ops` before it is trusted.
    hints: [Cell<usize>; HINTS],
}

/// Slots of [`Ledger::hints`].
const HINTS: usize = 32;

/// Operations (and keys) a ledger has room for before its first run.
const OPS_CAPACITY: usize = 64;

impl Ledger {
    /// The slot of `hints` that remembers where `op` sits.
    #[inline(always)]
    fn hint(&self, op: Op) -> &Cell<usize> {
        &self.hints[op.id as usize % HINTS]
    }

    /// The index of `op` in `ops`, trying where it was found last first.
    /// Every observation about an operation asks this: the hint's check
    /// stays inline, the search out of line.
    #[inline(always)]
    fn find(&self, op: Op) -> Option<usize> {
        let h = self.hint(op).get();
        if self.ops.get_index(h).is_some_and(|(k, _)| *k == op) {
            return Some(h);
        }
        self.search(op)
    }

    #[inline(never)]
    fn search(&self, op: Op) -> Option<usize> {
        let i = table::index_of(&self.ops, &op)?;
        self.hint(op).set(i);
        Some(i)
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
        self.find(op).map(|i| &self.ops[i])
    }

    /// The client of `op` no longer waits for an answer to attempt
    /// `attempt`: it recorded that attempt's outcome (a timeout too), sent a
    /// later one, or ended the operation. Work on it is work for nobody.
    pub fn stopped_waiting(&self, op: Op, attempt: u32) -> bool {
        self.get(op).is_some_and(|r| r.stopped_waiting(attempt))
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
            Some(i) => &mut self.ops[i],
            None => self.insert(op),
        }
    }

    /// A new record for `op`: once per operation and run, out of line.
    #[inline(never)]
    fn insert(&mut self, op: Op) -> &mut OpRecord {
        let (i, _) = self.ops.insert_full(op, OpRecord::new(op));
        self.hint(op).set(i);
        &mut self.ops[i]
    }

    /// Looks up the record (and the key) that the invariants judging `obs`
    /// and `record` read: the kinds that name an operation without reading
    /// its record look nothing up. The list repeats part of [`Obs::op`] on
    /// purpose: going through it and filtering out the kinds that read no
    /// record cost 0.9 % more instructions in `payment-stable-key`.
    #[inline]
    fn lookup(&self, obs: &Obs) -> Found {
        match *obs {
            Obs::Received { op, key, .. } => Found {
                rec: self.find(op),
                key: if key.is_some() {
                    table::index_of(&self.keys, &key)
                } else {
                    None
                },
            },
            Obs::Intent { op, .. }
            | Obs::AttemptSent { op, .. }
            | Obs::Effect { op, .. }
            | Obs::StateHeld { op, .. }
            | Obs::Attempt { op, .. }
            | Obs::ToldDone { op, .. }
            | Obs::Ended { op, .. }
            | Obs::Committed { op, .. }
            | Obs::Accepted { op }
            | Obs::DeadLettered { op }
            | Obs::ValueWritten { op, .. }
            | Obs::Superseded { op }
            | Obs::Work { op, .. } => Found {
                rec: self.find(op),
                key: None,
            },
            Obs::NewVersion { .. }
            | Obs::ExecStart { .. }
            | Obs::ExecEnd { .. }
            | Obs::ExecutorsLost
            | Obs::DedupStore { .. }
            | Obs::Shed { .. }
            | Obs::RetryDenied { .. }
            | Obs::FastFailed { .. } => Found::default(),
        }
    }

    /// Event `event`, about operation `about`, took its first effect: one
    /// more announcement of `about` landed, if a client asked for it.
    #[cold]
    fn announced(&mut self, about: Op, event: Op) {
        let Some(i) = self.find(about) else {
            return;
        };
        let r = &mut self.ops[i];
        if r.intended {
            r.announced += 1;
            r.first_announcement.get_or_insert(event);
        }
    }

    /// The newest version of `entity` so far (0: none).
    pub fn head(&self, entity: Op) -> u32 {
        self.heads.get(&entity).copied().unwrap_or(0)
    }

    /// Records `obs`, which the invariants have already judged; `found` is
    /// what [`Ledger::lookup`] found about it.
    fn record(&mut self, now_us: TimeUs, actor: ActorId, obs: &Obs, found: Found) {
        match *obs {
            Obs::Intent {
                op,
                payload,
                window_ms,
            } => {
                let r = self.rec_at(found.rec, op);
                if !r.intended {
                    r.intended = true;
                    r.payload = payload;
                    r.window_ms = window_ms;
                    r.started_us = now_us;
                }
            }
            Obs::AttemptSent { op, attempt } => {
                let r = self.rec_at(found.rec, op);
                r.attempts = r.attempts.max(attempt);
            }
            Obs::Received { layer, op, key } => {
                self.rec_at(found.rec, op).received[usize::from(layer.index)] += 1;
                if key.is_some() && found.key.is_none() {
                    self.keys.insert(key, op);
                }
                let rate = &mut self.rates[usize::from(layer.index)];
                let second = now_us / sim::US_PER_S;
                if second != rate.second || rate.in_second == 0 {
                    rate.second = second;
                    rate.in_second = 0;
                }
                rate.in_second += 1;
                rate.peak = rate.peak.max(rate.in_second);
            }
            Obs::Effect { site, op, payload } => {
                let r = self.rec_at(found.rec, op);
                r.effects += 1;
                r.effect_total += u64::from(payload);
                r.site.get_or_insert(site);
                r.first_effect.get_or_insert((now_us, payload));
                if r.effects == 1 {
                    if let Some(about) = r.entity.filter(|&e| e != op) {
                        self.announced(about, op);
                    }
                }
            }
            Obs::StateHeld {
                op,
                attempt,
                entity,
                version,
            } => {
                let r = self.rec_at(found.rec, op);
                r.held = r.held.max(attempt);
                let holder = ((entity, version), op);
                if version > 0 && !self.holders.contains(&holder) {
                    self.holders.push(holder);
                }
            }
            Obs::Attempt {
                op,
                attempt,
                outcome,
            } => {
                let r = self.rec_at(found.rec, op);
                r.rejected |= outcome == super::obs::AttemptOutcome::Rejected;
                r.closed = r.closed.max(attempt);
            }
            Obs::ToldDone { op, payload } => {
                let r = self.rec_at(found.rec, op);
                // A "done" is judged by the state against the attempt the
                // client closed last (`held_when_answered`), so the client
                // must have recorded the outcome of the attempt that told it
                // (`ClientOp::done` does) and sent none after it. The one
                // "done" without an attempt, a reconciliation job's, is
                // about payments, which ask for no state.
                debug_assert!(
                    r.held == 0 || r.closed == r.attempts,
                    "{op} told done after attempt {} was seen holding, with attempt {} of {} closed: record the answering attempt's outcome first",
                    r.held,
                    r.closed,
                    r.attempts
                );
                r.told_done = Some(payload);
            }
            Obs::Ended { op, ending } => {
                let r = self.rec_at(found.rec, op);
                // A reconciliation job may resolve an unknown dead letter
                // later: what the client was finally told replaces it.
                debug_assert!(
                    matches!(r.ending, None | Some(Ending::Unknown)),
                    "an operation ends once, or again after an unknown ending"
                );
                r.ending = Some(ending);
                r.ended_us = now_us;
                r.ended_attempts = r.attempts;
            }
            Obs::Committed {
                op,
                entity,
                value,
                version,
            } => {
                let r = self.rec_at(found.rec, op);
                // An event published first may have taken effect before
                // this commit said what it is about: that effect announces
                // its operation now.
                let landed_first = !r.committed && r.effects > 0;
                r.committed = true;
                r.committed_us = now_us;
                r.entity = Some(entity);
                r.version = version;
                r.payload = value;
                // Published first, the event may have reached a dead-letter
                // queue before this commit said which version it carries.
                let dead = r.dead;
                let e = self.rec(entity);
                if e.newest.is_none_or(|(v, _)| version >= v) {
                    e.newest = Some((version, value));
                    e.newest_dead = dead;
                }
                if landed_first && entity != op {
                    self.announced(entity, op);
                }
            }
            Obs::Accepted { op } => self.rec_at(found.rec, op).accepted = true,
            Obs::DeadLettered { op } => {
                let r = self.rec_at(found.rec, op);
                r.dead = true;
                let (entity, version) = (r.entity, r.version);
                let at = entity.and_then(|e| self.find(e));
                if let Some(e) = at.map(|i| &mut self.ops[i]) {
                    if e.newest.is_some_and(|(v, _)| v == version) {
                        e.newest_dead = true;
                    }
                }
            }
            Obs::ValueWritten {
                op,
                entity,
                value,
                version,
            } => {
                let r = self.rec_at(found.rec, op);
                r.written = true;
                r.first_effect.get_or_insert((now_us, value));
                self.rec(entity).current = Some((version, value));
            }
            Obs::Superseded { op } => self.rec_at(found.rec, op).superseded = true,
            Obs::NewVersion {
                op,
                entity,
                version,
                value,
                change,
            } => {
                let lost: Vec<Op> = self
                    .unseen_writes(op, entity, value, change)
                    .map(|w| w.1)
                    .collect();
                for w in lost {
                    self.overwritten.entry(w).or_insert(op);
                }
                let v = Version {
                    writer: op,
                    value,
                    change,
                };
                self.versions.insert((entity, version), v);
                if version > self.head(entity) {
                    self.heads.insert(entity, version);
                }
            }
            Obs::ExecStart { key } => self.executors.push((key, actor)),
            Obs::ExecEnd { key } => {
                if let Some(i) = self.executors.iter().position(|e| *e == (key, actor)) {
                    self.executors.swap_remove(i);
                }
            }
            Obs::ExecutorsLost => self.executors.retain(|(_, a)| *a != actor),
            Obs::DedupStore { keys, .. } => {
                self.peak_dedup_keys = self.peak_dedup_keys.max(keys);
            }
            Obs::Work { layer, attempt, .. } => {
                let wasted = found
                    .rec
                    .is_some_and(|i| self.ops[i].stopped_waiting(attempt));
                let l = &mut self.load[usize::from(layer.index)];
                l.work += 1;
                if wasted {
                    l.wasted += 1;
                    l.last_overload_us = Some(now_us);
                }
            }
            Obs::Shed { layer, .. } => {
                let l = &mut self.load[usize::from(layer.index)];
                l.shed += 1;
                l.last_overload_us = Some(now_us);
            }
            Obs::RetryDenied { .. } => self.retries_denied += 1,
            Obs::FastFailed { .. } => self.fast_failed += 1,
        }
    }
}

impl sim::Oracle for Ledger {
    type Obs = Obs;

    fn reset(&mut self) {
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
        &metrics::COUNTERS
    }

    /// One number per operation's cell of the truth table, refined by how
    /// far the run got with it: what the business wanted, how many attempts
    /// and requests each layer saw (small counts exact, larger ones by
    /// order of magnitude), what landed, what the client was finally told.
    fn features(&self, out: &mut dyn FnMut(u64)) {
        let small = |n: u32| u64::from(if n < 4 { n } else { 4 + n.ilog2() });
        for r in self.ops.values() {
            let ending = r.ending.map_or(0, |e| 1 + e as u64);
            let flags = [
                r.intended,
                r.rejected,
                r.told_done.is_some(),
                r.committed,
                r.accepted,
                r.dead,
                r.written,
                r.superseded,
                r.told_done.is_some_and(|p| p != r.payload),
            ];
            let mut f = flags.iter().fold(0u64, |acc, &b| (acc << 1) | u64::from(b));
            f = (f << 4) | ending;
            f = (f << 4) | small(r.effects);
            f = (f << 4) | small(r.attempts);
            for n in r.received {
                f = (f << 4) | small(n);
            }
            out(f);
        }
        out(u64::from(self.peak_dedup_keys.min(64)) | (1 << 63));
    }

    fn count(&self, outcome: &Outcome, into: &mut [u64]) {
        self.fill(outcome, into)
    }
}
