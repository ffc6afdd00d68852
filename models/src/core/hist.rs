//! A log-linear histogram of durations in constant memory: eight buckets per
//! power of two, so a quantile read from it is within about 9% of the exact
//! value, and two histograms merge by adding their buckets.

use sim::TimeUs;

const SUB_BITS: u32 = 3;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets cover 0 µs to beyond a year.
pub const BUCKETS: usize = ((64 - SUB_BITS) as usize + 1) * SUB as usize;

/// The bucket of a duration.
pub fn bucket(us: TimeUs) -> usize {
    if us < SUB {
        return us as usize;
    }
    let octave = 63 - us.leading_zeros(); // >= SUB_BITS
    let sub = (us >> (octave - SUB_BITS)) & (SUB - 1);
    ((octave - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The smallest duration that falls into `bucket`.
pub fn lower_bound(bucket: usize) -> TimeUs {
    let b = bucket as u64;
    if b < SUB {
        return b;
    }
    let octave = b / SUB - 1 + u64::from(SUB_BITS);
    let sub = b % SUB;
    (1 << octave) | (sub << (octave - u64::from(SUB_BITS)))
}

/// The `q` quantile (0..=1) of the durations counted in `buckets`: the lower
/// bound of the bucket that holds it. `None` when nothing was counted.
pub fn quantile(buckets: &[u64], q: f64) -> Option<TimeUs> {
    let total: u64 = buckets.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, n) in buckets.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return Some(lower_bound(i));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_tight() {
        let mut last = 0;
        for us in [
            0,
            1,
            7,
            8,
            9,
            15,
            16,
            17,
            1000,
            10_000_000,
            u64::MAX / 2,
            u64::MAX,
        ] {
            let b = bucket(us);
            assert!(b >= last && b < BUCKETS, "{us} -> {b}");
            last = b;
            let lo = lower_bound(b);
            assert!(lo <= us, "{us} below its bucket's bound {lo}");
            assert!(us - lo <= us / 8, "{us} is {} above {lo}", us - lo);
        }
    }

    #[test]
    fn quantiles_come_within_a_bucket() {
        let mut h = vec![0u64; BUCKETS];
        for us in 1..=1000u64 {
            h[bucket(us * 1000)] += 1;
        }
        let p50 = quantile(&h, 0.5).unwrap();
        assert!((450_000..=500_000).contains(&p50), "{p50}");
        let p99 = quantile(&h, 0.99).unwrap();
        assert!((900_000..=990_000).contains(&p99), "{p99}");
        assert_eq!(quantile(&[0; 4], 0.5), None);
    }
}
