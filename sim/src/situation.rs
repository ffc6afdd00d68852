//! Named situations that actors report when a run reaches them (a retry, a
//! dedup hit, a redelivery after a lease expired). The engine only collects
//! them, as a set per run; what they mean is the model's business.

/// A situation's id. The engine gives ids no meaning: whoever composes the
/// world numbers them (idemsim's model registry gives each model the ids
/// after the previous model's) and names them.
pub type SituationId = u16;

/// How many distinct situation ids a world may use: only the capacity of a
/// [`SituationSet`], which stays a fixed, `Copy` bit set so that a run
/// allocates nothing for it.
pub const MAX_SITUATIONS: usize = 256;

/// A set of situation ids: fixed size, `Copy`, no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SituationSet([u64; MAX_SITUATIONS / 64]);

impl SituationSet {
    /// No situation.
    pub const EMPTY: SituationSet = SituationSet([0; MAX_SITUATIONS / 64]);

    #[inline]
    /// Adds `id`; true when it was not in the set yet.
    pub fn insert(&mut self, id: SituationId) -> bool {
        let (w, b) = Self::at(id);
        let fresh = self.0[w] & b == 0;
        self.0[w] |= b;
        fresh
    }

    #[inline]
    /// Whether `id` is in the set.
    pub fn contains(&self, id: SituationId) -> bool {
        let (w, b) = Self::at(id);
        self.0[w] & b != 0
    }

    /// Adds every id of `o`.
    pub fn union(&mut self, o: &SituationSet) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a |= b;
        }
    }

    /// No id at all.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// The ids in the set, ascending.
    pub fn iter(&self) -> impl Iterator<Item = SituationId> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros();
                    bits &= bits - 1;
                    (w * 64) as SituationId + b as SituationId
                })
            })
        })
    }

    #[inline]
    fn at(id: SituationId) -> (usize, u64) {
        let i = usize::from(id);
        assert!(i < MAX_SITUATIONS, "situation id {id} over the bound");
        (i / 64, 1 << (i % 64))
    }
}

impl FromIterator<SituationId> for SituationSet {
    fn from_iter<I: IntoIterator<Item = SituationId>>(it: I) -> Self {
        let mut s = SituationSet::EMPTY;
        for id in it {
            s.insert(id);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_round_trips_its_ids_in_order() {
        let ids = [0, 3, 63, 64, 130, 255];
        let s: SituationSet = ids.iter().copied().collect();
        assert_eq!(s.iter().collect::<Vec<_>>(), ids);
        assert!(s.contains(130) && !s.contains(131));
        let mut t = SituationSet::EMPTY;
        assert!(t.is_empty());
        assert!(t.insert(7) && !t.insert(7));
        t.union(&s);
        assert_eq!(t.iter().count(), ids.len() + 1);
    }
}
