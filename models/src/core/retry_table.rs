//! The `retry` table a client's table holds (`[client.retry]`), shared by
//! every model whose clients retry: parsed and validated once, into a
//! [`RetryPolicy`] and what the client does when it gives up.

use super::input::{count_in, duration_us, invalid, one_of, path, Invalid, MAX_DURATION_MS};
use super::retry::{Jitter, RetryPolicy};
use serde::Deserialize;

const DAY_MS: u64 = 24 * 3600 * 1000;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
/// `[client.retry]` as written in a scenario file.
pub struct RetryDto {
    policy: String,
    max_attempts: u64,
    base_ms: u64,
    cap_ms: u64,
    jitter: String,
    window_ms: u64,
    retry_final_errors: bool,
    dead_letter: bool,
}

impl Default for RetryDto {
    fn default() -> Self {
        RetryDto {
            policy: "fixed".into(),
            max_attempts: 5,
            base_ms: 0,
            cap_ms: 60_000,
            jitter: "none".into(),
            window_ms: 0,
            retry_final_errors: false,
            dead_letter: true,
        }
    }
}

/// A validated retry table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Backoff, jitter, cap, attempts and window.
    pub policy: RetryPolicy,
    /// Retry a final error too (a mistake: a rejected input never becomes valid).
    pub retry_final_errors: bool,
    /// Record what was given up, or drop it silently (a mistake).
    pub dead_letter: bool,
}

impl RetryDto {
    /// Validates the table `[<owner>.retry]` of a client whose attempts time
    /// out after `timeout_ms`.
    pub fn build(&self, owner: &'static str, timeout_ms: u64) -> Result<Retry, Invalid> {
        let at = |k| path(&[owner, "retry", k]);
        let policy = one_of(
            &self.policy,
            &[("none", 0u8), ("fixed", 1), ("exponential", 2)],
            at("policy"),
        )?;
        // Checked whatever the policy: a value out of range is a mistake
        // even while "none" does not read it, and would surface only later.
        let attempts =
            count_in(self.max_attempts, 0, 10_000, at("max_attempts"), "attempts")? as u32;
        let (multiplier, max_attempts) = match policy {
            0 => (1, 1),
            m => (u64::from(m), attempts),
        };
        duration_us(self.base_ms, DAY_MS, at("base_ms"))?;
        duration_us(self.cap_ms, 30 * DAY_MS, at("cap_ms"))?;
        if self.base_ms > self.cap_ms {
            return Err(invalid(
                at("cap_ms"),
                format!(
                    "the backoff cap ({} ms) is below its base ({} ms): every wait would be cut to the cap",
                    self.cap_ms, self.base_ms
                ),
                "raise cap_ms to at least base_ms, or lower base_ms",
            ));
        }
        duration_us(self.window_ms, MAX_DURATION_MS, at("window_ms"))?;
        if self.window_ms != 0 && self.window_ms < timeout_ms {
            return Err(invalid(
                at("window_ms"),
                format!(
                    "the retry window ({} ms) is shorter than one attempt's timeout ({timeout_ms} ms): no retry could ever start",
                    self.window_ms
                ),
                format!("make window_ms at least {owner}.timeout_ms, or 0 for no window"),
            ));
        }
        let jitter = one_of(
            &self.jitter,
            &[
                ("none", Jitter::None),
                ("full", Jitter::Full),
                ("equal", Jitter::Equal),
                ("decorrelated", Jitter::Decorrelated),
            ],
            at("jitter"),
        )?;
        Ok(Retry {
            policy: RetryPolicy {
                max_attempts,
                base_ms: self.base_ms,
                cap_ms: self.cap_ms,
                multiplier,
                jitter,
                window_ms: self.window_ms,
            },
            retry_final_errors: self.retry_final_errors,
            dead_letter: self.dead_letter,
        })
    }
}
