//! The blocks of random words each stream reads: the first ones of a run
//! computed ahead in one batch, and the refills of a stream whose buffer is
//! spent. Values never depend on which path computed them.

use super::{Choices, StreamId, StreamPos, BUF_VALUES};
use crate::chacha::{self, BLOCK_VALUES};

// `compute_ahead` copies four lanes a stream and keeps as many as it takes.
const _: () = assert!(BUF_VALUES / BLOCK_VALUES <= 4);

impl Choices {
    /// Computes the first blocks of every stream the last random run drew
    /// from, in one batch (see [`chacha::blocks`]): most runs touch the same
    /// streams and draw about as many values from each, and blocks computed
    /// together cost far less than one at a time. A stream gets as many
    /// blocks as the last run drew values from it (one to four): a stream
    /// that needs more than block 0 would otherwise compute the rest on its
    /// own at its ninth draw. The count is kept too, to size the stream's
    /// later refills (see [`refill_blocks`]). Values are the same either
    /// way; a stream this run does not touch, or draws less from, only
    /// costs a little work.
    pub(super) fn compute_ahead(&mut self, last_run: u64) {
        let run = self.run;
        let (streams, lanes) = (&mut self.streams, &mut self.lanes);
        lanes.clear();
        self.touched.retain(|&s| {
            let p = &mut streams[s as usize];
            if p.run != last_run || p.cursor == 0 {
                return false;
            }
            let blocks = blocks_ahead(p.cursor);
            // Four lanes copied as one block, those past `blocks` dropped: no loop.
            let s64 = u64::from(s);
            let len = lanes.len();
            lanes.extend_from_slice(&[(s64, 0), (s64, 1), (s64, 2), (s64, 3)]);
            lanes.truncate(len + blocks);
            p.expected_values = u32::try_from(p.cursor).unwrap_or(u32::MAX);
            p.run = run;
            p.cursor = 0;
            p.used = 0;
            p.filled = (blocks * BLOCK_VALUES) as u32;
            p.blocks = blocks as u64;
            true
        });
        // Each block straight into its stream's buffer, at its place there.
        let mut into = IntoStreams {
            streams: &mut self.streams,
            lanes: &self.lanes,
        };
        chacha::blocks(&self.key, &self.lanes, &mut into);
    }
}

/// Computes the next blocks of `stream`, whose buffer `p` is spent, into
/// that buffer: the same blocks whichever path drew the buffer empty.
#[inline]
pub(super) fn refill(key: &[u32; 8], stream: StreamId, p: &mut StreamPos) {
    let want = refill_blocks(p.blocks, p.expected_values);
    let n = chacha::refill(key, u64::from(stream), p.blocks, want, &mut p.buf);
    p.blocks += (n / BLOCK_VALUES) as u64;
    p.filled = n as u32;
    p.used = 0;
}

/// Where a batch computed ahead puts its blocks: block `b` of stream `s`
/// (lane `(s, b)`) at `8 b` in that stream's buffer.
struct IntoStreams<'a> {
    streams: &'a mut [StreamPos],
    lanes: &'a [(u64, u64)],
}

impl chacha::BlockSink for IntoStreams<'_> {
    #[inline(always)]
    fn put(&mut self, i: usize, block: &[u64; BLOCK_VALUES]) {
        let (stream, b) = self.lanes[i];
        let at = b as usize * BLOCK_VALUES;
        self.streams[stream as usize].buf[at..at + BLOCK_VALUES].copy_from_slice(block);
    }
}

/// Blocks a refill asks for when `computed` blocks of the stream are spent:
/// one for a stream's first (most streams a run meets anew draw a few
/// values), later as many as reach `expected_values`, the values its last
/// run drew, at least one and at most a buffer. A stream that draws what it
/// drew last time so reads every block it computes but for the kernel's
/// rounding (AVX2 computes two at a time); with a whole buffer every time,
/// chain computed 31 blocks a run this way of which 11 were never read.
/// A stream that draws more than last time refills again, one block at a time
/// (two with AVX2), and one met anew (`u32::MAX`) a buffer at a time.
#[inline]
fn refill_blocks(computed: u64, expected_values: u32) -> usize {
    if computed == 0 {
        return 1;
    }
    let most = (BUF_VALUES / BLOCK_VALUES) as u64;
    let left =
        u64::from(expected_values).saturating_sub(computed.saturating_mul(BLOCK_VALUES as u64));
    left.div_ceil(BLOCK_VALUES as u64).clamp(1, most) as usize
}

/// Blocks to compute ahead for a stream the last run drew `drawn` values
/// from: enough for as many, within one buffer.
#[inline]
pub(super) fn blocks_ahead(drawn: u64) -> usize {
    (drawn.min(BUF_VALUES as u64) as usize)
        .div_ceil(BLOCK_VALUES)
        .min(BUF_VALUES / BLOCK_VALUES)
}
