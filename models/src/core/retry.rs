//! One retry policy for every layer that retries: exponential backoff with
//! jitter and a cap (the formulas of AWS's backoff simulator), a cap on
//! attempts, and a retry window.

use sim::{TimeUs, US_PER_MS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// How a wait is randomized (AWS's "Exponential Backoff and Jitter").
pub enum Jitter {
    /// The exponential wait itself: clients retry in lockstep.
    None,
    /// Uniform in `0..=wait`.
    Full,
    /// Half the wait plus a uniform half.
    Equal,
    /// Uniform between the base and three times the last wait, capped.
    Decorrelated,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// When a layer retries, how long it waits, and when it stops.
pub struct RetryPolicy {
    /// Total attempts including the first; 0 means no cap (a mistake).
    pub max_attempts: u32,
    /// The first wait.
    pub base_ms: u64,
    /// No wait is longer.
    pub cap_ms: u64,
    /// 1 = fixed interval, 2 = exponential.
    pub multiplier: u64,
    /// How waits are randomized.
    pub jitter: Jitter,
    /// The retry window: no attempt starts later than this after the first,
    /// and an attempt starts only if its timeout falls inside the window, so
    /// the operation ends within it. 0 = no window.
    pub window_ms: u64,
}

/// Where an operation's retries stand in time, for [`RetryPolicy::next_us`]:
/// when its first attempt started, now, and how long an attempt may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptClock {
    /// When the first attempt started.
    pub started_us: TimeUs,
    /// Now.
    pub now_us: TimeUs,
    /// How long the next attempt may take before it times out.
    pub attempt_timeout_ms: u64,
}

/// `m^e`, saturating at `u64::MAX`, for `m >= 1`. A power of two (the
/// exponential policy's 2, a fixed interval's 1) is a shift: the loop of
/// `saturating_pow` (a multiply and an overflow check per bit of `e`) ran
/// on every retry and mispredicted its end.
#[inline]
fn saturating_power(m: u64, e: u32) -> u64 {
    if m.is_power_of_two() {
        // m = 2^k, so m^e = 2^(k*e); a shift by 64 or more saturates.
        let shift = m.trailing_zeros().saturating_mul(e);
        1u64.checked_shl(shift).unwrap_or(u64::MAX)
    } else {
        m.saturating_pow(e)
    }
}

impl RetryPolicy {
    /// Resend at once after a timeout, at most `max_attempts` attempts in all:
    /// what a service does towards its bank, or a producer towards its broker.
    pub const fn immediate(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_ms: 0,
            cap_ms: 0,
            multiplier: 1,
            jitter: Jitter::None,
            window_ms: 0,
        }
    }

    /// The wait after `attempts` attempts, the last wait having been
    /// `last_backoff_ms`: `expo(n) = min(cap, base * m^(n-1))`, jittered.
    /// `range(lo, hi)` is the actor's recorded draw.
    pub fn backoff_ms(
        &self,
        attempts: u32,
        last_backoff_ms: u64,
        range: impl FnMut(u64, u64) -> u64,
    ) -> u64 {
        assert!(attempts >= 1, "a backoff follows an attempt");
        self.wait(1, attempts - 1, last_backoff_ms, range)
    }

    /// The same formulas in microseconds, with the exponent given:
    /// `expo(exponent) = min(cap, base * m^exponent)`, jittered, the last wait
    /// having been `last_backoff_us`. Draws of whole microseconds are as good
    /// as continuous next to network delays of milliseconds, which is what a
    /// reproduction of AWS's simulator (floating-point waits) needs.
    pub fn backoff_us(
        &self,
        exponent: u32,
        last_backoff_us: u64,
        range: impl FnMut(u64, u64) -> u64,
    ) -> u64 {
        self.wait(US_PER_MS, exponent, last_backoff_us, range)
    }

    /// The formulas of AWS's backoff simulator
    /// (`aws-samples/aws-arch-backoff-simulator`, `backoff_simulator.py`),
    /// in units of `1 / unit` ms:
    ///
    /// - none: `expo(n) = min(cap, base * m^n)`
    /// - full: `U(0, expo(n))`
    /// - equal: `expo(n)/2 + U(0, expo(n)/2)`
    /// - decorrelated: `min(cap, U(base, 3 * previous))`, the first previous
    ///   being `base`; it ignores `n`.
    fn wait(
        &self,
        unit: u64,
        exponent: u32,
        last: u64,
        mut range: impl FnMut(u64, u64) -> u64,
    ) -> u64 {
        let base = self.base_ms.saturating_mul(unit);
        let cap = self.cap_ms.max(self.base_ms).saturating_mul(unit);
        let exp = base
            .saturating_mul(saturating_power(self.multiplier.max(1), exponent))
            .min(cap);
        let delay = match self.jitter {
            Jitter::None => exp,
            Jitter::Full => range(0, exp),
            // The upper half rounds up, so the two halves add up to `exp`.
            Jitter::Equal => exp / 2 + range(0, exp - exp / 2),
            Jitter::Decorrelated => {
                let prev = last.max(base);
                range(base, prev.saturating_mul(3).max(base)).min(cap)
            }
        };
        debug_assert!(delay <= cap || cap == 0);
        delay
    }

    /// After attempt `attempts` ended without an answer it can use: the wait
    /// before the next attempt, or `None` when the policy gives up (the cap
    /// is reached, or the next attempt's timeout would fall outside the window).
    pub fn next_ms(
        &self,
        attempts: u32,
        last_backoff_ms: u64,
        started_us: TimeUs,
        now_us: TimeUs,
        attempt_timeout_ms: u64,
        range: impl FnMut(u64, u64) -> u64,
    ) -> Option<u64> {
        if self.max_attempts != 0 && attempts >= self.max_attempts {
            return None;
        }
        let delay_ms = self.backoff_ms(attempts, last_backoff_ms, range);
        let delay_us = delay_ms.saturating_mul(US_PER_MS);
        self.in_window(delay_us, started_us, now_us, attempt_timeout_ms)
            .then_some(delay_ms)
    }

    /// [`next_ms`](Self::next_ms) in microseconds, for a client that counts
    /// its retries' exponent itself ([`backoff_us`](Self::backoff_us)): the
    /// same cap on attempts (checked before anything is drawn) and the same
    /// window.
    pub fn next_us(
        &self,
        attempts: u32,
        exponent: u32,
        last_backoff_us: u64,
        clock: AttemptClock,
        range: impl FnMut(u64, u64) -> u64,
    ) -> Option<u64> {
        if self.max_attempts != 0 && attempts >= self.max_attempts {
            return None;
        }
        let delay_us = self.backoff_us(exponent, last_backoff_us, range);
        let AttemptClock {
            started_us,
            now_us,
            attempt_timeout_ms,
        } = clock;
        self.in_window(delay_us, started_us, now_us, attempt_timeout_ms)
            .then_some(delay_us)
    }

    /// The latest an attempt can start after the first one started, its
    /// attempts timing out after `attempt_timeout_ms` and every wait at its
    /// longest; `None` when nothing bounds the retries (no cap on attempts,
    /// no window). A dedup layer must remember a key at least this long.
    pub fn longest_span_ms(&self, attempt_timeout_ms: u64) -> Option<u64> {
        let by_window =
            (self.window_ms > 0).then(|| self.window_ms.saturating_sub(attempt_timeout_ms));
        if self.max_attempts == 0 {
            return by_window;
        }
        let mut span = 0u64;
        let mut last_ms = 0;
        for attempts in 1..self.max_attempts {
            let wait = self.backoff_ms(attempts, last_ms, |_, hi| hi);
            last_ms = wait;
            span = span.saturating_add(attempt_timeout_ms).saturating_add(wait);
            if by_window.is_some_and(|w| span >= w) {
                break;
            }
        }
        Some(by_window.map_or(span, |w| w.min(span)))
    }

    /// [`longest_span_ms`](Self::longest_span_ms) for a client that may
    /// crash and come back after up to `restart_ms`, resuming its pending
    /// operations from its own storage: a crash while an attempt is out, or
    /// during the wait after it, holds the next attempt back by the restart
    /// and a wait drawn anew (the restart schedules the next attempt as a
    /// timeout would, and the attempt it interrupted, or had not sent, counts
    /// as before). One crash per gap between two attempts is counted; more in
    /// one gap would stretch it further. A window bounds the attempts in
    /// time whatever the restarts, so it alone gives the same span as
    /// without them.
    pub fn longest_span_with_restarts_ms(
        &self,
        attempt_timeout_ms: u64,
        restart_ms: u64,
    ) -> Option<u64> {
        if self.window_ms > 0 || self.max_attempts == 0 {
            return self.longest_span_ms(attempt_timeout_ms);
        }
        let mut span = 0u64;
        let mut last_ms = 0;
        for attempts in 1..self.max_attempts {
            let wait = self.backoff_ms(attempts, last_ms, |_, hi| hi);
            last_ms = wait;
            span = span
                .saturating_add(attempt_timeout_ms)
                .saturating_add(restart_ms)
                .saturating_add(wait.saturating_mul(2));
        }
        Some(span)
    }

    /// Whether an attempt that starts `delay_us` from now ends, timeout
    /// included, inside the retry window of an operation that started at
    /// `started_us`.
    fn in_window(
        &self,
        delay_us: u64,
        started_us: TimeUs,
        now_us: TimeUs,
        attempt_timeout_ms: u64,
    ) -> bool {
        if self.window_ms == 0 {
            return true;
        }
        let ends_us = now_us
            .saturating_add(delay_us)
            .saturating_add(attempt_timeout_ms.saturating_mul(US_PER_MS));
        ends_us.saturating_sub(started_us) <= self.window_ms.saturating_mul(US_PER_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(started_us: TimeUs, now_us: TimeUs, attempt_timeout_ms: u64) -> AttemptClock {
        AttemptClock {
            started_us,
            now_us,
            attempt_timeout_ms,
        }
    }

    fn expo(jitter: Jitter) -> RetryPolicy {
        RetryPolicy {
            max_attempts: 0,
            base_ms: 100,
            cap_ms: 1000,
            multiplier: 2,
            jitter,
            window_ms: 0,
        }
    }

    /// The shift gives what `saturating_pow` gives: every power of two up
    /// to 2^63 and the numbers around them, to exponents past saturation.
    #[test]
    fn a_power_by_shift_is_saturating_pow() {
        let bases = (0..64).flat_map(|k| {
            let p = 1u64 << k;
            [p - 1, p, p.saturating_add(1)]
        });
        for m in bases.chain([3, 10, u64::MAX]).filter(|&m| m >= 1) {
            for e in (0..=130).chain([u32::MAX / 2, u32::MAX]) {
                assert_eq!(saturating_power(m, e), m.saturating_pow(e), "{m}^{e}");
            }
        }
    }

    #[test]
    fn the_longest_span_is_every_wait_at_its_longest_within_the_window() {
        let five = RetryPolicy {
            max_attempts: 5,
            ..expo(Jitter::Full)
        };
        // Four waits of 100, 200, 400 and 800 ms at most, each after a 10 s timeout.
        assert_eq!(five.longest_span_ms(10_000), Some(40_000 + 1_500));
        let windowed = RetryPolicy {
            window_ms: 30_000,
            ..five
        };
        // The last attempt must end inside the window: it starts 10 s before.
        assert_eq!(windowed.longest_span_ms(10_000), Some(20_000));
        assert_eq!(expo(Jitter::None).longest_span_ms(10_000), None);
        let unbounded_in_window = RetryPolicy {
            window_ms: 259_200_000,
            ..expo(Jitter::None)
        };
        assert_eq!(
            unbounded_in_window.longest_span_ms(10_000),
            Some(259_190_000)
        );
        assert_eq!(RetryPolicy::immediate(1).longest_span_ms(5_000), Some(0));
    }

    #[test]
    fn a_restart_in_each_gap_stretches_retries_without_a_window_only() {
        let five = RetryPolicy {
            max_attempts: 5,
            ..expo(Jitter::Full)
        };
        // Each of the four gaps: the 10 s timeout, a 60 s restart, and its
        // wait twice (the one the crash cut short, and the one drawn anew).
        assert_eq!(
            five.longest_span_with_restarts_ms(10_000, 60_000),
            Some(4 * 70_000 + 2 * 1_500)
        );
        assert_eq!(
            five.longest_span_with_restarts_ms(10_000, 0),
            Some(40_000 + 3_000)
        );
        // A window bounds the attempts in time, restarts or not.
        let windowed = RetryPolicy {
            window_ms: 30_000,
            ..five
        };
        assert_eq!(
            windowed.longest_span_with_restarts_ms(10_000, 60_000),
            Some(20_000)
        );
        assert_eq!(
            expo(Jitter::None).longest_span_with_restarts_ms(10_000, 60_000),
            None
        );
    }

    #[test]
    fn exponential_backoff_doubles_up_to_the_cap() {
        let p = expo(Jitter::None);
        let waits: Vec<u64> = (1..=6).map(|n| p.backoff_ms(n, 0, |_, _| 0)).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn jitter_stays_within_its_formula() {
        for n in 1..8 {
            let exp = expo(Jitter::None).backoff_ms(n, 0, |_, _| 0);
            let hi = |j| expo(j).backoff_ms(n, 300, |_, hi| hi);
            let lo = |j| expo(j).backoff_ms(n, 300, |lo, _| lo);
            assert_eq!((lo(Jitter::Full), hi(Jitter::Full)), (0, exp));
            assert_eq!((lo(Jitter::Equal), hi(Jitter::Equal)), (exp / 2, exp));
            assert_eq!(lo(Jitter::Decorrelated), 100);
            assert_eq!(hi(Jitter::Decorrelated), 900);
        }
    }

    /// AWS's simulator with its parameters (base 5 ms, cap 2000 ms): its
    /// n-th retry waits `expo(n) = min(cap, base * 2^n)`, n from 1.
    fn aws(jitter: Jitter) -> RetryPolicy {
        RetryPolicy {
            max_attempts: 0,
            base_ms: 5,
            cap_ms: 2000,
            multiplier: 2,
            jitter,
            window_ms: 0,
        }
    }

    const MS: u64 = US_PER_MS;

    #[test]
    fn no_jitter_is_the_simulators_expo() {
        let p = aws(Jitter::None);
        let waits: Vec<u64> = (1..=10)
            .map(|n| p.backoff_us(n, 0, |_, _| 0) / MS)
            .collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 320, 640, 1280, 2000, 2000]);
        // The µs formula is the ms formula with the exponent one lower.
        for n in 1..12 {
            assert_eq!(
                p.backoff_us(n - 1, 0, |_, _| 0),
                p.backoff_ms(n, 0, |_, _| 0) * MS
            );
        }
    }

    #[test]
    fn full_jitter_draws_from_zero_to_expo() {
        let p = aws(Jitter::Full);
        for n in 1..12 {
            let expo = aws(Jitter::None).backoff_us(n, 0, |_, _| 0);
            let mut asked = None;
            let w = p.backoff_us(n, 0, |lo, hi| {
                asked = Some((lo, hi));
                hi / 3
            });
            assert_eq!(asked, Some((0, expo)));
            assert_eq!(w, expo / 3);
        }
    }

    #[test]
    fn equal_jitter_keeps_half_and_draws_the_other_half() {
        let p = aws(Jitter::Equal);
        for n in 1..12 {
            let v = aws(Jitter::None).backoff_us(n, 0, |_, _| 0);
            let mut asked = None;
            let w = p.backoff_us(n, 0, |lo, hi| {
                asked = Some((lo, hi));
                lo
            });
            assert_eq!(asked, Some((0, v / 2)), "v = {v} µs is even here");
            assert_eq!(w, v / 2);
            assert_eq!(p.backoff_us(n, 0, |_, hi| hi), v);
        }
        // An odd expo still spans exactly [v/2, v] in whole units.
        let odd = RetryPolicy {
            base_ms: 5,
            ..aws(Jitter::Equal)
        };
        assert_eq!(odd.backoff_ms(1, 0, |_, hi| hi), 5);
        assert_eq!(odd.backoff_ms(1, 0, |lo, _| lo), 2);
    }

    #[test]
    fn decorrelated_jitter_walks_from_the_previous_sleep() {
        let p = aws(Jitter::Decorrelated);
        // sleep = min(cap, U(base, sleep * 3)), sleep starting at base.
        let mut sleep = 0;
        let mut asked = Vec::new();
        for _ in 0..8 {
            sleep = p.backoff_us(7, sleep, |lo, hi| {
                asked.push((lo / MS, hi / MS));
                hi
            });
        }
        assert_eq!(
            asked,
            [
                (5, 15),
                (5, 45),
                (5, 135),
                (5, 405),
                (5, 1215),
                (5, 3645),
                (5, 6000),
                (5, 6000)
            ]
        );
        assert_eq!(sleep, 2000 * MS, "capped");
        // The exponent plays no part: the walk depends on the previous sleep.
        assert_eq!(
            p.backoff_us(1, 100 * MS, |_, hi| hi),
            p.backoff_us(9, 100 * MS, |_, hi| hi)
        );
    }

    #[test]
    fn next_us_caps_attempts_before_drawing_and_keeps_the_window() {
        let capped = RetryPolicy {
            max_attempts: 3,
            ..aws(Jitter::Full)
        };
        let mut drew = false;
        let next = capped.next_us(3, 3, 0, clock(0, 0, 1), |_, _| {
            drew = true;
            0
        });
        assert_eq!(next, None);
        assert!(
            !drew,
            "no decision is drawn for a retry that will not happen"
        );
        assert_eq!(
            capped.next_us(2, 2, 0, clock(0, 0, 1), |_, hi| hi),
            Some(20 * MS)
        );
        let windowed = RetryPolicy {
            window_ms: 1000,
            ..aws(Jitter::None)
        };
        // 10 ms wait + 990 ms timeout ends exactly at the window; 1 µs later does not.
        assert_eq!(
            windowed.next_us(1, 1, 0, clock(0, 0, 990), |_, _| 0),
            Some(10 * MS)
        );
        assert_eq!(windowed.next_us(1, 1, 0, clock(0, 1, 990), |_, _| 0), None);
    }

    #[test]
    fn the_window_lets_an_attempt_start_only_if_it_can_end_inside() {
        let p = RetryPolicy {
            window_ms: 60_000,
            ..RetryPolicy::immediate(0)
        };
        let s = US_PER_MS;
        // Timeout 10 s: an attempt may start at 50 s, not at 50.001 s.
        assert_eq!(p.next_ms(3, 0, 0, 50_000 * s, 10_000, |_, _| 0), Some(0));
        assert_eq!(p.next_ms(3, 0, 0, 50_001 * s, 10_000, |_, _| 0), None);
        assert_eq!(
            RetryPolicy::immediate(3).next_ms(3, 0, 0, 0, 1, |_, _| 0),
            None
        );
    }
}
