//! The kernels against `rand_chacha` and against the portable block.

use super::*;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

fn reference(seed: u64, stream: u64, n: usize) -> Vec<u64> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(stream);
    (0..n).map(|_| r.next_u64()).collect()
}

type Refill = fn(&[u32; 8], u64, u64, usize, &mut [u64; REFILL_MAX]) -> usize;

/// Every refill this CPU can run: the one `refill` picks, and on x86_64
/// each kernel's own (an AVX2 machine never takes the SSE2 path).
fn refills() -> Vec<(&'static str, Refill)> {
    #[allow(unused_mut)]
    let mut all: Vec<(&'static str, Refill)> = vec![("refill", refill)];
    #[cfg(target_arch = "x86_64")]
    {
        all.push(("sse2", refill_sse2));
        if std::is_x86_feature_detected!("avx2") {
            all.push(("avx2", refill_avx2));
        }
    }
    all
}

fn ours(seed: u64, stream: u64, n: usize, refill: Refill) -> Vec<u64> {
    let key = key_from_seed(seed);
    let mut out = Vec::new();
    let mut buf = [0u64; REFILL_MAX];
    let mut counter = 0;
    // As the choice source draws: a first refill of one block, then
    // refills of every size in turn.
    let mut want = 1;
    while out.len() < n {
        let k = refill(&key, stream, counter, want, &mut buf);
        assert!(k >= want * BLOCK_VALUES, "{k} values for {want} blocks");
        want = want % 4 + 1;
        out.extend_from_slice(&buf[..k]);
        counter += (k / BLOCK_VALUES) as u64;
    }
    out.truncate(n);
    out
}

#[test]
fn every_implementation_computes_the_portable_blocks() {
    let key = key_from_seed(42);
    let mut want = [0u64; 4 * BLOCK_VALUES];
    for (stream, counter) in [(0, 0), (3, 1), (u64::MAX, 7), (9, u64::MAX - 1)] {
        for i in 0..4 {
            portable_block(
                &key,
                stream,
                counter.wrapping_add(i),
                &mut want[i as usize * BLOCK_VALUES..],
            );
        }
        #[cfg(target_arch = "x86_64")]
        {
            let lanes: [(u64, u64); 4] =
                std::array::from_fn(|i| (stream, counter.wrapping_add(i as u64)));
            let mut got = [0u64; 4 * BLOCK_VALUES];
            sse2::blocks::<4, [u64]>(&key, &lanes, &mut got, 0);
            assert_eq!(got, want, "sse2, stream {stream} counter {counter}");
            if std::is_x86_feature_detected!("avx2") {
                let mut got = [0u64; 4 * BLOCK_VALUES];
                avx2::blocks::<2, [u64]>(&key, &lanes, &mut got, 0);
                assert_eq!(got, want, "avx2, stream {stream} counter {counter}");
            }
        }
    }
    // Blocks of different streams at once, in batches of every size.
    let lanes = [
        (0, 0),
        (1, 0),
        (5, 0),
        (9, 3),
        (2, 0),
        (77, 1),
        (u64::MAX, 0),
        (3, 0),
    ];
    for n in 1..=lanes.len() + 1 {
        let lanes: Vec<(u64, u64)> = lanes.iter().cycle().take(n + 3).copied().collect();
        let mut got = vec![0u64; lanes.len() * BLOCK_VALUES];
        blocks(&key, &lanes, &mut got[..]);
        for (i, &(s, c)) in lanes.iter().enumerate() {
            let mut one = [0u64; BLOCK_VALUES];
            portable_block(&key, s, c, &mut one);
            assert_eq!(
                &got[i * BLOCK_VALUES..][..BLOCK_VALUES],
                one,
                "lane {i} of {n}"
            );
        }
    }
}

#[test]
fn the_same_values_as_rand_chacha() {
    // Across block and buffer boundaries (8 and 32 values), many seeds and streams.
    for seed in (0..200).chain([u64::MAX, 1 << 40, 0xdead_beef]) {
        for stream in [0, 1, 2, 7, 15, 16, 99, u64::from(u32::MAX) + 3] {
            for (name, refill) in refills() {
                assert_eq!(
                    ours(seed, stream, 70, refill),
                    reference(seed, stream, 70),
                    "{name}: seed {seed} stream {stream}"
                );
            }
        }
    }
}
