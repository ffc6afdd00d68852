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

mod state;

pub use state::{InFlight, OutboxRow, RelayState, RelayTimer};

use super::broker::SEQUENCE_WINDOW;
use super::msg::Msg;
use super::situations as sit;
use crate::core::{Carries, Obs};
use sim::{Actor, ActorId, Ctx, US_PER_MS};
use std::marker::PhantomData;

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
mod tests;
