//! A bounded pool of slots: the calls a service has in flight, the jobs a
//! consumer works on. A slot's index names the timer that guards it.

#[derive(Clone, Debug)]
/// At most `bound` values, each in a numbered slot that frees when taken.
#[derive(serde::Serialize)]
pub struct Slots<T> {
    slots: Vec<Option<T>>,
    bound: usize,
}

impl<T> Slots<T> {
    /// An empty pool of at most `bound` slots.
    pub fn new(bound: usize) -> Self {
        Slots {
            slots: Vec::new(),
            bound,
        }
    }

    /// The most slots it holds.
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// Frees every slot, keeping the memory: a state reset for a new process.
    pub fn clear(&mut self) {
        self.slots.clear();
    }

    /// Puts `value` into a free slot; `None` when all `bound` slots are busy.
    pub fn insert(&mut self, value: T) -> Option<usize> {
        let i = match self.slots.iter().position(Option::is_none) {
            Some(i) => i,
            None if self.slots.len() < self.bound => {
                self.slots.push(None);
                self.slots.len() - 1
            }
            None => return None,
        };
        self.slots[i] = Some(value);
        Some(i)
    }

    /// The value in slot `i`, if busy.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.slots.get(i).and_then(Option::as_ref)
    }

    /// The value in slot `i`, to change.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.slots.get_mut(i).and_then(Option::as_mut)
    }

    /// Frees slot `i`, returning its value.
    pub fn take(&mut self, i: usize) -> Option<T> {
        self.slots.get_mut(i).and_then(Option::take)
    }

    /// Busy slots with their indices.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|v| (i, v)))
    }

    /// The first busy slot that matches.
    pub fn find(&self, f: impl Fn(&T) -> bool) -> Option<usize> {
        self.iter().find(|(_, v)| f(v)).map(|(i, _)| i)
    }

    /// How many slots are busy.
    pub fn busy(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether no slot is free: the next [`insert`](Slots::insert) would fail.
    pub fn is_full(&self) -> bool {
        // The slots grow on demand, so a short list still has room.
        self.busy() >= self.bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_bounded() {
        let mut s = Slots::new(2);
        assert_eq!(s.insert('a'), Some(0));
        assert!(!s.is_full(), "one slot is not made yet, and free");
        assert_eq!(s.insert('b'), Some(1));
        assert!(s.is_full());
        assert_eq!(s.insert('c'), None);
        assert_eq!(s.take(0), Some('a'));
        assert_eq!(s.insert('d'), Some(0));
        assert_eq!(s.busy(), 2);
        assert_eq!(s.find(|v| *v == 'b'), Some(1));
    }
}
