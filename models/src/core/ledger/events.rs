//! How the ledger records an event owed by a committed state change: its
//! commit, its queueing or dead letter, and how it took effect at the
//! entity it is about.

use super::Ledger;
use crate::core::op::Op;
use sim::TimeUs;

impl Ledger {
    /// A producer committed a change of `entity` to `value` at `version`:
    /// the event `op` is owed.
    #[inline]
    pub(super) fn committed(
        &mut self,
        at: Option<usize>,
        now_us: TimeUs,
        op: Op,
        entity: Op,
        (value, version): (u32, u32),
    ) {
        let r = self.rec_at(at, op);
        // An event published first may have taken effect before
        // this commit said what it is about: that effect announces
        // its operation now.
        let landed_first = !r.committed && r.effects > 0;
        let first_payload = r.first_effect.map_or(0, |(_, p)| p);
        r.committed = true;
        r.committed_us = now_us;
        r.entity = Some(entity);
        r.version = version;
        r.payload = value;
        // Published first, the event may have reached a dead-letter
        // queue before this commit said which version it carries.
        let dead = r.dead;
        let e = self.rec(entity);
        if e.newest.is_none_or(|(v, _)| version >= v) {
            e.newest = Some((version, value));
            e.newest_dead = dead;
        }
        if landed_first && entity != op {
            self.announced(entity, op, first_payload);
        }
    }

    /// A broker moved `op` to its dead-letter queue; if it carried its
    /// entity's newest version, that version is dead too.
    #[inline]
    pub(super) fn dead_lettered(&mut self, at: Option<usize>, op: Op) {
        let r = self.rec_at(at, op);
        r.dead = true;
        let (entity, version) = (r.entity, r.version);
        let at = entity.and_then(|e| self.find(e));
        if let Some(e) = at.map(|i| self.op_at_mut(i)) {
            if e.newest.is_some_and(|(v, _)| v == version) {
                e.newest_dead = true;
            }
        }
    }

    /// A set-value write of `op` landed: `entity` holds `value` at `version`.
    #[inline]
    pub(super) fn value_written(
        &mut self,
        at: Option<usize>,
        now_us: TimeUs,
        op: Op,
        entity: Op,
        (value, version): (u32, u32),
    ) {
        let r = self.rec_at(at, op);
        r.written = true;
        r.first_effect.get_or_insert((now_us, value));
        self.rec(entity).current = Some((version, value));
    }
}
