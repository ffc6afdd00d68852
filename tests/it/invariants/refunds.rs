//! Compensation: a refund takes an effect back where it landed, and the
//! ledger judges the net effect. A refund of nothing gives money away, a
//! refund counted twice gives more back than landed, and at the end what
//! is left must be what the client was finally told.

use super::ledger::{claim, ended, fires, intent, silent, told, transfer};
use models::core::{Ending, Obs, Op};
use models::payment::REFUND;

/// The bank refunds `eur` of `op`'s payment.
fn refund(op: Op, eur: u32) -> Obs {
    Obs::Reversal {
        site: &REFUND,
        op,
        payload: eur,
    }
}

/// A claim of 1,200 EUR whose client gave up not knowing: the dead letter
/// a compensation job takes up.
fn unknown(op: Op) -> Vec<(u64, u32, Obs)> {
    vec![
        (0, 0, intent(op, 1200)),
        (30, 0, ended(op, Ending::Unknown)),
    ]
}

#[test]
fn no_phantom_refund() {
    let a = claim(4711);
    // Refunded on the timeout alone: the transfer never reached the bank.
    let mut blind = unknown(a);
    blind.push((90, 2, refund(a, 1200)));
    fires("no-phantom-refund", &blind);
    // Asked first: the bank paid, the job refunds exactly that, and the
    // client is told "cancelled": net nothing, as told.
    let mut asked = unknown(a);
    asked.extend([
        (5, 2, transfer(a, 1200)),
        (90, 2, refund(a, 1200)),
        (150, 0, ended(a, Ending::Cancelled)),
    ]);
    silent(&asked);
    // Nothing paid, nothing refunded: cancelled without a refund.
    let mut nothing = unknown(a);
    nothing.push((150, 0, ended(a, Ending::Cancelled)));
    silent(&nothing);
}

#[test]
fn no_duplicate_refund() {
    let a = claim(4711);
    let mut paid = unknown(a);
    paid.push((5, 2, transfer(a, 1200)));
    // One refund, and a copy of it without a key: 2,400 EUR back of 1,200.
    let mut twice = paid.clone();
    twice.extend([(90, 2, refund(a, 1200)), (91, 2, refund(a, 1200))]);
    fires("no-duplicate-refund", &twice);
    // Two partial refunds that add up to the payment are one refund's worth.
    let mut halves = paid;
    halves.extend([
        (90, 2, refund(a, 600)),
        (91, 2, refund(a, 600)),
        (150, 0, ended(a, Ending::Cancelled)),
    ]);
    silent(&halves);
}

#[test]
fn net_effect_as_told() {
    let a = claim(4711);
    // The job asked while the transfer was on its way, saw nothing paid and
    // cancelled; the transfer landed after: told cancelled, 1,200 EUR paid.
    let mut late = unknown(a);
    late.extend([
        (90, 0, ended(a, Ending::Cancelled)),
        (95, 2, transfer(a, 1200)),
    ]);
    fires("net-effect-as-told", &late);
    // Refunded a payment the client was told went through.
    let refunded_done = [
        (0, 0, intent(a, 1200)),
        (5, 2, transfer(a, 1200)),
        (6, 0, told(a, 1200)),
        (6, 0, ended(a, Ending::Done)),
        (90, 2, refund(a, 1200)),
    ];
    fires("net-effect-as-told", &refunded_done);
    // A payment told done and never refunded is not this invariant's.
    silent(&refunded_done[..4]);
}
