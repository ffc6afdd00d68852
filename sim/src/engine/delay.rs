//! A message's delay on its link. A uniform delay, the common case, is one
//! draw inlined into the send path; a normal one (`LinkConfig::delay_sd_us`
//! above 0) is drawn out of line, so that uniform links cost what they did.
//! The normal delay is one recorded choice, a quantile index, mapped through
//! the inverse of the normal distribution function: replay and shrinking see
//! it like any other draw, and index 0 is the shortest delay.

use super::faults::LinkFate;
use super::run::Run;
use super::{Model, MsgOf, ObsOf, TimerOf};
use crate::actor::TimeUs;
use crate::choice::StreamId;
use crate::trace::Tracer;

/// Equally likely quantiles a normal delay is drawn from: fine enough that
/// their steps (under a thousandth of a deviation near the mean) vanish in
/// the rounding to microseconds of any deviation below a second.
pub(crate) const QUANTILES: u64 = 1 << 20;

impl<M: Model, T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>> Run<'_, '_, '_, M, T> {
    /// One copy's delay on `link`, drawn from `stream`.
    #[inline(always)]
    pub(super) fn delay_us(&mut self, stream: StreamId, link: &LinkFate) -> TimeUs {
        if link.delay_sd_us == 0 {
            return self
                .sim
                .choices
                .range(stream, link.delay_us_min, link.delay_us_max);
        }
        self.normal_delay_us(
            stream,
            (link.delay_us_min, link.delay_us_max),
            link.delay_sd_us,
        )
    }

    /// The out-of-line draw takes the link's delays as values, not the
    /// record by reference, so that the send may keep the record's fields
    /// in registers rather than in a copy on the stack.
    #[cold]
    #[inline(never)]
    fn normal_delay_us(
        &mut self,
        stream: StreamId,
        range_us: (TimeUs, TimeUs),
        sd_us: TimeUs,
    ) -> TimeUs {
        let quantile = self.sim.choices.range(stream, 0, QUANTILES - 1);
        normal_us(quantile, range_us, sd_us)
    }
}

/// The `quantile`-th of [`QUANTILES`] equally likely values of a normal
/// distribution centred on the middle of `range_us` with deviation `sd_us`,
/// rounded to the microsecond and clamped to the range.
pub(crate) fn normal_us(quantile: u64, range_us: (TimeUs, TimeUs), sd_us: TimeUs) -> TimeUs {
    let (lo, hi) = (range_us.0 as f64, range_us.1 as f64);
    let p = (quantile as f64 + 0.5) / QUANTILES as f64;
    let x = (lo + hi) / 2.0 + sd_us as f64 * inverse_normal_cdf(p);
    x.round().clamp(lo, hi) as TimeUs
}

/// The standard normal quantile of `p` in (0, 1), by Acklam's rational
/// approximation (relative error below 1.2e-9): the central region uses
/// arithmetic only, the tails one square root and one logarithm.
#[allow(clippy::excessive_precision)]
fn inverse_normal_cdf(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e+01,
        2.209460984245205e+02,
        -2.759285104469687e+02,
        1.383577518672690e+02,
        -3.066479806614716e+01,
        2.506628277459239e+00,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e+01,
        1.615858368580409e+02,
        -1.556989798598866e+02,
        6.680131188771972e+01,
        -1.328068155288572e+01,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e+00,
        -2.549732539343734e+00,
        4.374664141464968e+00,
        2.938163982698783e+00,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-03,
        3.224671290700398e-01,
        2.445134137142996e+00,
        3.754408661907416e+00,
    ];
    const P_LOW: f64 = 0.02425;
    let tail = |q: f64| {
        let num = ((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5];
        let den = (((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0;
        num / den
    };
    if p < P_LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - P_LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        let num = (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q;
        let den = ((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0;
        num / den
    }
}

#[cfg(test)]
mod tests {
    use super::{inverse_normal_cdf, normal_us, QUANTILES};
    use proptest::prelude::*;

    #[test]
    fn the_quantiles_are_the_normal_distributions() {
        assert!(inverse_normal_cdf(0.5).abs() < 1e-12);
        assert!((inverse_normal_cdf(0.975) - 1.959_964).abs() < 1e-5);
        assert!((inverse_normal_cdf(0.01) + 2.326_348).abs() < 1e-5);
        assert!(normal_us(0, (0, 20_000), 2_000) < normal_us(QUANTILES - 1, (0, 20_000), 2_000));
    }

    proptest! {
        /// |N(mean, sd)| as the reference simulator draws it: every value in
        /// range, and the mean and deviation of many draws within a few
        /// hundredths of a deviation of what was asked for.
        #[test]
        fn normal_delays_are_in_range_with_the_asked_mean_and_deviation(
            mean_ms in 1u64..200, sd_permille_of_mean in 10u64..166, seed in any::<u64>(),
        ) {
            let (mean, sd) = (mean_ms * 1000, mean_ms * sd_permille_of_mean);
            let range = (mean - 6 * sd, mean + 6 * sd);
            let mut state = seed | 1;
            let n = 20_000;
            let (mut sum, mut sq) = (0.0, 0.0);
            for _ in 0..n {
                // xorshift: any uniform source of quantile indices will do
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let v = normal_us(state % QUANTILES, range, sd);
                prop_assert!(range.0 <= v && v <= range.1);
                sum += v as f64;
                sq += (v as f64) * (v as f64);
            }
            let m = sum / f64::from(n);
            let s = (sq / f64::from(n) - m * m).sqrt();
            prop_assert!((m - mean as f64).abs() < 0.05 * sd as f64 + 1.0, "mean {m}");
            prop_assert!((s - sd as f64).abs() < 0.03 * sd as f64 + 1.0, "sd {s}");
        }
    }
}
