//! The `retry` table a client's table holds (`[client.retry]`), shared by
//! every model whose clients retry: parsed and validated once, into a
//! [`RetryPolicy`] and what the client does when it gives up.

use super::input::{count_in, duration_us, invalid, one_of, path, Invalid, MAX_DURATION_MS};
use super::retry::{Jitter, RetryPolicy};
use super::unused::Unused;
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

    /// The keys of `[<owner>.retry]` that the table's own settings leave
    /// without effect: what shapes a retry, where no retry is made (policy
    /// "none", or one attempt); the cap of a fixed wait, which never grows
    /// (but for decorrelated jitter, which reads it); what shapes a wait
    /// that is always 0 (`base_ms = 0`).
    pub fn unused(&self, owner: &'static str) -> Vec<Unused> {
        let table = [owner, "retry"];
        let at = |k| [owner, "retry", k];
        if self.policy == "none" {
            return Unused::each(
                &table,
                &[
                    "max_attempts=1",
                    "base_ms=0",
                    "cap_ms",
                    "jitter=\"none\"",
                    "window_ms=0",
                    "retry_final_errors=false",
                ],
                &[&at("policy")],
                "policy = \"none\" makes no retry, so nothing shapes one",
                "remove it, or retry: policy = \"fixed\" or \"exponential\"",
            );
        }
        if self.max_attempts == 1 {
            return Unused::each(
                &table,
                &[
                    "base_ms=0",
                    "cap_ms",
                    "jitter=\"none\"",
                    "window_ms=0",
                    "retry_final_errors=false",
                ],
                &[&at("max_attempts")],
                "max_attempts = 1 is the first attempt alone, so no retry is made",
                "remove it, or allow retries: max_attempts = 3",
            );
        }
        let mut out = Vec::new();
        if self.base_ms == 0 {
            out.extend(Unused::each(
                &table,
                &["cap_ms", "jitter=\"none\""],
                &[&at("base_ms")],
                "base_ms = 0: every wait is 0, whatever caps or spreads it",
                "remove it, or give the waits a base: base_ms = 100",
            ));
        } else if self.policy == "fixed" && self.jitter != "decorrelated" {
            out.push(Unused::new(
                &at("cap_ms"),
                &[&at("policy"), &at("jitter")],
                format!(
                    "a fixed wait stays at base_ms ({} ms) and never grows to a cap (only decorrelated jitter reads it)",
                    self.base_ms
                ),
                "remove it, or let the waits grow: policy = \"exponential\"",
            ));
        }
        out
    }
}
