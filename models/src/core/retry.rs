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
        mut range: impl FnMut(u64, u64) -> u64,
    ) -> u64 {
        assert!(attempts >= 1, "a backoff follows an attempt");
        let cap_ms = self.cap_ms.max(self.base_ms);
        let exp = self
            .base_ms
            .saturating_mul(self.multiplier.max(1).saturating_pow(attempts - 1))
            .min(cap_ms);
        let delay_ms = match self.jitter {
            Jitter::None => exp,
            Jitter::Full => range(0, exp),
            Jitter::Equal => exp / 2 + range(0, exp - exp / 2),
            // sleep = min(cap, U(base, 3 * previous sleep)), the first sleep being base.
            Jitter::Decorrelated => {
                let prev = last_backoff_ms.max(self.base_ms);
                range(self.base_ms, prev.saturating_mul(3).max(self.base_ms)).min(cap_ms)
            }
        };
        debug_assert!(delay_ms <= cap_ms || cap_ms == 0);
        delay_ms
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
        if self.window_ms != 0 {
            let ends_us = now_us
                .saturating_add(delay_ms.saturating_mul(US_PER_MS))
                .saturating_add(attempt_timeout_ms.saturating_mul(US_PER_MS));
            if ends_us.saturating_sub(started_us) > self.window_ms.saturating_mul(US_PER_MS) {
                return None;
            }
        }
        Some(delay_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
