//! The one recorded source of nondeterminism.
//!
//! Every decision a run makes (is this message lost, how long is its delay, does
//! this actor crash before its next step, which jitter does this retry draw) goes
//! through [`Choices`], and what is recorded is the *decision's value*, never the
//! raw random word behind it. Two consequences carry the whole project:
//!
//! - A record replays the same under other probabilities or another design
//!   variant, which is what counterfactual diffs need.
//! - Zero always means "nothing happens" (delivered, not duplicated, shortest
//!   delay, no crash, no jitter), and a replay that runs past the end of its
//!   record reads zeros. So every list of numbers is a valid run, and shrinking
//!   is just making the lists shorter and their numbers smaller.
//!
//! Decisions are split into independent streams (one per link, per actor's
//! crashes, per actor's own draws, plus one for the swarm mix), so a decision
//! added on one link does not reshuffle every other draw in the run.

use crate::chacha::{self, REFILL_MAX as BUF_VALUES};
use blocks::refill;

const _: () = assert!(BUF_VALUES.is_power_of_two());

/// Dense index of a decision stream inside one world; see [`StreamLayout`].
pub type StreamId = u32;

mod blocks;
mod burst;
mod layout;
mod odds;
mod record;
#[cfg(test)]
mod tests;
pub use layout::{StreamKind, StreamLayout};
pub(crate) use odds::Odds;
#[doc(hidden)]
pub use record::with_record_bound;
use record::{max_logged_points, max_recorded_values};
pub use record::{Record, MAX_LOGGED_POINTS, MAX_RECORDED_VALUES};
#[cfg(test)]
pub(crate) use record::{TEST_MAX_LOGGED_POINTS, TEST_MAX_RECORDED_VALUES};

/// One place where a run made a decision, for exhaustive enumeration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChoicePoint {
    /// The stream the decision was drawn from.
    pub stream: StreamId,
    /// Its position in that stream.
    pub index: u32,
    /// The decision took a value in `0..arity`.
    pub arity: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Values come from ChaCha8 streams keyed by the seed.
    Random,
    /// Values come from a record; past its end every value is zero.
    Replay,
}

/// One stream's position in the current run. Stale entries (an older `run`)
/// read as fresh, so starting a run costs nothing per stream: a world with
/// thousands of links pays only for the streams a run touches.
#[derive(Clone, Copy)]
struct StreamPos {
    run: u64,
    /// The stream's next decision index. 64 bits: a run allowed a billion
    /// steps may draw more than 2^32 times from one busy link, and a 32-bit
    /// index would wrap (or panic in a debug build) in the middle of a
    /// sweep. It costs nothing: the struct keeps its size (the 32-bit one
    /// was padded) and the hot path adds one to a register either way.
    cursor: u64,
    /// Values of `buf` drawn already; `filled` when the next draw needs a refill.
    used: u32,
    /// Values in `buf`.
    filled: u32,
    /// Blocks of this stream computed in this run.
    blocks: u64,
    /// Values the stream drew in the last run, when this run computed its
    /// first blocks ahead: a spent buffer's refill computes as many blocks
    /// as reach that count, not a whole buffer most of which nobody reads.
    /// `u32::MAX` (unknown, or as many) for a stream this run met anew.
    expected_values: u32,
    buf: [u64; BUF_VALUES],
}

impl Default for StreamPos {
    fn default() -> Self {
        StreamPos {
            run: 0,
            cursor: 0,
            used: 0,
            filled: 0,
            blocks: 0,
            expected_values: u32::MAX,
            buf: [0; BUF_VALUES],
        }
    }
}

/// The choice source of one run. Reused across runs without reallocating.
pub struct Choices {
    mode: Mode,
    /// The run's ChaCha8 key, expanded from its seed once for all its streams.
    key: [u32; 8],
    /// Counts runs; a stream whose `run` differs has not been touched yet.
    run: u64,
    streams: Vec<StreamPos>,
    replay: Record,
    recording: bool,
    /// A replay keeps what it read (the shrinker's candidates need it); off
    /// for traces and searches that compare runs, which may replay a run a
    /// billion steps long and need no record of it.
    record_replays: bool,
    recorded: Record,
    /// Values in `recorded` this run, against `max_recorded`.
    recorded_values: usize,
    /// [`MAX_RECORDED_VALUES`], or a test's smaller bound, as this run began.
    max_recorded: usize,
    /// This run made more decisions than it could record.
    recorded_overflowed: bool,
    logging_points: bool,
    /// Random mode with nothing recorded or logged: a sweep's run, which
    /// takes the short path through [`choose`](Choices::choose) and
    /// [`chance`](Choices::chance).
    plain: bool,
    /// `run` in a sweep's run, else [`burst::NO_BURST`] (see [`Choices::burst`]).
    burst_run: u64,
    points: Vec<ChoicePoint>,
    /// This run met more than [`MAX_LOGGED_POINTS`] points while logging them.
    points_overflowed: bool,
    nonzero: u32,
    /// Streams given this run's stamp in random mode: those it drew from, and
    /// those whose first block was computed ahead. The next random run
    /// computes the first block of those the run drew from all at once.
    touched: Vec<StreamId>,
    /// Lanes of that batch, kept to allocate nothing per run.
    lanes: Vec<(u64, u64)>,
}

impl Default for Choices {
    fn default() -> Self {
        Choices::new()
    }
}

impl Choices {
    /// A choice source; [`start_random`](Choices::start_random) or [`start_replay`](Choices::start_replay) begins a run.
    pub fn new() -> Choices {
        Choices {
            mode: Mode::Random,
            key: [0; 8],
            run: 0,
            streams: Vec::new(),
            replay: Record::default(),
            recording: false,
            record_replays: true,
            recorded: Record::default(),
            recorded_values: 0,
            max_recorded: MAX_RECORDED_VALUES,
            recorded_overflowed: false,
            logging_points: false,
            plain: true,
            burst_run: 0,
            points: Vec::new(),
            points_overflowed: false,
            nonzero: 0,
            touched: Vec::new(),
            lanes: Vec::new(),
        }
    }

    fn reset(&mut self, stream_count: usize) {
        self.run += 1;
        self.burst_run = if self.plain {
            self.run
        } else {
            burst::NO_BURST
        };
        if self.streams.len() < stream_count {
            self.streams.resize(stream_count, StreamPos::default());
        }
        self.nonzero = 0;
        self.points.clear();
        self.points_overflowed = false;
        self.recorded_values = 0;
        self.recorded_overflowed = false;
        if self.recording {
            self.max_recorded = max_recorded_values();
            self.recorded.streams.resize(stream_count, Vec::new());
            for s in &mut self.recorded.streams {
                s.clear();
            }
        }
    }

    /// The stream's position in this run, refreshed on first touch.
    #[inline]
    fn pos(&mut self, stream: StreamId) -> &mut StreamPos {
        let run = self.run;
        let p = &mut self.streams[stream as usize];
        if p.run != run {
            p.run = run;
            p.cursor = 0;
            p.used = 0;
            p.filled = 0;
            p.blocks = 0;
            p.expected_values = u32::MAX;
        }
        p
    }

    /// The next index of `stream`.
    #[inline]
    fn next_index(&mut self, stream: StreamId) -> u64 {
        let p = self.pos(stream);
        let index = p.cursor;
        p.cursor = index + 1;
        index
    }

    /// The next index of `stream` and its next random word (random mode).
    #[inline(always)]
    fn draw(&mut self, stream: StreamId) -> (u64, u64) {
        let run = self.run;
        let p = &mut self.streams[stream as usize];
        // The usual case: a stream of this run with values left in its buffer.
        if p.run == run && p.used < p.filled {
            let index = p.cursor;
            p.cursor = index + 1;
            // `used < filled <= BUF_VALUES`, a power of two: the mask only
            // spares the bounds check.
            let word = p.buf[p.used as usize & (BUF_VALUES - 1)];
            p.used += 1;
            return (index, word);
        }
        self.draw_slow(stream)
    }

    /// [`draw`](Choices::draw) on a stream's first touch in a run or with its buffer spent.
    #[cold]
    #[inline(never)]
    fn draw_slow(&mut self, stream: StreamId) -> (u64, u64) {
        let key = &self.key;
        let run = self.run;
        let p = &mut self.streams[stream as usize];
        if p.run != run {
            p.run = run;
            p.cursor = 0;
            p.used = 0;
            p.filled = 0;
            p.blocks = 0;
            p.expected_values = u32::MAX;
        }
        let index = p.cursor;
        p.cursor = index + 1;
        if index == 0 && p.blocks == 0 {
            // First touched in this run, not computed ahead.
            self.touched.push(stream);
        }
        if p.used == p.filled {
            refill(key, stream, p);
        }
        let word = p.buf[p.used as usize];
        p.used += 1;
        (index, word)
    }

    /// Prepares a random run from `seed`. `record` keeps the decisions for replay.
    pub fn start_random(&mut self, seed: u64, stream_count: usize, record: bool) {
        let last_run = self.run;
        self.mode = Mode::Random;
        self.key = chacha::key_from_seed(seed);
        self.recording = record;
        self.logging_points = false;
        self.plain = !record;
        self.reset(stream_count);
        self.compute_ahead(last_run);
    }

    /// Prepares a run that reads its decisions from `record` (zeros past its end).
    pub fn start_replay(&mut self, record: &Record, stream_count: usize, log: bool) {
        self.mode = Mode::Replay;
        // A replay draws nothing: the next random run starts without blocks ahead.
        self.touched.clear();
        // Into the buffers of the last replay: exhaustive mode replays
        // millions of records, and a copy must not allocate each time.
        self.replay.streams.resize_with(stream_count, Vec::new);
        for (i, dst) in self.replay.streams.iter_mut().enumerate() {
            dst.clear();
            if let Some(src) = record.streams.get(i) {
                dst.extend_from_slice(src);
            }
        }
        self.recording = self.record_replays;
        self.logging_points = log;
        self.plain = false;
        self.reset(stream_count);
    }

    /// Whether replays keep what they read (on unless a caller turns it off).
    pub fn set_record_replays(&mut self, on: bool) {
        self.record_replays = on;
    }

    /// The decisions made so far (only when recording); only the first ones
    /// when [`recorded_overflowed`](Choices::recorded_overflowed).
    pub fn recorded(&self) -> &Record {
        &self.recorded
    }

    /// The decisions recorded, normalized, leaving an empty record behind;
    /// only the first ones when [`recorded_overflowed`](Choices::recorded_overflowed).
    pub fn take_recorded(&mut self) -> Record {
        let mut r = std::mem::take(&mut self.recorded);
        r.normalize();
        r
    }

    /// Decision points in the order the run met them (only in logging replay).
    pub fn points(&self) -> &[ChoicePoint] {
        &self.points
    }

    /// The last run met more decision points than it could log
    /// ([`MAX_LOGGED_POINTS`]): [`points`](Choices::points) holds only the first ones.
    pub fn points_overflowed(&self) -> bool {
        self.points_overflowed
    }

    /// The last run made more decisions than it could record
    /// ([`MAX_RECORDED_VALUES`]): its record holds only the first ones and
    /// replays another run (zeros past its end), so it must not be used.
    /// Stays set after [`take_recorded`](Choices::take_recorded), until the next run starts.
    pub fn recorded_overflowed(&self) -> bool {
        self.recorded_overflowed
    }

    /// Records decision `index` of `stream`, within [`MAX_RECORDED_VALUES`].
    #[inline]
    fn note(&mut self, stream: StreamId, index: u64, value: u64) {
        // Within a run each stream's decisions come in order, so a record
        // that stops here keeps an exact prefix of every stream.
        if self.recorded_values < self.max_recorded {
            self.recorded_values += 1;
            self.recorded.set(stream, index as usize, value);
        } else {
            self.recorded_overflowed = true;
        }
    }

    /// How many decisions so far made something happen.
    pub fn nonzero_count(&self) -> u32 {
        self.nonzero
    }

    /// A value in `0..arity`. Arity 1 is no decision at all and is not recorded,
    /// so only real alternatives appear in records and enumerations.
    #[inline(always)]
    pub fn choose(&mut self, stream: StreamId, arity: u64) -> u64 {
        assert!(arity >= 1, "a decision needs at least one alternative");
        if arity == 1 {
            return 0;
        }
        if self.plain {
            // A sweep's run: a buffered word, no record, no log. Inlined at
            // every call site; everything else stays out of line.
            let value = scale(self.draw(stream).1, arity);
            self.nonzero += u32::from(value != 0);
            return value;
        }
        self.choose_noted(stream, arity)
    }

    /// [`choose`](Choices::choose) in replay, or recording, or logging points.
    #[inline(never)]
    fn choose_noted(&mut self, stream: StreamId, arity: u64) -> u64 {
        let (index, value) = match self.mode {
            Mode::Random => {
                let (index, word) = self.draw(stream);
                (index, scale(word, arity))
            }
            Mode::Replay => {
                let index = self.next_index(stream);
                // A value that no longer fits (after shrinking shifted decisions) is clamped, not rejected.
                (
                    index,
                    self.replay.get(stream, index as usize).min(arity - 1),
                )
            }
        };
        debug_assert!(value < arity);
        if value != 0 {
            self.nonzero += 1;
        }
        if self.recording {
            self.note(stream, index, value);
        }
        if self.logging_points {
            if self.points.len() < max_logged_points() {
                self.points.push(ChoicePoint {
                    stream,
                    // Every decision of a logging run is a point, so a
                    // logged one's index is below MAX_LOGGED_POINTS.
                    index: index as u32,
                    arity,
                });
            } else {
                self.points_overflowed = true;
            }
        }
        value
    }

    /// True with probability `per_mille / 1000`; recorded as 1 (happens) or 0.
    #[inline(always)]
    pub fn chance(&mut self, stream: StreamId, per_mille: u32) -> bool {
        if per_mille == 0 {
            return false;
        }
        if per_mille >= 1000 {
            return true;
        }
        if self.plain {
            let happens = scale(self.draw(stream).1, 1000) < u64::from(per_mille);
            self.nonzero += u32::from(happens);
            return happens;
        }
        self.chance_noted(stream, per_mille)
    }

    /// [`chance`](Choices::chance) in replay, or recording, or logging points.
    #[inline(never)]
    fn chance_noted(&mut self, stream: StreamId, per_mille: u32) -> bool {
        match self.mode {
            Mode::Random => {
                let (index, word) = self.draw(stream);
                let happens = scale(word, 1000) < u64::from(per_mille);
                if happens {
                    self.nonzero += 1;
                }
                if self.recording {
                    self.note(stream, index, u64::from(happens));
                }
                happens
            }
            Mode::Replay => self.choose_noted(stream, 2) == 1,
        }
    }

    /// The next random words of `stream` in a sweep's run (random mode,
    /// nothing recorded or logged), at most `n` and at least one: as many
    /// as its buffer holds, refilled first when spent (the blocks a draw
    /// would have computed there), taken at once. A caller that needs more
    /// asks again. The caller scales each as [`choose`](Choices::choose)
    /// would (see [`scale`]) and counts those that made something happen
    /// with [`count_nonzero`](Choices::count_nonzero). `None` in any other
    /// run, or for `n` = 0, or when the stream was not computed ahead for
    /// this run (a thread's first run): then nothing is drawn, and the
    /// caller draws one by one. The values are the same either way; the
    /// swarm mix draws its links' rates so, sparing each draw its checks.
    #[inline]
    pub(crate) fn plain_words(&mut self, stream: StreamId, n: usize) -> Option<&[u64]> {
        if !self.plain || n == 0 {
            return None;
        }
        let run = self.run;
        let p = &mut self.streams[stream as usize];
        if p.run != run {
            return None;
        }
        if p.used == p.filled {
            refill(&self.key, stream, p);
        }
        let at = p.used as usize;
        let taken = n.min((p.filled - p.used) as usize);
        p.used += taken as u32;
        p.cursor += taken as u64;
        Some(&p.buf[at..at + taken])
    }

    /// Counts `n` decisions taken through [`plain_words`](Choices::plain_words)
    /// that made something happen, as [`choose`](Choices::choose) counts its own.
    #[inline]
    pub(crate) fn count_nonzero(&mut self, n: u32) {
        self.nonzero += n;
    }

    /// A value in `lo..=hi`; recorded as the offset from `lo`, so zero is the smallest.
    #[inline(always)]
    pub fn range(&mut self, stream: StreamId, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "range {lo}..={hi} is empty");
        let arity = (hi - lo)
            .checked_add(1)
            .expect("validation keeps ranges below 2^64 values");
        lo + self.choose(stream, arity)
    }
}

/// A random word scaled to `0..arity` by Lemire's multiply-shift:
/// deterministic and unbiased enough for schedules.
#[inline(always)]
pub(crate) fn scale(word: u64, arity: u64) -> u64 {
    ((u128::from(word) * u128::from(arity)) >> 64) as u64
}
