//! Replays, bounds and streams of the choice source.

use super::blocks::blocks_ahead;
use super::*;
use crate::chacha::BLOCK_VALUES;

#[test]
fn replay_of_a_random_run_reads_the_same_values() {
    let mut c = Choices::new();
    c.start_random(7, 3, true);
    let a: Vec<u64> = (0..50).map(|i| c.choose(i % 3, 10)).collect();
    let rec = c.take_recorded();
    c.start_replay(&rec, 3, false);
    let b: Vec<u64> = (0..50).map(|i| c.choose(i % 3, 10)).collect();
    assert_eq!(a, b);
}

#[test]
fn replay_past_the_end_is_zero_and_values_are_clamped() {
    let mut rec = Record::with_streams(1);
    rec.streams[0] = vec![9];
    let mut c = Choices::new();
    c.start_replay(&rec, 1, false);
    assert_eq!(c.choose(0, 4), 3);
    assert_eq!(c.choose(0, 4), 0);
    assert!(!c.chance(0, 500));
}

#[test]
fn recording_stops_at_its_bound_and_says_so() {
    TEST_MAX_RECORDED_VALUES.with(|m| m.set(10));
    let mut c = Choices::new();
    c.start_random(7, 2, true);
    let drawn: Vec<u64> = (0..30).map(|i| c.choose(i % 2, 10)).collect();
    assert!(c.recorded_overflowed());
    let rec = c.take_recorded();
    let values: usize = rec.streams.iter().map(Vec::len).sum();
    assert!(values <= 10, "{values} values recorded past a bound of 10");
    // What was kept is the exact start of each stream.
    let first: Vec<u64> = drawn.iter().step_by(2).copied().take(5).collect();
    assert!(first.starts_with(&rec.streams[0]));
    assert!(c.recorded_overflowed(), "taking the record keeps the flag");
    // A replay records too, within the same bound.
    c.start_replay(&rec, 2, false);
    for i in 0..30 {
        c.choose(i % 2, 10);
    }
    assert!(c.recorded_overflowed());
    // The flag is the run's: a short run after it records whole.
    c.start_random(7, 2, true);
    let short: Vec<u64> = (0..4).map(|i| c.choose(i % 2, 10)).collect();
    assert!(!c.recorded_overflowed());
    let rec = c.take_recorded();
    c.start_replay(&rec, 2, false);
    let again: Vec<u64> = (0..4).map(|i| c.choose(i % 2, 10)).collect();
    assert_eq!(short, again);
    TEST_MAX_RECORDED_VALUES.with(|m| m.set(MAX_RECORDED_VALUES));
}

#[test]
fn streams_are_independent() {
    let mut c = Choices::new();
    c.start_random(1, 2, false);
    let only_b: Vec<u64> = (0..10).map(|_| c.choose(1, 1000)).collect();
    c.start_random(1, 2, false);
    for _ in 0..7 {
        c.choose(0, 1000);
    }
    let mixed: Vec<u64> = (0..10).map(|_| c.choose(1, 1000)).collect();
    assert_eq!(only_b, mixed);
}

#[test]
fn layout_round_trips() {
    let l = StreamLayout { actors: 3 };
    assert_eq!(l.kind(l.link(2, 1)), StreamKind::Link { from: 2, to: 1 });
    assert_eq!(l.kind(l.crash(2)), StreamKind::Crash { actor: 2 });
    assert_eq!(l.kind(l.actor(0)), StreamKind::Actor { actor: 0 });
    assert_eq!(l.count(), 1 + 9 + 6);
}

/// The blocks a run computes ahead, straight into the streams' buffers,
/// are the values a stream computes on its own: a choice source reused
/// across runs (each run's first blocks computed in one batch, one to four
/// per stream, as many as the last run drew) draws what a new one draws.
#[test]
fn blocks_computed_ahead_are_the_values_a_new_source_draws() {
    let streams = 12u32;
    let mut reused = Choices::new();
    for seed in 0..40u64 {
        // Each run draws another number of values from each stream (0 to
        // 40: none, part of one block, several blocks, past one buffer).
        let draws = |s: u32| ((seed * 7 + u64::from(s) * 13) % 41) as usize;
        let mut fresh = Choices::new();
        reused.start_random(seed, streams as usize, false);
        fresh.start_random(seed, streams as usize, false);
        for s in (0..streams).rev() {
            for k in 0..draws(s) {
                let (a, b) = (reused.choose(s, 1 << 40), fresh.choose(s, 1 << 40));
                assert_eq!(a, b, "seed {seed}, stream {s}, draw {k}");
            }
        }
    }
}

/// A draw of a send: `chance` of a rate or `choose` among some values.
#[derive(Clone, Copy, Debug)]
enum Draw {
    Chance(u32),
    Choose(u64),
}

fn draw_strategy() -> impl proptest::strategy::Strategy<Value = Draw> {
    use proptest::prelude::*;
    prop_oneof![
        prop_oneof![Just(0u32), Just(1000), 1u32..1000].prop_map(Draw::Chance),
        prop_oneof![Just(1u64), 2u64..5, 1u64..1 << 40].prop_map(Draw::Choose),
    ]
}

proptest::proptest! {
    /// Draws taken together as a [`burst::Burst`] are the draws
    /// `chance` and `choose` make one by one: the same values, the same
    /// count of decisions that made something happen, and the stream goes
    /// on where it would have. A warm source (blocks computed ahead) takes
    /// its first burst at once; a source whose buffer is short of the
    /// burst's size hands none, and the caller draws one by one.
    #[test]
    fn a_burst_draws_what_draws_one_by_one_draw(
        seed in proptest::prelude::any::<u64>(),
        bursts in proptest::collection::vec(proptest::collection::vec(draw_strategy(), 1..5), 1..12),
    ) {
        let one = |c: &mut Choices, d: Draw| match d {
            Draw::Chance(p) => u64::from(c.chance(0, p)),
            Draw::Choose(a) => c.choose(0, a),
        };
        let mut warm = Choices::new();
        let mut fresh = Choices::new();
        // The first run touches the stream, so the next one computes its
        // blocks ahead (as many as it drew, at most one buffer).
        warm.start_random(seed ^ 1, 1, false);
        for _ in 0..40 {
            warm.choose(0, 10);
        }
        warm.start_random(seed, 1, false);
        fresh.start_random(seed, 1, false);
        let mut taken_together = 0;
        for (i, burst) in bursts.iter().enumerate() {
            let together: Vec<u64> = match warm.burst(0, 4) {
                Some(mut b) => {
                    taken_together += 1;
                    burst.iter().map(|&d| match d {
                        Draw::Chance(p) => u64::from(b.chance(p)),
                        Draw::Choose(a) => b.choose(a),
                    }).collect()
                }
                None => burst.iter().map(|&d| one(&mut warm, d)).collect(),
            };
            let alone: Vec<u64> = burst.iter().map(|&d| one(&mut fresh, d)).collect();
            proptest::prop_assert_eq!(&together, &alone, "burst {}", i);
            proptest::prop_assert_eq!(warm.nonzero_count(), fresh.nonzero_count());
        }
        proptest::prop_assert_eq!(warm.choose(0, 1 << 40), fresh.choose(0, 1 << 40));
        proptest::prop_assert!(taken_together >= 1, "the warm source's first burst is taken at once");
        // A new source's stream has no buffer yet: no burst, nothing drawn.
        let mut cold = Choices::new();
        cold.start_random(seed, 1, false);
        proptest::prop_assert!(cold.burst(0, 4).is_none());
        proptest::prop_assert_eq!(cold.choose(0, 1 << 40), {
            let mut f = Choices::new();
            f.start_random(seed, 1, false);
            f.choose(0, 1 << 40)
        });
    }
}

/// A chance's word threshold decides as `scale(word, 1000) < p` does, for
/// every rate and every word: the scaled decision falls as the word grows
/// (`scale` never decreases), so it is the threshold's exactly when it
/// holds one word below the threshold and fails at it.
#[test]
fn a_threshold_decides_as_the_scaled_word_does() {
    use super::odds::below;
    for p in 1..1000u32 {
        let t = below(p);
        let mut c = Choices::new();
        c.start_random(0, 1, false);
        assert_eq!(c.odds(0, p).threshold(), t, "p {p}: the table's threshold");
        let scaled = |word: u64| scale(word, 1000) < u64::from(p);
        assert!(t > 0, "p {p}");
        assert!(scaled(t - 1), "p {p}: the word below the threshold happens");
        assert!(!scaled(t), "p {p}: the threshold itself does not");
        assert!(scaled(0) && !scaled(u64::MAX), "p {p}");
    }
}

proptest::proptest! {
    /// A roll of odds set up for a run is that run's `chance` of the same
    /// rate from the same stream: the same decisions, the same count of
    /// those that happened, and the stream goes on where it would have; in
    /// a sweep's run, a recording one and a replay of the record.
    #[test]
    fn a_roll_is_the_chance_it_was_set_up_from(
        seed in proptest::prelude::any::<u64>(),
        rates in proptest::collection::vec(
            proptest::prop_oneof![proptest::strategy::Just(0u32), proptest::strategy::Just(1000), 1u32..1000],
            1..4,
        ),
        rolls in proptest::collection::vec(0usize..4, 1..200),
    ) {
        let run = |c: &mut Choices, odds: bool| -> Vec<bool> {
            let set: Vec<Odds> = rates.iter().map(|&p| c.odds(1, p)).collect();
            rolls
                .iter()
                .map(|&r| {
                    let i = r % rates.len();
                    let happened = if odds { c.roll(&set[i]) } else { c.chance(1, rates[i]) };
                    // Another stream's draw in between moves nothing.
                    c.choose(0, 7);
                    happened
                })
                .collect()
        };
        let (mut a, mut b) = (Choices::new(), Choices::new());
        for record in [false, true] {
            a.start_random(seed, 2, record);
            b.start_random(seed, 2, record);
            proptest::prop_assert_eq!(run(&mut a, true), run(&mut b, false));
            proptest::prop_assert_eq!(a.nonzero_count(), b.nonzero_count());
            proptest::prop_assert_eq!(a.choose(1, 1 << 40), b.choose(1, 1 << 40));
        }
        let record = a.take_recorded();
        a.start_replay(&record, 2, false);
        b.start_replay(&record, 2, false);
        proptest::prop_assert_eq!(run(&mut a, true), run(&mut b, false));
        proptest::prop_assert_eq!(a.nonzero_count(), b.nonzero_count());
    }
}

/// One take of [`a_warm_source_draws_what_rand_chacha_draws`] from a stream.
#[derive(Clone, Copy, Debug)]
enum Take {
    /// One `choose`.
    One(StreamId),
    /// Draws as a burst, one by one when the source hands none.
    Burst(StreamId, u32),
    /// Raw words through `plain_words`, one by one when it hands none.
    Words(StreamId, usize),
}

fn take_strategy() -> impl proptest::strategy::Strategy<Value = Take> {
    use proptest::prelude::*;
    prop_oneof![
        (0..3u32).prop_map(Take::One),
        (0..3u32, 1u32..5).prop_map(|(s, k)| Take::Burst(s, k)),
        (0..3u32, 1usize..50).prop_map(|(s, n)| Take::Words(s, n)),
    ]
}

/// The values `take` draws from `c`, each scaled as `choose(_, u64::MAX)` scales it.
fn taken(c: &mut Choices, take: Take) -> Vec<u64> {
    let one = |c: &mut Choices, s| c.choose(s, u64::MAX);
    match take {
        Take::One(s) => vec![one(c, s)],
        Take::Burst(s, k) => match c.burst(s, k) {
            Some(mut b) => (0..k).map(|_| b.choose(u64::MAX)).collect(),
            None => (0..k).map(|_| one(c, s)).collect(),
        },
        Take::Words(s, n) => {
            let mut got = Vec::new();
            while got.len() < n {
                match c.plain_words(s, n - got.len()) {
                    Some(words) => got.extend(words.iter().map(|&w| scale(w, u64::MAX))),
                    None => got.push(one(c, s)),
                }
            }
            got
        }
    }
}

proptest::proptest! {
    /// However much each stream drew in the runs before (which sizes the
    /// blocks a run computes ahead and its later refills), a reused source
    /// draws `rand_chacha`'s values, in sweeps' runs and recording ones, with
    /// replays in between (after which nothing is computed ahead): every
    /// block is computed at its own counter, whatever the batch or refill
    /// it came in. It fails when a refill's blocks are counted other than
    /// as computed (a refill of one block on AVX2, which computes two).
    #[test]
    fn a_warm_source_draws_what_rand_chacha_draws(
        runs in proptest::collection::vec(
            (
                proptest::prelude::any::<u64>(),
                proptest::prelude::any::<bool>(),
                proptest::prelude::any::<bool>(),
                proptest::collection::vec(take_strategy(), 0..80),
            ),
            1..7,
        ),
    ) {
        use rand_chacha::ChaCha8Rng;
        use rand_core::{Rng, SeedableRng};
        let mut warm = Choices::new();
        for (r, (seed, record, replay_before, takes)) in runs.iter().enumerate() {
            if *replay_before {
                warm.start_replay(&Record::with_streams(3), 3, false);
                warm.choose(1, 10);
            }
            warm.start_random(*seed, 3, *record);
            let mut reference: Vec<ChaCha8Rng> = (0..3)
                .map(|s| {
                    let mut g = ChaCha8Rng::seed_from_u64(*seed);
                    g.set_stream(s);
                    g
                })
                .collect();
            for (i, &take) in takes.iter().enumerate() {
                let got = taken(&mut warm, take);
                let s = match take {
                    Take::One(s) | Take::Burst(s, _) | Take::Words(s, _) => s as usize,
                };
                let want: Vec<u64> = (0..got.len())
                    .map(|_| scale(reference[s].next_u64(), u64::MAX))
                    .collect();
                proptest::prop_assert_eq!(got, want, "run {}, take {}: {:?}", r, i, take);
            }
        }
    }
}

/// A stream that draws as many values as it drew in the run before reads
/// every block it computes but one at most (AVX2 computes two blocks at a
/// time): its first blocks are computed ahead for that count, and its
/// refills reach it and stop. With a whole buffer per refill, a stream
/// that drew 33 values computed 8 blocks for the 5 it read.
#[test]
fn a_stream_that_draws_what_it_drew_last_run_computes_what_it_reads() {
    for drawn in 0..=140u64 {
        let mut c = Choices::new();
        for seed in 0..3 {
            c.start_random(seed, 1, false);
            for _ in 0..drawn {
                c.choose(0, 1 << 40);
            }
        }
        let computed = c.streams[0].blocks;
        let read = drawn.div_ceil(BLOCK_VALUES as u64);
        assert!(
            computed <= read + 1,
            "{drawn} values drawn: {computed} blocks computed, {read} read"
        );
    }
}

/// The batch a run computes ahead holds, for each stream the last run
/// drew from, in the order the streams were first touched, exactly the
/// blocks that reach the values it drew (one to four), each at its own
/// counter: no more (they would be computed and never read), no fewer.
/// It fails when the lanes past a stream's count are kept.
#[test]
fn the_batch_computed_ahead_is_each_streams_blocks_and_no_more() {
    let drawn_per_stream = [1u64, 8, 9, 17, 0, 25, 33, 140];
    let mut c = Choices::new();
    for seed in 0..3 {
        c.start_random(seed, drawn_per_stream.len(), false);
        for (s, &drawn) in drawn_per_stream.iter().enumerate().rev() {
            for _ in 0..drawn {
                c.choose(s as StreamId, 1 << 40);
            }
        }
    }
    // The streams were first touched from the last one down; stream 4 drew nothing.
    let want: Vec<(u64, u64)> = (0..drawn_per_stream.len())
        .rev()
        .filter(|&s| drawn_per_stream[s] > 0)
        .flat_map(|s| {
            let blocks = blocks_ahead(drawn_per_stream[s]) as u64;
            (0..blocks).map(move |b| (s as u64, b))
        })
        .collect();
    assert_eq!(c.lanes, want);
    assert_eq!(want.len(), 1 + 1 + 2 + 3 + 4 + 4 + 4);
}

/// A burst is a sweep's run's alone: a recording run and a replay hand
/// none, even on a stream this run drew from with values in its buffer, so
/// that every draw of theirs is recorded (or read from the record); the
/// next sweep's run hands bursts again. It fails when the test for a
/// sweep's run is left out of `Choices::burst`.
#[test]
fn a_burst_is_handed_only_in_a_sweeps_run() {
    let mut c = Choices::new();
    for (seed, record) in [(1, false), (2, true), (3, false), (4, true)] {
        c.start_random(seed, 2, record);
        c.choose(0, 1 << 40);
        assert_eq!(c.burst(0, 4).is_some(), !record, "seed {seed}");
        if record {
            // Drawn one by one instead, and recorded.
            c.choose(0, 1 << 40);
            assert_eq!(c.recorded().streams[0].len(), 2);
        }
    }
    let record = c.take_recorded();
    c.start_replay(&record, 2, false);
    c.choose(0, 1 << 40);
    assert!(c.burst(0, 4).is_none(), "a replay draws from its record");
    c.start_random(5, 2, false);
    c.choose(0, 1 << 40);
    assert!(c.burst(0, 4).is_some());
}
