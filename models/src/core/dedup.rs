//! One windowed dedup store for every place that remembers what it has seen:
//! a service's idempotency keys, a bank's keys, a broker's publish dedup
//! window. Entries live for `retention_us` after they were created (0:
//! forever); an expired entry is as good as absent.

use super::table::{self, Table};
use sim::TimeUs;
use std::hash::Hash;

#[derive(Clone, Debug)]
/// One remembered key's record.
#[derive(serde::Serialize)]
pub struct Entry<V> {
    /// When it was created: it expires `retention_us` later.
    pub created_us: TimeUs,
    /// What the store keeps for it (a result, a state).
    pub value: V,
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup<'a, V> {
    /// A live entry, to read or change.
    Live(&'a mut V),
    /// There was an entry, but its retention ran out (it may have been reaped since).
    Expired,
    /// No entry.
    Absent,
}

#[derive(Clone, Debug, serde::Serialize)]
/// A store of keys with a retention: lookups treat expired entries as absent, [`reap`](DedupStore::reap) drops them.
///
/// A report's state panel shows the retention and the entries, not the
/// reaping hint (`oldest_us`, u64::MAX in an empty store), which is
/// bookkeeping and reads like a corrupt time.
pub struct DedupStore<K: Hash + Eq, V> {
    retention_us: TimeUs,
    entries: Table<K, Entry<V>>,
    /// No entry was created before this: reaping before it finds nothing.
    #[serde(skip)]
    oldest_us: TimeUs,
    /// Keys reaped this run and not stored again. Not part of what the real
    /// store holds (a reaped key is gone): only so that a lookup can say a
    /// key expired rather than was never seen, which the situations that
    /// mark a retry after its key's retention (and the design warnings that
    /// point at them) need even after another insert reaped it.
    #[serde(skip)]
    forgotten: Table<K, ()>,
}

impl<K: Hash + Eq + Copy, V> DedupStore<K, V> {
    /// A store whose entries live `retention_us` (0: forever).
    pub fn new(retention_us: TimeUs) -> Self {
        DedupStore {
            retention_us,
            entries: Table::default(),
            oldest_us: TimeUs::MAX,
            forgotten: Table::default(),
        }
    }

    /// Empties the store for a new run, keeping its memory.
    pub fn reset(&mut self, retention_us: TimeUs) {
        self.retention_us = retention_us;
        self.entries.clear();
        self.oldest_us = TimeUs::MAX;
        self.forgotten.clear();
    }

    fn expired(&self, created_us: TimeUs, now_us: TimeUs) -> bool {
        expired(self.retention_us, created_us, now_us)
    }

    /// Finds `key` as of `now_us`: live, expired or absent. Inlined, with
    /// [`get`](Self::get): a store holds a few keys, found by a scan that
    /// costs less than the call's saved registers.
    #[inline]
    pub fn lookup(&mut self, key: &K, now_us: TimeUs) -> Lookup<'_, V> {
        let Some(i) = table::index_of(&self.entries, key) else {
            if table::index_of(&self.forgotten, key).is_some() {
                return Lookup::Expired;
            }
            return Lookup::Absent;
        };
        // Through the slice: one bounds check, inlined (see `table::entry`).
        let e = &mut self.entries.as_mut_slice()[i];
        if expired(self.retention_us, e.created_us, now_us) {
            return Lookup::Expired;
        }
        Lookup::Live(&mut e.value)
    }

    /// A live entry's value.
    #[inline]
    pub fn get(&self, key: &K, now_us: TimeUs) -> Option<&V> {
        let e = &self.entries.as_slice()[table::index_of(&self.entries, key)?];
        (!self.expired(e.created_us, now_us)).then_some(&e.value)
    }

    /// Inserts (or replaces) `key`, created now.
    pub fn insert(&mut self, key: K, value: V, now_us: TimeUs) {
        self.oldest_us = self.oldest_us.min(now_us);
        if !self.forgotten.is_empty() {
            self.forgotten.swap_remove(&key);
        }
        let entry = Entry {
            created_us: now_us,
            value,
        };
        // Replacing keeps the key's place in the order, as IndexMap::insert does.
        match table::index_of(&self.entries, &key) {
            Some(i) => self.entries.as_mut_slice()[i] = entry,
            None => {
                self.entries.insert(key, entry);
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.entries.swap_remove(key).map(|e| e.value)
    }

    /// Drops expired entries; returns how many. Cheap when none can have expired.
    pub fn reap(&mut self, now_us: TimeUs) -> usize {
        if self.retention_us == 0 || !self.expired(self.oldest_us, now_us) {
            return 0;
        }
        let before = self.entries.len();
        let retention_us = self.retention_us;
        let live = |e: &Entry<V>| now_us.saturating_sub(e.created_us) < retention_us;
        for (k, e) in &self.entries {
            if !live(e) {
                self.forgotten.insert(*k, ());
            }
        }
        self.entries.retain(|_, e| live(e));
        self.oldest_us = self
            .entries
            .values()
            .map(|e| e.created_us)
            .min()
            .unwrap_or(TimeUs::MAX);
        before - self.entries.len()
    }

    /// Entries held, live or not yet reaped.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entry at all.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry, live or expired, in a deterministic order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &Entry<V>)> {
        self.entries.iter()
    }

    /// Every entry, to change, in a deterministic order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut Entry<V>)> {
        self.entries.iter_mut()
    }

    /// Every entry with whether it is live at `now_us` (a lookup would find
    /// it), for changes in place without collecting keys first.
    pub fn iter_mut_at(
        &mut self,
        now_us: TimeUs,
    ) -> impl Iterator<Item = (&K, &mut Entry<V>, bool)> {
        let retention_us = self.retention_us;
        self.entries.iter_mut().map(move |(k, e)| {
            let live = retention_us == 0 || now_us.saturating_sub(e.created_us) < retention_us;
            (k, e, live)
        })
    }
}

/// Whether an entry created at `created_us` is gone by `now_us` under
/// `retention_us` (0: kept for ever).
#[inline]
fn expired(retention_us: TimeUs, created_us: TimeUs, now_us: TimeUs) -> bool {
    retention_us != 0 && now_us.saturating_sub(created_us) >= retention_us
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report shows the retention and the entries; an empty store's reaping
    /// hint (u64::MAX) would read like a corrupt time.
    #[test]
    fn the_panel_shows_retention_and_entries_only() {
        let mut s: DedupStore<u32, ()> = DedupStore::new(100);
        let shown = |s: &DedupStore<u32, ()>| serde_json::to_string(s).expect("json");
        assert_eq!(shown(&s), r#"{"retention_us":100,"entries":{}}"#);
        s.insert(7, (), 5);
        assert_eq!(
            shown(&s),
            r#"{"retention_us":100,"entries":{"7":{"created_us":5,"value":null}}}"#
        );
    }

    #[test]
    fn an_entry_lives_for_its_retention_and_is_reaped_after() {
        let mut s: DedupStore<u32, &str> = DedupStore::new(100);
        s.insert(1, "a", 0);
        s.insert(2, "b", 50);
        assert!(matches!(s.lookup(&1, 99), Lookup::Live(_)));
        assert!(matches!(s.lookup(&1, 100), Lookup::Expired));
        assert!(matches!(s.lookup(&3, 0), Lookup::Absent));
        assert_eq!(s.reap(99), 0);
        assert_eq!(s.reap(120), 1);
        assert_eq!(s.len(), 1);
        assert_eq!(s.get(&2, 149), Some(&"b"));
        assert_eq!(s.get(&2, 150), None);
    }

    #[test]
    fn a_reaped_key_is_still_told_apart_from_one_never_seen() {
        let mut s: DedupStore<u32, ()> = DedupStore::new(100);
        s.insert(1, (), 0);
        // The reap before another key's insert removes key 1.
        assert_eq!(s.reap(150), 1);
        s.insert(2, (), 150);
        assert_eq!(s.len(), 1);
        assert!(matches!(s.lookup(&1, 160), Lookup::Expired));
        assert!(matches!(s.lookup(&3, 160), Lookup::Absent));
        // Stored again, it is live; a new run forgets what was forgotten.
        s.insert(1, (), 170);
        assert!(matches!(s.lookup(&1, 180), Lookup::Live(_)));
        s.insert(2, (), 300);
        s.reset(100);
        assert!(matches!(s.lookup(&2, 0), Lookup::Absent));
    }

    #[test]
    fn retention_zero_keeps_forever() {
        let mut s: DedupStore<u32, ()> = DedupStore::new(0);
        s.insert(1, (), 0);
        assert_eq!(s.reap(u64::MAX), 0);
        assert!(s.get(&1, u64::MAX).is_some());
    }
}
