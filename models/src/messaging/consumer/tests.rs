//! The consumer's unit tests: what it does with each answer, timeout and
//! crash, phase by phase.

use super::*;
use crate::registry::Msg as World;

fn consumer(ack: AckMode, handler: Handler) -> Consumer<World> {
    Consumer::new(ConsumerConfig {
        broker: 0,
        db: 1,
        handler,
        ack,
        processing_ms: 10,
        processing_jitter_ms: 0,
        tx_timeout_ms: 100,
        tx_max_attempts: 3,
        lease_renewal_ms: 0,
        version: 0,
    })
}

/// Whether a crash of a consumer holding one job in `phase` reports the gap.
fn gap(ack: AckMode, handler: Handler, phase: Phase) -> bool {
    let c = consumer(ack, handler);
    let mut st = ConsumerState::new();
    let ev = Event {
        id: 1,
        entity: 1,
        value: 5,
        version: 1,
        entity_space: &crate::messaging::ENTITY,
        entity_part: 0,
    };
    st.jobs.insert(Job {
        ev,
        receipt: 1,
        phase,
        redelivered: false,
        tx: TxKind::Effect,
        attempt: 1,
        version: 0,
    });
    let mut seen = Vec::new();
    c.on_crash(&st, &(), &mut |s| seen.push(s));
    assert!(seen.iter().all(|&s| s == sit::CRASH_BETWEEN_ACK_AND_COMMIT));
    !seen.is_empty()
}

#[test]
fn a_crash_falls_into_the_ack_gap_only_where_the_broker_let_go_and_no_commit_was_sent() {
    use AckMode::*;
    use Phase::*;
    let plain = Handler::InboxSameTx;
    // Acked on receipt: everything before the effect's transaction is lost.
    assert!(gap(BeforeCommit, plain, Processing));
    assert!(gap(BeforeCommit, Handler::InboxSeparateTx, Checking));
    assert!(gap(BeforeCommit, Handler::InboxRecordFirst, Recording));
    // The effect's transaction is on its way: the database applies it.
    assert!(!gap(BeforeCommit, plain, Committing));
    assert!(!gap(BeforeCommit, Handler::InboxSeparateTx, Recording));
    // Acked with result: while the result is awaited, and after a
    // counted ack while a record-first inbox row goes ahead of the effect.
    assert!(gap(CheckedBeforeCommit, plain, Acking));
    assert!(!gap(CheckedBeforeCommit, plain, Processing));
    assert!(!gap(CheckedBeforeCommit, plain, Committing));
    assert!(gap(
        CheckedBeforeCommit,
        Handler::InboxRecordFirst,
        Recording
    ));
    assert!(!gap(
        CheckedBeforeCommit,
        Handler::InboxRecordFirst,
        Checking
    ));
    // Acked after the commit: the broker redelivers whatever a crash drops.
    for phase in [Checking, Processing, Committing, Recording] {
        assert!(
            !gap(AfterCommit, Handler::InboxRecordFirst, phase),
            "{phase:?}"
        );
    }
    // No job, no gap.
    let idle = ConsumerState::new();
    let mut seen = Vec::new();
    consumer(BeforeCommit, plain).on_crash(&idle, &(), &mut |s| seen.push(s));
    assert!(seen.is_empty());
}

type Cmd = sim::Command<World, Obs, ConsumerTimer>;

/// One consumer driven handler by handler, its commands kept per call.
struct Drive {
    c: Consumer<World>,
    st: ConsumerState,
    choices: sim::Choices,
}

impl Drive {
    fn new(ack: AckMode, handler: Handler) -> Drive {
        let mut choices = sim::Choices::new();
        choices.start_random(0, 1, false);
        Drive {
            c: consumer(ack, handler),
            st: ConsumerState::new(),
            choices,
        }
    }

    fn msg(&mut self, msg: Msg) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = sim::Context::detached(0, 2, &mut self.choices, &mut out);
        self.c
            .on_msg(&mut self.st, &mut (), 0, World::wrap(msg), &mut ctx);
        out
    }

    fn fire(&mut self, timer: ConsumerTimer) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = sim::Context::detached(0, 2, &mut self.choices, &mut out);
        self.c.on_timer(&mut self.st, &mut (), timer, &mut ctx);
        out
    }

    /// Delivers event #1 as receipt 7, does the work and, for a checked
    /// ack, hears that the ack counted: the first writing transaction.
    fn up_to_the_commit(&mut self) -> Vec<Cmd> {
        self.msg(Msg::Deliver {
            ev: event(),
            receipt: 7,
            redelivered: false,
            sent_us: 0,
        });
        let out = self.fire(ConsumerTimer::Processed { slot: 0 });
        if self.c.cfg.ack != AckMode::CheckedBeforeCommit {
            return out;
        }
        self.msg(Msg::AckResult {
            id: 1,
            receipt: 7,
            ok: true,
        })
    }

    fn done(&mut self, kind: TxKind, result: TxResult) -> Vec<Cmd> {
        self.msg(Msg::TxDone {
            id: 1,
            slot: 0,
            receipt: 7,
            kind,
            result,
        })
    }

    fn timeout(&mut self) -> Vec<Cmd> {
        self.fire(ConsumerTimer::TxTimeout { slot: 0 })
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

/// The transactions sent: kind, receipt, attempt.
fn txs(out: &[Cmd]) -> Vec<(TxKind, u32, u8)> {
    Cmd::sent(out)
        .filter_map(|msg| match msg.peek() {
            Some(&Msg::Tx {
                kind,
                receipt,
                attempt,
                ..
            }) => Some((kind, receipt, attempt)),
            _ => None,
        })
        .collect()
}

fn reached(out: &[Cmd], id: sim::SituationId) -> bool {
    Cmd::reaches(out, id)
}

#[test]
fn a_commit_without_an_answer_is_sent_again_once_the_ack_let_the_message_go() {
    use AckMode::*;
    let inbox = Handler::InboxSameTx;
    for ack in [BeforeCommit, CheckedBeforeCommit] {
        let mut d = Drive::new(ack, inbox);
        assert_eq!(txs(&d.up_to_the_commit()), [(TxKind::InboxAndEffect, 7, 1)]);
        // The same transaction with the same ids: the database cannot
        // tell it from the first, which may have committed.
        for attempt in 2..=3 {
            let out = d.timeout();
            assert_eq!(txs(&out), [(TxKind::InboxAndEffect, 7, attempt)], "{ack:?}");
            assert!(reached(&out, sit::TX_RESENT_AFTER_ACK));
        }
        // tx_max_attempts = 3: the work is given up, and says so.
        let out = d.timeout();
        assert!(txs(&out).is_empty());
        assert!(reached(&out, sit::TX_GIVEN_UP_AFTER_ACK), "{ack:?}");
        assert!(d.st.jobs.iter().next().is_none());
    }
    // Acked after the commit, the broker still holds the message: the
    // job is dropped unacked and the lease redelivers it.
    let mut d = Drive::new(AfterCommit, inbox);
    d.up_to_the_commit();
    let out = d.timeout();
    assert!(txs(&out).is_empty());
    assert!(!reached(&out, sit::TX_GIVEN_UP_AFTER_ACK));
    assert!(d.st.jobs.iter().next().is_none());
    // A checked consumer before its ack: the inbox check is dropped too.
    let mut d = Drive::new(CheckedBeforeCommit, Handler::InboxSeparateTx);
    let out = d.msg(Msg::Deliver {
        ev: event(),
        receipt: 7,
        redelivered: false,
        sent_us: 0,
    });
    assert_eq!(txs(&out), [(TxKind::CheckInbox, 7, 1)]);
    assert!(txs(&d.timeout()).is_empty());
    assert!(d.st.jobs.iter().next().is_none());
    // ... and acked on receipt, the check is asked again.
    let mut d = Drive::new(BeforeCommit, Handler::InboxSeparateTx);
    d.msg(Msg::Deliver {
        ev: event(),
        receipt: 7,
        redelivered: false,
        sent_us: 0,
    });
    assert_eq!(txs(&d.timeout()), [(TxKind::CheckInbox, 7, 2)]);
    // An answer ends the waiting: nothing is sent again after it.
    let mut d = Drive::new(CheckedBeforeCommit, inbox);
    d.up_to_the_commit();
    d.done(TxKind::InboxAndEffect, TxResult::Applied);
    assert!(d.st.jobs.iter().next().is_none());
    assert!(txs(&d.timeout()).is_empty());
}

#[test]
fn a_late_answer_counts_for_its_own_transaction_only() {
    // Effect, then inbox row, acked on receipt. The effect's first send
    // times out and goes again; then both answers come.
    let mut d = Drive::new(AckMode::BeforeCommit, Handler::InboxSeparateTx);
    d.msg(Msg::Deliver {
        ev: event(),
        receipt: 7,
        redelivered: false,
        sent_us: 0,
    });
    d.done(TxKind::CheckInbox, TxResult::NotSeen);
    assert_eq!(
        txs(&d.fire(ConsumerTimer::Processed { slot: 0 })),
        [(TxKind::Effect, 7, 1)]
    );
    d.timeout();
    // The first attempt's answer: the effect is in, the row follows.
    let out = d.done(TxKind::Effect, TxResult::Applied);
    assert_eq!(txs(&out), [(TxKind::RecordInbox, 7, 1)]);
    // The second attempt's answer is not the row's.
    assert!(d.done(TxKind::Effect, TxResult::Applied).is_empty());
    let job = d.st.jobs.get(0).expect("still waiting for the row");
    assert_eq!((job.phase, job.tx), (Phase::Recording, TxKind::RecordInbox));
    // Nor is a copy of the inbox check's answer, while the work goes on.
    let mut d = Drive::new(AckMode::AfterCommit, Handler::InboxSeparateTx);
    d.msg(Msg::Deliver {
        ev: event(),
        receipt: 7,
        redelivered: false,
        sent_us: 0,
    });
    d.done(TxKind::CheckInbox, TxResult::NotSeen);
    assert!(d.done(TxKind::CheckInbox, TxResult::NotSeen).is_empty());
    assert_eq!(d.st.jobs.get(0).map(|j| j.phase), Some(Phase::Processing));
}

#[test]
fn a_restarted_consumer_takes_no_delivery_sent_before_its_start() {
    let mut d = Drive::new(AckMode::CheckedBeforeCommit, Handler::Effect);
    // The crashed process took receipt 7 and committed its work.
    d.up_to_the_commit();
    d.done(TxKind::Effect, TxResult::Applied);
    // It restarts at 5 s with a new connection.
    let c = consumer(AckMode::CheckedBeforeCommit, Handler::Effect);
    let mut state = Some(std::mem::take(&mut d.st));
    c.reset_state(&mut state);
    d.st = state.expect("reset");
    let mut out = Vec::new();
    let mut ctx = sim::Context::detached_restart(5_000_000, 2, &mut d.choices, &mut out);
    c.on_start(&mut d.st, &mut (), &mut ctx);
    // A copy of receipt 7 the broker sent at 1 s: it was on the old
    // connection; taken, its ack would be answered "counted" again.
    let copy = |sent_us| Msg::Deliver {
        ev: event(),
        receipt: 7,
        redelivered: false,
        sent_us,
    };
    let out = d.msg(copy(1_000_000));
    assert!(reached(&out, sit::DELIVERY_ON_OLD_CONNECTION));
    assert!(out.iter().all(|c| !matches!(c, sim::Command::Observe(_))));
    assert!(d.st.jobs.iter().next().is_none());
    // Sent as the new process started: on its connection, taken.
    let out = d.msg(copy(5_000_000));
    assert!(!reached(&out, sit::DELIVERY_ON_OLD_CONNECTION));
    assert_eq!(d.st.jobs.iter().count(), 1);
}

/// TCP does not duplicate a delivery: a copy the network makes of one is
/// the same receipt, and whatever the ack mode it starts no second job, sends
/// no second ack and no second transaction. The broker's redeliveries are
/// the duplicates a consumer's dedup is for, each under its own receipt.
#[test]
fn every_ack_mode_takes_a_copy_of_a_delivery_once() {
    use AckMode::*;
    for ack in [AfterCommit, BeforeCommit, CheckedBeforeCommit] {
        let mut d = Drive::new(ack, Handler::Effect);
        let deliver = |receipt| Msg::Deliver {
            ev: event(),
            receipt,
            redelivered: false,
            sent_us: 0,
        };
        let received = |out: &[Cmd]| {
            out.iter()
                .filter(|c| matches!(c, sim::Command::Observe(Obs::Received { .. })))
                .count()
        };
        assert_eq!(received(&d.msg(deliver(7))), 1, "{ack:?}");
        let copy = d.msg(deliver(7));
        let sends = copy
            .iter()
            .filter(|c| matches!(c, sim::Command::Send { .. }))
            .count();
        assert_eq!(sends, 0, "{ack:?}");
        // Nor is it load: the frame never reached the handler.
        assert_eq!(received(&copy), 0, "{ack:?}");
        assert_eq!(d.st.jobs.iter().count(), 1, "{ack:?}");
        // A redelivery under a new receipt is a delivery of its own.
        assert_eq!(received(&d.msg(deliver(8))), 1, "{ack:?}");
        assert_eq!(d.st.jobs.iter().count(), 2, "{ack:?}");
    }
}

/// A consumer with every job slot taken leaves a delivery undone and
/// unacked, and says so; a slot freed takes the next delivery again.
#[test]
fn a_delivery_to_a_consumer_with_every_slot_taken_is_left_for_its_lease() {
    let mut d = Drive::new(AckMode::AfterCommit, Handler::Effect);
    let deliver = |receipt| Msg::Deliver {
        ev: Event {
            id: receipt,
            ..event()
        },
        receipt,
        redelivered: false,
        sent_us: 0,
    };
    for receipt in 1..=MAX_JOBS as u32 {
        let out = d.msg(deliver(receipt));
        assert!(
            !reached(&out, sit::DELIVERY_FOUND_CONSUMER_BUSY),
            "{receipt}"
        );
    }
    assert_eq!(d.st.jobs.iter().count(), MAX_JOBS);
    let out = d.msg(deliver(MAX_JOBS as u32 + 1));
    assert!(reached(&out, sit::DELIVERY_FOUND_CONSUMER_BUSY));
    // Neither acked nor worked on: no command but the situation and the
    // delivery counted as received.
    assert!(out
        .iter()
        .all(|c| matches!(c, sim::Command::Reached(_) | sim::Command::Observe(_))));
    assert_eq!(d.st.jobs.iter().count(), MAX_JOBS);
}

/// A consumer that checks its ack before the commit, and its inbox before
/// the work, acks an event its inbox check finds handled: there is nothing
/// to commit, and unacked the message would come back at every lease until
/// the broker gives it up (into the DLQ, though its effect landed).
#[test]
fn a_checked_consumer_acks_what_its_inbox_check_finds_handled() {
    for handler in [Handler::InboxSeparateTx, Handler::InboxRecordFirst] {
        let mut d = Drive::new(AckMode::CheckedBeforeCommit, handler);
        d.msg(Msg::Deliver {
            ev: event(),
            receipt: 7,
            redelivered: true,
            sent_us: 0,
        });
        let out = d.done(TxKind::CheckInbox, TxResult::Duplicate);
        let acks: Vec<Msg> = Cmd::sent(&out)
            .filter_map(|msg| msg.peek().copied())
            .collect();
        assert_eq!(acks, [Msg::Ack { id: 1, receipt: 7 }], "{handler:?}");
        assert!(d.st.jobs.iter().next().is_none());
    }
}
