//! The broker's unit tests: which stored copy an ack or a renewal names.

use super::*;
use crate::registry::Msg as World;

type Cmd = sim::Command<World, Obs, BrokerTimer>;

/// One broker with two consumers (actors 1 and 2), driven handler by
/// handler at the times given.
struct Drive {
    b: Broker<World>,
    s: BrokerStorage,
    choices: sim::Choices,
}

impl Drive {
    fn new(exactly_once_delivery: bool) -> Drive {
        Drive::with_dedup_window(exactly_once_delivery, 0)
    }

    /// A broker that drops a publish whose message id it stored within
    /// `dedup_window_ms` (0: no window).
    fn with_dedup_window(exactly_once_delivery: bool, dedup_window_ms: u64) -> Drive {
        let b = Broker::new(BrokerConfig {
            consumers: vec![1, 2],
            visibility_timeout_ms: 30_000,
            max_deliveries: 0,
            at_max_deliveries: AtMaxDeliveries::DeadLetter,
            dedup_window_ms,
            transaction_timeout_ms: 60_000,
            exactly_once_delivery,
            producer_id_expiration_ms: 0,
        });
        let mut s = None;
        b.reset_storage(&mut s);
        let mut choices = sim::Choices::new();
        choices.start_random(0, 1, false);
        Drive {
            b,
            s: s.expect("storage"),
            choices,
        }
    }

    fn msg(&mut self, now_ms: u64, from: ActorId, msg: Msg) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = sim::Context::detached(now_ms * US_PER_MS, 3, &mut self.choices, &mut out);
        self.b
            .on_msg(&mut (), &mut self.s, from, World::wrap(msg), &mut ctx);
        out
    }

    fn lease_runs_out(&mut self, now_ms: u64) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = sim::Context::detached(now_ms * US_PER_MS, 3, &mut self.choices, &mut out);
        self.b
            .on_timer(&mut (), &mut self.s, BrokerTimer::Visibility, &mut ctx);
        out
    }

    fn ack(&mut self, now_ms: u64, receipt: u32) -> Vec<Cmd> {
        self.msg(now_ms, 1, Msg::Ack { id: 1, receipt })
    }

    /// Where each stored copy stands.
    fn statuses(&self) -> Vec<QStatus> {
        self.s.queue.iter().map(|m| m.status()).collect()
    }
}

fn event() -> Event {
    Event {
        id: 1,
        entity: 1,
        value: 5,
        version: 1,
        entity_space: &crate::messaging::ENTITY,
        entity_part: 0,
    }
}

/// The receipts of the deliveries among `out`.
fn receipts(out: &[Cmd]) -> Vec<u32> {
    Cmd::sent(out)
        .filter_map(|msg| match msg.peek() {
            Some(&Msg::Deliver { receipt, .. }) => Some(receipt),
            _ => None,
        })
        .collect()
}

fn reached(out: &[Cmd], id: sim::SituationId) -> bool {
    Cmd::reaches(out, id)
}

/// Two stored copies of one event (a publish the network duplicated):
/// copy A out under receipt 1 at 0 s, copy B under receipt 2 at 5 s. A's
/// lease runs out at 30 s and A goes out again under receipt 3, which is
/// acked at 31 s. Then receipt 1's ack arrives, late.
fn a_late_ack_after_its_copys_redelivery_was_acked(eod: bool) -> (Drive, Vec<Cmd>) {
    let mut d = Drive::new(eod);
    assert_eq!(receipts(&d.msg(0, 0, Msg::Publish { ev: event() })), [1]);
    assert_eq!(
        receipts(&d.msg(5_000, 0, Msg::Publish { ev: event() })),
        [2]
    );
    assert_eq!(receipts(&d.lease_runs_out(30_000)), [3]);
    d.ack(31_000, 3);
    assert_eq!(d.statuses()[0], QStatus::Acked);
    let late = d.ack(32_000, 1);
    (d, late)
}

/// The publish dedup window runs from the copy the broker stored; a publish
/// it drops as a duplicate does not restart it. This is nats-server's
/// reading (`purgeMsgIds` times an id from the stored message, and
/// nats-server#7302 observes it on 2.11.8), and the one docs/fidelity.md
/// assumes for SQS FIFO and Service Bus, which publish no answer: under it
/// every copy a restarting window would store is stored too. A 2-minute
/// window: stored at 0 s, dropped 1 ms inside the window, and 2 ms later,
/// 1 ms past the stored copy's window, stored again, where a window
/// restarted by the dropped publish would still drop it.
#[test]
fn a_dropped_duplicate_does_not_restart_the_dedup_window() {
    let mut d = Drive::with_dedup_window(false, 120_000);
    let stored = d.msg(0, 0, Msg::Publish { ev: event() });
    assert!(!reached(&stored, sit::BROKER_DEDUP_HIT));
    let dropped = d.msg(119_999, 0, Msg::Publish { ev: event() });
    assert!(reached(&dropped, sit::BROKER_DEDUP_HIT));
    assert_eq!(d.statuses().len(), 1, "the duplicate is not stored");
    let past = d.msg(120_001, 0, Msg::Publish { ev: event() });
    assert!(
        !reached(&past, sit::BROKER_DEDUP_HIT),
        "the window ran from the stored copy, not from the dropped publish"
    );
    assert_eq!(d.statuses().len(), 2, "stored again: a second copy");
}

/// A receipt names a delivery of one stored copy: an ack whose lease ran
/// out acks that copy or nothing, never the event's other copy, which its
/// own consumer is still working on. Before, such an ack fell back to the
/// event's first copy out: B, taken from its consumer as a late ack.
#[test]
fn a_late_ack_never_acks_another_copy_of_its_event() {
    for eod in [false, true] {
        let (mut d, late) = a_late_ack_after_its_copys_redelivery_was_acked(eod);
        assert!(!reached(&late, sit::LATE_ACK), "eod {eod}");
        assert!(
            matches!(d.statuses()[1], QStatus::InFlight { receipt: 2, .. }),
            "eod {eod}: {:?}",
            d.statuses()
        );
        // B's own ack acks B, on time.
        let own = d.ack(33_000, 2);
        assert!(!reached(&own, sit::LATE_ACK) && !reached(&own, sit::STALE_ACK_REFUSED));
        assert_eq!(d.statuses(), [QStatus::Acked, QStatus::Acked]);
    }
}

/// While its copy is out again, a late ack still acks that copy without
/// exactly-once delivery (NATS, nats-server#4786) and is refused with it;
/// the other copy is left alone either way.
#[test]
fn a_late_ack_while_its_copy_is_out_again_acks_that_copy_only() {
    for eod in [false, true] {
        let mut d = Drive::new(eod);
        d.msg(0, 0, Msg::Publish { ev: event() });
        d.msg(5_000, 0, Msg::Publish { ev: event() });
        assert_eq!(receipts(&d.lease_runs_out(30_000)), [3]);
        let late = d.ack(31_000, 1);
        let b_out = matches!(d.statuses()[1], QStatus::InFlight { receipt: 2, .. });
        assert!(b_out, "eod {eod}: {:?}", d.statuses());
        if eod {
            assert!(reached(&late, sit::STALE_ACK_REFUSED));
            assert!(matches!(
                d.statuses()[0],
                QStatus::InFlight { receipt: 3, .. }
            ));
        } else {
            assert!(reached(&late, sit::LATE_ACK));
            assert_eq!(d.statuses()[0], QStatus::Acked);
        }
    }
}

/// A renewal names one delivery of one copy too: one that trails its own
/// copy's ack changes nothing and says nothing, while the event's other
/// copy is out; one from a delivery whose lease ran out is after a
/// redelivery. Before, any copy of the event out made a trailing renewal
/// pass for one after a redelivery.
#[test]
fn a_renewal_is_judged_by_its_own_copy() {
    let extend = |receipt| Msg::Extend { id: 1, receipt };
    let mut d = Drive::new(false);
    d.msg(0, 0, Msg::Publish { ev: event() });
    d.msg(5_000, 0, Msg::Publish { ev: event() });
    d.ack(10_000, 1);
    let trailing = d.msg(10_001, 1, extend(1));
    assert!(!reached(&trailing, sit::RENEWAL_AFTER_REDELIVERY));
    assert!(!reached(&trailing, sit::LEASE_RENEWED));
    // B's renewal in time renews B.
    assert!(reached(&d.msg(20_000, 2, extend(2)), sit::LEASE_RENEWED));
    // The redelivered copy's older delivery asks too late, before and
    // after the newer delivery's ack.
    let (mut d, _) = a_late_ack_after_its_copys_redelivery_was_acked(false);
    assert!(reached(
        &d.msg(33_000, 1, extend(1)),
        sit::RENEWAL_AFTER_REDELIVERY
    ));
    let mut d = Drive::new(false);
    d.msg(0, 0, Msg::Publish { ev: event() });
    d.lease_runs_out(30_000);
    assert!(reached(
        &d.msg(30_500, 1, extend(1)),
        sit::RENEWAL_AFTER_REDELIVERY
    ));
}

/// A broker with `max_deliveries` 1 that discards a message after its last
/// delivery, no consumer acking.
fn discarding() -> Drive {
    let mut d = Drive::new(false);
    d.b.cfg.max_deliveries = 1;
    d.b.cfg.at_max_deliveries = AtMaxDeliveries::Discard;
    d
}

/// What the broker answered a producer's `EndTx` with.
fn tx_ended(out: &[Cmd]) -> Option<bool> {
    Cmd::sent(out).find_map(|msg| match msg.peek() {
        Some(&Msg::TxEnded { committed, .. }) => Some(committed),
        _ => None,
    })
}

/// Kafka's coordinator answers a commit retried after a lost answer with
/// success once the transaction committed, whatever became of its messages
/// since: the commit is a fact of the transaction, not of the queue. Before,
/// a copy discarded after its last delivery made the retried commit pass
/// for one that came after the transaction timed out.
#[test]
fn a_retried_commit_of_a_committed_transaction_succeeds_after_its_message_is_discarded() {
    let mut d = discarding();
    d.msg(0, 0, Msg::TxPublish { ev: event() });
    let first = d.msg(
        100,
        0,
        Msg::EndTx {
            id: 1,
            commit: true,
        },
    );
    assert_eq!(tx_ended(&first), Some(true));
    // Delivered once, never acked: its lease runs out and it is dropped.
    d.lease_runs_out(30_100);
    assert_eq!(d.statuses(), [QStatus::Discarded]);
    let again = d.msg(
        40_000,
        0,
        Msg::EndTx {
            id: 1,
            commit: true,
        },
    );
    assert_eq!(tx_ended(&again), Some(true));
    assert!(!reached(&again, sit::COMMIT_AFTER_TX_TIMEOUT));
}

/// A transactional producer is an idempotent one (Kafka turns idempotence
/// on with `transactional.id`): a publish resent within its transaction,
/// after a lost confirmation or as a network copy, is confirmed and
/// dropped, so the commit makes one message visible; and the transaction's
/// timeout runs from its first publish, not from each resend. Before, every
/// copy was stored with a timeout of its own, and the commit made them all
/// visible.
#[test]
fn a_publish_resent_within_a_transaction_is_stored_once() {
    let mut d = Drive::new(false);
    d.msg(0, 0, Msg::TxPublish { ev: event() });
    let resent = d.msg(5_000, 0, Msg::TxPublish { ev: event() });
    assert!(
        Cmd::sent(&resent).any(|m| matches!(m.peek(), Some(&Msg::PublishAck { id: 1, .. }))),
        "the resend is confirmed, as its sender waits for that"
    );
    assert_eq!(d.s.queue.len(), 1, "{:?}", d.statuses());
    let ended = d.msg(
        6_000,
        0,
        Msg::EndTx {
            id: 1,
            commit: true,
        },
    );
    assert_eq!(tx_ended(&ended), Some(true));
    assert_eq!(receipts(&ended), [1], "one message delivered");
    // A network copy of the publish arriving after the commit is no new message.
    let late = d.msg(7_000, 0, Msg::TxPublish { ev: event() });
    assert_eq!(d.s.queue.len(), 1, "{:?}", d.statuses());
    assert!(receipts(&late).is_empty());

    // The timeout counts from the transaction's first publish: a resend at
    // 50 s does not keep it open past 60 s.
    let mut d = Drive::new(false);
    d.msg(0, 0, Msg::TxPublish { ev: event() });
    d.msg(50_000, 0, Msg::TxPublish { ev: event() });
    let mut out = Vec::new();
    let mut ctx = sim::Context::detached(60_000 * US_PER_MS, 3, &mut d.choices, &mut out);
    d.b.on_timer(&mut (), &mut d.s, BrokerTimer::TxTimeout, &mut ctx);
    let ended = d.msg(
        61_000,
        0,
        Msg::EndTx {
            id: 1,
            commit: true,
        },
    );
    assert_eq!(tx_ended(&ended), Some(false), "{:?}", d.statuses());
    assert!(receipts(&ended).is_empty());
}

/// Event `id`, as an idempotent producer with producer id 7 publishes it
/// under sequence number `seq`.
fn seq_publish(id: u32, seq: u32) -> Msg {
    Msg::SeqPublish {
        ev: Event { id, ..event() },
        pid: 7,
        epoch: 0,
        seq,
    }
}

/// The event ids the broker stored, in order.
fn stored(d: &Drive) -> Vec<u32> {
    d.s.queue.iter().map(|m| m.ev.id).collect()
}

/// Whether `out` confirms a publish of event `id`.
fn confirms(out: &[Cmd], id: u32) -> bool {
    Cmd::sent(out).any(|m| matches!(m.peek(), Some(&Msg::PublishAck { id: i, .. }) if i == id))
}

/// Kafka's broker takes an idempotent producer's batches in sequence: one
/// whose number skips a missing one (still on its way, or lost and to be
/// resent) is refused with OUT_OF_ORDER_SEQUENCE_NUMBER, unstored, and the
/// producer sends it again. Before, the broker kept only the highest number
/// it had stored and took every lower one for a duplicate: with two
/// publishes out at once, the missing one's resend was dropped and its
/// event lost.
#[test]
fn a_publish_that_skips_a_sequence_number_is_refused_until_the_gap_fills() {
    let mut d = Drive::new(false);
    // A new producer id starts at 0: its number 1 arriving first is out of sequence.
    let early = d.msg(0, 0, seq_publish(2, 1));
    assert!(!confirms(&early, 2));
    assert!(stored(&d).is_empty());
    d.msg(10, 0, seq_publish(1, 0));
    // Number 2 overtakes number 1's resend.
    let gap = d.msg(20, 0, seq_publish(3, 2));
    assert!(!confirms(&gap, 3));
    assert!(!reached(&gap, sit::PRODUCER_SEQUENCE_DEDUP_HIT));
    assert_eq!(stored(&d), [1]);
    assert!(confirms(&d.msg(5_000, 0, seq_publish(2, 1)), 2));
    assert!(confirms(&d.msg(5_010, 0, seq_publish(3, 2)), 3));
    assert_eq!(stored(&d), [1, 2, 3]);
}

/// Kafka's broker keeps the last five batches per producer id: a resend of
/// one of them is confirmed as a duplicate and not stored; one older than
/// that is not recognised, and is refused as out of sequence (unstored,
/// unconfirmed: the producer settled it long ago or never will).
#[test]
fn a_resend_is_recognised_among_the_last_five_sequence_numbers_only() {
    let mut d = Drive::new(false);
    for seq in 0..=6 {
        d.msg(u64::from(seq), 0, seq_publish(seq + 1, seq));
    }
    assert_eq!(stored(&d), [1, 2, 3, 4, 5, 6, 7]);
    // The last five are 2..=6.
    for seq in 2..=6 {
        let resend = d.msg(1_000, 0, seq_publish(seq + 1, seq));
        assert!(
            reached(&resend, sit::PRODUCER_SEQUENCE_DEDUP_HIT),
            "seq {seq}"
        );
        assert!(confirms(&resend, seq + 1), "seq {seq}");
    }
    let old = d.msg(2_000, 0, seq_publish(2, 1));
    assert!(!reached(&old, sit::PRODUCER_SEQUENCE_DEDUP_HIT));
    assert!(!confirms(&old, 2));
    assert_eq!(stored(&d), [1, 2, 3, 4, 5, 6, 7]);
}

/// Each refusal of an idempotent producer's publish out of sequence is a
/// situation of its own, as Kafka's producer sees each
/// OUT_OF_ORDER_SEQUENCE_NUMBER: a number ahead of a gap (the first of a
/// new producer id overtaken, or a later one overtaking a lost one's
/// resend) and a copy older than the last five. A publish taken in
/// sequence, and a resend among the last five, are not refusals.
#[test]
fn a_publish_refused_out_of_sequence_is_reported() {
    let mut d = Drive::new(false);
    let early = d.msg(0, 0, seq_publish(2, 1));
    assert!(reached(&early, sit::PUBLISH_OUT_OF_SEQUENCE_REFUSED));
    let first = d.msg(10, 0, seq_publish(1, 0));
    assert!(!reached(&first, sit::PUBLISH_OUT_OF_SEQUENCE_REFUSED));
    let gap = d.msg(20, 0, seq_publish(3, 2));
    assert!(reached(&gap, sit::PUBLISH_OUT_OF_SEQUENCE_REFUSED));
    let resend = d.msg(30, 0, seq_publish(1, 0));
    assert!(reached(&resend, sit::PRODUCER_SEQUENCE_DEDUP_HIT));
    assert!(!reached(&resend, sit::PUBLISH_OUT_OF_SEQUENCE_REFUSED));
    for seq in 1..=6 {
        let next = d.msg(100 + u64::from(seq), 0, seq_publish(seq + 1, seq));
        assert!(
            !reached(&next, sit::PUBLISH_OUT_OF_SEQUENCE_REFUSED),
            "seq {seq}"
        );
    }
    let old = d.msg(2_000, 0, seq_publish(2, 1));
    assert!(reached(&old, sit::PUBLISH_OUT_OF_SEQUENCE_REFUSED));
    assert_eq!(stored(&d), [1, 2, 3, 4, 5, 6, 7]);
}

/// After the broker forgot a producer id, the first publish it takes starts
/// the sequence again, whatever its number. A resend of a lower number was
/// never stored under that start, so it is no duplicate: Kafka matches a
/// retry only against batches it stored. It is refused unconfirmed (the
/// producer keeps it), never confirmed while its event is not in the queue.
#[test]
fn after_an_expiry_a_number_below_the_new_start_is_not_confirmed_unstored() {
    let mut d = Drive::new(false);
    d.b.cfg.producer_id_expiration_ms = 1_000;
    d.msg(0, 0, seq_publish(1, 0));
    // Idle past the expiry; numbers 1 and 2 go out, 1 is lost, 2 arrives.
    let start = d.msg(5_000, 0, seq_publish(3, 2));
    assert!(confirms(&start, 3));
    assert_eq!(stored(&d), [1, 3]);
    let resend = d.msg(5_100, 0, seq_publish(2, 1));
    assert!(!reached(&resend, sit::PRODUCER_SEQUENCE_DEDUP_HIT));
    assert!(!confirms(&resend, 2), "event 2 was never stored");
    // A resend of the new start itself is still a duplicate.
    assert!(reached(
        &d.msg(5_200, 0, seq_publish(3, 2)),
        sit::PRODUCER_SEQUENCE_DEDUP_HIT
    ));
}

/// The visibility timer's expiries are made in dispatch's own pass. The
/// law: after any steps (publishes, acks and renewals naming any receipt,
/// firings of the timer, at times that meet leases' ends exactly), a
/// broker whose firing makes the two passes it made before (every lease
/// that ran out made visible, then a dispatch) asks for the same commands,
/// draws the same numbers and keeps the same queue.
mod one_pass {
    use super::*;
    use proptest::prelude::*;

    /// The firing as it was: the expiries, then a dispatch that expires nothing.
    fn two_passes(d: &mut Drive, now_ms: u64) -> Vec<Cmd> {
        let now_us = now_ms * US_PER_MS;
        for m in &mut d.s.queue {
            if let QStatus::InFlight { deadline_us, .. } = m.status() {
                if deadline_us <= now_us {
                    m.set_status(QStatus::Ready);
                }
            }
        }
        let mut out = Vec::new();
        let mut ctx = sim::Context::detached(now_us, 3, &mut d.choices, &mut out);
        d.b.dispatch(&mut d.s, &mut ctx);
        out
    }

    #[derive(Clone, Copy, Debug)]
    enum Step {
        Publish(u32),
        Ack(u32, u32),
        Extend(u32, u32),
        Fire,
    }

    /// A step after a gap in ms; the gaps add up to the 30 s lease's end
    /// exactly as often as not.
    fn step() -> impl Strategy<Value = (u64, Step)> {
        let gap_ms = prop_oneof![
            Just(0u64),
            Just(10_000),
            Just(15_000),
            Just(30_000),
            0..40_000u64
        ];
        let what = prop_oneof![
            (1..4u32).prop_map(Step::Publish),
            (1..4u32, 1..10u32).prop_map(|(id, r)| Step::Ack(id, r)),
            (1..4u32, 1..10u32).prop_map(|(id, r)| Step::Extend(id, r)),
            Just(Step::Fire),
            Just(Step::Fire),
        ];
        (gap_ms, what)
    }

    proptest! {
        #[test]
        fn a_firing_in_one_pass_does_what_two_passes_did(
            steps in prop::collection::vec(step(), 1..40),
            max_deliveries in 0..3u32,
            eod in any::<bool>(),
        ) {
            let mut one = Drive::new(eod);
            let mut two = Drive::new(eod);
            one.b.cfg.max_deliveries = max_deliveries;
            two.b.cfg.max_deliveries = max_deliveries;
            let mut now_ms = 0;
            for (gap_ms, step) in steps {
                now_ms += gap_ms;
                let mut both = |msg: Msg| (one.msg(now_ms, 1, msg), two.msg(now_ms, 1, msg));
                let (a, b) = match step {
                    Step::Publish(id) => both(Msg::Publish { ev: Event { id, ..event() } }),
                    Step::Ack(id, receipt) => both(Msg::Ack { id, receipt }),
                    Step::Extend(id, receipt) => both(Msg::Extend { id, receipt }),
                    Step::Fire => (one.lease_runs_out(now_ms), two_passes(&mut two, now_ms)),
                };
                prop_assert_eq!(a, b);
                prop_assert_eq!(one.statuses(), two.statuses());
                prop_assert_eq!(&one.s.copies, &two.s.copies);
            }
        }
    }
}

/// Dispatch reads when each message is due in place of its status. The
/// law: after any steps (plain and transactional publishes, commits, aborts,
/// acks and renewals naming any receipt, both timers, restarts, a delivery
/// cap that dead-letters or discards), a ready message is due at 0, a
/// message in flight a microsecond past its status's deadline, and every
/// other message at `TimeUs::MAX`.
mod due {
    use super::*;
    use proptest::prelude::*;

    /// A step: a message (kind 0 to 5), a timer's firing (6, 7), a restart (8).
    fn apply(d: &mut Drive, now_ms: u64, (kind, id, n): (u8, u32, u32)) {
        let (ev, mut out) = (Event { id, ..event() }, Vec::new());
        let mut ctx = sim::Context::detached(now_ms * US_PER_MS, 3, &mut d.choices, &mut out);
        let (b, s, commit) = (&d.b, &mut d.s, n % 2 == 0);
        let msg = match kind {
            0 => Msg::Publish { ev },
            1 => Msg::TxPublish { ev },
            2 => Msg::EndTx { id, commit },
            3 => Msg::Ack { id, receipt: n },
            4 => Msg::AckWithResult { id, receipt: n },
            _ => Msg::Extend { id, receipt: n },
        };
        match kind {
            6 => b.on_timer(&mut (), s, BrokerTimer::Visibility, &mut ctx),
            7 => b.on_timer(&mut (), s, BrokerTimer::TxTimeout, &mut ctx),
            8 => b.on_start(&mut (), s, &mut ctx),
            _ => b.on_msg(&mut (), s, 1, World::wrap(msg), &mut ctx),
        }
    }

    proptest! {
        #[test]
        fn a_message_is_due_as_its_status_says(
            steps in prop::collection::vec((0..70_000u64, 0..9u8, 1..4u32, 1..10u32), 1..60),
            max_deliveries in 0..3u32,
            at_max in prop_oneof![Just(AtMaxDeliveries::DeadLetter), Just(AtMaxDeliveries::Discard)],
            eod in any::<bool>(),
        ) {
            let mut d = Drive::new(eod);
            (d.b.cfg.max_deliveries, d.b.cfg.at_max_deliveries) = (max_deliveries, at_max);
            let mut now_ms = 0;
            for (gap_ms, kind, id, n) in steps {
                now_ms += gap_ms;
                apply(&mut d, now_ms, (kind, id, n));
                for m in &d.s.queue {
                    let due = match m.status() {
                        QStatus::Ready => 0,
                        QStatus::InFlight { deadline_us, .. } => deadline_us + 1,
                        _ => TimeUs::MAX,
                    };
                    prop_assert_eq!(m.due_us, due, "{:?}", m);
                }
            }
        }
    }
}
