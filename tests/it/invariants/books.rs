//! The books downstream against the effect itself: the chain's accounting
//! holds what the bank paid, per payment, once the run is over.

use super::ledger::{claim, ended, entity, event, fires, intent, paid_once, published, silent};
use super::ledger::{told, transfer};
use models::core::{Ending, Obs, Op};
use models::messaging::CONSUMER_WRITE;
use models::payment::CLAIM;

/// Event `id` announces a booking of `eur` for payment `about`.
fn booked(about: Op, id: u32, eur: u32) -> Obs {
    Obs::Committed {
        op: event(id),
        entity: about,
        value: eur,
        version: 1,
    }
}

/// Accounting books event `id`, of `eur`.
fn booking(id: u32, eur: u32) -> Obs {
    Obs::Effect {
        site: &CONSUMER_WRITE,
        op: event(id),
        payload: eur,
    }
}

#[test]
fn books_agree() {
    let a = claim(4711);
    // The articles' chain: booked, announced, booked in accounting, paid.
    let mut agree = paid_once(a);
    agree.extend([(0, 1, booked(a, 1, 1200)), (1, 3, booking(1, 1200))]);
    silent(&published(&agree));
    // Booked before the bank call, the bank cut off, the client told
    // "unknown": every hop content, the books 1,200 EUR ahead of the bank.
    let cut_off = [
        (0, 0, intent(a, 1200)),
        (0, 1, booked(a, 1, 1200)),
        (1, 3, booking(1, 1200)),
        (30, 0, ended(a, Ending::Unknown)),
    ];
    fires("books-agree", &published(&cut_off));
    // The same, and a reconciliation job's re-drive pays it after the cut:
    // the books are true by the end, however late.
    let mut reconciled = cut_off.to_vec();
    reconciled.extend([(200, 2, transfer(a, 1200))]);
    silent(&published(&reconciled));
    // A transfer nobody booked, in a run that books: the bank paid claim
    // 4712, and its booking never reached accounting or was never made.
    let b = claim(4712);
    let mut unbooked = agree.clone();
    unbooked.extend(paid_once(b));
    fires("books-agree", &published(&unbooked));
    // A run that books nothing downstream keeps no books: every payment
    // scenario, and a messaging entity's events (no client asked for it).
    silent(&paid_once(b));
    let e = entity(7);
    silent(&published(&[
        (0, 0, booked(e, 1, 5)),
        (1, 3, booking(1, 5)),
    ]));
    // Two payments of one claim, each its own operation: 1,200 and 300,
    // each booked and paid once, agree; the second answered from the
    // first's key (told done, nothing booked, nothing paid) does not.
    let second = Op::part(&CLAIM, 4711, 1);
    let mut two = agree.clone();
    two.extend([
        (60, 0, intent(second, 300)),
        (60, 1, booked(second, 2, 300)),
        (61, 2, transfer(second, 300)),
        (61, 3, booking(2, 300)),
        (62, 0, told(second, 300)),
        (62, 0, ended(second, Ending::Done)),
    ]);
    silent(&published(&two));
    let mut paid_other_amount = agree.clone();
    paid_other_amount.extend([
        (60, 0, intent(second, 300)),
        (60, 1, booked(second, 2, 300)),
        (61, 2, transfer(second, 200)),
        (61, 3, booking(2, 300)),
        (62, 0, ended(second, Ending::Unknown)),
    ]);
    assert_eq!(
        super::ledger::judge(&published(&paid_other_amount)),
        Some("no-mismatched-payload"),
        "a transfer of another amount is caught as it lands"
    );
}
