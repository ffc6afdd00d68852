//! The producer: a state change that owes an event, written with a dual
//! write (either order) or with a transactional outbox and its relay.

use super::msg::{Event, Msg};
use super::situations as sit;
use crate::core::retry::RetryPolicy;
use crate::core::{Carries, Obs};
use sim::{Actor, ActorId, Ctx, Timer, US_PER_MS};
use std::fmt;
use std::marker::PhantomData;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Commit the state, then publish: a crash in between loses the event.
    StateFirst,
    /// Publish, then commit: a failed or crashed commit leaves a phantom event.
    EventFirst,
    /// State and outbox row in one transaction; a relay publishes the row.
    Outbox,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventSpec {
    pub entity: u32,
    pub value: u32,
    pub start_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerConfig {
    pub broker: ActorId,
    pub mode: WriteMode,
    /// Wait this long for the broker's publish confirmation before resending.
    pub publish_timeout_ms: u64,
    /// Dual write: attempts per publish before giving up; the relay never gives up.
    pub publish_retry: RetryPolicy,
    /// Chance that a commit aborts (deadlock, constraint, failover).
    pub commit_fail_per_mille: u32,
    pub events: Vec<EventSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestStatus {
    Waiting,
    /// Taken up by the application; a crash before it finishes loses it
    /// (the caller saw a broken connection).
    Taken,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutboxRow {
    pub ev: Event,
    pub sent: bool,
    /// Publish attempts, a column many relays keep for monitoring.
    pub attempts: u32,
}

/// The producer's database (business rows and the outbox) and its request source.
#[derive(Clone, Debug, Default)]
pub struct ProducerStorage {
    pub requests: Vec<RequestStatus>,
    /// (entity, value, version): the business table.
    pub rows: Vec<(u32, u32, u32)>,
    pub outbox: Vec<OutboxRow>,
}

/// Dual write: a publish waiting for its confirmation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    pub ev: Event,
    pub attempts: u32,
}

#[derive(Clone, Debug, Default)]
pub struct ProducerState {
    pub pending: Vec<Option<Pending>>,
    /// The outbox row the relay is publishing, with its publish confirmed or not.
    pub relay: Option<(usize, bool)>,
    /// The process restarted with a published but unmarked row: the relay's
    /// next publish of it is a republish after a crash.
    pub unmarked_after_restart: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProducerTimer {
    /// Request `i` arrives.
    Request(u32),
    /// Dual write: publish `i` got no confirmation in time.
    PublishTimeout(u32),
    /// State first: the publish after the commit, a step of its own.
    Publish(u32),
    /// The relay looks for the next unsent outbox row.
    RelayPoll,
    /// The relay's publish got no confirmation in time.
    RelayTimeout,
    /// The relay marks its row sent, a transaction of its own.
    RelayMark,
}

impl fmt::Display for ProducerTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ProducerTimer::Request(i) => write!(f, "request {}", i + 1),
            ProducerTimer::PublishTimeout(i) => write!(f, "publish timeout (event #{})", i + 1),
            ProducerTimer::Publish(i) => write!(f, "publish step (event #{})", i + 1),
            ProducerTimer::RelayPoll => f.write_str("relay poll"),
            ProducerTimer::RelayTimeout => f.write_str("relay publish timeout"),
            ProducerTimer::RelayMark => f.write_str("relay: mark the row sent"),
        }
    }
}

/// The relay's timers come after three per event.
const RELAY_SLOTS: u32 = 3;

impl Timer for ProducerTimer {
    fn slot(&self) -> u32 {
        // Events are few enough (validation) that 3 * i + 2 stays far below u32::MAX.
        match *self {
            ProducerTimer::RelayPoll => 0,
            ProducerTimer::RelayTimeout => 1,
            ProducerTimer::RelayMark => 2,
            ProducerTimer::Request(i) => RELAY_SLOTS + 3 * i,
            ProducerTimer::PublishTimeout(i) => RELAY_SLOTS + 3 * i + 1,
            ProducerTimer::Publish(i) => RELAY_SLOTS + 3 * i + 2,
        }
    }
}

pub struct Producer<W> {
    pub cfg: ProducerConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Producer<W> {
    pub fn new(cfg: ProducerConfig) -> Self {
        Producer {
            cfg,
            wire: PhantomData,
        }
    }

    /// The event request `i` produces: its id is stable per business change.
    fn event(&self, i: usize) -> Event {
        let spec = self.cfg.events[i];
        let version = self.cfg.events[..=i]
            .iter()
            .filter(|e| e.entity == spec.entity)
            .count() as u32;
        Event {
            id: i as u32 + 1,
            entity: spec.entity,
            value: spec.value,
            version,
        }
    }
}

impl<W: Carries<Msg>> Producer<W> {
    fn commit(
        &self,
        s: &mut ProducerStorage,
        ev: Event,
        outbox: bool,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        if ctx.chance(self.cfg.commit_fail_per_mille) {
            ctx.reached(sit::COMMIT_FAILED);
            return false;
        }
        match s.rows.iter_mut().find(|r| r.0 == ev.entity) {
            Some(r) => *r = (ev.entity, ev.value, ev.version),
            None => s.rows.push((ev.entity, ev.value, ev.version)),
        }
        if outbox {
            s.outbox.push(OutboxRow {
                ev,
                sent: false,
                attempts: 0,
            });
        }
        ctx.observe(Obs::Committed {
            op: ev.op(),
            entity: ev.entity_op(),
            value: ev.value,
            version: ev.version,
        });
        true
    }

    fn publish(&self, st: &mut ProducerState, i: usize, ev: Event, ctx: &mut impl Ctx<Self>) {
        let p = st.pending[i].get_or_insert(Pending { ev, attempts: 0 });
        p.attempts += 1;
        if p.attempts > 1 {
            ctx.reached(sit::PUBLISH_RETRIED);
        }
        ctx.send(self.cfg.broker, W::wrap(Msg::Publish { ev }));
        ctx.set_timer(
            ProducerTimer::PublishTimeout(i as u32),
            self.cfg.publish_timeout_ms * US_PER_MS,
        );
    }

    fn relay_next(
        &self,
        st: &mut ProducerState,
        s: &mut ProducerStorage,
        ctx: &mut impl Ctx<Self>,
    ) {
        if st.relay.is_some() {
            return;
        }
        let Some(r) = s.outbox.iter().position(|r| !r.sent) else {
            return;
        };
        st.relay = Some((r, false));
        self.relay_publish(st, s, r, ctx);
    }

    fn relay_publish(
        &self,
        st: &mut ProducerState,
        s: &mut ProducerStorage,
        r: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let row = &mut s.outbox[r];
        if row.attempts > 0 {
            if std::mem::take(&mut st.unmarked_after_restart) {
                ctx.reached(sit::REPUBLISH_AFTER_CRASH);
            } else {
                ctx.reached(sit::PUBLISH_RETRIED);
            }
        }
        row.attempts += 1;
        ctx.send(self.cfg.broker, W::wrap(Msg::Publish { ev: row.ev }));
        ctx.set_timer(
            ProducerTimer::RelayTimeout,
            self.cfg.publish_timeout_ms * US_PER_MS,
        );
    }

    fn on_request(
        &self,
        st: &mut ProducerState,
        s: &mut ProducerStorage,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        if s.requests[i] != RequestStatus::Waiting {
            return;
        }
        s.requests[i] = RequestStatus::Taken;
        let ev = self.event(i);
        match self.cfg.mode {
            WriteMode::StateFirst => {
                if self.commit(s, ev, false, ctx) {
                    ctx.continue_with(ProducerTimer::Publish(i as u32));
                }
            }
            WriteMode::EventFirst => self.publish(st, i, ev, ctx),
            WriteMode::Outbox => {
                if self.commit(s, ev, true, ctx) {
                    ctx.continue_with(ProducerTimer::RelayPoll);
                }
            }
        }
    }

    fn on_publish_timeout(&self, st: &mut ProducerState, i: usize, ctx: &mut impl Ctx<Self>) {
        let Some(p) = st.pending[i] else { return };
        let retry = self
            .cfg
            .publish_retry
            .next_ms(p.attempts, 0, 0, ctx.now_us(), 0, |lo, _| lo);
        if retry.is_some() {
            self.publish(st, i, p.ev, ctx);
        } else {
            // Dual write has nowhere durable to park the event: it is given up.
            ctx.reached(sit::PUBLISH_GIVEN_UP);
            st.pending[i] = None;
        }
    }
}

impl<W: Carries<Msg>> Actor for Producer<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ProducerTimer;
    type State = ProducerState;
    type Storage = ProducerStorage;

    fn timer_slots(&self) -> u32 {
        RELAY_SLOTS + 3 * self.cfg.events.len() as u32
    }

    fn reset_storage(&self, storage: &mut Option<ProducerStorage>) {
        let s = storage.get_or_insert_with(ProducerStorage::default);
        s.requests.clear();
        s.requests
            .resize(self.cfg.events.len(), RequestStatus::Waiting);
        s.rows.clear();
        s.outbox.clear();
    }

    fn reset_state(&self, state: &mut Option<ProducerState>) {
        let st = state.get_or_insert_with(|| ProducerState {
            pending: Vec::new(),
            relay: None,
            unmarked_after_restart: false,
        });
        st.pending.clear();
        st.pending.resize(self.cfg.events.len(), None);
        st.relay = None;
        st.unmarked_after_restart = false;
    }

    fn on_start(&self, st: &mut ProducerState, s: &mut ProducerStorage, ctx: &mut impl Ctx<Self>) {
        for (i, r) in s.requests.iter().enumerate() {
            if *r == RequestStatus::Waiting {
                let at_us = self.cfg.events[i].start_ms * US_PER_MS;
                ctx.set_timer(
                    ProducerTimer::Request(i as u32),
                    at_us.saturating_sub(ctx.now_us()),
                );
            }
        }
        let unmarked = s.outbox.iter().any(|r| !r.sent && r.attempts > 0);
        if ctx.restarted() && unmarked {
            // Published (perhaps) but never marked sent: the relay will publish again.
            ctx.reached(sit::RELAY_CRASH_BETWEEN_STEPS);
        }
        if s.outbox.iter().any(|r| !r.sent) {
            ctx.continue_with(ProducerTimer::RelayPoll);
        }
        st.unmarked_after_restart = ctx.restarted() && unmarked;
    }

    fn on_msg(
        &self,
        st: &mut ProducerState,
        s: &mut ProducerStorage,
        _from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(&Msg::PublishAck { id, .. }) = msg.peek() else {
            return;
        };
        if self.cfg.mode == WriteMode::Outbox {
            if let Some((r, confirmed)) = st.relay.as_mut() {
                if s.outbox[*r].ev.id == id && !*confirmed {
                    *confirmed = true;
                    ctx.cancel_timer(ProducerTimer::RelayTimeout);
                    // Marking the row sent is its own transaction: a crash may come first.
                    ctx.continue_with(ProducerTimer::RelayMark);
                }
            }
            return;
        }
        let Some(i) = st
            .pending
            .iter()
            .position(|p| matches!(p, Some(p) if p.ev.id == id))
        else {
            return; // a late confirmation for a publish already settled
        };
        let p = st.pending[i].take().expect("slot is occupied");
        ctx.cancel_timer(ProducerTimer::PublishTimeout(i as u32));
        if self.cfg.mode == WriteMode::EventFirst {
            // The event is out; now the state change, as a separate transaction.
            self.commit(s, p.ev, false, ctx);
        }
    }

    fn on_timer(
        &self,
        st: &mut ProducerState,
        s: &mut ProducerStorage,
        timer: ProducerTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        match timer {
            ProducerTimer::Request(i) => self.on_request(st, s, i as usize, ctx),
            ProducerTimer::Publish(i) => {
                let i = i as usize;
                self.publish(st, i, self.event(i), ctx);
            }
            ProducerTimer::PublishTimeout(i) => self.on_publish_timeout(st, i as usize, ctx),
            ProducerTimer::RelayPoll => self.relay_next(st, s, ctx),
            ProducerTimer::RelayTimeout => {
                if let Some((r, false)) = st.relay {
                    self.relay_publish(st, s, r, ctx);
                }
            }
            ProducerTimer::RelayMark => {
                if let Some((r, true)) = st.relay.take() {
                    s.outbox[r].sent = true;
                    self.relay_next(st, s, ctx);
                }
            }
        }
    }
}
