//! A chance rolled many times in one run from one stream, set up once: the
//! crash roll before a step is the same `chance` of the same actor's rate
//! from the same stream at every step, so its stream and the word below
//! which it happens are worked out when the seed's rate is drawn, and each
//! roll is one draw and one comparison.
//!
//! Why a word threshold is the same decision: [`Choices::chance`] takes
//! `scale(word, 1000) < p`, that is `floor(word * 1000 / 2^64) < p`. For an
//! integer `p`, `floor(x) < p` holds exactly when `x < p`, so the decision
//! is `word * 1000 < p * 2^64`, that is `word < p * 2^64 / 1000`; and for an
//! integer `word` that is `word < ceil(p * 2^64 / 1000)`, [`below`]. No word
//! decides otherwise; the test `a_threshold_decides_as_the_scaled_word_does`
//! checks it at the edge for every `p`, where a monotone decision changes.

use super::{Choices, StreamId};

/// The least word for which a chance of `per_mille` / 1000 (1 to 999) does
/// not happen: `ceil(per_mille * 2^64 / 1000)`, which fits in 64 bits below
/// 1000 per mille and is above 0 from 1 per mille.
pub(crate) const fn below(per_mille: u32) -> u64 {
    assert!(per_mille >= 1 && per_mille < 1000);
    (((per_mille as u128) << 64).div_ceil(1000)) as u64
}

/// [`below`] of every rate from 1 to 999 (0 at 0), worked out when the
/// crate is compiled: a run sets up its odds with a look-up, not a 128-bit
/// division per actor.
static BELOW: [u64; 1000] = {
    let mut table = [0; 1000];
    let mut p = 1;
    while p < 1000 {
        table[p] = below(p as u32);
        p += 1;
    }
    table
};

/// A chance of `per_mille` / 1000 from `stream`, made for one run by
/// [`Choices::odds`] and rolled by [`Choices::roll`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Odds {
    /// [`below`] of the rate in a sweep's run with a rate strictly between
    /// 0 and 1000; otherwise 0, and a roll is [`Choices::chance`] itself
    /// (no draw at 0 or 1000, the recorded path in any other run).
    below: u64,
    stream: StreamId,
    per_mille: u32,
}

impl Odds {
    /// The word below which it happens in a sweep's run (0: a roll is `chance`).
    #[cfg(test)]
    pub(crate) fn threshold(&self) -> u64 {
        self.below
    }

    /// The stream it rolls from.
    #[inline(always)]
    pub(crate) fn stream(&self) -> StreamId {
        self.stream
    }
}

impl Choices {
    /// A chance of `per_mille` / 1000 from `stream`, to roll in the run
    /// just started (random or replayed): the mode it reads is this run's.
    pub(crate) fn odds(&self, stream: StreamId, per_mille: u32) -> Odds {
        let below = if self.plain && per_mille < 1000 {
            // 0 at 0 per mille: that chance is `chance`'s, which draws nothing.
            BELOW[per_mille as usize]
        } else {
            0
        };
        Odds {
            below,
            stream,
            per_mille,
        }
    }

    /// [`chance`](Choices::chance) of `odds`' rate from its stream: the
    /// same decision, the same draw, the same count of decisions that made
    /// something happen. In a sweep's run one draw and one comparison.
    #[inline(always)]
    pub(crate) fn roll(&mut self, odds: &Odds) -> bool {
        if odds.below == 0 {
            return self.chance(odds.stream, odds.per_mille);
        }
        debug_assert!(self.plain, "odds made for another run");
        if self.draw(odds.stream).1 < odds.below {
            return self.happened();
        }
        false
    }

    /// Counts a roll that happened, out of the usual path.
    #[cold]
    #[inline(never)]
    fn happened(&mut self) -> bool {
        self.nonzero += 1;
        true
    }
}
