//! What a run keeps of its decisions (its [`Record`]) and the bounds on
//! what one run may keep: the record's values and the logged decision
//! points. Both are bounded because a run may be allowed a billion steps.

#[cfg(doc)]
use super::Choices;
use super::StreamId;

/// Most decision points one run logs (24 bytes each): exhaustive search and
/// the point-of-no-return search need every point of a run, and a run may
/// be allowed a billion steps. Past this the log stops and
/// [`Choices::points_overflowed`] says so; the caller gives up on the run.
pub const MAX_LOGGED_POINTS: usize = 1 << 23;

#[cfg(test)]
thread_local! {
    /// Tests of the bound set a small one on their own thread.
    pub(crate) static TEST_MAX_LOGGED_POINTS: std::cell::Cell<usize> =
        const { std::cell::Cell::new(MAX_LOGGED_POINTS) };
}

pub(super) fn max_logged_points() -> usize {
    #[cfg(test)]
    return TEST_MAX_LOGGED_POINTS.with(|m| m.get());
    #[cfg(not(test))]
    MAX_LOGGED_POINTS
}

/// Most decision values one run records (8 bytes each: 512 MiB, and up to
/// twice that in the lists' spare capacity while they grow). A record takes
/// about 2.5 values an event, so this holds about 27 million events: every
/// run the shrinker accepts (at most 10,000,000 events, the CLI's
/// `MAX_SHRINK_EVENTS`) and its candidates (up to [`EVENTS_GROWTH_MAX`]
/// times as long) fit, while a run allowed a billion steps cannot take
/// the machine's memory. Past this the record stops and
/// [`Choices::recorded_overflowed`] says so: a truncated record replays
/// zeros past its end, another run, so callers must not use it.
///
/// [`EVENTS_GROWTH_MAX`]: crate::shrink::EVENTS_GROWTH_MAX
pub const MAX_RECORDED_VALUES: usize = 1 << 26;

thread_local! {
    /// Tests of the bound set a small one on their own thread: this crate's
    /// directly, other crates' through [`with_record_bound`]. Not under
    /// `cfg(test)`, because the code that must refuse a cut record lives in
    /// the crates above, whose tests build this one without it; read once
    /// per recording run, never per value.
    pub(crate) static TEST_MAX_RECORDED_VALUES: std::cell::Cell<usize> =
        const { std::cell::Cell::new(MAX_RECORDED_VALUES) };
}

pub(super) fn max_recorded_values() -> usize {
    TEST_MAX_RECORDED_VALUES.with(|m| m.get())
}

/// Runs `f` with every run on this thread recording at most `max_values`
/// decision values instead of [`MAX_RECORDED_VALUES`], and restores the
/// bound after (a panic in `f` too). For tests of callers that must not
/// use a record cut short: a real overflow takes 2^26 values.
#[doc(hidden)]
pub fn with_record_bound<R>(max_values: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            TEST_MAX_RECORDED_VALUES.with(|m| m.set(self.0));
        }
    }
    let _restore = Restore(TEST_MAX_RECORDED_VALUES.with(|m| m.replace(max_values)));
    f()
}

/// The recorded decisions of one run: one list of values per stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Record {
    /// Decision values per stream, indexed by [`StreamId`].
    pub streams: Vec<Vec<u64>>,
}

impl Record {
    /// An empty record of `stream_count` streams.
    pub fn with_streams(stream_count: usize) -> Record {
        Record {
            streams: vec![Vec::new(); stream_count],
        }
    }

    /// Number of decisions that made something happen.
    pub fn nonzero_count(&self) -> usize {
        self.streams
            .iter()
            .map(|s| s.iter().filter(|&&v| v != 0).count())
            .sum()
    }

    /// Drops trailing zeros, which a replay reads anyway, so equal runs get equal records.
    pub fn normalize(&mut self) {
        for s in &mut self.streams {
            while s.last() == Some(&0) {
                s.pop();
            }
        }
    }

    /// The value of decision `index` of `stream`; zero past the end, as a replay reads it.
    pub fn get(&self, stream: StreamId, index: usize) -> u64 {
        self.streams
            .get(stream as usize)
            .and_then(|s| s.get(index))
            .copied()
            .unwrap_or(0)
    }

    /// Sets decision `index` of `stream`, growing the record with zeros as needed.
    pub fn set(&mut self, stream: StreamId, index: usize, value: u64) {
        let s = stream as usize;
        if self.streams.len() <= s {
            self.streams.resize(s + 1, Vec::new());
        }
        let list = &mut self.streams[s];
        if list.len() <= index {
            list.resize(index + 1, 0);
        }
        list[index] = value;
    }
}

#[cfg(test)]
mod tests {
    use super::super::Choices;
    use super::*;

    /// The bound a test of another crate sets holds for its closure's runs
    /// only, and is restored after.
    #[test]
    fn with_record_bound_cuts_runs_inside_and_restores_after() {
        let run = || {
            let mut c = Choices::new();
            c.start_random(7, 1, true);
            for _ in 0..30 {
                c.choose(0, 10);
            }
            (c.recorded_overflowed(), c.take_recorded().streams[0].len())
        };
        assert_eq!(with_record_bound(10, run), (true, 10));
        assert_eq!(run(), (false, 30));
        let panicked = std::panic::catch_unwind(|| with_record_bound(3, || panic!("inside")));
        assert!(panicked.is_err());
        assert_eq!(max_recorded_values(), MAX_RECORDED_VALUES);
    }
}
