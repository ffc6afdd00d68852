//! The outbox relay: it publishes the outbox's unsent rows in order, up to
//! `max_in_flight` at once (one by default), waits for each one's
//! confirmation (publishing it again after a timeout, never giving the row
//! up), and
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
//! five batches the broker keeps per producer id and partition. With more
//! than five publishes in flight the relay is no idempotent producer at
//! all, as Kafka 3.0.1 to 3.9 turn idempotence left at its default off then
//! (logging one WARN line): its retries are plain publishes.
//! The numbers belong to the session: after a restart the relay has a new
//! producer id, and its republish of an unmarked row is a new publish to
//! the broker.
//!
//! The producer library retries a batch under its (producer id, sequence
//! number) only for `delivery_timeout_ms` from the batch's first send
//! (Kafka's `delivery.timeout.ms`, 120 s by default since 2.1, KIP-91:
//! <https://cwiki.apache.org/confluence/display/KAFKA/KIP-91+Provide+Intuitive+User+Timeouts+in+The+Producer>).
//! At that age the batch is given up (Kafka's `Sender` expires a batch once
//! `delivery.timeout.ms <= now - createdMs`, in flight or not), `send()`
//! fails to the relay, and a confirmation still on its way is ignored. The
//! relay, application code, publishes the unmarked row again at its next
//! publish timeout: a new record. An idempotent Java producer (2.5 and
//! later, KIP-360 / KAFKA-8805, unchanged in 3.9 and 4.0) marks the expired
//! batch's sequence unresolved, drains no new batch until nothing is in
//! flight, then bumps its epoch and numbers from 0 again
//! (`TransactionManager.maybeResolveSequences`): the broker takes the new
//! epoch's first record as new, and stores the row a second time. A
//! transactional producer's expired batch makes its transaction abortable
//! instead, and the aborted copy never reaches a `read_committed`
//! consumer; this relay commits each one-message transaction as the broker
//! stores it, so it keeps resending under the same numbers (one copy is read
//! either way): it has no delivery timeout here, nor has a relay that stamps
//! nothing (every resend is a new copy anyway).
//!
//! One partition: the broker keeps its last five batches per producer id
//! and partition (Kafka's `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`, per
//! partition log), and `max_in_flight` is per connection; with the one
//! queue modelled here, connection and partition coincide.
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
use sim::{Actor, ActorId, Ctx, TimeUs, US_PER_MS};
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
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// The outbox row.
    pub row: usize,
    /// Its sequence number in this session (an idempotent producer's).
    pub seq: u32,
    /// The broker confirmed it.
    pub confirmed: bool,
    /// When it is sent again without a confirmation.
    pub deadline_us: TimeUs,
    /// When the library gives its batch up: its first send plus the
    /// delivery timeout (0: never, a relay without one).
    pub expires_us: TimeUs,
    /// The library gave the batch up (`send()` failed): the row's next
    /// publish is a new record.
    pub given_up: bool,
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
    /// As a transactional producer: this session's epoch (0 otherwise); an
    /// idempotent one's, bumped after a batch was given up.
    pub epoch: u32,
    /// A batch was given up while its sequence number may be stored: no new
    /// row goes out until the epoch is bumped (Kafka's unresolved sequence).
    pub sequence_unresolved: bool,
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

// The delivery timeout's fields only where the relay has one.
impl fmt::Debug for InFlight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InFlight")
            .field("row", &self.row)
            .field("seq", &self.seq)
            .field("confirmed", &self.confirmed)
            .field("deadline_us", &self.deadline_us)
            .field_if(self.expires_us != 0, "expires_us", &self.expires_us)
            .field_if(self.given_up, "given_up", &self.given_up)
            .finish()
    }
}

// A relay with one row out shows it as `row`, (row, confirmed), as the
// state panels of a relay publishing a row at a time always have.
impl fmt::Debug for RelayState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one = self.rows.len() <= 1;
        let row = self.rows.first().map(|f| (f.row, f.confirmed));
        let given_up = one && self.rows.first().is_some_and(|f| f.given_up);
        f.debug_struct("RelayState")
            .field_if(one, "row", &row)
            .field_if(given_up, "given_up", &given_up)
            .field_if(!one, "rows", &self.rows)
            .field("unmarked_after_restart", &self.unmarked_after_restart)
            .field_if(self.pid != 0, "pid", &self.pid)
            .field_if(self.pid != 0, "next_seq", &self.next_seq)
            .field_if(self.epoch != 0, "epoch", &self.epoch)
            .field_if(
                self.sequence_unresolved,
                "sequence_unresolved",
                &self.sequence_unresolved,
            )
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

sim::timer_slots!(RelayTimer {
    Poll,
    Timeout,
    Mark,
});

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
    /// How long the library retries a batch under its numbers before it
    /// gives the batch up (Kafka's `delivery.timeout.ms`); `None`: it never
    /// does (a relay that stamps nothing, or a transactional one).
    pub delivery_timeout_ms: Option<u64>,
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
            delivery_timeout_ms: None,
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
    /// The same relay, its library giving a batch up `delivery_timeout_ms`
    /// after its first send; only an idempotent, non-transactional relay
    /// does (the module's doc says why), so set it after `transactional`
    /// and `max_in_flight`, which decide that.
    pub fn delivery_timeout(self, delivery_timeout_ms: Option<u64>) -> Self {
        let applies = self.idempotence && !self.transactional;
        Relay {
            delivery_timeout_ms: delivery_timeout_ms.filter(|_| applies),
            ..self
        }
    }

    /// The same relay with up to `max_in_flight` publishes out at once.
    /// Above five (the broker's `SEQUENCE_WINDOW`) an idempotent producer is not one: Kafka
    /// 3.0.1 to 3.9 turn idempotence off when it was left at its default
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
        // A batch given up may be stored under its number: Kafka drains no
        // new batch until the sequence is resolved (the epoch bumped).
        if st.sequence_unresolved {
            return;
        }
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
                expires_us: 0,
                given_up: false,
            });
            self.publish(st, outbox, st.rows.len() - 1, ctx);
        }
    }

    /// The library gives the batch in slot `at` up: `send()` fails to the
    /// relay, which publishes the row again at its next timeout, and the
    /// batch's sequence number is unresolved (it may be stored).
    fn give_up(&self, st: &mut RelayState, at: usize) {
        st.rows[at].given_up = true;
        st.sequence_unresolved = true;
    }

    /// Numbers the row in slot `at`, whose batch was given up, as a new
    /// record: under the next number of an epoch bumped once nothing else
    /// is in flight, as Kafka's idempotent producer resolves an expired
    /// sequence (it skips the bump when a later batch's confirmation shows
    /// the expired one stored; the resend is a new record either way).
    /// `false`: publishes of the old epoch are still out, so the row waits.
    fn renew(&self, st: &mut RelayState, at: usize) -> bool {
        if st.sequence_unresolved {
            if st.rows.iter().any(|f| !f.confirmed && !f.given_up) {
                return false;
            }
            st.epoch += 1;
            st.next_seq = 0;
            st.sequence_unresolved = false;
        }
        st.next_seq += 1;
        st.rows[at].seq = st.next_seq - 1;
        st.rows[at].expires_us = 0;
        true
    }

    /// Publishes (again) the row out in slot `at` of the window.
    fn publish(
        &self,
        st: &mut RelayState,
        outbox: &mut [OutboxRow],
        at: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let timeout_us = self.publish_timeout_ms * US_PER_MS;
        if st.rows[at].given_up && !self.renew(st, at) {
            // The relay tries again at its next timeout.
            st.rows[at].deadline_us = ctx.now_us() + timeout_us;
            self.arm_timeout(st, ctx);
            return;
        }
        let given_up = std::mem::take(&mut st.rows[at].given_up);
        let InFlight { row: r, seq, .. } = st.rows[at];
        let row = &mut outbox[r];
        if row.attempts > 0 {
            if std::mem::take(&mut st.unmarked_after_restart) {
                ctx.reached(sit::REPUBLISH_AFTER_CRASH);
            } else if given_up {
                ctx.reached(sit::RESENT_AFTER_DELIVERY_TIMEOUT);
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
        let now = ctx.now_us();
        let f = &mut st.rows[at];
        f.deadline_us = now + timeout_us;
        if let (0, Some(d)) = (f.expires_us, self.delivery_timeout_ms) {
            // A new batch: the library retries it until this age.
            f.expires_us = now + d * US_PER_MS;
        }
        self.arm_timeout(st, ctx);
    }

    /// One timer for the earliest unconfirmed publish's timeout, or its
    /// batch's expiry if that comes first.
    fn arm_timeout(&self, st: &RelayState, ctx: &mut impl Ctx<Self>) {
        let next = st
            .rows
            .iter()
            .filter(|f| !f.confirmed)
            .map(|f| match f.expires_us {
                e if e != 0 && !f.given_up => f.deadline_us.min(e),
                _ => f.deadline_us,
            })
            .min();
        match next {
            Some(t) => ctx.set_timer(RelayTimer::Timeout, t.saturating_sub(ctx.now_us())),
            None => ctx.cancel_timer(RelayTimer::Timeout),
        }
    }
}

impl<W: Carries<Msg>> Relay<W> {
    /// Gives up the batches that reached the delivery timeout (one that
    /// reached it at this very instant too, as Kafka's `deliveryTimeoutMs <=
    /// now - createdMs`), then publishes again every row whose timeout came;
    /// a bumped epoch frees the relay to publish new rows.
    fn on_timeout(&self, st: &mut RelayState, outbox: &mut [OutboxRow], ctx: &mut impl Ctx<Self>) {
        let now = ctx.now_us();
        let epoch = st.epoch;
        let mut gave_up = false;
        for at in 0..st.rows.len() {
            let f = st.rows[at];
            if f.confirmed {
                continue;
            }
            if !f.given_up && f.expires_us != 0 && f.expires_us <= now {
                self.give_up(st, at);
                gave_up = true;
            }
            if st.rows[at].deadline_us <= now {
                self.publish(st, outbox, at, ctx);
            }
        }
        if st.epoch != epoch {
            self.next(st, outbox, ctx);
        }
        if gave_up {
            self.arm_timeout(st, ctx);
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

    fn reset(
        &self,
        state: sim::Fresh<'_, RelayState>,
        storage: Option<sim::Fresh<'_, Vec<OutboxRow>>>,
    ) {
        if let Some(outbox) = storage {
            outbox.or_default().clear();
        }
        let st = state.or_default();
        // RelayState::default() but for the rows' memory, which the next run
        // would otherwise allocate again; `..` leaves no field behind.
        let mut rows = std::mem::take(&mut st.rows);
        rows.clear();
        *st = RelayState {
            rows,
            ..RelayState::default()
        };
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
        // A batch given up has failed already: its confirmation is ignored.
        let waiting = st
            .rows
            .iter_mut()
            .find(|f| outbox[f.row].ev.id == id && !f.confirmed && !f.given_up);
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
            RelayTimer::Timeout => self.on_timeout(st, outbox, ctx),
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
