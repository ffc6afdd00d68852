//! ChaCha8 in the sizes a decision stream needs: the exact output of
//! `rand_chacha::ChaCha8Rng::seed_from_u64(seed)` with `set_stream(stream)`,
//! read with `next_u64`.
//!
//! Why not `rand_chacha` itself: a run touches ten to twenty streams and draws
//! about ten values from most of them. `rand_chacha` expands the seed (eight
//! PCG32 steps) for every stream, fills a 256-byte buffer (four blocks) on the
//! first draw, and is a 300-byte value moved into place per stream and run.
//! Here the key is expanded once per run and shared by all its streams, and a
//! stream's first refill computes two blocks (one with SSE2 only). The values
//! are the same, bit for bit (the tests compare them with `rand_chacha` over
//! many seeds, streams and lengths), so every seed, record and trace stays
//! what it was.

/// "expand 32-byte k"
const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Values (u64) per block.
pub const BLOCK_VALUES: usize = 8;

/// The 256-bit key `rand_core`'s `seed_from_u64` derives from a `u64` seed:
/// eight outputs of PCG32 (XSH RR), each a little-endian key word.
pub fn key_from_seed(mut state: u64) -> [u32; 8] {
    const MUL: u64 = 0x5851_F42D_4C95_7F2D;
    const INC: u64 = 0xA176_54E4_6FBE_17F3;
    let mut key = [0u32; 8];
    for word in &mut key {
        state = state.wrapping_mul(MUL).wrapping_add(INC);
        let xorshifted = (((state >> 18) ^ state) >> 27) as u32;
        let rot = (state >> 59) as u32;
        *word = xorshifted.rotate_right(rot);
    }
    key
}

type Row = [u32; 4];

#[inline(always)]
fn add(a: Row, b: Row) -> Row {
    [
        a[0].wrapping_add(b[0]),
        a[1].wrapping_add(b[1]),
        a[2].wrapping_add(b[2]),
        a[3].wrapping_add(b[3]),
    ]
}

#[inline(always)]
fn xor_rotl(a: Row, b: Row, n: u32) -> Row {
    [
        (a[0] ^ b[0]).rotate_left(n),
        (a[1] ^ b[1]).rotate_left(n),
        (a[2] ^ b[2]).rotate_left(n),
        (a[3] ^ b[3]).rotate_left(n),
    ]
}

/// Four quarter rounds at once, one per column of the rows (the compiler
/// turns each row into one SIMD register).
#[inline(always)]
fn quarter_rounds(a: &mut Row, b: &mut Row, c: &mut Row, d: &mut Row) {
    *a = add(*a, *b);
    *d = xor_rotl(*d, *a, 16);
    *c = add(*c, *d);
    *b = xor_rotl(*b, *c, 12);
    *a = add(*a, *b);
    *d = xor_rotl(*d, *a, 8);
    *c = add(*c, *d);
    *b = xor_rotl(*b, *c, 7);
}

/// Values a [`refill`] may write: four blocks.
pub const REFILL_MAX: usize = 4 * BLOCK_VALUES;

/// Computes the next blocks of stream `stream` under `key`, starting at block
/// `counter`, into `out`, and returns how many values it wrote: at least
/// `want` blocks (1 to 4; the caller judges how many the stream will read),
/// and more only where they cost nothing more. AVX2 computes two blocks per
/// 256-bit register, so an odd `want` gets one block more; SSE2 computes
/// exactly `want`.
#[inline]
pub fn refill(
    key: &[u32; 8],
    stream: u64,
    counter: u64,
    want: usize,
    out: &mut [u64; REFILL_MAX],
) -> usize {
    debug_assert!(
        (1..=4).contains(&want),
        "a refill computes 1 to 4 blocks, not {want}"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            return refill_avx2(key, stream, counter, want, out);
        }
        refill_sse2(key, stream, counter, want, out)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let n = want.clamp(1, 4);
        for i in 0..n {
            portable_block(
                key,
                stream,
                counter.wrapping_add(i as u64),
                &mut out[i * BLOCK_VALUES..],
            );
        }
        n * BLOCK_VALUES
    }
}

/// The lanes of a refill: blocks `counter` to `counter + 3` of `stream`,
/// of which a kernel computes as many as the refill wants. Both kernels keep
/// `refill`'s own signature, since the tests run each in its place.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn refill_lanes(stream: u64, counter: u64) -> [(u64, u64); 4] {
    std::array::from_fn(|i| (stream, counter.wrapping_add(i as u64)))
}

/// [`refill`] with AVX2 (the caller checked for it): two blocks per register.
#[cfg(target_arch = "x86_64")]
#[inline]
fn refill_avx2(
    key: &[u32; 8],
    stream: u64,
    counter: u64,
    want: usize,
    out: &mut [u64; REFILL_MAX],
) -> usize {
    let lanes = refill_lanes(stream, counter);
    if want <= 2 {
        avx2::blocks::<1, [u64]>(key, &lanes[..2], out, 0);
        return 2 * BLOCK_VALUES;
    }
    avx2::blocks::<2, [u64]>(key, &lanes, out, 0);
    4 * BLOCK_VALUES
}

/// [`refill`] with SSE2 only: `want` blocks, one register each.
#[cfg(target_arch = "x86_64")]
#[inline]
fn refill_sse2(
    key: &[u32; 8],
    stream: u64,
    counter: u64,
    want: usize,
    out: &mut [u64; REFILL_MAX],
) -> usize {
    let lanes = refill_lanes(stream, counter);
    let computed = match want {
        1 => sse2::blocks::<1, [u64]>(key, &lanes[..1], out, 0),
        2 => sse2::blocks::<2, [u64]>(key, &lanes[..2], out, 0),
        3 => sse2::blocks::<3, [u64]>(key, &lanes[..3], out, 0),
        _ => sse2::blocks::<4, [u64]>(key, &lanes, out, 0),
    };
    computed * BLOCK_VALUES
}

/// Lanes [`blocks`] computes together at most: independent blocks (of one
/// stream or of several) interleave, so eight cost little more than two.
pub const LANES: usize = 8;

/// Where computed blocks go: block `i` of a batch (its lane `lanes[i]`).
/// A slice takes block `i` at `8 i`; a run's choice source puts each block
/// straight into its stream's buffer, with no copy through a batch buffer.
pub trait BlockSink {
    /// Block `i` of the batch, computed.
    fn put(&mut self, i: usize, block: &[u64; BLOCK_VALUES]);
}

impl BlockSink for [u64] {
    #[inline(always)]
    fn put(&mut self, i: usize, block: &[u64; BLOCK_VALUES]) {
        self[i * BLOCK_VALUES..(i + 1) * BLOCK_VALUES].copy_from_slice(block);
    }
}

/// For each lane `(stream, counter)`, that block of that stream under `key`,
/// handed to `out` as block `i` of the batch. A run's choice source computes
/// the first blocks of the streams the last run touched this way, instead
/// of one stream at a time as the run meets them.
pub fn blocks<S: BlockSink + ?Sized>(key: &[u32; 8], lanes: &[(u64, u64)], out: &mut S) {
    let mut at = 0;
    while at < lanes.len() {
        let rest = &lanes[at..];
        #[cfg(target_arch = "x86_64")]
        let done = if std::is_x86_feature_detected!("avx2") {
            match rest.len() {
                8.. => avx2::blocks::<4, S>(key, &rest[..8], out, at),
                4.. => avx2::blocks::<2, S>(key, &rest[..4], out, at),
                2.. => avx2::blocks::<1, S>(key, &rest[..2], out, at),
                _ => sse2::blocks::<1, S>(key, &rest[..1], out, at),
            }
        } else {
            match rest.len() {
                4.. => sse2::blocks::<4, S>(key, &rest[..4], out, at),
                2.. => sse2::blocks::<2, S>(key, &rest[..2], out, at),
                _ => sse2::blocks::<1, S>(key, &rest[..1], out, at),
            }
        };
        #[cfg(not(target_arch = "x86_64"))]
        let done = {
            let mut block = [0u64; BLOCK_VALUES];
            portable_block(key, rest[0].0, rest[0].1, &mut block);
            out.put(at, &block);
            1
        };
        at += done;
    }
}

/// The input rows of a block: constants, key, key, counter and stream.
#[inline(always)]
fn input(key: &[u32; 8], stream: u64, counter: u64) -> [Row; 4] {
    [
        CONSTANTS,
        [key[0], key[1], key[2], key[3]],
        [key[4], key[5], key[6], key[7]],
        [
            counter as u32,
            (counter >> 32) as u32,
            stream as u32,
            (stream >> 32) as u32,
        ],
    ]
}

/// One block in plain Rust, for targets without SSE2, and the readable
/// definition the SIMD version is tested against.
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
fn portable_block(key: &[u32; 8], stream: u64, counter: u64, out: &mut [u64]) {
    let [a0, b0, c0, d0] = input(key, stream, counter);
    let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
    // Eight rounds: four double rounds of a column round and a diagonal round.
    for _ in 0..4 {
        quarter_rounds(&mut a, &mut b, &mut c, &mut d);
        // Diagonals become columns by rotating rows b, c, d by 1, 2, 3 words.
        b = [b[1], b[2], b[3], b[0]];
        c = [c[2], c[3], c[0], c[1]];
        d = [d[3], d[0], d[1], d[2]];
        quarter_rounds(&mut a, &mut b, &mut c, &mut d);
        b = [b[3], b[0], b[1], b[2]];
        c = [c[2], c[3], c[0], c[1]];
        d = [d[1], d[2], d[3], d[0]];
    }
    let rows = [add(a, a0), add(b, b0), add(c, c0), add(d, d0)];
    for (r, row) in rows.iter().enumerate() {
        out[2 * r] = u64::from(row[0]) | (u64::from(row[1]) << 32);
        out[2 * r + 1] = u64::from(row[2]) | (u64::from(row[3]) << 32);
    }
}

/// One row per SSE2 register (SSE2 is part of every x86_64 CPU, so no runtime
/// detection): the compiler does not vectorise the portable version well.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{input, BlockSink, BLOCK_VALUES};
    use std::arch::x86_64::{
        __m128i, _mm_add_epi32, _mm_or_si128, _mm_shuffle_epi32, _mm_slli_epi32, _mm_srli_epi32,
        _mm_xor_si128,
    };

    /// `x` rotated left by `l` bits (`r` = 32 - `l`).
    macro_rules! rotl {
        ($x:expr, $l:literal, $r:literal) => {{
            let x = $x;
            _mm_or_si128(_mm_slli_epi32::<$l>(x), _mm_srli_epi32::<$r>(x))
        }};
    }

    #[inline(always)]
    fn load(r: [u32; 4]) -> __m128i {
        // SAFETY: [u32; 4] and __m128i have the same size; any bits are a valid __m128i.
        unsafe { std::mem::transmute::<[u32; 4], __m128i>(r) }
    }

    #[inline(always)]
    fn store(v: __m128i) -> [u64; 2] {
        // SAFETY: as in `load`; on little-endian x86 the two u64 are words 0|1 and 2|3.
        unsafe { std::mem::transmute::<__m128i, [u64; 2]>(v) }
    }

    #[inline]
    /// Block `lanes[i].1` of stream `lanes[i].0`, for each of the N lanes,
    /// handed to `out` as block `first + i`.
    pub fn blocks<const N: usize, S: BlockSink + ?Sized>(
        key: &[u32; 8],
        lanes: &[(u64, u64)],
        out: &mut S,
        first: usize,
    ) -> usize {
        assert!(lanes.len() == N);
        // SAFETY: SSE2 is part of the x86_64 baseline; every x86_64 CPU has it.
        unsafe { blocks_sse2::<N, S>(key, lanes, out, first) };
        N
    }

    #[target_feature(enable = "sse2")]
    fn blocks_sse2<const N: usize, S: BlockSink + ?Sized>(
        key: &[u32; 8],
        lanes: &[(u64, u64)],
        out: &mut S,
        first: usize,
    ) {
        let rows = input(key, 0, 0);
        let (a0, b0, c0) = (load(rows[0]), load(rows[1]), load(rows[2]));
        let d0: [__m128i; N] = std::array::from_fn(|i| {
            let (stream, counter) = lanes[i];
            load(input(key, stream, counter)[3])
        });
        let (mut a, mut b, mut c, mut d) = ([a0; N], [b0; N], [c0; N], d0);
        // Every step runs on all N blocks before the next one: N independent
        // chains of dependent instructions, interleaved by the CPU.
        macro_rules! quarter_rounds {
            () => {
                for i in 0..N {
                    a[i] = _mm_add_epi32(a[i], b[i]);
                    d[i] = rotl!(_mm_xor_si128(d[i], a[i]), 16, 16);
                }
                for i in 0..N {
                    c[i] = _mm_add_epi32(c[i], d[i]);
                    b[i] = rotl!(_mm_xor_si128(b[i], c[i]), 12, 20);
                }
                for i in 0..N {
                    a[i] = _mm_add_epi32(a[i], b[i]);
                    d[i] = rotl!(_mm_xor_si128(d[i], a[i]), 8, 24);
                }
                for i in 0..N {
                    c[i] = _mm_add_epi32(c[i], d[i]);
                    b[i] = rotl!(_mm_xor_si128(b[i], c[i]), 7, 25);
                }
            };
        }
        for _ in 0..4 {
            quarter_rounds!();
            // Rows b, c, d rotated left by 1, 2, 3 words: diagonals become columns.
            for i in 0..N {
                b[i] = _mm_shuffle_epi32::<0b00_11_10_01>(b[i]);
                c[i] = _mm_shuffle_epi32::<0b01_00_11_10>(c[i]);
                d[i] = _mm_shuffle_epi32::<0b10_01_00_11>(d[i]);
            }
            quarter_rounds!();
            for i in 0..N {
                b[i] = _mm_shuffle_epi32::<0b10_01_00_11>(b[i]);
                c[i] = _mm_shuffle_epi32::<0b01_00_11_10>(c[i]);
                d[i] = _mm_shuffle_epi32::<0b00_11_10_01>(d[i]);
            }
        }
        for i in 0..N {
            let rows = [
                _mm_add_epi32(a[i], a0),
                _mm_add_epi32(b[i], b0),
                _mm_add_epi32(c[i], c0),
                _mm_add_epi32(d[i], d0[i]),
            ];
            let mut o = [0u64; BLOCK_VALUES];
            for (r, row) in rows.into_iter().enumerate() {
                let [lo, hi] = store(row);
                o[2 * r] = lo;
                o[2 * r + 1] = hi;
            }
            out.put(first + i, &o);
        }
    }
}

/// Two blocks per 256-bit register, one in each 128-bit half: the AVX2
/// shuffles work within halves, so the rows rotate exactly as with SSE2.
/// Used when the CPU has AVX2 (detected at run time, cached by `std`).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{input, BlockSink, BLOCK_VALUES};
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_or_si256, _mm256_permute2x128_si256, _mm256_setr_epi8,
        _mm256_shuffle_epi32, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32,
        _mm256_xor_si256,
    };

    #[inline(always)]
    fn load(lo: [u32; 4], hi: [u32; 4]) -> __m256i {
        let both = [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]];
        // SAFETY: [u32; 8] and __m256i have the same size; any bits are valid.
        unsafe { std::mem::transmute::<[u32; 8], __m256i>(both) }
    }

    #[inline(always)]
    fn store(v: __m256i) -> [u64; 4] {
        // SAFETY: as in `load`; little-endian, so u64 j is words 2j | 2j+1.
        unsafe { std::mem::transmute::<__m256i, [u64; 4]>(v) }
    }

    /// Block `lanes[i].1` of stream `lanes[i].0` for each of the 2 M lanes,
    /// handed to `out` as block `first + i`.
    #[inline]
    pub fn blocks<const M: usize, S: BlockSink + ?Sized>(
        key: &[u32; 8],
        lanes: &[(u64, u64)],
        out: &mut S,
        first: usize,
    ) -> usize {
        assert!(lanes.len() == 2 * M);
        // SAFETY: the caller checked that the CPU has AVX2.
        unsafe { blocks_avx2::<M, S>(key, lanes, out, first) };
        2 * M
    }

    /// The byte shuffles that rotate each 32-bit word left by 16 and by 8 bits.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn rotations() -> (__m256i, __m256i) {
        let rot16 = _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11,
            8, 9, 14, 15, 12, 13,
        );
        let rot8 = _mm256_setr_epi8(
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9,
            10, 15, 12, 13, 14,
        );
        (rot16, rot8)
    }

    #[target_feature(enable = "avx2")]
    fn blocks_avx2<const M: usize, S: BlockSink + ?Sized>(
        key: &[u32; 8],
        lanes: &[(u64, u64)],
        out: &mut S,
        first: usize,
    ) {
        let rows = input(key, 0, 0);
        let (a0, b0, c0) = (
            load(rows[0], rows[0]),
            load(rows[1], rows[1]),
            load(rows[2], rows[2]),
        );
        let d0: [__m256i; M] = std::array::from_fn(|j| {
            let at = |k: usize| input(key, lanes[k].0, lanes[k].1)[3];
            load(at(2 * j), at(2 * j + 1))
        });
        let (rot16, rot8) = rotations();
        let (mut a, mut b, mut c, mut d) = ([a0; M], [b0; M], [c0; M], d0);
        macro_rules! quarter_rounds {
            () => {
                for j in 0..M {
                    a[j] = _mm256_add_epi32(a[j], b[j]);
                    d[j] = _mm256_shuffle_epi8(_mm256_xor_si256(d[j], a[j]), rot16);
                }
                for j in 0..M {
                    c[j] = _mm256_add_epi32(c[j], d[j]);
                    let x = _mm256_xor_si256(b[j], c[j]);
                    b[j] = _mm256_or_si256(_mm256_slli_epi32::<12>(x), _mm256_srli_epi32::<20>(x));
                }
                for j in 0..M {
                    a[j] = _mm256_add_epi32(a[j], b[j]);
                    d[j] = _mm256_shuffle_epi8(_mm256_xor_si256(d[j], a[j]), rot8);
                }
                for j in 0..M {
                    c[j] = _mm256_add_epi32(c[j], d[j]);
                    let x = _mm256_xor_si256(b[j], c[j]);
                    b[j] = _mm256_or_si256(_mm256_slli_epi32::<7>(x), _mm256_srli_epi32::<25>(x));
                }
            };
        }
        for _ in 0..4 {
            quarter_rounds!();
            for j in 0..M {
                b[j] = _mm256_shuffle_epi32::<0b00_11_10_01>(b[j]);
                c[j] = _mm256_shuffle_epi32::<0b01_00_11_10>(c[j]);
                d[j] = _mm256_shuffle_epi32::<0b10_01_00_11>(d[j]);
            }
            quarter_rounds!();
            for j in 0..M {
                b[j] = _mm256_shuffle_epi32::<0b10_01_00_11>(b[j]);
                c[j] = _mm256_shuffle_epi32::<0b01_00_11_10>(c[j]);
                d[j] = _mm256_shuffle_epi32::<0b00_11_10_01>(d[j]);
            }
        }
        for j in 0..M {
            let ra = _mm256_add_epi32(a[j], a0);
            let rb = _mm256_add_epi32(b[j], b0);
            let rc = _mm256_add_epi32(c[j], c0);
            let rd = _mm256_add_epi32(d[j], d0[j]);
            // Low halves are block 2j, high halves block 2j + 1: rows a|b and c|d of each.
            let rows = [
                _mm256_permute2x128_si256::<0x20>(ra, rb),
                _mm256_permute2x128_si256::<0x20>(rc, rd),
                _mm256_permute2x128_si256::<0x31>(ra, rb),
                _mm256_permute2x128_si256::<0x31>(rc, rd),
            ];
            let mut o = [[0u64; BLOCK_VALUES]; 2];
            for (r, row) in rows.into_iter().enumerate() {
                o[r / 2][4 * (r % 2)..4 * (r % 2) + 4].copy_from_slice(&store(row));
            }
            out.put(first + 2 * j, &o[0]);
            out.put(first + 2 * j + 1, &o[1]);
        }
    }
}

#[cfg(test)]
mod tests;
