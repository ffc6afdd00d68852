//! The relay's unit tests: how many publishes it keeps out at once, what
//! it stamps them with, and when its library gives a batch up.

use super::*;
use crate::messaging::msg::Event;
use crate::registry::Msg as World;
use sim::TimeUs;

type Cmd = sim::Command<World, Obs, RelayTimer>;

const TIMEOUT_MS: u64 = 5_000;

/// A relay (actor 0) publishing to a broker (actor 1), with `rows` unsent
/// outbox rows, driven handler by handler.
struct Drive {
    r: Relay<World>,
    st: RelayState,
    outbox: Vec<OutboxRow>,
    choices: sim::Choices,
}

impl Drive {
    fn new(idempotence: bool, max_in_flight: u32, rows: u32) -> Drive {
        Drive::with(
            Relay::new(1, TIMEOUT_MS, idempotence).max_in_flight(max_in_flight),
            rows,
        )
    }

    fn with(r: Relay<World>, rows: u32) -> Drive {
        let outbox = (1..=rows)
            .map(|id| OutboxRow {
                ev: Event {
                    id,
                    entity: id,
                    value: 5,
                    version: 1,
                    entity_space: &crate::messaging::ENTITY,
                    entity_part: 0,
                },
                sent: false,
                attempts: 0,
                pid: 0,
                epoch: 0,
            })
            .collect();
        let mut choices = sim::Choices::new();
        choices.start_random(0, 1, false);
        let mut d = Drive {
            r,
            st: RelayState::default(),
            outbox,
            choices,
        };
        let mut out = Vec::new();
        let mut ctx = sim::Context::detached(0, 0, &mut d.choices, &mut out);
        d.r.on_start(&mut d.st, &mut d.outbox, &mut ctx);
        d
    }

    fn timer(&mut self, now_ms: u64, t: RelayTimer) -> Vec<Cmd> {
        let mut out = Vec::new();
        let now: TimeUs = now_ms * US_PER_MS;
        let mut ctx = sim::Context::detached(now, 0, &mut self.choices, &mut out);
        self.r.on_timer(&mut self.st, &mut self.outbox, t, &mut ctx);
        out
    }

    fn confirm(&mut self, now_ms: u64, id: u32) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = sim::Context::detached(now_ms * US_PER_MS, 0, &mut self.choices, &mut out);
        let ack = World::wrap(Msg::PublishAck {
            id,
            duplicate: false,
        });
        self.r
            .on_msg(&mut self.st, &mut self.outbox, 1, ack, &mut ctx);
        out
    }
}

/// The publishes among `out`: (event id, sequence number if stamped).
fn publishes(out: &[Cmd]) -> Vec<(u32, Option<u32>)> {
    Cmd::sent(out)
        .filter_map(|m| match m.peek() {
            Some(&Msg::Publish { ev }) => Some((ev.id, None)),
            Some(&Msg::SeqPublish { ev, seq, .. }) => Some((ev.id, Some(seq))),
            _ => None,
        })
        .collect()
}

/// With `max.in.flight` 3 the relay has three rows' publishes out at once,
/// each under a sequence number of its own, and no fourth until one
/// settles; each unconfirmed one is resent at its timeout under its number.
#[test]
fn the_relay_keeps_at_most_max_in_flight_publishes_out() {
    let mut d = Drive::new(true, 3, 5);
    let first = d.timer(0, RelayTimer::Poll);
    assert_eq!(
        publishes(&first),
        [(1, Some(0)), (2, Some(1)), (3, Some(2))]
    );
    // Another poll (a new row committed) publishes nothing more.
    assert!(publishes(&d.timer(10, RelayTimer::Poll)).is_empty());
    // Row 1 confirmed and marked: row 4 goes out, under the next number.
    d.confirm(100, 1);
    assert_eq!(publishes(&d.timer(100, RelayTimer::Mark)), [(4, Some(3))]);
    // At the timeout the two still unconfirmed are resent, not row 4 (100 ms younger).
    assert_eq!(
        publishes(&d.timer(TIMEOUT_MS, RelayTimer::Timeout)),
        [(2, Some(1)), (3, Some(2))]
    );
}

/// Rows leave the window in order, as Kafka's requests complete in order
/// on a connection: a confirmed row behind an unconfirmed one frees no
/// slot, so the numbers out never span more than `max.in.flight`, and a
/// retry stays among the last five the broker keeps.
#[test]
fn a_confirmed_row_behind_an_unconfirmed_one_frees_no_slot() {
    let mut d = Drive::new(true, 2, 4);
    assert_eq!(publishes(&d.timer(0, RelayTimer::Poll)).len(), 2);
    d.confirm(100, 2);
    assert!(publishes(&d.timer(100, RelayTimer::Mark)).is_empty());
    d.confirm(200, 1);
    assert_eq!(
        publishes(&d.timer(200, RelayTimer::Mark)),
        [(3, Some(2)), (4, Some(3))]
    );
    assert!(d.outbox[..2].iter().all(|r| r.sent));
}

/// Since Kafka 3.2 a producer whose idempotence is left at its default is
/// silently not idempotent with more than five requests in flight: the
/// relay's publishes carry no producer id or sequence number, so the
/// broker cannot recognise a retry.
#[test]
fn above_five_in_flight_the_relay_publishes_without_sequence_numbers() {
    let mut five = Drive::new(true, 5, 6);
    let stamped = publishes(&five.timer(0, RelayTimer::Poll));
    assert_eq!(stamped.len(), 5);
    assert!(stamped.iter().all(|p| p.1.is_some()));
    let mut six = Drive::new(true, 6, 6);
    let plain = publishes(&six.timer(0, RelayTimer::Poll));
    assert_eq!(plain.len(), 6);
    assert!(plain.iter().all(|p| p.1.is_none()), "{plain:?}");
}

/// The publishes among `out`, stamped: (event id, epoch, sequence number).
fn stamped(out: &[Cmd]) -> Vec<(u32, u32, u32)> {
    Cmd::sent(out)
        .filter_map(|m| match m.peek() {
            Some(&Msg::SeqPublish { ev, epoch, seq, .. }) => Some((ev.id, epoch, seq)),
            _ => None,
        })
        .collect()
}

/// The situations reached among `out`.
fn reached(out: &[Cmd]) -> Vec<sim::SituationId> {
    out.iter()
        .filter_map(|c| match c {
            sim::Command::Reached(s) => Some(*s),
            _ => None,
        })
        .collect()
}

/// An idempotent relay of one row, its library giving a batch up
/// `delivery_timeout_ms` after its first send, with a publish timeout of
/// `timeout_ms`, its row published at 0.
fn expiring(timeout_ms: u64, delivery_timeout_ms: u64) -> (Drive, Vec<Cmd>) {
    let r = Relay::new(1, timeout_ms, true)
        .max_in_flight(1)
        .delivery_timeout(Some(delivery_timeout_ms));
    let mut d = Drive::with(r, 1);
    let first = d.timer(0, RelayTimer::Poll);
    (d, first)
}

/// Within `delivery.timeout.ms` the library retries the batch under its
/// (producer id, epoch, sequence number), so the broker can drop it: a
/// retry 1 ms before the timeout is still one.
#[test]
fn a_retry_inside_the_delivery_timeout_keeps_its_sequence_number() {
    let (mut d, first) = expiring(60_000, 120_001);
    assert_eq!(stamped(&first), [(1, 0, 0)]);
    assert_eq!(stamped(&d.timer(60_000, RelayTimer::Timeout)), [(1, 0, 0)]);
    let last = d.timer(120_000, RelayTimer::Timeout);
    assert_eq!(stamped(&last), [(1, 0, 0)]);
    assert_eq!(reached(&last), [sit::PUBLISH_RETRIED]);
    // The next timer is the batch's expiry, 1 ms on, before the next retry.
    assert!(last.iter().any(|c| matches!(
        c,
        sim::Command::SetTimer { after_us, .. } if *after_us == US_PER_MS
    )));
}

/// Past it the library has given the batch up (Kafka: `delivery.timeout.ms
/// <= now - createdMs`), the relay's resend 1 ms later is a new record:
/// the idempotent producer bumped its epoch and numbers from 0 (KIP-360),
/// which the broker takes as new.
#[test]
fn past_the_delivery_timeout_the_resend_is_a_new_record_under_a_bumped_epoch() {
    let (mut d, _) = expiring(60_000, 119_999);
    assert_eq!(stamped(&d.timer(60_000, RelayTimer::Timeout)), [(1, 0, 0)]);
    // At 119,999 ms the batch is given up; nothing is sent, and the relay
    // waits for its own timeout.
    let expiry = d.timer(119_999, RelayTimer::Timeout);
    assert!(stamped(&expiry).is_empty());
    assert!(d.st.rows[0].given_up && d.st.sequence_unresolved);
    let resend = d.timer(120_000, RelayTimer::Timeout);
    assert_eq!(stamped(&resend), [(1, 1, 0)]);
    assert_eq!(reached(&resend), [sit::RESENT_AFTER_DELIVERY_TIMEOUT]);
    assert!(!d.st.sequence_unresolved);
    // The new batch has a delivery timeout of its own.
    assert_eq!(d.st.rows[0].expires_us, (120_000 + 119_999) * US_PER_MS);
}

/// A batch given up has failed: a confirmation that arrives after it (the
/// cut just ended) confirms nothing, and the row is published again.
#[test]
fn a_confirmation_after_the_batch_was_given_up_is_ignored() {
    let (mut d, _) = expiring(60_000, 119_999);
    d.timer(60_000, RelayTimer::Timeout);
    d.timer(119_999, RelayTimer::Timeout);
    assert!(d.confirm(119_999, 1).is_empty());
    assert!(!d.st.rows[0].confirmed);
    assert_eq!(stamped(&d.timer(120_000, RelayTimer::Timeout)), [(1, 1, 0)]);
    // The new record's own confirmation counts.
    assert!(!d.confirm(120_100, 1).is_empty());
    assert!(d.st.rows[0].confirmed);
}

/// While a batch given up is unresolved, no new row goes out under the
/// old epoch (Kafka drains no new batch then); once the epoch is bumped,
/// the new row follows the resend under the new epoch.
#[test]
fn no_new_row_goes_out_until_the_epoch_is_bumped() {
    let r = Relay::new(1, 60_000, true)
        .max_in_flight(2)
        .delivery_timeout(Some(119_999));
    let mut d = Drive::with(r, 1);
    assert_eq!(stamped(&d.timer(0, RelayTimer::Poll)), [(1, 0, 0)]);
    d.timer(60_000, RelayTimer::Timeout);
    d.timer(119_999, RelayTimer::Timeout);
    // A row committed now finds a free slot, and waits all the same.
    let mut row = d.outbox[0];
    row.ev.id = 2;
    d.outbox.push(row);
    assert!(stamped(&d.timer(119_999, RelayTimer::Poll)).is_empty());
    assert_eq!(
        stamped(&d.timer(120_000, RelayTimer::Timeout)),
        [(1, 1, 0), (2, 1, 1)]
    );
}

/// Only an idempotent, non-transactional relay gives batches up: a plain
/// relay's resends are new copies anyway, and a transactional one's
/// expired batch aborts its transaction (relay.rs).
#[test]
fn only_an_idempotent_relay_has_a_delivery_timeout() {
    let plain = Relay::<World>::new(1, TIMEOUT_MS, false).delivery_timeout(Some(120_000));
    assert_eq!(plain.delivery_timeout_ms, None);
    let tx = Relay::<World>::new(1, TIMEOUT_MS, false)
        .transactional(true)
        .delivery_timeout(Some(120_000));
    assert_eq!(tx.delivery_timeout_ms, None);
    let off = Relay::<World>::new(1, TIMEOUT_MS, true)
        .max_in_flight(6)
        .delivery_timeout(Some(120_000));
    assert_eq!(off.delivery_timeout_ms, None, "idempotence off above five");
    let idem = Relay::<World>::new(1, TIMEOUT_MS, true).delivery_timeout(Some(120_000));
    assert_eq!(idem.delivery_timeout_ms, Some(120_000));
}

/// A row given up while an older-epoch publish is still out waits for it,
/// and the relay keeps a timer for its next try: it never stalls.
#[test]
fn a_row_given_up_behind_a_publish_still_out_waits_and_tries_again() {
    let r = Relay::new(1, 60_000, true)
        .max_in_flight(2)
        .delivery_timeout(Some(119_999));
    let mut d = Drive::with(r, 1);
    d.timer(0, RelayTimer::Poll);
    // Row 2 goes out 30 s later, under seq 1 of epoch 0.
    let mut row = d.outbox[0];
    row.ev.id = 2;
    d.outbox.push(row);
    assert_eq!(stamped(&d.timer(30_000, RelayTimer::Poll)), [(2, 0, 1)]);
    d.timer(60_000, RelayTimer::Timeout);
    d.timer(90_000, RelayTimer::Timeout);
    // Row 1 is given up at 119,999 ms; at 120,000 ms row 2 is still out.
    assert!(stamped(&d.timer(119_999, RelayTimer::Timeout)).is_empty());
    let waiting = d.timer(120_000, RelayTimer::Timeout);
    assert!(stamped(&waiting).is_empty(), "{:?}", stamped(&waiting));
    assert!(waiting
        .iter()
        .any(|c| matches!(c, sim::Command::SetTimer { .. })));
    // Row 2's confirmation resolves the old epoch; row 1 goes out under a
    // new one at the relay's next timeout, a minute after its last try.
    d.confirm(120_050, 2);
    assert!(stamped(&d.timer(150_000, RelayTimer::Timeout)).is_empty());
    assert_eq!(stamped(&d.timer(180_000, RelayTimer::Timeout)), [(1, 1, 0)]);
}
