//! The messaging model's situations.
//!
//! Ids are numbered locally, `FIRST + n`: the registry gives the model its
//! `FIRST` (the ids after those of the models it lists before this one), so
//! each stays a `const` that actors report and match on, and no two models
//! share one. `COUNT` (the highest local id plus one) tells the registry
//! how many ids the model takes.

use crate::core::SituationDoc;
use sim::SituationId;

/// This model's first situation id, given by the registry.
const FIRST: SituationId = <super::Messaging as crate::core::ids::Registered>::FIRST_SITUATION;

/// How many ids from [`FIRST`] this model uses, gaps included.
pub(crate) const COUNT: u16 = crate::core::ids::span(ALL, FIRST);

/// `relay-crash-between-steps`: The producer restarted after a crash that fell between publishing an outbox row and marking it sent.
pub const RELAY_CRASH_BETWEEN_STEPS: SituationId = FIRST;
/// `republish-after-crash`: After such a restart the relay published the unmarked row again.
pub const REPUBLISH_AFTER_CRASH: SituationId = FIRST + 1;
/// `publish-retried`: A publish got no confirmation in time and was sent again (no crash involved).
pub const PUBLISH_RETRIED: SituationId = FIRST + 2;
/// `broker-dedup-hit`: The broker dropped a publish whose message id it saw within its dedup window.
pub const BROKER_DEDUP_HIT: SituationId = FIRST + 3;
/// `republish-after-dedup-window`: A publish of a known message id arrived after the broker's dedup window and was stored again.
pub const REPUBLISH_AFTER_DEDUP_WINDOW: SituationId = FIRST + 4;
/// `duplicate-publish`: The broker stored a second copy of an event it had already accepted.
pub const DUPLICATE_PUBLISH: SituationId = FIRST + 5;
/// `broker-dead-lettered`: The broker moved a message to its dead-letter queue after its last delivery: visible, not lost.
pub const BROKER_DEAD_LETTERED: SituationId = FIRST + 6;
/// `broker-discarded`: The broker dropped a message after its last delivery, with no dead-letter queue.
pub const BROKER_DISCARDED: SituationId = FIRST + 7;
/// `lease-expired-redelivery`: An unacked delivery's visibility timeout ran out and the broker delivered the message again.
pub const LEASE_EXPIRED_REDELIVERY: SituationId = FIRST + 8;
/// `late-ack`: An ack for an older delivery arrived while a newer delivery of the same message was out: the lease ran out before the ack arrived (slow work, or a slow trip of the ack), and the broker accepted it.
pub const LATE_ACK: SituationId = FIRST + 9;
/// `inbox-hit`: A delivery's message id was already in the inbox: the consumer skipped the effect.
pub const INBOX_HIT: SituationId = FIRST + 10;
/// `inbox-row-without-effect`: A delivery found its inbox row committed but its effect missing: the two were written in separate transactions.
pub const INBOX_ROW_WITHOUT_EFFECT: SituationId = FIRST + 11;
/// `effect-without-inbox-row`: A delivery found its effect committed but its inbox row missing: the two were written in separate transactions.
pub const EFFECT_WITHOUT_INBOX_ROW: SituationId = FIRST + 12;
/// `redelivered-after-effect`: A message whose effect is already in the database was processed again: without a dedup check, or with one that had no row to find (the effect was written by a handler that keeps no inbox).
pub const REDELIVERED_AFTER_EFFECT: SituationId = FIRST + 13;
/// `unique-key-hit`: An insert under the business key found the row there: "already exists" counted as success.
pub const UNIQUE_KEY_HIT: SituationId = FIRST + 14;
/// `out-of-order-write`: A set-value event arrived older than the version already stored.
pub const OUT_OF_ORDER_WRITE: SituationId = FIRST + 15;
/// `stale-write-rejected`: A versioned write refused an event older than the stored version.
pub const STALE_WRITE_REJECTED: SituationId = FIRST + 16;
/// `commit-failed`: A producer's commit aborted (deadlock, constraint, failover).
pub const COMMIT_FAILED: SituationId = FIRST + 17;
/// `publish-given-up`: A dual-write producer gave a publish up after its last attempt: the event has nowhere durable to wait.
pub const PUBLISH_GIVEN_UP: SituationId = FIRST + 19;
/// `inbox-row-reaped`: the inbox's cleanup deleted rows past their retention.
pub const INBOX_ROW_REAPED: SituationId = FIRST + 20;
/// `redelivered-after-inbox-cleanup`: a message whose effect is committed came again after the cleanup deleted its inbox row.
pub const REDELIVERED_AFTER_INBOX_CLEANUP: SituationId = FIRST + 21;
/// `broker-tx-timed-out`: The broker aborted an open transaction at its timeout: its messages were never shown to a consumer.
pub const BROKER_TX_TIMED_OUT: SituationId = FIRST + 22;
/// `broker-tx-aborted`: The producer aborted its broker transaction after its database commit failed: nothing was announced.
pub const BROKER_TX_ABORTED: SituationId = FIRST + 23;
/// `commit-after-tx-timeout`: The producer asked to commit a broker transaction the broker had already aborted at its timeout: the database change is committed, its event is gone.
pub const COMMIT_AFTER_TX_TIMEOUT: SituationId = FIRST + 24;
/// `producer-sequence-dedup-hit`: The broker dropped a publish whose producer id and sequence number it had stored already: a retry within one producer session.
pub const PRODUCER_SEQUENCE_DEDUP_HIT: SituationId = FIRST + 25;
/// `republish-under-new-producer-id`: An event the broker had stored was published again under another producer id (the relay restarted), which the idempotent producer cannot recognise: it was stored again.
pub const REPUBLISH_UNDER_NEW_PRODUCER_ID: SituationId = FIRST + 26;
/// `republish-taken-for-first-delivery`: A consumer that reads its inbox only for redelivered messages applied a delivery flagged as first whose event id was in the inbox: a second copy a producer published is a new message to the broker.
pub const REPUBLISH_TAKEN_FOR_FIRST_DELIVERY: SituationId = FIRST + 27;
/// `lease-renewed`: The broker extended an in-flight delivery's lease at its consumer's request.
pub const LEASE_RENEWED: SituationId = FIRST + 28;
/// `renewal-after-redelivery`: A lease renewal arrived for a delivery whose lease had run out: the message was visible again or delivered to another consumer.
pub const RENEWAL_AFTER_REDELIVERY: SituationId = FIRST + 29;
/// `zombie-publish-fenced`: The broker refused a publish of a producer's older epoch: a transactional session that has since restarted (a zombie), or an idempotent producer's copy from before it bumped its epoch.
pub const ZOMBIE_PUBLISH_FENCED: SituationId = FIRST + 30;
/// `republish-under-new-epoch`: An event the broker had stored was published again under a producer's new epoch (a transactional relay restarted, or an idempotent one bumped its epoch after a delivery timeout): sequence numbers begin again with the epoch, so the broker stored it again.
pub const REPUBLISH_UNDER_NEW_EPOCH: SituationId = FIRST + 31;
/// `stale-ack-refused`: A broker with exactly-once delivery refused an ack that did not name the message's latest delivery.
pub const STALE_ACK_REFUSED: SituationId = FIRST + 32;
/// `work-dropped-after-failed-ack`: A consumer that acks before it commits learned that its ack failed and dropped the work uncommitted.
pub const WORK_DROPPED_AFTER_FAILED_ACK: SituationId = FIRST + 33;
/// `ack-result-missing`: A consumer that acks before it commits heard no result of its ack in time and dropped the work.
pub const ACK_RESULT_MISSING: SituationId = FIRST + 34;
/// `producer-id-expired`: The broker forgot an idle producer id and stored its next publish as the start of a new sequence.
pub const PRODUCER_ID_EXPIRED: SituationId = FIRST + 35;
/// `crash-between-ack-and-commit`: A consumer that acks before it commits crashed holding work the broker had let go (or was letting go) whose commit it had not sent.
pub const CRASH_BETWEEN_ACK_AND_COMMIT: SituationId = FIRST + 36;
/// `tx-resent-after-ack`: A consumer whose ack had let the message go heard no answer to a transaction in time and sent the same transaction again.
pub const TX_RESENT_AFTER_ACK: SituationId = FIRST + 37;
/// `tx-given-up-after-ack`: A consumer whose ack had let the message go heard no answer to the last attempt of a transaction and gave the work up.
pub const TX_GIVEN_UP_AFTER_ACK: SituationId = FIRST + 38;
/// `resent-tx-applied-again`: A transaction sent again found the event's effect in the database and, reading no inbox, applied it again.
pub const RESENT_TX_APPLIED_AGAIN: SituationId = FIRST + 39;
/// `ack-resent-for-result`: A consumer that acks with result before it commits heard no result in time and asked again: a repeat of an ack that counted is answered "counted".
pub const ACK_RESENT_FOR_RESULT: SituationId = FIRST + 40;
/// `record-resent-took-own-row`: A record-first consumer sent its inbox row again after the ack had let the message go, found the row its first attempt had committed, took it for a duplicate's and skipped the effect.
pub const RECORD_RESENT_TOOK_OWN_ROW: SituationId = FIRST + 41;
/// `delivery-on-old-connection`: A delivery the broker sent before the consumer restarted reached the restarted process: it came over the connection of the process that crashed, so it was dropped.
pub const DELIVERY_ON_OLD_CONNECTION: SituationId = FIRST + 42;
/// `delivery-found-consumer-busy`: A delivery reached a consumer with every job slot taken: it was left undone, for its lease to run out.
pub const DELIVERY_FOUND_CONSUMER_BUSY: SituationId = FIRST + 43;
/// `publish-out-of-sequence-refused`: The broker refused an idempotent producer's publish whose sequence number was neither the next one nor among the last five: unstored, unconfirmed, sent again at the producer's timeout.
pub const PUBLISH_OUT_OF_SEQUENCE_REFUSED: SituationId = FIRST + 44;
/// `resent-after-delivery-timeout`: The relay published again a row whose batch the producer library had given up at its delivery timeout: a new record, which the broker stores again.
pub const RESENT_AFTER_DELIVERY_TIMEOUT: SituationId = FIRST + 45;
/// `consumer-redeployed`: A consumer instance was replaced by a rollout's next version (consumer rollouts, one instance after another over `over_ms`): the old process finishes the deliveries it holds, the new one takes every delivery from now on.
pub const CONSUMER_REDEPLOYED: SituationId = FIRST + 46;
/// At the top of the range, away from the built-in consumer's.
pub const PROGRAM_EFFECT_REDELIVERED: SituationId = FIRST + 56;

/// Every situation of this model: id, stable name and meaning.
pub static ALL: &[SituationDoc] = &[
    SituationDoc { id: COMMIT_FAILED, name: "commit-failed", doc: "A producer's commit aborted (deadlock, constraint, failover)." },
    SituationDoc { id: PUBLISH_RETRIED, name: "publish-retried", doc: "A publish got no confirmation in time and was sent again (no crash involved)." },
    SituationDoc { id: PUBLISH_GIVEN_UP, name: "publish-given-up", doc: "A dual-write producer gave a publish up after its last attempt: the event has nowhere durable to wait." },
    SituationDoc { id: RELAY_CRASH_BETWEEN_STEPS, name: "relay-crash-between-steps", doc: "The producer restarted after a crash that fell between publishing an outbox row and marking it sent." },
    SituationDoc { id: REPUBLISH_AFTER_CRASH, name: "republish-after-crash", doc: "After such a restart the relay published the unmarked row again." },
    SituationDoc { id: RESENT_AFTER_DELIVERY_TIMEOUT, name: "resent-after-delivery-timeout", doc: "The relay published again a row whose batch the producer library had given up (producer.delivery_timeout_ms after the batch's first send, Kafka's delivery.timeout.ms, 120 s by default: send() failed to the relay): the resend is a new record, numbered under the idempotent producer's bumped epoch (KIP-360), so the broker stores it again if the batch it gave up was stored." },
    SituationDoc { id: DUPLICATE_PUBLISH, name: "duplicate-publish", doc: "The broker stored a second copy of an event it had already accepted." },
    SituationDoc { id: BROKER_DEDUP_HIT, name: "broker-dedup-hit", doc: "The broker dropped a publish whose message id it saw within its dedup window." },
    SituationDoc { id: PRODUCER_SEQUENCE_DEDUP_HIT, name: "producer-sequence-dedup-hit", doc: "The broker dropped a publish whose producer id and sequence number it had stored already: a retry within one producer session (Kafka's idempotent producer)." },
    SituationDoc { id: PUBLISH_OUT_OF_SEQUENCE_REFUSED, name: "publish-out-of-sequence-refused", doc: "The broker refused an idempotent producer's publish whose sequence number was neither the next one for its producer id nor among the last five it keeps (Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER): an earlier publish is still on its way or was lost, or the copy is older than the last five. Nothing was stored or confirmed: the producer sends it again at its timeout, and it is taken once the gap fills." },
    SituationDoc { id: REPUBLISH_UNDER_NEW_PRODUCER_ID, name: "republish-under-new-producer-id", doc: "An event the broker had stored was published again under another producer id (the relay restarted): the idempotent producer cannot recognise it, and the broker stored it again." },
    SituationDoc { id: REPUBLISH_AFTER_DEDUP_WINDOW, name: "republish-after-dedup-window", doc: "A publish of a known message id arrived after the broker's dedup window and was stored again." },
    SituationDoc { id: LEASE_EXPIRED_REDELIVERY, name: "lease-expired-redelivery", doc: "An unacked delivery's visibility timeout ran out and the broker delivered the message again." },
    SituationDoc { id: LEASE_RENEWED, name: "lease-renewed", doc: "The broker extended an in-flight delivery's lease at its consumer's request (consumer.lease_renewal_ms)." },
    SituationDoc { id: RENEWAL_AFTER_REDELIVERY, name: "renewal-after-redelivery", doc: "A lease renewal arrived for a delivery whose lease had already run out: the message was visible again, or out with another consumer, and the renewal changed nothing." },
    SituationDoc { id: ZOMBIE_PUBLISH_FENCED, name: "zombie-publish-fenced", doc: "The broker refused a publish of a producer's older epoch: a transactional session that has since restarted (a zombie) was still on its way (Kafka's transactional.id fencing), or an idempotent producer's copy from before it bumped its epoch." },
    SituationDoc { id: REPUBLISH_UNDER_NEW_EPOCH, name: "republish-under-new-epoch", doc: "An event the broker had stored was published again under a producer's new epoch (a transactional relay restarted, or an idempotent one bumped its epoch after its library gave a batch up): sequence numbers begin again with the epoch, and the broker stored it again." },
    SituationDoc { id: LATE_ACK, name: "late-ack", doc: "An ack for an older delivery arrived while a newer delivery of the same message was out: the lease ran out before the ack arrived (slow work, or a slow trip of the ack), and the broker accepted it." },
    SituationDoc { id: PRODUCER_ID_EXPIRED, name: "producer-id-expired", doc: "The broker had forgotten an idempotent producer's id (broker.producer_id_expiration_ms after the last publish it stored under it; retries it dropped do not count) and took the id's next publish as the start of a new sequence: a retry of a publish it had stored was stored again." },
    SituationDoc { id: STALE_ACK_REFUSED, name: "stale-ack-refused", doc: "A broker with exactly-once delivery refused an ack that did not name the message's latest delivery: the lease had run out, and the message was visible again or out with another consumer (Pub/Sub: only the latest ack id works)." },
    SituationDoc { id: WORK_DROPPED_AFTER_FAILED_ACK, name: "work-dropped-after-failed-ack", doc: "A consumer that acks with result before it commits learned that its ack failed, and dropped its work uncommitted: the message's newer delivery does it." },
    SituationDoc { id: ACK_RESULT_MISSING, name: "ack-result-missing", doc: "A consumer that acks with result before it commits heard no result in time and dropped its work: if the ack counted, nothing will deliver the message again." },
    SituationDoc { id: ACK_RESENT_FOR_RESULT, name: "ack-resent-for-result", doc: "A consumer that acks with result before it commits heard no result within consumer.tx_timeout_ms and sent the same ack again (Pub/Sub's client library repeats an ack until it has an answer): the broker answers a repeat of the ack that counted with \"counted\", and refuses it if a newer delivery is out." },
    SituationDoc { id: RECORD_RESENT_TOOK_OWN_ROW, name: "record-resent-took-own-row", doc: "A record-first consumer whose ack had let the message go sent its inbox row again (no answer in time), found the row its own first attempt had committed, took it for a duplicate's and skipped the effect: nothing delivers the message again, and the event is lost." },
    SituationDoc { id: DELIVERY_ON_OLD_CONNECTION, name: "delivery-on-old-connection", doc: "A delivery the broker had sent before the consumer restarted (a copy of one the crashed process took, or one that reached no process) arrived after the restart: deliveries travel over the consumer's connection, and the restarted process has a new one, so it was dropped, as TCP drops the old connection's frames; the lease hands the message out again." },
    SituationDoc { id: DELIVERY_FOUND_CONSUMER_BUSY, name: "delivery-found-consumer-busy", doc: "A delivery reached a consumer whose job slots were all taken (16 deliveries in progress): it was neither worked on nor acked, and the broker delivers the message again once its lease runs out. It counts as a delivery received, as a request a service sheds does." },
    SituationDoc { id: CRASH_BETWEEN_ACK_AND_COMMIT, name: "crash-between-ack-and-commit", doc: "A consumer that acks before it commits crashed holding work it had acked (on receipt, or with result and still waiting for it) whose commit it had not sent: if the ack counted, the broker delivers the message to no one again, and the restarted consumer knows nothing of it." },
    SituationDoc { id: TX_RESENT_AFTER_ACK, name: "tx-resent-after-ack", doc: "A consumer whose ack had let the message go (acked on receipt, or acked with result and told it counted) heard no answer from its database within consumer.tx_timeout_ms and sent the same transaction again: nothing else will ever deliver the message, and the first attempt may have committed with only its answer lost." },
    SituationDoc { id: TX_GIVEN_UP_AFTER_ACK, name: "tx-given-up-after-ack", doc: "A consumer whose ack had let the message go heard no answer to the last of its consumer.tx_max_attempts attempts of a transaction and gave the work up: unless an attempt committed, the event is lost." },
    SituationDoc { id: RESENT_TX_APPLIED_AGAIN, name: "resent-tx-applied-again", doc: "A transaction a consumer sent again found the event's effect already in the database (most often its own first attempt, committed with its answer lost) and, reading no inbox, applied it again." },
    SituationDoc { id: BROKER_DEAD_LETTERED, name: "broker-dead-lettered", doc: "The broker moved a message to its dead-letter queue after its last delivery: visible, not lost." },
    SituationDoc { id: BROKER_DISCARDED, name: "broker-discarded", doc: "The broker dropped a message after its last delivery, with no dead-letter queue." },
    SituationDoc { id: REPUBLISH_TAKEN_FOR_FIRST_DELIVERY, name: "republish-taken-for-first-delivery", doc: "A consumer that reads its inbox only for redelivered messages applied a delivery flagged as a first one whose event id was in the inbox: a second copy a producer published is a new message to the broker, and its first delivery carries no redelivered flag." },
    SituationDoc { id: INBOX_HIT, name: "inbox-hit", doc: "A delivery's message id was already in the inbox: the consumer skipped the effect." },
    SituationDoc { id: INBOX_ROW_REAPED, name: "inbox-row-reaped", doc: "The inbox's cleanup deleted rows older than their retention (consumer.inbox_retention_ms)." },
    SituationDoc { id: REDELIVERED_AFTER_INBOX_CLEANUP, name: "redelivered-after-inbox-cleanup", doc: "A message whose effect is committed was delivered again after the cleanup had deleted its inbox row: the retention is shorter than the time duplicates keep coming." },
    SituationDoc { id: UNIQUE_KEY_HIT, name: "unique-key-hit", doc: "An insert under the business key found the row there: \"already exists\" counted as success." },
    SituationDoc { id: REDELIVERED_AFTER_EFFECT, name: "redelivered-after-effect", doc: "A message whose effect is already in the database was processed again: without a dedup check, or with one that had no row to find (the effect was written by a handler that keeps no inbox)." },
    SituationDoc { id: INBOX_ROW_WITHOUT_EFFECT, name: "inbox-row-without-effect", doc: "A delivery found its inbox row committed but its effect missing: the two were written in separate transactions." },
    SituationDoc { id: EFFECT_WITHOUT_INBOX_ROW, name: "effect-without-inbox-row", doc: "A delivery found its effect committed but its inbox row missing: the two were written in separate transactions." },
    SituationDoc { id: OUT_OF_ORDER_WRITE, name: "out-of-order-write", doc: "A set-value event arrived older than the version already stored." },
    SituationDoc { id: PROGRAM_EFFECT_REDELIVERED, name: "program-effect-redelivered", doc: "A message reached an external consumer program again after the program had reported its effect: the program's own dedup decided what happened next." },
    SituationDoc { id: BROKER_TX_TIMED_OUT, name: "broker-tx-timed-out", doc: "The broker aborted an open transaction at its timeout (broker.transaction_timeout_ms): its messages were never shown to a consumer." },
    SituationDoc { id: BROKER_TX_ABORTED, name: "broker-tx-aborted", doc: "The producer aborted its broker transaction after its database commit failed: nothing was announced." },
    SituationDoc { id: COMMIT_AFTER_TX_TIMEOUT, name: "commit-after-tx-timeout", doc: "The producer asked to commit a broker transaction the broker had already aborted at its timeout: the database change is committed, its event is gone." },
    SituationDoc { id: CONSUMER_REDEPLOYED, name: "consumer-redeployed", doc: "A consumer instance was replaced by a rollout's next version (consumer rollouts, one instance after another over `over_ms`): the old process finishes the deliveries it holds, the new one takes every delivery from now on." },
    SituationDoc { id: STALE_WRITE_REJECTED, name: "stale-write-rejected", doc: "A versioned write refused an event older than the stored version." },
];
