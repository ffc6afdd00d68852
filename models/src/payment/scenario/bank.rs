//! `[bank]`: whether the bank deduplicates by a key, how long it keeps
//! one, how it answers status queries, and its capacity.

use super::DAY_MS;
use crate::core::input::{count_in, duration_us, one_of, path, Invalid, MAX_DURATION_MS};
use crate::payment::BankConfig;
use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct BankDto {
    pub(super) accepts_key: bool,
    pub(super) key_retention_ms: u64,
    pub(super) status_query: bool,
    pub(super) status_lag_ms: u64,
    pub(super) status_by: String,
    pub(super) capacity_per_s: u64,
    pub(super) recover_ms: u64,
    pub(super) refuse_refund_beyond_paid: bool,
    /// A user's program in the bank's place (docs/protocol.md).
    pub(super) program: Option<Vec<String>>,
    pub(super) handler_timeout_ms: u64,
    pub(super) state_folder: bool,
}

/// The built-in bank's keys, which a program in its place replaces.
const BUILT_IN_BANK_KEYS: &[&str] = &[
    "accepts_key",
    "key_retention_ms",
    "status_query",
    "status_lag_ms",
    "status_by",
    "capacity_per_s",
    "recover_ms",
    "refuse_refund_beyond_paid",
];

/// `[bank] program`, checked (see `external::keys`).
pub(super) fn program_of(
    b: &BankDto,
    input: &crate::core::BuildInput<'_>,
) -> Result<Option<(crate::external::Program, u64)>, Invalid> {
    let keys = crate::external::keys::ProgramKeys {
        table: "bank",
        argv: b.program.as_deref(),
        handler_timeout_ms: b.handler_timeout_ms,
        state_folder: b.state_folder,
        built_in: BUILT_IN_BANK_KEYS,
    };
    crate::external::keys::program_of(&keys, |key| written(input.text, key), input.dir)
}

/// Whether the scenario writes `[bank] key` (a default is not written).
pub(super) fn written(text: &str, key: &str) -> bool {
    written_in(text, "bank", key)
}

/// Whether the scenario writes `key` in `[table]`.
pub(super) fn written_in(text: &str, table: &str, key: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| {
        t.get(table)
            .and_then(toml::Value::as_table)
            .is_some_and(|c| c.contains_key(key))
    })
}

/// Most requests a second a bank can be given: more than any scenario's
/// clients can send (1,000 operations, a few attempts each).
const MAX_CAPACITY_PER_S: u64 = 1_000_000;

impl Default for BankDto {
    fn default() -> Self {
        BankDto {
            accepts_key: true,
            key_retention_ms: 0,
            status_query: false,
            status_lag_ms: 0,
            status_by: "claim".into(),
            capacity_per_s: 0,
            recover_ms: 0,
            refuse_refund_beyond_paid: false,
            program: None,
            handler_timeout_ms: crate::external::keys::default_handler_timeout_ms(),
            state_folder: false,
        }
    }
}

impl TryFrom<&BankDto> for BankConfig {
    type Error = Invalid;

    fn try_from(b: &BankDto) -> Result<BankConfig, Invalid> {
        Ok(BankConfig {
            accepts_key: b.accepts_key,
            key_retention_us: duration_us(
                b.key_retention_ms,
                MAX_DURATION_MS,
                path(&["bank", "key_retention_ms"]),
            )?,
            status_query: b.status_query,
            status_by_payment: one_of(
                &b.status_by,
                &[("claim", false), ("payment", true)],
                path(&["bank", "status_by"]),
            )?,
            status_lag_us: duration_us(b.status_lag_ms, DAY_MS, path(&["bank", "status_lag_ms"]))?,
            capacity_per_s: count_in(
                b.capacity_per_s,
                0,
                MAX_CAPACITY_PER_S,
                path(&["bank", "capacity_per_s"]),
                "requests a second",
            )? as u32,
            // As the service's: checked in the same range, and worth
            // nothing without a capacity, since nothing is shed then.
            recover_ms: duration_us(b.recover_ms, 30 * DAY_MS, path(&["bank", "recover_ms"])).map(
                |_| match b.capacity_per_s {
                    0 => 0,
                    _ => b.recover_ms as u32,
                },
            )?,
            refuse_refund_beyond_paid: b.refuse_refund_beyond_paid,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::BankDto;
    use crate::core::input::path;
    use crate::payment::BankConfig;

    #[test]
    fn the_default_bank_dedups_by_key_and_answers_by_claim() {
        let bank = BankConfig::try_from(&BankDto::default()).unwrap();
        assert!(bank.accepts_key);
        assert!(!bank.status_query);
        assert!(!bank.status_by_payment);
        assert_eq!(bank.key_retention_us, 0);
    }

    #[test]
    fn a_mistake_is_located_at_the_key_that_makes_it() {
        let dto = BankDto {
            status_by: "account".into(),
            ..BankDto::default()
        };
        let e = BankConfig::try_from(&dto).unwrap_err();
        assert_eq!(e.path, path(&["bank", "status_by"]));
        let dto = BankDto {
            status_lag_ms: 2 * super::DAY_MS,
            ..BankDto::default()
        };
        let e = BankConfig::try_from(&dto).unwrap_err();
        assert_eq!(e.path, path(&["bank", "status_lag_ms"]));
    }
}
