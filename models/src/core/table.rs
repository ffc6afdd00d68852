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
