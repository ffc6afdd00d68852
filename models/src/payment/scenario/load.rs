//! The client's load tables: `[client.budget]` (a retry budget, the AWS
//! SDKs' token bucket) and `[client.breaker]` (a circuit breaker). Both
//! belong to a client actor and are shared by all of its operations, unlike
//! `[client.retry]`, which each operation follows on its own. The client's
//! follow-up jobs are loaded in `followup.rs`.

use crate::core::breaker::BreakerConfig;
use crate::core::budget::BudgetConfig;
use crate::core::input::{count_in, invalid, path, positive_duration_us, Invalid};
use serde::Deserialize;

const DAY_MS: u64 = 24 * 3600 * 1000;
/// Most tokens a bucket holds, and most a retry may cost.
const MAX_TOKENS: u64 = 1_000_000;

/// `[client.budget]`: the AWS SDKs' standard retry mode by default.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct BudgetDto {
    capacity: u64,
    retry_cost: u64,
    timeout_cost: u64,
    success_refund: u64,
}

impl Default for BudgetDto {
    fn default() -> Self {
        let aws = BudgetConfig::AWS_STANDARD;
        BudgetDto {
            capacity: aws.capacity.into(),
            retry_cost: aws.retry_cost.into(),
            timeout_cost: aws.timeout_cost.into(),
            success_refund: aws.success_refund.into(),
        }
    }
}

impl BudgetDto {
    /// The validated budget; `None` for `capacity = 0`, which turns it off.
    pub(super) fn build(&self) -> Result<Option<BudgetConfig>, Invalid> {
        let at = |k| path(&["client", "budget", k]);
        let capacity = count_in(self.capacity, 0, MAX_TOKENS, at("capacity"), "tokens")?;
        let cost = |v, k| count_in(v, 1, MAX_TOKENS, at(k), "tokens");
        let retry_cost = cost(self.retry_cost, "retry_cost")?;
        let timeout_cost = cost(self.timeout_cost, "timeout_cost")?;
        let success_refund = count_in(
            self.success_refund,
            0,
            MAX_TOKENS,
            at("success_refund"),
            "tokens",
        )?;
        if capacity == 0 {
            return Ok(None);
        }
        let cheapest = retry_cost.min(timeout_cost);
        if cheapest > capacity {
            return Err(invalid(
                at("capacity"),
                format!(
                    "the bucket holds {capacity} tokens and a retry costs at least {cheapest}: no retry could ever be made"
                ),
                "raise capacity above the costs, or write capacity = 0 to turn the budget off",
            ));
        }
        Ok(Some(BudgetConfig {
            capacity: capacity as u32,
            retry_cost: retry_cost as u32,
            timeout_cost: timeout_cost as u32,
            success_refund: success_refund as u32,
        }))
    }
}

/// `[client.breaker]`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct BreakerDto {
    failures: u64,
    window_ms: u64,
    open_ms: u64,
}

impl Default for BreakerDto {
    fn default() -> Self {
        BreakerDto {
            failures: 5,
            window_ms: 10_000,
            open_ms: 30_000,
        }
    }
}

impl BreakerDto {
    /// The validated breaker; `None` for `failures = 0`, which turns it off.
    pub(super) fn build(&self) -> Result<Option<BreakerConfig>, Invalid> {
        let at = |k| path(&["client", "breaker", k]);
        let failures = count_in(self.failures, 0, 10_000, at("failures"), "failures")?;
        let window_us = positive_duration_us(
            self.window_ms,
            DAY_MS,
            at("window_ms"),
            "failures are counted over a window: window_ms = 10000",
        )?;
        let open_us = positive_duration_us(
            self.open_ms,
            DAY_MS,
            at("open_ms"),
            "an open breaker waits before its trial call: open_ms = 30000",
        )?;
        Ok((failures > 0).then_some(BreakerConfig {
            failures: failures as u32,
            window_us,
            open_us,
        }))
    }
}
