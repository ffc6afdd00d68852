//! The broker's publishing side: plain, idempotent-producer (sequence
//! numbers per producer id, kept for the expiration window) and
//! transactional publishes, and the transaction timeout. A child of
//! `broker.rs`, split off for length; it shares the broker's private state.

use super::*;

/// Batches per producer id and partition whose sequence numbers Kafka's
/// broker keeps to recognise a retry (`ProducerStateEntry.NUM_BATCHES_TO_RETAIN`,
/// kept by each partition's log; the reason
/// `max.in.flight.requests.per.connection`, a per-connection limit, may be
/// at most 5 with idempotence). The model's broker is one partition, so
/// per producer id and per producer id and partition are the same here.
pub const SEQUENCE_WINDOW: u32 = 5;

impl<W: Carries<Msg>> Broker<W> {
    /// Arms the transaction timer for the earliest open transaction (only
    /// where transactions come and go, off the path of every delivery).
    pub(super) fn arm_tx_timeout(&self, s: &BrokerStorage, ctx: &mut impl Ctx<Self>) {
        let next = s
            .queue
            .iter()
            .filter_map(|m| match m.status() {
                QStatus::Uncommitted { abort_at_us } => Some(abort_at_us),
                _ => None,
            })
            .min();
        match next {
            Some(t) => ctx.set_timer(BrokerTimer::TxTimeout, t.saturating_sub(ctx.now_us())),
            None => ctx.cancel_timer(BrokerTimer::TxTimeout),
        }
    }

    pub(super) fn on_publish(
        &self,
        s: &mut BrokerStorage,
        from: ActorId,
        ev: Event,
        ctx: &mut impl Ctx<Self>,
    ) {
        let now = ctx.now_us();
        if self.cfg.dedup_window_ms != 0 {
            s.dedup.reap(now);
            if s.dedup.get(&ev.id, now).is_some() {
                ctx.reached(sit::BROKER_DEDUP_HIT);
                confirm(from, ev.id, true, ctx);
                return;
            }
        }
        if s.queue.iter().any(|m| m.ev.id == ev.id) {
            if self.cfg.dedup_window_ms != 0 {
                ctx.reached(sit::REPUBLISH_AFTER_DEDUP_WINDOW);
            }
            ctx.reached(sit::DUPLICATE_PUBLISH);
        }
        if self.cfg.dedup_window_ms != 0 {
            s.dedup.insert(ev.id, (), now);
        }
        ctx.observe(Obs::Accepted { op: ev.op() });
        store(s, from, ev, QStatus::Ready, ctx);
        self.dispatch(s, ctx);
    }

    /// An idempotent producer's publish, checked as Kafka's broker checks a
    /// batch: a sequence number among the last [`SEQUENCE_WINDOW`] stored
    /// for this producer id is a retry, confirmed and dropped; the next
    /// number is stored; any other (a gap, while an earlier publish is still
    /// on its way or lost, or a copy older than the window) is refused
    /// unstored and unconfirmed, as Kafka answers it with
    /// `OUT_OF_ORDER_SEQUENCE_NUMBER`: the producer resends at its timeout.
    /// Numbers are stored in order, so the highest one stored tells the
    /// window. A producer id the broker does not know starts at 0, unless it
    /// forgot the id (expiry): then whatever comes next starts the sequence.
    pub(super) fn on_seq_publish(
        &self,
        s: &mut BrokerStorage,
        from: ActorId,
        (ev, pid, epoch, seq): (Event, u32, u32, u32),
        ctx: &mut impl Ctx<Self>,
    ) {
        if epoch > 0 && !self.current_epoch(s, pid, epoch, ctx) {
            return;
        }
        let expired = self.expire(s, pid, ctx.now_us());
        if expired {
            ctx.reached(sit::PRODUCER_ID_EXPIRED);
        }
        let first = s
            .producers_first
            .iter()
            .find(|p| p.0 == pid)
            .map_or(0, |p| p.1);
        match s.producers.iter_mut().find(|p| p.0 == pid) {
            // Only a number stored under this start is a duplicate.
            Some(p) if first <= seq && seq <= p.1 && p.1 - seq < SEQUENCE_WINDOW => {
                ctx.reached(sit::PRODUCER_SEQUENCE_DEDUP_HIT);
                confirm(from, ev.id, true, ctx);
                return;
            }
            Some(p) if p.1.checked_add(1) == Some(seq) => p.1 = seq,
            // The table grows by one per producer session; run.max_steps bounds sessions.
            None if seq == 0 || expired => {
                s.producers.push((pid, seq));
                if seq > 0 {
                    s.producers_first.push((pid, seq));
                }
            }
            Some(_) | None => {
                ctx.reached(sit::PUBLISH_OUT_OF_SEQUENCE_REFUSED);
                return;
            }
        }
        if self.cfg.producer_id_expiration_ms > 0 {
            let now = ctx.now_us();
            match s.producers_stored_us.iter_mut().find(|p| p.0 == pid) {
                Some(p) => p.1 = now,
                None => s.producers_stored_us.push((pid, now)),
            }
        }
        if !expired && s.queue.iter().any(|m| m.ev.id == ev.id) {
            ctx.reached(match epoch {
                0 => sit::REPUBLISH_UNDER_NEW_PRODUCER_ID,
                _ => sit::REPUBLISH_UNDER_NEW_EPOCH,
            });
        }
        self.on_publish(s, from, ev, ctx);
    }

    /// Forgets producer id `pid` if nothing was stored under it for the
    /// expiration time; whether it did. Its next publish starts a sequence
    /// the broker has never seen, so a retry of a stored one is stored again.
    pub(super) fn expire(&self, s: &mut BrokerStorage, pid: u32, now_us: TimeUs) -> bool {
        let limit_us = self.cfg.producer_id_expiration_ms.saturating_mul(US_PER_MS);
        let idle = s
            .producers_stored_us
            .iter()
            .any(|&(p, at_us)| p == pid && now_us.saturating_sub(at_us) >= limit_us);
        if limit_us == 0 || !idle {
            return false;
        }
        s.producers.retain(|p| p.0 != pid);
        s.producers_stored_us.retain(|p| p.0 != pid);
        s.producers_first.retain(|p| p.0 != pid);
        true
    }

    /// A producer's epoch check: an older epoch than the broker knows is a
    /// zombie's publish (a transactional session since restarted, or an
    /// idempotent producer's copy from before it bumped its epoch after a
    /// delivery timeout), refused without a confirmation (Kafka answers it
    /// with a fencing error; nobody waits for it). A newer one starts a
    /// session whose sequence numbers begin again.
    pub(super) fn current_epoch(
        &self,
        s: &mut BrokerStorage,
        pid: u32,
        epoch: u32,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        match s.epochs.iter_mut().find(|p| p.0 == pid) {
            Some(p) if epoch < p.1 => {
                ctx.reached(sit::ZOMBIE_PUBLISH_FENCED);
                return false;
            }
            Some(p) if epoch == p.1 => return true,
            Some(p) => p.1 = epoch,
            // One entry per transactional id (a relay has one), or per
            // idempotent session that bumped its epoch: run.max_steps bounds sessions.
            None => s.epochs.push((pid, epoch)),
        }
        s.producers.retain(|p| p.0 != pid);
        s.producers_stored_us.retain(|p| p.0 != pid);
        s.producers_first.retain(|p| p.0 != pid);
        true
    }

    /// A publish inside the producer's open transaction: stored, invisible.
    /// The dedup window does not apply. A transactional producer is an
    /// idempotent one (Kafka turns idempotence on with `transactional.id`),
    /// and each event has a transaction of its own: a publish of an event
    /// stored already is that transaction's resend or a network copy,
    /// confirmed and dropped before or after the commit, and refused
    /// unanswered once the transaction timed out (Kafka has fenced the
    /// producer by then). So the timeout runs from the first publish.
    pub(super) fn on_tx_publish(
        &self,
        s: &mut BrokerStorage,
        from: ActorId,
        ev: Event,
        ctx: &mut impl Ctx<Self>,
    ) {
        if let Some(m) = s.queue.iter().find(|m| m.ev.id == ev.id) {
            if m.status() != QStatus::Aborted {
                confirm(from, ev.id, true, ctx);
            }
            return;
        }
        let abort_at_us = ctx.now_us() + self.cfg.transaction_timeout_ms * US_PER_MS;
        store(s, from, ev, QStatus::Uncommitted { abort_at_us }, ctx);
        self.arm_tx_timeout(s, ctx);
    }

    /// Commits or aborts the open transaction of event `id`; a commit that
    /// finds it aborted already (its timeout ran out) is refused.
    pub(super) fn on_end_tx(
        &self,
        s: &mut BrokerStorage,
        from: ActorId,
        id: u32,
        commit: bool,
        ctx: &mut impl Ctx<Self>,
    ) {
        let mut open = false;
        let mut committed = false;
        for m in s.queue.iter_mut().filter(|m| m.ev.id == id) {
            match m.status() {
                QStatus::Uncommitted { .. } => {
                    open = true;
                    if commit {
                        m.set_status(QStatus::Ready);
                        committed = true;
                        ctx.observe(Obs::Accepted { op: m.ev.op() });
                    } else {
                        m.set_status(QStatus::Aborted);
                    }
                }
                // Committed before: the commit's answer was lost and it came
                // again. A copy discarded after its last delivery was
                // committed too: Kafka's coordinator answers the retry from
                // the transaction's state, not from what became of its messages.
                QStatus::Ready
                | QStatus::InFlight { .. }
                | QStatus::Acked
                | QStatus::Dead
                | QStatus::Discarded => {
                    committed |= commit;
                }
                QStatus::Aborted => {}
            }
        }
        if commit && !open && !committed {
            ctx.reached(sit::COMMIT_AFTER_TX_TIMEOUT);
        }
        ctx.send(from, W::wrap(Msg::TxEnded { id, committed }));
        if open {
            self.arm_tx_timeout(s, ctx);
        }
        self.dispatch(s, ctx);
    }
}
