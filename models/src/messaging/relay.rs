//! The outbox relay: it publishes the outbox's unsent rows in order, up to
//! `max_in_flight` at once (one by default), waits for each one's
//! confirmation (publishing it again after a timeout, never giving up), and
//! marks confirmed rows sent in a step of its own, so a crash between the
//! publish and the mark publishes the row again.
//!
//! It runs inside the process that owns the outbox table (a producer, a
//! booking service): that process writes rows in its own transactions and
//! hands the relay its timers and the broker's confirmations through a
//! [`sim::Narrow`] context. The outbox table is the relay's storage.
//!
//! As an idempotent producer (Kafka's `enable.idempotence`) it numbers its
//! publishes within a session and the broker stores each number once, so a
//! retry after a lost confirmation is dropped, while it is among the last
//! five numbers the broker keeps. With more than five publishes in flight
//! the relay is no idempotent producer at all, as Kafka 3.2 and later
//! silently turn idempotence off then: its retries are plain publishes.
//! The numbers belong to the
//! session: after a restart the relay has a new producer id, and its
//! republish of an unmarked row is a new publish to the broker.
//!
//! As a transactional producer (Kafka's `transactional.id`) it keeps one
//! producer id and starts every session with a higher epoch: the broker
//! refuses a publish of an older epoch still on its way (a zombie), but the
//! new session numbers its publishes from 0 again, so its republish of an
//! unmarked row is stored a second time all the same. Each publish stands
//! for a transaction of one message, committed as the broker stores it.

use super::broker::SEQUENCE_WINDOW;
use super::msg::{Event, Msg};
use super::situations as sit;
use crate::core::shown::FieldIf;
use crate::core::{Carries, Obs};
use sim::{Actor, ActorId, Ctx, TimeUs, Timer, US_PER_MS};
use std::fmt;
use std::marker::PhantomData;

#[derive(Clone, Copy, PartialEq, Eq)]
/// A row of the transactional outbox.
pub struct OutboxRow {
    /// The event to publish.
    pub ev: Event,
    /// The relay marked it sent.
    pub sent: bool,
    /// Publish attempts, a column many relays keep for monitoring.
    pub attempts: u32,
    /// The producer id of the session that last published it (0: none).
    /// The broker hands out producer ids; here a session takes one above
    /// every id its outbox names, which is new to the broker wherever it
    /// matters: an id no row names was never used for a publish.
    pub pid: u32,
    /// A transactional producer's epoch when it last published the row (0:
    /// none). A session takes the epoch above every one its rows name, as
    /// the broker's transaction coordinator bumps it at every start; an
    /// epoch no row names was never used for a publish.
    pub epoch: u32,
}

/// Volatile: one row's publish the relay has out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    /// The outbox row.
    pub row: usize,
    /// Its sequence number in this session (an idempotent producer's).
    pub seq: u32,
    /// The broker confirmed it.
    pub confirmed: bool,
    /// When it is sent again without a confirmation.
    pub deadline_us: TimeUs,
}

/// Volatile: the rows the relay is publishing, with their publishes confirmed or not.
#[derive(Clone, Default)]
pub struct RelayState {
    /// The rows being published, oldest first: at most `max_in_flight`,
    /// under consecutive sequence numbers.
    pub rows: Vec<InFlight>,
    /// The process restarted with a published but unmarked row: the relay's
    /// next publish of it is a republish after a crash.
    pub unmarked_after_restart: bool,
    /// As an idempotent producer: this session's producer id (0 otherwise).
    pub pid: u32,
    /// The sequence numbers this session handed out: the rows being
    /// published have the last ones, and their retries repeat them.
    pub next_seq: u32,
    /// As a transactional producer: this session's epoch (0 otherwise).
    pub epoch: u32,
}

// By hand, as the state panels of reports show them: the producer id and
// sequence numbers only where the relay is an idempotent producer.
impl fmt::Debug for OutboxRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutboxRow")
            .field("ev", &self.ev)
            .field("sent", &self.sent)
            .field("attempts", &self.attempts)
            .field_if(self.pid != 0, "pid", &self.pid)
            .field_if(self.epoch != 0, "epoch", &self.epoch)
            .finish()
    }
}

// A relay with one row out shows it as `row`, (row, confirmed), as the
// state panels of a relay publishing a row at a time always have.
impl fmt::Debug for RelayState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one = self.rows.len() <= 1;
        let row = self.rows.first().map(|f| (f.row, f.confirmed));
        f.debug_struct("RelayState")
            .field_if(one, "row", &row)
            .field_if(!one, "rows", &self.rows)
            .field("unmarked_after_restart", &self.unmarked_after_restart)
            .field_if(self.pid != 0, "pid", &self.pid)
            .field_if(self.pid != 0, "next_seq", &self.next_seq)
            .field_if(self.epoch != 0, "epoch", &self.epoch)
            .finish()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The relay's timers.
pub enum RelayTimer {
    /// Look for the next unsent outbox row.
    Poll,
    /// A publish got no confirmation in time (the earliest one out).
    Timeout,
    /// Mark the confirmed rows sent, a transaction of its own.
    Mark,
}

impl fmt::Display for RelayTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RelayTimer::Poll => "relay poll",
            RelayTimer::Timeout => "relay publish timeout",
            RelayTimer::Mark => "relay: mark the row sent",
        })
    }
}

impl Timer for RelayTimer {
    fn slot(&self) -> u32 {
        match self {
            RelayTimer::Poll => 0,
            RelayTimer::Timeout => 1,
            RelayTimer::Mark => 2,
        }
    }
}

/// The outbox relay: polls the outbox, publishes a row, waits for the broker's confirmation, then marks the row sent in a transaction of its own.
pub struct Relay<W> {
    /// The broker it publishes to.
    pub broker: ActorId,
    /// Wait this long for the broker's confirmation before publishing again.
    pub publish_timeout_ms: u64,
    /// Publish as an idempotent producer: (producer id, sequence number).
    pub idempotence: bool,
    /// And as a transactional one (`transactional.id`): one producer id for
    /// every session, an epoch one higher at every start.
    pub transactional: bool,
    /// Publishes out at once, each waiting for its confirmation (Kafka's
    /// `max.in.flight.requests.per.connection`); 1 = a row at a time.
    pub max_in_flight: u32,
    wire: PhantomData<fn() -> W>,
}

impl<W> Relay<W> {
    /// A relay publishing to `broker`, as an idempotent producer if `idempotence`.
    pub fn new(broker: ActorId, publish_timeout_ms: u64, idempotence: bool) -> Self {
        Relay {
            broker,
            publish_timeout_ms,
            idempotence,
            transactional: false,
            max_in_flight: 1,
            wire: PhantomData,
        }
    }

    /// The same relay as a transactional producer (an idempotent one too).
    pub fn transactional(self, transactional: bool) -> Self {
        Relay {
            idempotence: self.idempotence || transactional,
            transactional,
            ..self
        }
    }
}

impl<W> Relay<W> {
    /// The same relay with up to `max_in_flight` publishes out at once.
    /// Above five (the broker's `SEQUENCE_WINDOW`) an idempotent producer is not one: Kafka
    /// 3.2 and later turn idempotence off when it was left at its default
    /// (and refuse to start when it was asked for explicitly, or with a
    /// `transactional.id`, which the scenario's validation refuses).
    pub fn max_in_flight(self, max_in_flight: u32) -> Self {
        let idempotence =
            self.idempotence && (self.transactional || max_in_flight <= SEQUENCE_WINDOW);
        Relay {
            max_in_flight: max_in_flight.max(1),
            idempotence,
            ..self
        }
    }
}

impl<W: Carries<Msg>> Relay<W> {
    /// Publishes unsent rows in outbox order until `max_in_flight` are out.
    fn next(&self, st: &mut RelayState, outbox: &mut [OutboxRow], ctx: &mut impl Ctx<Self>) {
        while st.rows.len() < self.max_in_flight as usize {
            let out = |i: usize| st.rows.iter().any(|f| f.row == i);
            let Some(r) = (0..outbox.len()).find(|&i| !outbox[i].sent && !out(i)) else {
                return;
            };
            st.next_seq += 1;
            // At most max_in_flight entries, bounded by validation.
            st.rows.push(InFlight {
                row: r,
                seq: st.next_seq - 1,
                confirmed: false,
                deadline_us: 0,
            });
            self.publish(st, outbox, st.rows.len() - 1, ctx);
        }
    }

    /// Publishes (again) the row out in slot `at` of the window.
    fn publish(
        &self,
        st: &mut RelayState,
        outbox: &mut [OutboxRow],
        at: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let InFlight { row: r, seq, .. } = st.rows[at];
        let row = &mut outbox[r];
        if row.attempts > 0 {
            if std::mem::take(&mut st.unmarked_after_restart) {
                ctx.reached(sit::REPUBLISH_AFTER_CRASH);
            } else {
                ctx.reached(sit::PUBLISH_RETRIED);
            }
        }
        row.attempts += 1;
        let msg = if self.idempotence {
            // Recorded with the publish, in the same step: a later session
            // takes an id above it.
            row.pid = st.pid;
            row.epoch = st.epoch;
            Msg::SeqPublish {
                ev: row.ev,
                pid: st.pid,
                epoch: st.epoch,
                seq,
            }
        } else {
            Msg::Publish { ev: row.ev }
        };
        ctx.send(self.broker, W::wrap(msg));
        st.rows[at].deadline_us = ctx.now_us() + self.publish_timeout_ms * US_PER_MS;
        self.arm_timeout(st, ctx);
    }

    /// One timer for the earliest unconfirmed publish's timeout.
    fn arm_timeout(&self, st: &RelayState, ctx: &mut impl Ctx<Self>) {
        let next = st
            .rows
            .iter()
            .filter(|f| !f.confirmed)
            .map(|f| f.deadline_us)
            .min();
        match next {
            Some(t) => ctx.set_timer(RelayTimer::Timeout, t.saturating_sub(ctx.now_us())),
            None => ctx.cancel_timer(RelayTimer::Timeout),
        }
    }
}

impl<W: Carries<Msg>> Actor for Relay<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = RelayTimer;
    type State = RelayState;
    /// The outbox table, written by the process that owns it.
    type Storage = Vec<OutboxRow>;

    fn timer_slots(&self) -> u32 {
        3
    }

    fn reset_storage(&self, storage: &mut Option<Vec<OutboxRow>>) {
        storage.get_or_insert_with(Vec::new).clear();
    }

    fn reset_state(&self, state: &mut Option<RelayState>) {
        match state {
            Some(st) => {
                self.reset_state_in_place(st);
            }
            None => *state = Some(RelayState::default()),
        }
    }

    fn reset_storage_in_place(&self, outbox: &mut Vec<OutboxRow>) -> bool {
        outbox.clear();
        true
    }

    fn reset_state_in_place(&self, st: &mut RelayState) -> bool {
        // RelayState::default() but for the rows' memory, which the next run
        // would otherwise allocate again; `..` leaves no field behind.
        let mut rows = std::mem::take(&mut st.rows);
        rows.clear();
        *st = RelayState {
            rows,
            ..RelayState::default()
        };
        true
    }

    fn on_start(&self, st: &mut RelayState, outbox: &mut Vec<OutboxRow>, ctx: &mut impl Ctx<Self>) {
        let unmarked = outbox.iter().any(|r| !r.sent && r.attempts > 0);
        if ctx.restarted() && unmarked {
            // Published (perhaps) but never marked sent: the relay will publish again.
            ctx.reached(sit::RELAY_CRASH_BETWEEN_STEPS);
        }
        if outbox.iter().any(|r| !r.sent) {
            ctx.continue_with(RelayTimer::Poll);
        }
        st.unmarked_after_restart = ctx.restarted() && unmarked;
        if self.transactional {
            // One transactional id, one producer id; the epoch fences the
            // sessions before this one.
            st.pid = 1;
            st.epoch = outbox.iter().map(|r| r.epoch).max().unwrap_or(0) + 1;
        } else if self.idempotence {
            st.pid = outbox.iter().map(|r| r.pid).max().unwrap_or(0) + 1;
        }
    }

    fn on_msg(
        &self,
        st: &mut RelayState,
        outbox: &mut Vec<OutboxRow>,
        _from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(&Msg::PublishAck { id, .. }) = msg.peek() else {
            return;
        };
        let waiting = st
            .rows
            .iter_mut()
            .find(|f| outbox[f.row].ev.id == id && !f.confirmed);
        if let Some(f) = waiting {
            f.confirmed = true;
            self.arm_timeout(st, ctx);
            // Marking the row sent is its own transaction: a crash may come first.
            ctx.continue_with(RelayTimer::Mark);
        }
    }

    fn on_timer(
        &self,
        st: &mut RelayState,
        outbox: &mut Vec<OutboxRow>,
        timer: RelayTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        match timer {
            RelayTimer::Poll => self.next(st, outbox, ctx),
            RelayTimer::Timeout => {
                let now = ctx.now_us();
                for at in 0..st.rows.len() {
                    if !st.rows[at].confirmed && st.rows[at].deadline_us <= now {
                        self.publish(st, outbox, at, ctx);
                    }
                }
            }
            RelayTimer::Mark => {
                // Rows leave the window in order, as Kafka's requests
                // complete in order on a connection: a confirmed row behind
                // an unconfirmed one keeps its slot, so the numbers out span
                // at most max_in_flight and a retry stays among the
                // broker's last five.
                let done = st.rows.iter().take_while(|f| f.confirmed).count();
                if done == 0 {
                    return;
                }
                for f in st.rows.drain(..done) {
                    outbox[f.row].sent = true;
                }
                self.next(st, outbox, ctx);
            }
        }
    }
}

#[cfg(test)]
#[path = "relay_tests.rs"]
mod tests;
