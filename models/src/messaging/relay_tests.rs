//! The relay's unit tests: how many publishes it keeps out at once, and
//! what it stamps them with.

use super::*;
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
        let r = Relay::new(1, TIMEOUT_MS, idempotence).max_in_flight(max_in_flight);
        let outbox = (1..=rows)
            .map(|id| OutboxRow {
                ev: Event {
                    id,
                    entity: id,
                    value: 5,
                    version: 1,
                    entity_space: &crate::messaging::ENTITY,
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
