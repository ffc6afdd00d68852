//! A few draws from one stream taken together in a sweep's run: the
//! stream's position is looked up, bounds-checked and found warm once, not
//! once per draw. A send draws up to four values from its link's stream
//! (loss, duplication, one delay per copy), one after the other with
//! nothing drawn from that stream in between, so it takes them as a
//! [`Burst`]. Each draw is the one [`Choices::chance`] or
//! [`Choices::choose`] would make at that place: the same word, the same
//! value, the same count of decisions that made something happen.

use super::{scale, Choices, StreamId, StreamPos, BUF_VALUES};

/// `Choices::burst_run` outside a sweep's run: runs count up from 0 by one,
/// so no stream is ever stamped with this one, and a burst tests "a sweep's
/// run" and "touched in this run" with the one comparison of the stamp.
pub(super) const NO_BURST: u64 = u64::MAX;

/// Up to `most` draws from one stream whose buffer already holds them: no
/// refill and no first touch can happen within it. Made by
/// [`Choices::burst`].
pub(crate) struct Burst<'c> {
    pos: &'c mut StreamPos,
    nonzero: &'c mut u32,
}

impl Choices {
    /// The next draws of `stream`, at most `most` of them, taken together:
    /// `None` unless this is a sweep's run (random, nothing recorded or
    /// logged) and the stream, touched in this run already or computed
    /// ahead for it, has `most` values left in its buffer. Then the caller
    /// draws one by one as usual, which gives the same values.
    #[inline(always)]
    pub(crate) fn burst(&mut self, stream: StreamId, most: u32) -> Option<Burst<'_>> {
        // Outside a sweep's run `burst_run` matches no stream's stamp: one
        // comparison for "a sweep's run" and "touched in this run".
        debug_assert_eq!(self.burst_run == self.run, self.plain);
        let pos = &mut self.streams[stream as usize];
        if pos.run != self.burst_run || pos.filled - pos.used < most {
            return None;
        }
        Some(Burst {
            pos,
            nonzero: &mut self.nonzero,
        })
    }
}

impl Burst<'_> {
    /// The stream's next word, which the buffer holds (checked when the
    /// burst was made, for as many draws as it may take).
    #[inline(always)]
    fn word(&mut self) -> u64 {
        let p = &mut *self.pos;
        debug_assert!(p.used < p.filled);
        p.cursor += 1;
        // `used < filled <= BUF_VALUES`, a power of two: the mask only
        // spares the bounds check.
        let word = p.buf[p.used as usize & (BUF_VALUES - 1)];
        p.used += 1;
        word
    }

    /// [`Choices::chance`], from this burst's stream.
    #[inline(always)]
    pub(crate) fn chance(&mut self, per_mille: u32) -> bool {
        if per_mille == 0 {
            return false;
        }
        if per_mille >= 1000 {
            return true;
        }
        let happens = scale(self.word(), 1000) < u64::from(per_mille);
        *self.nonzero += u32::from(happens);
        happens
    }

    /// [`Choices::choose`], from this burst's stream; `arity` at least 1.
    #[inline(always)]
    pub(crate) fn choose(&mut self, arity: u64) -> u64 {
        debug_assert!(arity >= 1, "a decision needs at least one alternative");
        if arity == 1 {
            return 0;
        }
        let value = scale(self.word(), arity);
        *self.nonzero += u32::from(value != 0);
        value
    }
}
