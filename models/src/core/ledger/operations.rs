//! How the ledger records what happens to a client's business operation:
//! its intent, its attempts, the effects that land, what its client is told
//! and how it ends.

use super::Ledger;
use crate::core::obs::{AttemptOutcome, Ending, Site};
use crate::core::op::Op;
use sim::TimeUs;

impl Ledger {
    /// A client starts `op`: the first intent sets what it asks for.
    #[inline]
    pub(super) fn intent(
        &mut self,
        at: Option<usize>,
        (now_us, actor): (TimeUs, sim::ActorId),
        op: Op,
        payload: u32,
        window_ms: u64,
    ) {
        let r = self.rec_at(at, op);
        if !r.intended {
            r.intended = true;
            r.started_by = Some(actor);
            r.payload = payload;
            r.window_ms = window_ms;
            r.started_us = now_us;
        }
    }

    /// A client sent attempt `attempt` of `op`.
    #[inline]
    pub(super) fn attempt_sent(&mut self, at: Option<usize>, op: Op, attempt: u32) {
        let r = self.rec_at(at, op);
        r.attempts = r.attempts.max(attempt);
    }

    /// An effect of `op` landed at `site`; its first may announce the
    /// operation its event is about, whose record `about` is where
    /// [`Ledger::lookup`] found it (its `Found::about`).
    #[inline]
    pub(super) fn effect(
        &mut self,
        (at, about): (Option<usize>, Option<usize>),
        now_us: TimeUs,
        site: &'static Site,
        op: Op,
        payload: u32,
    ) {
        let r = self.rec_at(at, op);
        r.effects += 1;
        r.effect_total += u64::from(payload);
        r.site.get_or_insert(site);
        r.first_effect.get_or_insert((now_us, payload));
        if let Some(i) = about {
            self.announce_at(i, op, payload);
        }
    }

    /// `payload` of an effect of `op` was taken back where it landed.
    #[cold]
    pub(super) fn reversal(&mut self, at: Option<usize>, op: Op, payload: u32) {
        let r = self.rec_at(at, op);
        r.reversals += 1;
        r.reversal_total += u64::from(payload);
    }

    /// The state `op` asks for held at `version` of `entity` while attempt
    /// `attempt` was answered.
    #[inline]
    pub(super) fn state_held(
        &mut self,
        at: Option<usize>,
        op: Op,
        attempt: u32,
        entity: Op,
        version: u32,
    ) {
        let r = self.rec_at(at, op);
        r.held = r.held.max(attempt);
        let holder = ((entity, version), op);
        if version > 0 && !self.holders.contains(&holder) {
            self.holders.push(holder);
        }
    }

    /// The client recorded the outcome of attempt `attempt` of `op`.
    #[inline]
    pub(super) fn attempt(
        &mut self,
        at: Option<usize>,
        op: Op,
        attempt: u32,
        outcome: AttemptOutcome,
    ) {
        let r = self.rec_at(at, op);
        r.rejected |= outcome == AttemptOutcome::Rejected;
        r.closed = r.closed.max(attempt);
    }

    /// The client of `op` was told it is done, in answer to an attempt that
    /// asked for `payload`.
    #[inline]
    pub(super) fn told_done(&mut self, at: Option<usize>, op: Op, payload: u32) {
        let r = self.rec_at(at, op);
        // A "done" is judged by the state against the attempt the
        // client closed last (`held_when_answered`), so the client
        // must have recorded the outcome of the attempt that told it
        // (`ClientOp::done` does) and sent none after it. The one
        // "done" without an attempt, a reconciliation job's, is
        // about payments, which ask for no state.
        debug_assert!(
            r.held == 0 || r.closed == r.attempts,
            "{op} told done after attempt {} was seen holding, with attempt {} of {} closed: record the answering attempt's outcome first",
            r.held,
            r.closed,
            r.attempts
        );
        r.told_done = Some(payload);
    }

    /// `op` ended at its client.
    #[inline]
    pub(super) fn ended(&mut self, at: Option<usize>, now_us: TimeUs, op: Op, ending: Ending) {
        let r = self.rec_at(at, op);
        // A reconciliation job may resolve an unknown dead letter
        // later: what the client was finally told replaces it.
        debug_assert!(
            matches!(r.ending, None | Some(Ending::Unknown)),
            "an operation ends once, or again after an unknown ending"
        );
        r.ending = Some(ending);
        r.ended_us = now_us;
        r.ended_attempts = r.attempts;
    }

    /// Event `event`, about operation `about`, took its first effect, of
    /// `payload`, when its commit said what it is about, after the effect:
    /// an event published before its commit. Rare, so out of line; the
    /// usual first effect finds `about` in its look-up ([`Ledger::lookup`]).
    #[cold]
    pub(super) fn announced(&mut self, about: Op, event: Op, payload: u32) {
        if let Some(i) = self.find(about) {
            self.announce_at(i, event, payload);
        }
    }

    /// One more announcement, by event `event` with `payload`, of the
    /// operation whose record is at `i`, if a client asked for it. Inline:
    /// half of chain's effects announce the claim their event books.
    #[inline]
    pub(super) fn announce_at(&mut self, i: usize, event: Op, payload: u32) {
        let r = self.op_at_mut(i);
        if r.intended {
            r.announced += 1;
            r.announced_total += u64::from(payload);
            r.first_announcement.get_or_insert(event);
            self.booked = true;
        }
    }
}
