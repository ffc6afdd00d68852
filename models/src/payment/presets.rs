//! The payment model's presets: Stripe's idempotency keys for the service
//! (or for the bank it calls), and the AWS SDKs' retry modes for the
//! client. Each value cites the documentation it comes from; docs/fidelity.md
//! has their rows and conformance scenarios.

use crate::core::{Preset, PresetRule, PresetSetting};

const STRIPE_IDEMPOTENCY: &str = "docs.stripe.com/api/idempotent_requests (API v1, read 2026-12)";
const AWS_RETRY: &str =
    "docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html (read 2026-12)";

const fn set(key: &'static str, value: &'static str, source: &'static str) -> PresetSetting {
    PresetSetting { key, value, source }
}

/// Stripe's documented idempotency, shared by the service and bank presets.
const STRIPE_SERVICE: &[PresetSetting] = &[
    set("service.idempotency", "\"claim-same-tx\"", "Stripe saves the status code and body of the first request once the endpoint begins executing; retries with the same key get the saved response"),
    set("service.retention_ms", "86400000", "keys may be pruned once they are at least 24 hours old; a key reused after that is a new request (modelled at exactly 24 h, the earliest Stripe promises)"),
    set("service.fingerprint_check", "true", "the idempotency layer compares the incoming parameters with the original request's and answers an error if they differ"),
    set("service.concurrent", "\"reject\"", "a request that conflicts with one executing concurrently under the same key is answered with an error and nothing is saved: safe to retry"),
];

const AWS_STANDARD_2026: &[PresetSetting] = &[
    set("client.retry.policy", "\"exponential\"", AWS_RETRY),
    set("client.retry.max_attempts", "3", "retry_mode = standard makes three attempts unless max_attempts is set (AWS SDKs and Tools Reference Guide, Retry behavior)"),
    set("client.retry.base_ms", "50", "AWS Developer Tools Blog, Announcing updated retry behavior for AWS SDKs and Tools (2026): base backoff 50 ms for transient (non-throttling) errors"),
    set("client.retry.cap_ms", "20000", "MAX_BACKOFF 20 s, applied before the jitter (2026 rules)"),
    set("client.retry.jitter", "\"full\"", "exponential backoff with full jitter: a wait drawn uniformly below the capped exponential"),
    set("client.budget.capacity", "500", "the retry quota: a token bucket of 500 tokens"),
    set("client.budget.retry_cost", "14", "2026 rules: a retry after a transient error costs 14 tokens"),
    set("client.budget.timeout_cost", "14", "2026 rules: a timeout is a transient error like any other (no separate timeout cost)"),
    set("client.budget.success_refund", "1", "a request that succeeds puts 1 token back (NO_RETRY_INCREMENT)"),
];

const AWS_STANDARD_PRE_2026: &[PresetSetting] = &[
    set("client.retry.policy", "\"exponential\"", AWS_RETRY),
    set("client.retry.max_attempts", "3", "retry_mode = standard makes three attempts unless max_attempts is set"),
    set("client.retry.base_ms", "1000", "before 2026: delay = random(0, 1) x 2^(attempt-1) seconds (botocore retries/standard.py ExponentialBackoff, base 1 s)"),
    set("client.retry.cap_ms", "20000", "MAX_BACKOFF 20 s (botocore retries/standard.py)"),
    set("client.retry.jitter", "\"full\"", "full jitter: random(0, 1) times the exponential"),
    set("client.budget.capacity", "500", "INITIAL_CAPACITY = 500 (botocore retries/quota.py; INITIAL_RETRY_TOKENS in aws-sdk-js-v3)"),
    set("client.budget.retry_cost", "5", "RETRY_COST = 5 (botocore retries/standard.py; the same in aws-sdk-js-v3)"),
    set("client.budget.timeout_cost", "10", "TIMEOUT_RETRY_COST = 10 (botocore retries/standard.py)"),
    set("client.budget.success_refund", "1", "NO_RETRY_INCREMENT = 1 (botocore retries/standard.py)"),
];

/// max_attempts: "Valid values: Number greater than 0" (AWS SDKs and Tools
/// Reference Guide, Retry behavior): idemsim's 0 ("no cap") is no AWS setting.
const AWS_RULES: &[PresetRule] = &[PresetRule {
    key: "client.retry.max_attempts",
    allowed: crate::core::Allowed::Range(1, 10_000),
    says: "max_attempts: valid values are numbers greater than 0 (AWS SDKs and Tools Reference Guide, Retry behavior); an SDK has no setting for unbounded attempts",
}];

/// Every preset the payment model offers.
pub static PRESETS: &[Preset] = &[
    Preset {
        table: "service",
        name: "stripe",
        system: "Stripe API v1 idempotent requests (Idempotency-Key header)",
        settings: STRIPE_SERVICE,
        rules: &[],
        not_modelled: "Stripe also saves and replays a 500 answer under its key (a retry gets the same 500); the service here keeps the key in progress or deletes it (service.on_bank_timeout). API v2's retry-to-completion is not modelled. Keys are modelled as pruned at exactly 24 h; Stripe may keep them longer.",
    },
    Preset {
        table: "bank",
        name: "stripe",
        system: "Stripe API v1 as the provider the service calls, with the service's key passed on",
        settings: &[
            set("bank.accepts_key", "true", STRIPE_IDEMPOTENCY),
            set("bank.key_retention_ms", "86400000", "keys may be pruned once they are at least 24 hours old (modelled at exactly 24 h)"),
        ],
        rules: &[],
        not_modelled: "The parameter comparison and the replayed 500 of Stripe's idempotency layer are not modelled at the bank: a repeated key is answered with the first result.",
    },
    Preset {
        table: "client.retry",
        name: "aws-standard",
        system: "AWS SDKs, retry_mode = standard, with the 2026 rules (AWS_NEW_RETRIES_2026; the default since November 2026)",
        settings: AWS_STANDARD_2026,
        rules: AWS_RULES,
        not_modelled: "Throttling errors (a 1 s backoff base and a 5-token cost under the 2026 rules), the x-amz-retry-after header and service-specific attempts (DynamoDB: 4) are not modelled: every retryable answer here is a transient error.",
    },
    Preset {
        table: "client.retry",
        name: "aws-standard-pre-2026",
        system: "AWS SDKs, retry_mode = standard, as before the 2026 rules",
        settings: AWS_STANDARD_PRE_2026,
        rules: AWS_RULES,
        not_modelled: "Every value is botocore's (the Python SDK): other SDKs differ (aws-sdk-js-v3's base is 100 ms). Throttling errors and their own base delay are not modelled.",
    },
    Preset {
        table: "client.retry",
        name: "aws-adaptive",
        system: "AWS SDKs, retry_mode = adaptive (standard's 2026 rules plus a client-side rate limiter)",
        settings: AWS_STANDARD_2026,
        rules: AWS_RULES,
        not_modelled: "The client-side rate limiter that makes adaptive mode adaptive (a token bucket on the sending rate that may delay even a first attempt after throttling) is not modelled: runs are those of aws-standard. Only its verdicts about duplicates carry over; its load figures do not.",
    },
];
