//! A fixed hasher for the ledger's lookup tables. Iteration order comes from
//! insertion (`IndexMap`), never from hashes, so runs do not depend on it;
//! the hasher is fixed anyway, so nothing in a run reads OS randomness.

use std::hash::{BuildHasherDefault, Hasher};

/// FxHash: one multiply and rotate per word, fast for small integer keys.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(SEED);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// An insertion-ordered map with the fixed hasher: `clear` keeps its memory,
/// so a warmed-up ledger allocates nothing per run.
pub type Table<K, V> = indexmap::IndexMap<K, V, BuildHasherDefault<FxHasher>>;

/// Tables up to this size are searched by comparing keys in order: cheaper
/// than hashing one key, and most runs hold one to a few operations.
const SCAN_UP_TO: usize = 8;

/// The index of `key` in `t`, the same as `get_index_of` but faster on small tables.
#[inline]
pub fn index_of<K: std::hash::Hash + Eq, V>(t: &Table<K, V>, key: &K) -> Option<usize> {
    if t.len() <= SCAN_UP_TO {
        t.keys().position(|k| k == key)
    } else {
        hashed_index_of(t, key)
    }
}

/// [`index_of`] of a larger table, by its hash. Out of line: the hash and
/// the probe need registers that the scan does not, and where `index_of`
/// stays a call itself (the dedup stores' look-ups), they made it save and
/// restore six of them on every scan of one or two keys.
#[inline(never)]
fn hashed_index_of<K: std::hash::Hash + Eq, V>(t: &Table<K, V>, key: &K) -> Option<usize> {
    t.get_index_of(key)
}

/// The value of `key`, inserting `make()` first if it is absent.
#[inline]
pub fn entry<K: std::hash::Hash + Eq, V>(
    t: &mut Table<K, V>,
    key: K,
    make: impl FnOnce() -> V,
) -> &mut V {
    let i = match index_of(t, &key) {
        Some(i) => i,
        None => t.insert_full(key, make()).0,
    };
    // Through the slice: one bounds check, inlined, where `IndexMap`'s own
    // `IndexMut` checks twice and formats its panic, and so stays a call.
    &mut t.as_mut_slice()[i]
}
