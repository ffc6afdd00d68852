//! The payment model's situations.
//!
//! Ids are numbered locally, `FIRST + n`: the registry gives the model its
//! `FIRST` (the ids after those of the models it lists before this one), so
//! each stays a `const` that actors report and match on, and no two models
//! share one. `COUNT` (the highest local id plus one) tells the registry
//! how many ids the model takes.

use crate::core::SituationDoc;
use sim::SituationId;

/// This model's first situation id, given by the registry.
const FIRST: SituationId = <super::Payment as crate::core::ids::Registered>::FIRST_SITUATION;

/// How many ids from [`FIRST`] this model uses, gaps included.
pub(crate) const COUNT: u16 = crate::core::ids::span(ALL, FIRST);

/// `client-retried`: The client sent a second or later attempt of an operation.
pub const CLIENT_RETRIED: SituationId = FIRST + 1;
/// `duplicate-after-commit`: A request arrived for a key whose payment is already recorded as done; the service answered from its key table.
pub const DUPLICATE_AFTER_COMMIT: SituationId = FIRST + 2;
/// `concurrent-duplicate`: A request arrived for a key whose execution is still in progress.
pub const CONCURRENT_DUPLICATE: SituationId = FIRST + 3;
/// `retry-after-key-expired`: A request arrived for a key the service had already forgotten (retention ran out): it was treated as new.
pub const RETRY_AFTER_KEY_EXPIRED: SituationId = FIRST + 4;
/// `crash-between-steps`: The service restarted after a crash that fell between the two transactions of a split operation: a booking without its key, or a key without its booking.
pub const CRASH_BETWEEN_STEPS: SituationId = FIRST + 5;
/// `service-redeployed`: The service restarted as a rollout's next version: what it held in memory was lost, its database kept.
pub const SERVICE_REDEPLOYED: SituationId = FIRST + 6;
/// `bank-dedup-hit`: The bank recognised a transfer's key and executed no second transfer.
pub const BANK_DEDUP_HIT: SituationId = FIRST + 7;
/// `recovered-after-restart`: The service restarted with a key left "in progress" and drove its payment to an end.
pub const RECOVERED_AFTER_RESTART: SituationId = FIRST + 8;
/// `client-recovered-after-restart`: The client restarted after a crash with an operation pending, and resumed it from its own database.
pub const CLIENT_RECOVERED_AFTER_RESTART: SituationId = FIRST + 9;
/// `lease-expired-takeover`: A request found its key "in progress" past the lease and took the execution over.
pub const LEASE_EXPIRED_TAKEOVER: SituationId = FIRST + 20;
/// `query-found-transfer`: A status query before a retry found the transfer already made.
pub const QUERY_FOUND_TRANSFER: SituationId = FIRST + 21;
/// `settle-nothing-missing`: In "state instead of action" mode the service read the claim as fully paid and paid nothing more.
pub const SETTLE_NOTHING_MISSING: SituationId = FIRST + 22;
/// `duplicate-waited`: A concurrent duplicate was held open and answered with the first execution's result.
pub const DUPLICATE_WAITED: SituationId = FIRST + 23;
/// `payload-mismatch-rejected`: A request reused a known key with another payload and was refused with 422.
pub const PAYLOAD_MISMATCH_REJECTED: SituationId = FIRST + 24;
/// `key-reaped`: Expired keys were removed from the service's dedup store.
pub const KEY_REAPED: SituationId = FIRST + 26;
/// `key-collision`: A key already stored for another operation arrived with a different claim.
pub const KEY_COLLISION: SituationId = FIRST + 27;
/// `bank-retried`: The service sent a transfer to the bank again after the bank stayed silent.
pub const BANK_RETRIED: SituationId = FIRST + 28;
/// `overloaded`: The service shed a request with 503 because it was at its max_in_flight.
pub const OVERLOADED: SituationId = FIRST + 29;
/// `client-dead-lettered`: The client gave an operation up and recorded it in a dead letter a person will see.
pub const CLIENT_DEAD_LETTERED: SituationId = FIRST + 30;
/// `late-confirmation-recorded`: The bank's confirmation arrived after the service had stopped waiting; the service recorded the key as paid anyway.
pub const LATE_CONFIRMATION_RECORDED: SituationId = FIRST + 31;
/// `conditional-transfer-refused`: The bank refused a transfer made on a stale reading of what was paid (the conditional update's version check).
pub const CONDITIONAL_TRANSFER_REFUSED: SituationId = FIRST + 32;
/// `bank-gave-up`: The bank stayed silent through every attempt; the service answered 504 and left the key "in progress".
pub const BANK_GAVE_UP: SituationId = FIRST + 33;
/// `queued`: every worker was busy, the request waited in the queue.
pub const QUEUED: SituationId = FIRST + 34;
/// `expired-dropped`: a worker skipped a queued request whose client had stopped waiting.
pub const EXPIRED_DROPPED: SituationId = FIRST + 35;
/// `worked-after-deadline`: a worker took a request whose client had already stopped waiting.
pub const WORKED_AFTER_DEADLINE: SituationId = FIRST + 36;
/// `retry-denied`: the client's retry budget was empty: no retry.
pub const RETRY_DENIED: SituationId = FIRST + 37;
/// `breaker-opened`: the client's breaker opened after too many failures.
pub const BREAKER_OPENED: SituationId = FIRST + 38;
/// `breaker-fast-fail`: the client's open breaker refused a call.
pub const BREAKER_FAST_FAIL: SituationId = FIRST + 39;
/// `breaker-closed`: a trial call succeeded and the breaker closed.
pub const BREAKER_CLOSED: SituationId = FIRST + 40;
/// `reconciled-paid`: the reconciliation job found an unknown dead letter paid and told the client it is done.
pub const RECONCILED_PAID: SituationId = FIRST + 41;
/// `reconcile-redriven`: the reconciliation job found a claim unpaid and drove its payment again.
pub const RECONCILE_REDRIVEN: SituationId = FIRST + 42;
/// `reconcile-gave-up`: the reconciliation job spent its rounds: the dead letter stays unknown, for a person.
pub const RECONCILE_GAVE_UP: SituationId = FIRST + 43;
/// `status-read-stale`: the bank answered a status query from a replica that did not show a transfer it had already executed.
pub const STATUS_READ_STALE: SituationId = FIRST + 44;
/// `lease-taken-from-running-execution`: a request took over a key whose lease had run out while the first execution was still running.
pub const LEASE_TAKEN_FROM_RUNNING: SituationId = FIRST + 45;

/// `key-deleted-on-bank-timeout`: the bank stayed silent to the service's last attempt and the service deleted the key, so the client's next retry executes again.
pub const KEY_DELETED_ON_BANK_TIMEOUT: SituationId = FIRST + 46;

/// `bank-key-expired`: a transfer reached the bank under a key the bank had taken and since forgotten (`bank.key_retention_ms`).
pub const BANK_KEY_EXPIRED: SituationId = FIRST + 47;

/// `bank-overloaded`: the bank took `bank.capacity_per_s` requests this second and dropped one more unanswered.
// A gap id: the model's count, and so the ids of the models after it, stay as they were.
pub const BANK_OVERLOADED: SituationId = FIRST + 19;

/// `refund-sent`: the compensation job asked the bank to refund a claim's payment.
// Gap ids from here on: the model's count stays as it was.
pub const REFUND_SENT: SituationId = FIRST + 18;
/// `compensated`: the compensation job found nothing left paid for a claim and told the client it is cancelled.
pub const COMPENSATED: SituationId = FIRST + 17;
/// `refund-refused`: the bank refused a refund of more than is paid for the payment.
pub const REFUND_REFUSED: SituationId = FIRST + 16;
/// `refund-dedup-hit`: the bank recognised a refund's key and refunded no second time.
pub const REFUND_DEDUP_HIT: SituationId = FIRST + 15;
/// `compensate-gave-up`: the compensation job spent its rounds: the dead letter stays unknown, for a person.
pub const COMPENSATE_GAVE_UP: SituationId = FIRST + 14;

/// Every situation of this model: id, stable name and meaning.
pub static ALL: &[SituationDoc] = &[
    SituationDoc { id: CLIENT_RETRIED, name: "client-retried", doc: "The client sent a second or later attempt of an operation." },
    SituationDoc { id: CLIENT_RECOVERED_AFTER_RESTART, name: "client-recovered-after-restart", doc: "The client restarted after a crash with an operation pending, and resumed it from its own database." },
    SituationDoc { id: CLIENT_DEAD_LETTERED, name: "client-dead-lettered", doc: "The client gave an operation up and recorded it in a dead letter a person will see." },
    SituationDoc { id: DUPLICATE_AFTER_COMMIT, name: "duplicate-after-commit", doc: "A request arrived for a key whose payment is already recorded as done; the service answered from its key table." },
    SituationDoc { id: CONCURRENT_DUPLICATE, name: "concurrent-duplicate", doc: "A request arrived for a key whose execution is still in progress." },
    SituationDoc { id: DUPLICATE_WAITED, name: "duplicate-waited", doc: "A concurrent duplicate was held open and answered with the first execution's result." },
    SituationDoc { id: RETRY_AFTER_KEY_EXPIRED, name: "retry-after-key-expired", doc: "A request arrived for a key the service had already forgotten (retention ran out): it was treated as new." },
    SituationDoc { id: KEY_REAPED, name: "key-reaped", doc: "Expired keys were removed from the service's dedup store." },
    SituationDoc { id: KEY_COLLISION, name: "key-collision", doc: "A key already stored for another operation arrived with a different claim." },
    SituationDoc { id: PAYLOAD_MISMATCH_REJECTED, name: "payload-mismatch-rejected", doc: "A request reused a known key with another payload and was refused with 422." },
    SituationDoc { id: CRASH_BETWEEN_STEPS, name: "crash-between-steps", doc: "The service restarted after a crash that fell between the two transactions of a split operation: a booking without its key, or a key without its booking." },
    SituationDoc { id: SERVICE_REDEPLOYED, name: "service-redeployed", doc: "The service restarted as a rollout's next version: what it held in memory was lost, its database kept." },
    SituationDoc { id: KEY_DELETED_ON_BANK_TIMEOUT, name: "key-deleted-on-bank-timeout", doc: "The bank stayed silent to the service's last attempt and the service deleted the key (service.on_bank_timeout = \"delete-key\"): the client's next retry is executed again, whatever the bank did with the first." },
    SituationDoc { id: RECOVERED_AFTER_RESTART, name: "recovered-after-restart", doc: "The service restarted with a key left \"in progress\" and drove its payment to an end." },
    SituationDoc { id: LEASE_EXPIRED_TAKEOVER, name: "lease-expired-takeover", doc: "A request found its key \"in progress\" past the lease and took the execution over." },
    SituationDoc { id: LEASE_TAKEN_FROM_RUNNING, name: "lease-taken-from-running-execution", doc: "A lease takeover while the first execution was still running (its bank call in flight, or a step of it pending): the lease was shorter than the work it guards, and two executions of one key overlap." },
    SituationDoc { id: LATE_CONFIRMATION_RECORDED, name: "late-confirmation-recorded", doc: "The bank's confirmation arrived after the service had stopped waiting; the service recorded the key as paid anyway." },
    SituationDoc { id: BANK_GAVE_UP, name: "bank-gave-up", doc: "The bank stayed silent through every attempt; the service answered 504 and left the key \"in progress\"." },
    SituationDoc { id: BANK_RETRIED, name: "bank-retried", doc: "The service sent a transfer to the bank again after the bank stayed silent." },
    SituationDoc { id: BANK_DEDUP_HIT, name: "bank-dedup-hit", doc: "The bank recognised a transfer's key and executed no second transfer." },
    SituationDoc { id: QUERY_FOUND_TRANSFER, name: "query-found-transfer", doc: "A status query before a retry found the transfer already made." },
    SituationDoc { id: SETTLE_NOTHING_MISSING, name: "settle-nothing-missing", doc: "In \"state instead of action\" mode the service read the claim as fully paid and paid nothing more." },
    SituationDoc { id: STATUS_READ_STALE, name: "status-read-stale", doc: "The bank answered a status query from a read replica that did not yet show a transfer it had executed: \"0 EUR paid\" for a claim that was paid (bank.status_lag_ms)." },
    SituationDoc { id: CONDITIONAL_TRANSFER_REFUSED, name: "conditional-transfer-refused", doc: "The bank refused a transfer made on a stale reading of what was paid (the conditional update's version check)." },
    SituationDoc { id: OVERLOADED, name: "overloaded", doc: "The service shed a request with 503: every worker was busy and the queue full." },
    SituationDoc { id: QUEUED, name: "queued", doc: "A request found every worker busy and waited in the service's queue." },
    SituationDoc { id: WORKED_AFTER_DEADLINE, name: "worked-after-deadline", doc: "A worker took a queued request whose deadline had passed: its client had stopped waiting, the work was for nobody." },
    SituationDoc { id: EXPIRED_DROPPED, name: "expired-dropped", doc: "A worker skipped a queued request whose deadline had passed (drop_expired)." },
    SituationDoc { id: RETRY_DENIED, name: "retry-denied", doc: "The client's retry budget held too few tokens for a retry: the operation was given up into a dead letter." },
    SituationDoc { id: BREAKER_OPENED, name: "breaker-opened", doc: "The client's circuit breaker opened after too many failures in its window." },
    SituationDoc { id: BREAKER_FAST_FAIL, name: "breaker-fast-fail", doc: "The client's open circuit breaker refused an attempt: not sent, the operation given up at once." },
    SituationDoc { id: BREAKER_CLOSED, name: "breaker-closed", doc: "A trial call through the half-open breaker succeeded and closed it." },
    SituationDoc { id: RECONCILED_PAID, name: "reconciled-paid", doc: "The client's reconciliation job asked about an unknown dead letter, found it paid, and told the client it is done." },
    SituationDoc { id: RECONCILE_REDRIVEN, name: "reconcile-redriven", doc: "The client's reconciliation job found a claim of an unknown dead letter unpaid and drove its payment again (a late retry)." },
    SituationDoc { id: RECONCILE_GAVE_UP, name: "reconcile-gave-up", doc: "The client's reconciliation job spent its rounds without an answer that the claim was paid: the dead letter stays unknown, for a person." },
    SituationDoc { id: BANK_OVERLOADED, name: "bank-overloaded", doc: "The bank had taken its bank.capacity_per_s requests in the current second and dropped one more unanswered, as an overloaded provider's connection times out." },
    SituationDoc { id: REFUND_SENT, name: "refund-sent", doc: "The client's compensation job asked the bank to refund a claim of an unknown dead letter (client.compensate): a saga's step back." },
    SituationDoc { id: REFUND_DEDUP_HIT, name: "refund-dedup-hit", doc: "The bank recognised a refund's own key and refunded no second time." },
    SituationDoc { id: REFUND_REFUSED, name: "refund-refused", doc: "The bank refused a refund of more than is paid for the payment, net of the refunds before it (bank.refuse_refund_beyond_paid, Stripe's charge_already_refunded)." },
    SituationDoc { id: COMPENSATED, name: "compensated", doc: "The client's compensation job found nothing left paid for a claim of an unknown dead letter, or its refund done, and told the client the payment is cancelled." },
    SituationDoc { id: COMPENSATE_GAVE_UP, name: "compensate-gave-up", doc: "The client's compensation job spent its rounds without seeing the claim's payment taken back: the dead letter stays unknown, for a person." },
    SituationDoc { id: BANK_KEY_EXPIRED, name: "bank-key-expired", doc: "A transfer reached the bank under a key the bank had taken and since forgotten (bank.key_retention_ms): the bank took it for a new one." },
];
