//! Each link's loss and duplication for a seed, in a sweep's run: where a
//! link's words sit in the swarm stream, how they are scaled, and when a
//! link scales them (at the run's start for the links earlier runs used, at
//! its first use for any other).

use super::super::{LinkNow, Model, Sim, FIXED_RATES};
use crate::choice::scale;
use crate::world::World;

/// The most links a simulator keeps as seen (see `LinkDraws::seen`): a
/// world with thousands of links, each run using a few others, would
/// otherwise scale every one of them at every run's start.
const LINKS_SEEN_MAX: usize = 64;

/// Every link's [`LinkDraw`], and the links seen.
pub(in crate::engine) struct LinkDraws {
    /// Per link, row-major.
    per_link: Vec<LinkDraw>,
    /// Links an earlier sweep's run of this simulator drew at their first
    /// use, in that order, at most [`LINKS_SEEN_MAX`] (reserved up front, so
    /// a run never allocates): a sweep's run draws them at its start.
    seen: Vec<u32>,
}

/// Where one link's rates sit among a run's words of the swarm stream, how
/// each is scaled (`lo` plus a value in `0..arity`), and which run's rates
/// the link holds. The swarm mix draws the links' rates row-major, loss
/// before duplication; a fixed rate (arity 1) draws nothing and takes no
/// word. Rates are per mille, at most 1000, so 16 bits hold each `lo` and
/// `arity` (at most 1001).
#[derive(Clone, Copy)]
pub(in crate::engine) struct LinkDraw {
    /// Index of the link's first word among the run's words.
    at: u32,
    /// The stamp of the run whose rates the link holds ([`FIXED_RATES`]
    /// for rates set once): below `Sim::mix_now`, not drawn yet in this run.
    stamp: u32,
    loss_lo: u16,
    loss_arity: u16,
    dup_lo: u16,
    dup_arity: u16,
}

impl LinkDraw {
    /// The link's loss and duplication from its words (`words[0]` and
    /// `words[1]`, of which it takes as many as it has ranges), and how many
    /// of the two made something happen. Without a branch: a fixed rate's
    /// arity is 1, which scales any word to 0.
    #[inline(always)]
    fn rates(&self, words: &[u64; 2]) -> (u16, u16, u32) {
        let loss = scale(words[0], u64::from(self.loss_arity));
        let dup_word = words[usize::from(self.loss_arity > 1)];
        let dup = scale(dup_word, u64::from(self.dup_arity));
        let nonzero = u32::from(loss != 0) + u32::from(dup != 0);
        (
            self.loss_lo + loss as u16,
            self.dup_lo + dup as u16,
            nonzero,
        )
    }
}

/// Each of `world`'s links' [`LinkDraw`], row-major, none seen yet, and the
/// count of words all of them take.
pub(in crate::engine) fn link_draws(world: &World) -> (LinkDraws, usize) {
    let mut at = 0;
    let per_link: Vec<LinkDraw> = world
        .links
        .iter()
        .map(|l| {
            let (loss, dup) = (l.loss_per_mille, l.duplicate_per_mille);
            let d = LinkDraw {
                at: at as u32,
                stamp: if loss.lo != loss.hi || dup.lo != dup.hi {
                    0
                } else {
                    FIXED_RATES
                },
                // Validation keeps every rate at most 1000.
                loss_lo: loss.lo as u16,
                loss_arity: (loss.hi - loss.lo + 1) as u16,
                dup_lo: dup.lo as u16,
                dup_arity: (dup.hi - dup.lo + 1) as u16,
            };
            at += usize::from(d.loss_arity > 1) + usize::from(d.dup_arity > 1);
            d
        })
        .collect();
    let drawn_per_seed = per_link.iter().filter(|d| d.stamp == 0).count();
    let seen = Vec::with_capacity(drawn_per_seed.min(LINKS_SEEN_MAX));
    (LinkDraws { per_link, seen }, at)
}

impl<M: Model> Sim<M> {
    /// Link `i` (row-major) with this run's rates: drawn now from the words
    /// `Run::take_link_words` copied if the run has not drawn it yet.
    ///
    /// Every run draws a loss and a duplication rate for every link whose
    /// rates are ranges, in one order (links row-major, loss first), from
    /// the swarm stream: a link's words sit at a place in that stream fixed
    /// by its place in the order. A sweep's run (nothing traced, recorded or
    /// logged) copies those words at its start, unscaled. The links an
    /// earlier run of this simulator drew at their first use scale theirs
    /// right then ([`mix_links_seen`](Self::mix_links_seen)): runs of one
    /// world use nearly the same links, and a send that finds its link
    /// drawn neither calls out nor takes a branch that flips at each run's
    /// first send. Any other link scales its own when the run first reads
    /// its rates: at its first send, or when a kind with faults of its own
    /// leaves a rate to the link. A run that never sends on a link no
    /// earlier run used never draws it, and chain's runs send on 14 of its
    /// 42 links. Each run takes a stamp (`Sim::mix_now`); each link keeps
    /// the stamp of the run that drew it (`LinkDraw::stamp`) and, where no
    /// kind on it has faults of its own, a copy in the record every send
    /// reads (`LinkNow::ready`): the send compares that copy with the run's
    /// stamp, one comparison where it used to test for kinds of their own.
    /// The values are the ones drawing every link up front gives, so every
    /// run is the same; only the count of decisions that made something
    /// happen (`Choices::nonzero_count`, which nothing reads after a sweep's
    /// run) leaves out the links the run did not draw.
    #[inline(always)]
    pub(in crate::engine) fn link_now(&mut self, i: usize) -> LinkNow {
        if self.link_draws.per_link[i].stamp < self.mix_now {
            self.mix_link(i);
        }
        self.links[i]
    }

    /// Link `i` at its first use in this run: its words scaled, and the
    /// link kept among those seen, whose words the next runs scale at their
    /// start.
    #[cold]
    #[inline(never)]
    fn mix_link(&mut self, i: usize) {
        self.mix_words(i);
        // Never twice: a link seen is drawn at every sweep's run's start,
        // before anything reads it. The capacity is reserved: no allocation.
        let seen = &mut self.link_draws.seen;
        debug_assert!(!seen.contains(&(i as u32)));
        if seen.len() < seen.capacity() {
            seen.push(i as u32);
        }
    }

    /// The links earlier runs drew at their first use, drawn for this
    /// sweep's run now, from the words `Run::take_link_words` copied.
    #[inline]
    pub(in crate::engine) fn mix_links_seen(&mut self) {
        for k in 0..self.link_draws.seen.len() {
            let i = self.link_draws.seen[k] as usize;
            self.mix_words(i);
        }
    }

    /// Scales link `i`'s words into its rates for this run and stamps it:
    /// what `Run::draw_link_mix` gives it, value for value.
    #[inline(always)]
    fn mix_words(&mut self, i: usize) {
        let d = &mut self.link_draws.per_link[i];
        let at = d.at as usize;
        // The words end in two never drawn, so a link always has two.
        let words: &[u64; 2] = self.swarm_words[at..at + 2].try_into().unwrap();
        let (loss_pm, dup_pm, nonzero) = d.rates(words);
        self.set_mixed(i, loss_pm, dup_pm);
        self.choices.count_nonzero(nonzero);
    }

    /// Link `i`'s rates for this run, as the traced run draws them, stamped.
    #[inline(always)]
    pub(in crate::engine) fn set_mixed(&mut self, i: usize, loss_pm: u16, dup_pm: u16) {
        let now = &mut self.links[i];
        now.loss_pm = loss_pm;
        now.dup_pm = dup_pm;
        if now.kinds_len == 0 {
            now.ready = self.mix_now;
        }
        self.link_draws.per_link[i].stamp = self.mix_now;
    }

    /// Moves the count of sweep's runs that draw their links at first use to
    /// `runs`, so that a test reaches the stamps' wrap in a few runs.
    #[cfg(test)]
    pub(crate) fn set_mix_runs(&mut self, runs: u32) {
        self.mix_runs = runs;
    }

    /// Links whose rates the last run left undrawn (it never used them).
    #[cfg(test)]
    pub(crate) fn links_behind(&self) -> usize {
        self.link_draws
            .per_link
            .iter()
            .filter(|d| d.stamp < self.mix_now)
            .count()
    }

    /// Links drawn per seed that the last run drew, row-major.
    #[cfg(test)]
    pub(crate) fn links_drawn(&self) -> Vec<usize> {
        let now = self.mix_now;
        let per_link = self.link_draws.per_link.iter();
        per_link
            .enumerate()
            .filter_map(|(i, d)| (d.stamp == now).then_some(i))
            .collect()
    }

    /// The stamp of a new run. Before the stamps wrap, every link drawn per
    /// seed is marked behind again, once in four billion runs.
    #[inline]
    pub(in crate::engine) fn next_mix_stamp(&mut self) -> u32 {
        if self.mix_runs >= FIXED_RATES - 1 {
            for &i in &self.swarm_links {
                self.link_draws.per_link[i as usize].stamp = 0;
                self.links[i as usize].ready = 0;
            }
            self.mix_runs = 0;
        }
        self.mix_runs += 1;
        self.mix_runs
    }
}
