//! `[[operations]]`: the claims to pay, each table one operation or,
//! with `repeat`, many alike; every (claim, payment) once.

use super::MAX_OPERATIONS;
use crate::core::input::{count_in, duration_us, invalid, start_us, Invalid, Seg, DAY_MS};
use crate::payment::OpSpec;
use serde::Deserialize;
use sim::TimeUs;
use std::collections::BTreeSet;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct OpDto {
    pub(super) claim: u32,
    /// Which payment of the claim: two tables may share a claim with
    /// distinct payment numbers (`zahl-4711-02` is payment 2).
    #[serde(default = "one")]
    pub(super) payment: u64,
    pub(super) amount_eur: u32,
    #[serde(default)]
    pub(super) start_ms: u64,
    pub(super) retry_amount_eur: Option<u32>,
    /// This operation `repeat` times, claims `claim`, `claim + 1`, ...,
    /// each starting `every_ms` after the one before.
    #[serde(default = "one")]
    pub(super) repeat: u64,
    #[serde(default)]
    pub(super) every_ms: u64,
}

fn one() -> u64 {
    1
}

pub(super) fn default_operations() -> Vec<OpDto> {
    vec![OpDto {
        claim: 4711,
        payment: 1,
        amount_eur: 1200,
        start_ms: 0,
        retry_amount_eur: None,
        repeat: 1,
        every_ms: 0,
    }]
}

/// Every operation of `ops`, in order, each starting before `max_time_us`.
pub(super) fn specs(ops: &[OpDto], max_time_us: TimeUs) -> Result<Vec<OpSpec>, Invalid> {
    let total: u64 = ops
        .iter()
        .map(|o| o.repeat.max(1))
        .fold(0, u64::saturating_add);
    if ops.is_empty() || total > MAX_OPERATIONS {
        return Err(invalid(
            vec![Seg::Key("operations")],
            format!("{total} operations: a scenario has 1 to {MAX_OPERATIONS}"),
            "give [[operations]] tables with claim and amount_eur (and `repeat` for many alike)",
        ));
    }
    let mut specs: Vec<OpSpec> = Vec::with_capacity(total as usize);
    let mut claims: BTreeSet<(u32, u8)> = BTreeSet::new();
    for (i, o) in ops.iter().enumerate() {
        table_specs(o, i, max_time_us, &mut claims, &mut specs)?;
    }
    Ok(specs)
}

/// The operations of table `i` (`o`), appended to `specs`; `claims` holds
/// every (claim, payment) taken so far.
fn table_specs(
    o: &OpDto,
    i: usize,
    max_time_us: TimeUs,
    claims: &mut BTreeSet<(u32, u8)>,
    specs: &mut Vec<OpSpec>,
) -> Result<(), Invalid> {
    let at = |k| vec![Seg::Key("operations"), Seg::Index(i), Seg::Key(k)];
    count_in(o.repeat, 1, MAX_OPERATIONS, at("repeat"), "operations")?;
    duration_us(o.every_ms, DAY_MS, at("every_ms"))?;
    let payment = payment_number(o.payment, at("payment"))?;
    for (k, v) in [
        ("amount_eur", Some(o.amount_eur)),
        ("retry_amount_eur", o.retry_amount_eur),
    ] {
        if v == Some(0) {
            return Err(invalid(
                at(k),
                "a payment of 0 EUR pays nothing",
                "write an amount of at least 1",
            ));
        }
    }
    for n in 0..o.repeat {
        let claim = o.claim.checked_add(n as u32).ok_or_else(|| {
            invalid(
                at("repeat"),
                format!(
                    "{} operations from claim {} run past the largest claim number, {}",
                    o.repeat,
                    o.claim,
                    u32::MAX
                ),
                "start from a smaller claim, or repeat fewer times",
            )
        })?;
        if !claims.insert((claim, payment)) {
            return Err(twice(claim, payment, n, at));
        }
        let (start_ms, where_) = match o
            .every_ms
            .checked_mul(n)
            .and_then(|d| d.checked_add(o.start_ms))
        {
            Some(ms) if n == 0 => (ms, "start_ms"),
            Some(ms) => (ms, "every_ms"),
            None => (u64::MAX, "every_ms"),
        };
        start_us(start_ms, max_time_us, at(where_), "operation")?;
        specs.push(OpSpec {
            claim,
            payment,
            amount_eur: o.amount_eur,
            start_ms,
            retry_amount_eur: o.retry_amount_eur,
        });
    }
    Ok(())
}

/// Payment numbers run as the key's last two digits do: 01 to 99.
fn payment_number(payment: u64, at: Vec<Seg>) -> Result<u8, Invalid> {
    match u8::try_from(payment) {
        Ok(p @ 1..=99) => Ok(p),
        _ => Err(invalid(
            at,
            format!("payment {payment}: the range is 1 to 99 (payment 01 to 99 of a claim)"),
            "write a number from 1 to 99: 1 for a claim's first payment, 2 for its second",
        )),
    }
}

/// Claim `claim`'s payment `payment` is already another operation's, met
/// again at repetition `n` of a table.
fn twice(claim: u32, payment: u8, n: u64, at: impl Fn(&'static str) -> Vec<Seg>) -> Invalid {
    let (which, place) = match payment {
        1 => (format!("claim {claim}"), at("claim")),
        p => (format!("claim {claim} payment {p:02}"), at("payment")),
    };
    let what = match n {
        0 => format!("{which} appears twice"),
        _ => format!(
            "{which} (repetition {} of this table) is already another operation's",
            n + 1
        ),
    };
    invalid(
        place,
        what,
        "each operation needs its own claim number, or its own payment number of a shared claim (payment = 2)",
    )
}
