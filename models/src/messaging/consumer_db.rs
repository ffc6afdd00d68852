//! The consumers' shared database: business effects, the inbox, unique rows
//! and set values. Effects are observed here, where they land.

use super::msg::{Event, Msg, TxKind, TxResult};
use super::situations as sit;
use super::CONSUMER_WRITE;
use crate::core::dedup::{DedupStore, Lookup};
use crate::core::{Carries, Obs, Site};
use sim::{Actor, ActorId, Ctx, NoTimer, TimeUs};
use std::marker::PhantomData;

#[derive(Clone, Debug)]
/// The consumers' database: what survives a crash.
#[derive(serde::Serialize)]
pub struct ConsumerDbStorage {
    /// Message ids in the inbox, with when each row was written: the
    /// shared windowed store, so an expired row is as good as absent.
    pub inbox: DedupStore<u32, ()>,
    /// Message ids whose effect was applied (once per application).
    pub effects: Vec<u32>,
    /// Event ids under a unique constraint.
    pub unique: Vec<u32>,
    /// (entity, value, version).
    pub values: Vec<(u32, u32, u32)>,
}

impl Default for ConsumerDbStorage {
    fn default() -> Self {
        ConsumerDbStorage {
            inbox: DedupStore::new(0),
            effects: Vec::new(),
            unique: Vec::new(),
            values: Vec::new(),
        }
    }
}

/// The inbox table's cleanup ("another table with a duty to clean up"):
/// how long a row is kept, and how many rows the table may hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InboxConfig {
    /// A row is deleted this long after it was written (0: never).
    pub retention_us: TimeUs,
    /// Most rows the table may hold, judged by dedup-store-bounded on every
    /// insert (0: no bound is judged).
    pub max_rows: u32,
}

/// The consumers' shared database, where effects land (and are observed).
pub struct ConsumerDb<W> {
    /// Where the effect lands, as traces name it.
    pub site: &'static Site,
    /// The inbox's cleanup.
    pub inbox: InboxConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> ConsumerDb<W> {
    /// A consumer database whose effects land at `site`; its inbox keeps
    /// every row forever.
    pub fn new(site: &'static Site) -> Self {
        ConsumerDb {
            site,
            inbox: InboxConfig::default(),
            wire: PhantomData,
        }
    }

    /// The same database with `inbox` as its inbox's cleanup.
    pub fn with_inbox(self, inbox: InboxConfig) -> Self {
        ConsumerDb { inbox, ..self }
    }
}

impl<W> Default for ConsumerDb<W> {
    fn default() -> Self {
        ConsumerDb::new(&CONSUMER_WRITE)
    }
}

impl<W: Carries<Msg>> ConsumerDb<W> {
    /// Whether message `id` has a live inbox row: one past its retention
    /// counts as deleted, whenever the cleanup job actually gets to it.
    fn in_inbox(s: &ConsumerDbStorage, id: u32, ctx: &impl Ctx<Self>) -> bool {
        s.inbox.get(&id, ctx.now_us()).is_some()
    }

    /// The cleanup job: deletes the rows past their retention. It runs
    /// whenever a row is written, so the table never holds an expired row
    /// beside a new one; cheap when none can have expired.
    fn clean_inbox(s: &mut ConsumerDbStorage, ctx: &mut impl Ctx<Self>) {
        if s.inbox.reap(ctx.now_us()) > 0 {
            ctx.reached(sit::INBOX_ROW_REAPED);
        }
    }

    /// Writes message `id`'s inbox row after the cleanup and, if the table
    /// has a bound, reports its size.
    fn record_inbox(&self, s: &mut ConsumerDbStorage, id: u32, ctx: &mut impl Ctx<Self>) {
        Self::clean_inbox(s, ctx);
        s.inbox.insert(id, (), ctx.now_us());
        if self.inbox.max_rows > 0 {
            ctx.observe(Obs::DedupStore {
                keys: u32::try_from(s.inbox.len()).unwrap_or(u32::MAX),
                bound: self.inbox.max_rows,
            });
        }
    }

    /// Applies `ev`'s effect; `version`: the consumer version whose write
    /// it is (0: a consumer without rollouts, which names none).
    fn effect(&self, s: &mut ConsumerDbStorage, ev: Event, version: u8, ctx: &mut impl Ctx<Self>) {
        if version != 0 {
            ctx.observe(Obs::EffectBy {
                op: ev.op(),
                version,
            });
        }
        s.effects.push(ev.id);
        ctx.observe(Obs::Effect {
            site: self.site,
            op: ev.op(),
            payload: ev.value,
        });
    }

    fn set_value(
        s: &mut ConsumerDbStorage,
        ev: Event,
        versioned: bool,
        ctx: &mut impl Ctx<Self>,
    ) -> TxResult {
        let current = s.values.iter().position(|v| v.0 == ev.entity);
        let stored_version = current.map(|i| s.values[i].2);
        if stored_version.is_some_and(|v| v > ev.version) {
            ctx.reached(sit::OUT_OF_ORDER_WRITE);
        }
        if versioned && stored_version.is_some_and(|v| v >= ev.version) {
            if stored_version.is_some_and(|v| v > ev.version) {
                ctx.reached(sit::STALE_WRITE_REJECTED);
                ctx.observe(Obs::Superseded { op: ev.op() });
            }
            return TxResult::Stale;
        }
        let row = (ev.entity, ev.value, ev.version);
        match current {
            Some(i) => s.values[i] = row,
            None => s.values.push(row),
        }
        ctx.observe(Obs::ValueWritten {
            op: ev.op(),
            entity: ev.entity_op(),
            value: ev.value,
            version: ev.version,
        });
        TxResult::Applied
    }

    /// The inbox row and the effect in one transaction, unless the row is there.
    fn inbox_and_effect(
        &self,
        s: &mut ConsumerDbStorage,
        (ev, version): (Event, u8),
        effect_done: bool,
        ctx: &mut impl Ctx<Self>,
    ) -> TxResult {
        // Expired: a row was written and the cleanup deleted it (or will:
        // past its retention it is as good as gone); the store remembers
        // that much. Absent: no row was ever written for it.
        let cleaned = match s.inbox.lookup(&ev.id, ctx.now_us()) {
            Lookup::Live(_) => {
                ctx.reached(sit::INBOX_HIT);
                return TxResult::Duplicate;
            }
            Lookup::Expired => true,
            Lookup::Absent => false,
        };
        // The cleanup first, so the trace shows it before what it let in.
        Self::clean_inbox(s, ctx);
        match (effect_done, cleaned) {
            // Row and effect committed together, and the cleanup deleted
            // the row too early.
            (true, true) => ctx.reached(sit::REDELIVERED_AFTER_INBOX_CLEANUP),
            // The effect was committed without a row, by a handler that
            // keeps none (a consumer version before its inbox): nothing
            // was cleaned up, the check had no row to find.
            (true, false) => ctx.reached(sit::REDELIVERED_AFTER_EFFECT),
            (false, _) => {}
        }
        self.record_inbox(s, ev.id, ctx);
        self.effect(s, ev, version, ctx);
        TxResult::Applied
    }

    /// A handler's own check of the inbox, in a transaction of its own: the
    /// row and the effect it finds tell which crash fell where.
    fn check_inbox(
        s: &mut ConsumerDbStorage,
        ev: Event,
        effect_done: bool,
        ctx: &mut impl Ctx<Self>,
    ) -> TxResult {
        let known = Self::in_inbox(s, ev.id, ctx);
        match (known, effect_done) {
            (true, true) => ctx.reached(sit::INBOX_HIT),
            (true, false) => ctx.reached(sit::INBOX_ROW_WITHOUT_EFFECT),
            (false, true) => ctx.reached(sit::EFFECT_WITHOUT_INBOX_ROW),
            (false, false) => {}
        }
        if known {
            TxResult::Duplicate
        } else {
            TxResult::NotSeen
        }
    }

    /// One transaction; `resent`: the consumer sent it before and heard no
    /// answer.
    fn run(
        &self,
        s: &mut ConsumerDbStorage,
        ev: Event,
        (kind, resent, version): (TxKind, bool, u8),
        ctx: &mut impl Ctx<Self>,
    ) -> TxResult {
        let effect_done = s.effects.contains(&ev.id);
        match kind {
            TxKind::Effect => {
                if effect_done {
                    ctx.reached(match resent {
                        // Most often its own first attempt, whose answer was lost.
                        true => sit::RESENT_TX_APPLIED_AGAIN,
                        false => sit::REDELIVERED_AFTER_EFFECT,
                    });
                }
                self.effect(s, ev, version, ctx);
                TxResult::Applied
            }
            TxKind::InboxAndEffect => self.inbox_and_effect(s, (ev, version), effect_done, ctx),
            TxKind::InboxAndEffectUnchecked => {
                // The inbox is not read; the situation is the model's view
                // of what the handler did not look at.
                if resent && effect_done {
                    ctx.reached(sit::RESENT_TX_APPLIED_AGAIN);
                } else if Self::in_inbox(s, ev.id, ctx) {
                    ctx.reached(sit::REPUBLISH_TAKEN_FOR_FIRST_DELIVERY);
                }
                self.record_inbox(s, ev.id, ctx);
                self.effect(s, ev, version, ctx);
                TxResult::Applied
            }
            TxKind::CheckInbox => Self::check_inbox(s, ev, effect_done, ctx),
            // An insert keyed by the message id: a second one fails on the
            // primary key, and the handler that wanted it skips the effect
            // (record first) or has done it already (effect first).
            TxKind::RecordInbox => {
                if Self::in_inbox(s, ev.id, ctx) {
                    // A re-send finding the row with the effect still
                    // missing: most often its own first attempt, committed
                    // with its answer lost, and the record-first handler
                    // skips the effect it owes (an effect-first handler's
                    // row follows its effect and finds it done).
                    if resent && !effect_done {
                        ctx.reached(sit::RECORD_RESENT_TOOK_OWN_ROW);
                    }
                    TxResult::Duplicate
                } else {
                    self.record_inbox(s, ev.id, ctx);
                    TxResult::Applied
                }
            }
            TxKind::InsertUnique => {
                if s.unique.contains(&ev.id) {
                    ctx.reached(sit::UNIQUE_KEY_HIT);
                    TxResult::Duplicate
                } else {
                    s.unique.push(ev.id);
                    self.effect(s, ev, version, ctx);
                    TxResult::Applied
                }
            }
            TxKind::SetValue { versioned } => Self::set_value(s, ev, versioned, ctx),
        }
    }
}

impl<W> crate::core::Ends for ConsumerDb<W> {
    const ROLES: &'static [&'static str] = &["consumer-db"];
    const SENDS: &'static [(&'static str, &'static str)] = &[("tx-done", "consumer")];
    const ANSWERS: &'static [(&'static str, &'static str)] = &[("tx-done", "tx")];
}

impl<W: Carries<Msg>> Actor for ConsumerDb<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = NoTimer;
    type State = ();
    type Storage = ConsumerDbStorage;

    fn reset(&self, state: sim::Fresh<'_, ()>, storage: Option<sim::Fresh<'_, ConsumerDbStorage>>) {
        state.set(());
        if let Some(s) = storage {
            let s = s.or_default();
            s.inbox.reset(self.inbox.retention_us);
            s.effects.clear();
            s.unique.clear();
            s.values.clear();
        }
    }

    fn on_start(&self, _: &mut (), _: &mut ConsumerDbStorage, _: &mut impl Ctx<Self>) {}

    fn on_msg(
        &self,
        _: &mut (),
        s: &mut ConsumerDbStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(&Msg::Tx {
            ev,
            kind,
            slot,
            receipt,
            attempt,
            version,
        }) = msg.peek()
        else {
            return;
        };
        let result = self.run(s, ev, (kind, attempt > 1, version), ctx);
        let done = Msg::TxDone {
            id: ev.id,
            slot,
            receipt,
            kind,
            result,
        };
        ctx.send(from, W::wrap(done));
    }
}
