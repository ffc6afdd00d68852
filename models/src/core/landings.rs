//! Which writes have landed at a store, and from which read: how a model
//! tells a copy of a write (the network's, or a retry's that read the same
//! version) from a new landing computed from a fresh read. A copy sets the
//! value the landing it copies set, so it adds nothing of its own; a write
//! from a new read adds again. Not a column of the store but the
//! observer's, to count effects in the outside world truthfully.

use std::fmt;

/// Every landing as (write id, read), sorted. `R` is what the write read
/// before it was computed: a version, an ETag, or `None` for a write that
/// read nothing. Cleared per run, keeping its memory.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Landings<R> {
    sorted: Vec<(u32, R)>,
}

/// What was there before a landing was recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Landed {
    /// Write `id` had landed before, from any read.
    pub again: bool,
    /// It had landed before from this same read: this landing is a copy.
    pub copy: bool,
}

impl<R: Ord + Copy> Landings<R> {
    /// No landings; `const` so that a store's initial value can hold it.
    pub const fn new() -> Self {
        Landings { sorted: Vec::new() }
    }

    /// Forgets every landing (a new run).
    pub fn clear(&mut self) {
        self.sorted.clear();
    }

    /// Whether write `id` has landed, from any read.
    pub fn any(&self, id: u32) -> bool {
        let i = self.sorted.partition_point(|&(w, _)| w < id);
        self.sorted.get(i).is_some_and(|&(w, _)| w == id)
    }

    /// Records a landing of write `id` computed from `read`.
    pub fn land(&mut self, id: u32, read: R) -> Landed {
        let again = self.any(id);
        match self.sorted.binary_search(&(id, read)) {
            Ok(_) => Landed { again, copy: true },
            Err(i) => {
                self.sorted.insert(i, (id, read));
                Landed { again, copy: false }
            }
        }
    }
}

// As the list it is, so a store's snapshot in a trace reads as before.
impl<R: fmt::Debug> fmt::Debug for Landings<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.sorted).finish()
    }
}

/// The landings in order, as `Debug` shows them.
impl<R: serde::Serialize> serde::Serialize for Landings<R> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(&self.sorted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_landing_from_the_same_read_is_a_copy_and_from_another_read_is_not() {
        let mut l: Landings<u32> = Landings::new();
        assert!(!l.any(7));
        assert_eq!(
            l.land(7, 1),
            Landed {
                again: false,
                copy: false
            }
        );
        assert!(l.any(7) && !l.any(6) && !l.any(8));
        assert_eq!(
            l.land(7, 1),
            Landed {
                again: true,
                copy: true
            }
        );
        assert_eq!(
            l.land(7, 3),
            Landed {
                again: true,
                copy: false
            }
        );
        assert_eq!(
            l.land(2, 3),
            Landed {
                again: false,
                copy: false
            }
        );
        assert_eq!(format!("{l:?}"), "[(2, 3), (7, 1), (7, 3)]");
        l.clear();
        assert!(!l.any(7));
    }
}
