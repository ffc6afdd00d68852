//! A retry budget: the token bucket of the AWS SDKs' "standard" retry mode
//! (their "retry quota"). One bucket per client, shared by all of its
//! operations, so that a client whose calls keep failing stops retrying any
//! of them, while a client whose calls succeed retries freely.
//!
//! The SDKs' rules (aws-sdk-js-v3 `defaultRetryQuota`, botocore's
//! `standard` mode), which this reproduces with its constants as defaults:
//! - the bucket starts full, at `capacity` (500 tokens);
//! - a retry takes `retry_cost` tokens (5), or `timeout_cost` (10) when the
//!   attempt it repeats timed out; with fewer tokens left than that, the
//!   retry is not made and the call fails at once;
//! - a call that succeeds puts tokens back: the cost of its last retry when
//!   it was retried, `success_refund` (1) when it succeeded at the first try;
//! - the bucket never holds more than `capacity`.
//!
//! Nothing refills it over time: only successes do. The bucket lives in the
//! client's memory, so a restarted client starts with a full one.

/// The budget's numbers, validated (`[client.budget]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetConfig {
    /// Tokens when full (0: no budget).
    pub capacity: u32,
    /// What a retry costs.
    pub retry_cost: u32,
    /// What a retry after a timeout costs.
    pub timeout_cost: u32,
    /// What a success puts back (at most what its retry took).
    pub success_refund: u32,
}

impl BudgetConfig {
    /// The AWS SDKs' standard mode: 500 tokens, 5 per retry, 10 per retry
    /// after a timeout, 1 back per success at the first try.
    pub const AWS_STANDARD: BudgetConfig = BudgetConfig {
        capacity: 500,
        retry_cost: 5,
        timeout_cost: 10,
        success_refund: 1,
    };

    /// What a retry after an attempt costs: more after a timeout, which
    /// signals a struggling receiver more surely than an error does.
    pub fn cost(&self, after_timeout: bool) -> u32 {
        if after_timeout {
            self.timeout_cost
        } else {
            self.retry_cost
        }
    }
}

/// The tokens a client holds now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    tokens: u32,
}

impl TokenBucket {
    /// A bucket as a client starts with it: full.
    pub fn full(cfg: &BudgetConfig) -> TokenBucket {
        TokenBucket {
            tokens: cfg.capacity,
        }
    }

    /// Tokens left.
    pub fn tokens(&self) -> u32 {
        self.tokens
    }

    /// Takes the cost of one retry; `None` (and nothing taken) when the
    /// bucket holds fewer tokens than it costs. Returns the cost taken, which
    /// a later success puts back.
    pub fn try_retry(&mut self, cfg: &BudgetConfig, after_timeout: bool) -> Option<u32> {
        let cost = cfg.cost(after_timeout);
        let left = self.tokens.checked_sub(cost)?;
        self.tokens = left;
        Some(cost)
    }

    /// A call succeeded; `last_retry_cost` is what its last retry took (0
    /// when it succeeded at the first try).
    pub fn on_success(&mut self, cfg: &BudgetConfig, last_retry_cost: u32) {
        let back = if last_retry_cost > 0 {
            last_retry_cost
        } else {
            cfg.success_refund
        };
        self.tokens = self.tokens.saturating_add(back).min(cfg.capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const AWS: BudgetConfig = BudgetConfig::AWS_STANDARD;

    #[test]
    fn a_full_bucket_pays_fifty_timeout_retries_then_refuses() {
        let mut b = TokenBucket::full(&AWS);
        for _ in 0..50 {
            assert_eq!(b.try_retry(&AWS, true), Some(10));
        }
        assert_eq!(b.tokens(), 0);
        assert_eq!(b.try_retry(&AWS, true), None);
        assert_eq!(b.try_retry(&AWS, false), None);
        assert_eq!(b.tokens(), 0, "a refused retry takes nothing");
    }

    #[test]
    fn a_retried_success_refunds_its_cost_a_clean_one_adds_one() {
        let mut b = TokenBucket::full(&AWS);
        let cost = b.try_retry(&AWS, false).unwrap();
        assert_eq!(b.tokens(), 495);
        b.on_success(&AWS, cost);
        assert_eq!(b.tokens(), 500);
        // Never above the capacity.
        b.on_success(&AWS, 0);
        assert_eq!(b.tokens(), 500);
        let mut low = TokenBucket { tokens: 3 };
        assert_eq!(low.try_retry(&AWS, false), None, "5 needed, 3 left");
        low.on_success(&AWS, 0);
        low.on_success(&AWS, 0);
        assert_eq!(low.try_retry(&AWS, false), Some(5));
        assert_eq!(low.tokens(), 0);
    }

    #[derive(Clone, Copy, Debug)]
    enum Event {
        Retry { after_timeout: bool },
        Success { retried: bool },
    }

    fn event() -> impl Strategy<Value = Event> {
        prop_oneof![
            any::<bool>().prop_map(|after_timeout| Event::Retry { after_timeout }),
            any::<bool>().prop_map(|retried| Event::Success { retried }),
        ]
    }

    fn config() -> impl Strategy<Value = BudgetConfig> {
        (0u32..600, 1u32..20, 1u32..40, 0u32..5).prop_map(|(c, r, t, s)| BudgetConfig {
            capacity: c,
            retry_cost: r,
            timeout_cost: t,
            success_refund: s,
        })
    }

    proptest! {
        /// Tokens never drop below zero nor rise above the capacity; a retry
        /// is granted exactly when the bucket can pay for it, and then takes
        /// exactly its cost; a refused one changes nothing.
        #[test]
        fn tokens_stay_within_the_bucket(cfg in config(), events in prop::collection::vec(event(), 0..200)) {
            let mut b = TokenBucket::full(&cfg);
            let mut last_cost = 0;
            for e in events {
                let before = b.tokens();
                match e {
                    Event::Retry { after_timeout } => {
                        let cost = cfg.cost(after_timeout);
                        match b.try_retry(&cfg, after_timeout) {
                            Some(took) => {
                                prop_assert!(before >= cost);
                                prop_assert_eq!(took, cost);
                                prop_assert_eq!(b.tokens(), before - cost);
                                last_cost = took;
                            }
                            None => {
                                prop_assert!(before < cost);
                                prop_assert_eq!(b.tokens(), before);
                            }
                        }
                    }
                    Event::Success { retried } => {
                        b.on_success(&cfg, if retried { last_cost } else { 0 });
                        prop_assert!(b.tokens() >= before);
                        last_cost = 0;
                    }
                }
                prop_assert!(b.tokens() <= cfg.capacity);
            }
        }

        /// Without successes a bucket only drains: it grants at most
        /// capacity / cost retries.
        #[test]
        fn without_successes_the_retries_are_bounded(cfg in config(), n in 0usize..300) {
            let mut b = TokenBucket::full(&cfg);
            let granted = (0..n).filter(|_| b.try_retry(&cfg, false).is_some()).count();
            prop_assert!(granted as u32 <= cfg.capacity / cfg.retry_cost);
        }
    }
}
