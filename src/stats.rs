//! Small statistics for sweeps: the Wilson interval of a failure rate and a
//! nearest-rank quantile. Public so a user can put the same numbers on their own
//! runs.

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `successes` out of `trials` at normal quantile `z`.
///
/// Unlike the textbook `p ± z·sqrt(p(1-p)/n)`, it stays inside 0..=1 and does
/// not collapse to a width of zero when nothing (or everything) failed, which
/// is the common case in a sweep: "0 of 500" still leaves room for a rare bug.
pub fn wilson(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    assert!(
        successes <= trials,
        "{successes} successes of {trials} trials"
    );
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // Rounding can push the bounds a hair past the point estimate or outside 0..=1.
    let lo = (center - half).clamp(0.0, p);
    let hi = (center + half).clamp(p, 1.0);
    (lo, hi)
}

/// The nearest-rank quantile `q` (0 < q <= 1) of sorted `values`: always one of
/// the values, so a p99 of times is a time some run really took.
pub fn quantile_sorted(values: &[u64], q: f64) -> Option<u64> {
    assert!(q > 0.0 && q <= 1.0, "quantile {q} outside (0, 1]");
    debug_assert!(values.windows(2).all(|w| w[0] <= w[1]), "values are sorted");
    if values.is_empty() {
        return None;
    }
    let rank = (q * values.len() as f64).ceil() as usize;
    Some(values[rank.clamp(1, values.len()) - 1])
}
