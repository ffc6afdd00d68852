//! Resource versions as writes reported them, and the serial orders that
//! decide whether a write computed from an older read lost an update.

use super::Ledger;
use crate::core::obs::Change;
use crate::core::op::Op;
use crate::core::table;

/// One version of a resource, as the write that made it reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    /// The operation whose write made it.
    pub writer: Op,
    /// The value it holds (meaningless after a deletion).
    pub value: u32,
    /// How the write arrived at it.
    pub change: Change,
}

impl Version {
    /// The resource's state at this version: its value, or none once deleted.
    pub fn state(&self) -> Option<u32> {
        (self.change != Change::Delete).then_some(self.value)
    }
}

impl Ledger {
    /// The newest version of `entity` so far (0: none).
    pub fn head(&self, entity: Op) -> u32 {
        // Scanned, not hashed: a run writes one or a few resources.
        table::index_of(&self.heads, &entity).map_or(0, |i| self.heads.as_slice()[i])
    }

    /// A write of `op` made `entity` version `version`, holding `value`:
    /// the writes it replaced without seeing them lost their update to it.
    #[inline]
    pub(super) fn new_version(
        &mut self,
        op: Op,
        entity: Op,
        version: u32,
        value: u32,
        change: Change,
    ) {
        if self.may_replace_unseen(entity, change) {
            let lost: Vec<Op> = self
                .unseen_writes(op, entity, value, change)
                .map(|w| w.1)
                .collect();
            for w in lost {
                self.overwritten.entry(w).or_insert(op);
            }
        }
        let v = Version {
            writer: op,
            value,
            change,
        };
        self.versions.insert((entity, version), v);
        if version > self.head(entity) {
            self.heads.insert(entity, version);
        }
    }

    /// Whether a write of `change` on `entity` may replace writes it never
    /// saw: when not, [`unseen_writes`](Self::unseen_writes) finds nothing,
    /// and its callers skip building the search. A write from no read (0) or
    /// from the newest version is not stale, so nothing it replaced is lost
    /// to it, and only a blind write (`Set`) can be a late repeat over later
    /// writes. Most writes are neither (a DELETE, a PATCH, an edit of the
    /// newest version): that search, twice per new version (the invariant,
    /// then the record), was the dearest part of an http run's oracle.
    /// The skip sits with the callers, not inside `unseen_writes`: an
    /// `unseen_writes` that returned nothing early (its search behind an
    /// `Option`) cost http 922 to 945 instructions per event and contention
    /// 707 to 716, measured on 7 December, against the callers' test.
    #[inline]
    pub(crate) fn may_replace_unseen(&self, entity: Op, change: Change) -> bool {
        change == Change::Set || self.stale(entity, change)
    }

    /// Whether `change` was made from a read older than `entity`'s newest
    /// version: a write that depends on no read (0) replaces nothing it
    /// should have seen, nor does one from the newest version.
    #[inline]
    fn stale(&self, entity: Op, change: Change) -> bool {
        let read = change.read();
        read != 0 && read < self.head(entity)
    }

    /// The writes that a write of `op` on `entity`, holding `value` and
    /// made by `change`, replaces without having seen them, and whose
    /// updates the state it replaced still carried ([`Ledger::carried`]):
    /// as (version, writer), newest first, then every other operation whose
    /// state was seen holding at one of those versions, as (version,
    /// holder). A write one of them had already replaced by design (a blind
    /// PUT over it) is not this write's loss. None when a serial order of
    /// the writes explains the state it leaves ([`Ledger::serial`]): then
    /// nothing it replaced is lost.
    pub(crate) fn unseen_writes(
        &self,
        op: Op,
        entity: Op,
        value: u32,
        change: Change,
    ) -> impl Iterator<Item = (u32, Op)> + '_ {
        let read = change.read();
        let lost = self.stale(entity, change) && !self.serial(op, entity, value, change);
        let floor = if lost { read } else { u32::MAX };
        let written = self.carried(entity, floor).filter(move |(_, w)| *w != op);
        let held = self
            .holders
            .iter()
            .filter(move |((e, v), h)| {
                lost && *e == entity
                    && *h != op
                    && self.carried(entity, floor).any(|(c, _)| c == *v)
            })
            .map(|&((_, v), h)| (v, h));
        written
            .chain(held)
            .chain(self.outrun_by_late_set(op, entity, value, change))
    }

    /// The writes a late landing of `op`'s blind write replaces although
    /// `op` came before them: its client was told done before their
    /// requests began, so every order that respects real time puts `op`
    /// first, and none leaves `op`'s value over theirs. Last writer wins
    /// only between requests that overlap. Nothing when the state it
    /// replaces already holds `value`.
    fn outrun_by_late_set(
        &self,
        op: Op,
        entity: Op,
        value: u32,
        change: Change,
    ) -> impl Iterator<Item = (u32, Op)> + '_ {
        // Only a blind write can be a late repeat over later writes; the
        // lookups wait for one, so that other writes pay nothing here.
        let late = change == Change::Set
            && self
                .versions
                .get(&(entity, self.head(entity)))
                .is_some_and(|h| h.state() != Some(value));
        late.then(|| {
            self.carried(entity, 0)
                .filter(move |&(_, w)| w != op && self.late_over(op, w))
        })
        .into_iter()
        .flatten()
    }

    /// Whether `by`'s write landed after its client was told done, over a
    /// write of `op`, whose request began after that: the update
    /// `Ledger::outrun_by_late_set` finds lost.
    pub(crate) fn late_over(&self, by: Op, op: Op) -> bool {
        let (Some(b), Some(o)) = (self.get(by), self.get(op)) else {
            return false;
        };
        b.told_done.is_some() && b.ending.is_some() && o.intended && o.started_us > b.ended_us
    }

    /// The versions of `entity` above `floor` whose writes its newest
    /// state still carries, newest first, with their writers: the newest
    /// version's; where that write added to the state before it (a PATCH)
    /// the version before, and where it edited a value it read, the version
    /// it read; and so on. A write that set the state whatever it held (a
    /// blind PUT, a DELETE) ends the chain, as does a version the ledger
    /// never saw: what came before it was replaced by design, or is not
    /// known. Nothing when `floor` is at or above the newest version.
    pub fn carried(&self, entity: Op, floor: u32) -> impl Iterator<Item = (u32, Op)> + '_ {
        let head = self.head(entity);
        let first = (head > floor)
            .then(|| self.versions.get(&(entity, head)).map(|w| (head, *w)))
            .flatten();
        std::iter::successors(first, move |&(v, w)| {
            let before = match w.change {
                Change::Set | Change::Delete => return None,
                Change::Add => v - 1,
                Change::Edit { read, .. } => read,
            };
            if before <= floor {
                return None;
            }
            self.versions.get(&(entity, before)).map(|w| (before, *w))
        })
        .map(|(v, w)| (v, w.writer))
    }

    /// Whether the state an edit of `op` leaves on `entity` (`value`,
    /// computed from an older version than the newest) is what a serial
    /// order of the writes gives, each edit applied to the value it read
    /// and each blind write setting its own: then no update is lost, though
    /// the edit never saw the versions in between. Two orders are tried,
    /// each keeping every other write where the run put it:
    ///
    /// - the edit last, where the writes it never saw left the value it
    ///   read (1000, then 5, then 1000 again: +200 from the first 1000
    ///   gives what +200 from the last would);
    /// - the edit right after the version it read, where it wrote the value
    ///   it replaced, the first write it never saw sets a state whatever
    ///   held before it (a blind PUT, a DELETE), and no other of them was
    ///   computed from the same read (which would then read the edit's
    ///   value instead). Dave's blind 1200 lands, then carol's +200 from the
    ///   1000 before it: carol first, then dave, gives the 1200 the
    ///   resource holds.
    ///
    /// An edit's repeat over writes since its own first landing is
    /// explained by neither: its edit sits in one place of the order.
    /// Conservative otherwise: a version the ledger never saw explains
    /// nothing.
    pub fn serial(&self, op: Op, entity: Op, value: u32, change: Change) -> bool {
        let Change::Edit { read, from } = change else {
            return true;
        };
        let head = self.head(entity);
        let at = |v| self.versions.get(&(entity, v));
        if !(read + 1..=head).all(|v| at(v).is_some_and(|w| w.writer != op)) {
            return false;
        }
        let now = at(head).and_then(Version::state);
        if now == Some(from) {
            return true;
        }
        now == Some(value)
            && at(read + 1).is_some_and(|w| w.change.sets_state())
            && (read + 2..=head).all(|v| at(v).is_some_and(|w| w.change.read() != read))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::obs::{Ending, Obs};
    use crate::http::{REQUEST, RESOURCE};
    use sim::Oracle;

    fn req(id: u32) -> Op {
        Op::new(&REQUEST, id)
    }

    const ENTITY: Op = Op::new(&RESOURCE, 4711);

    /// A ledger where request #1 was told done and ended at 1 ms, and
    /// requests #2 and #3 began after it, at 2 ms: a write of #1 landing
    /// over theirs is a late repeat.
    fn first_told_done() -> Ledger {
        let mut l = Ledger::default();
        let intent = |op| Obs::Intent {
            op,
            payload: 1200,
            window_ms: 0,
        };
        let (payload, ending) = (1200, Ending::Done);
        l.observe(0, 0, &intent(req(1)));
        l.observe(
            1,
            0,
            &Obs::ToldDone {
                op: req(1),
                payload,
            },
        );
        l.observe(1, 0, &Obs::Ended { op: req(1), ending });
        l.observe(2, 0, &intent(req(2)));
        l.observe(2, 0, &intent(req(3)));
        l
    }

    /// Whether the precheck lets the search run, and what the search finds.
    fn check(l: &Ledger, op: Op, value: u32, change: Change) -> (bool, usize) {
        let found = l.unseen_writes(op, ENTITY, value, change).count();
        (l.may_replace_unseen(ENTITY, change), found)
    }

    fn write(l: &mut Ledger, op: Op, version: u32, value: u32, change: Change) {
        let obs = Obs::NewVersion {
            op,
            entity: ENTITY,
            version,
            value,
            change,
        };
        l.observe(u64::from(version) + 2, 0, &obs);
    }

    /// The two ways a write loses an update, each found by the search only
    /// when the precheck lets it run: a late blind PUT over a write whose
    /// request began after its client was told done, and an edit from a
    /// read older than the newest version that no serial order explains.
    #[test]
    fn the_precheck_lets_every_losing_write_be_searched() {
        let mut l = first_told_done();
        write(&mut l, req(2), 2, 500, Change::Set);
        let late = check(&l, req(1), 200, Change::Set);
        assert_eq!(late, (true, 1), "a late blind PUT");
        let stale = Change::Edit {
            read: 1,
            from: 1000,
        };
        assert_eq!(
            check(&l, req(3), 1200, stale),
            (true, 1),
            "an edit of v1 over v2"
        );
        let fresh = Change::Edit { read: 2, from: 500 };
        assert_eq!(check(&l, req(3), 700, fresh), (false, 0), "an edit of v2");
        assert_eq!(check(&l, req(3), 0, Change::Delete), (false, 0));
        assert_eq!(check(&l, req(3), 900, Change::Add), (false, 0));
    }

    /// Every history of three writes, of every kind and from every read, by
    /// requests #2 and #3 and then #1 (a late repeat): where the precheck
    /// skips the search, the search finds nothing.
    #[test]
    fn where_the_precheck_says_no_the_search_finds_nothing() {
        let kinds = |version: u32| {
            let mut k = vec![Change::Set, Change::Add, Change::Delete];
            k.extend((1..version).map(|read| Change::Edit { read, from: 1000 }));
            k
        };
        let mut histories = 0;
        for a in kinds(2) {
            for b in kinds(3) {
                for c in kinds(4) {
                    let mut l = first_told_done();
                    for (i, change) in [a, b, c].into_iter().enumerate() {
                        let (version, value) = (i as u32 + 2, 1000 + 200 * i as u32);
                        let op = req([2, 3, 1][i]);
                        let (may, found) = check(&l, op, value, change);
                        assert!(may || found == 0, "{change:?} after {a:?}, {b:?}: {found}");
                        write(&mut l, op, version, value, change);
                    }
                    histories += 1;
                }
            }
        }
        assert_eq!(histories, 4 * 5 * 6);
    }
}
