//! `[broker]` and a consumer's table (`[consumer]`, or the chain's
//! `[accounting]`): the queue the messaging and chain models share, each
//! table converted into its actor's settings with its errors located at
//! the table's keys.

use super::DAY_MS;
use crate::core::input::{count_in, duration_us, one_of, path, positive_duration_us, Invalid};
use crate::external::DEFAULT_HANDLER_TIMEOUT_MS;
use crate::messaging::{
    AckMode, AtMaxDeliveries, BrokerConfig, ConsumerConfig, Handler, InboxConfig,
};
use serde::Deserialize;
use sim::ActorId;

/// Most consumers `[broker] consumers` may ask for.
pub(crate) const MAX_CONSUMERS: u64 = 64;
/// Most rows an inbox bound may name: far above any run's messages.
pub(crate) const MAX_INBOX_ROWS: u64 = 1_000_000;
/// Most sends of one consumer transaction (`tx_max_attempts`).
const MAX_TX_ATTEMPTS: u64 = 100;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct BrokerDto {
    pub(super) visibility_timeout_ms: u64,
    pub(super) max_deliveries: u64,
    pub(super) at_max_deliveries: String,
    pub(super) dedup_window_ms: u64,
    pub(super) consumers: u64,
    pub(super) transaction_timeout_ms: u64,
    pub(super) exactly_once_delivery: bool,
    pub(super) producer_id_expiration_ms: u64,
}

impl Default for BrokerDto {
    fn default() -> Self {
        BrokerDto {
            visibility_timeout_ms: 30_000,
            max_deliveries: 0,
            at_max_deliveries: "dead-letter".into(),
            dedup_window_ms: 0,
            consumers: 1,
            transaction_timeout_ms: 60_000,
            exactly_once_delivery: false,
            producer_id_expiration_ms: 0,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ConsumerDto {
    pub(super) handler: String,
    pub(super) ack: String,
    pub(super) processing_ms: u64,
    pub(super) processing_jitter_ms: u64,
    pub(super) tx_timeout_ms: u64,
    pub(super) tx_max_attempts: u64,
    /// A user's program in the consumer's place (docs/protocol.md).
    pub(super) program: Option<Vec<String>>,
    pub(super) handler_timeout_ms: u64,
    /// The program keeps its state in files of a folder idemsim gives it.
    pub(super) state_folder: bool,
    pub(super) inbox_retention_ms: u64,
    pub(super) inbox_max_rows: u64,
    pub(super) lease_renewal_ms: u64,
}

impl Default for ConsumerDto {
    fn default() -> Self {
        ConsumerDto {
            handler: "inbox-same-tx".into(),
            ack: "after-commit".into(),
            processing_ms: 100,
            processing_jitter_ms: 0,
            tx_timeout_ms: 5_000,
            // Spring Kafka's DefaultErrorHandler: ten attempts.
            tx_max_attempts: 10,
            program: None,
            handler_timeout_ms: DEFAULT_HANDLER_TIMEOUT_MS,
            state_folder: false,
            inbox_retention_ms: 0,
            inbox_max_rows: 0,
            lease_renewal_ms: 0,
        }
    }
}

/// How many consumers `[broker] consumers` asks for.
pub(crate) fn consumer_count(b: &BrokerDto) -> Result<u32, Invalid> {
    let at = path(&["broker", "consumers"]);
    Ok(count_in(b.consumers, 1, MAX_CONSUMERS, at, "consumers")? as u32)
}

/// `[broker]`, delivering to the actors `consumers`.
pub(crate) fn broker(b: &BrokerDto, consumers: Vec<ActorId>) -> Result<BrokerConfig, Invalid> {
    let bat = |k| path(&["broker", k]);
    Ok(BrokerConfig {
        consumers,
        visibility_timeout_ms: positive_duration_us(
            b.visibility_timeout_ms,
            12 * 3600 * 1000,
            bat("visibility_timeout_ms"),
            "SQS and NATS default to 30 s: visibility_timeout_ms = 30000",
        )? / 1000,
        max_deliveries: count_in(
            b.max_deliveries,
            0,
            // Service Bus's MaxDeliveryCount is a .NET int with no maximum
            // of its own (docs/fidelity.md#servicebus-max-delivery-count);
            // the SQS and Pub/Sub presets hold their own, lower, limits.
            u64::from(i32::MAX.unsigned_abs()),
            bat("max_deliveries"),
            "deliveries",
        )? as u32,
        at_max_deliveries: one_of(
            &b.at_max_deliveries,
            &[
                ("dead-letter", AtMaxDeliveries::DeadLetter),
                ("discard", AtMaxDeliveries::Discard),
            ],
            bat("at_max_deliveries"),
        )?,
        // Service Bus keeps duplicate detection history for up to 7 days.
        dedup_window_ms: duration_us(b.dedup_window_ms, 7 * DAY_MS, bat("dedup_window_ms"))? / 1000,
        transaction_timeout_ms: positive_duration_us(
            b.transaction_timeout_ms,
            DAY_MS,
            bat("transaction_timeout_ms"),
            "Kafka aborts an open transaction after 60 s by default: transaction_timeout_ms = 60000",
        )? / 1000,
        exactly_once_delivery: b.exactly_once_delivery,
        producer_id_expiration_ms: duration_us(
            b.producer_id_expiration_ms,
            365 * DAY_MS,
            bat("producer_id_expiration_ms"),
        )? / 1000,
    })
}

/// A consumer's table (`[consumer]`, or `table` in a composed model), for
/// consumers that take deliveries from `broker` and write to `db`.
pub(crate) fn consumer(
    c: &ConsumerDto,
    table: &'static str,
    broker: ActorId,
    db: ActorId,
) -> Result<ConsumerConfig, Invalid> {
    let cat = |k| path(&[table, k]);
    Ok(ConsumerConfig {
        broker,
        db,
        handler: one_of(
            &c.handler,
            &[
                ("effect", Handler::Effect),
                ("inbox-same-tx", Handler::InboxSameTx),
                ("inbox-if-redelivered", Handler::InboxIfRedelivered),
                ("inbox-separate-tx", Handler::InboxSeparateTx),
                ("inbox-record-first", Handler::InboxRecordFirst),
                ("unique-key", Handler::UniqueKey),
                ("set-value", Handler::SetValue { versioned: false }),
                ("set-value-versioned", Handler::SetValue { versioned: true }),
            ],
            cat("handler"),
        )?,
        ack: one_of(
            &c.ack,
            &[
                ("after-commit", AckMode::AfterCommit),
                ("before-commit", AckMode::BeforeCommit),
                ("checked-before-commit", AckMode::CheckedBeforeCommit),
            ],
            cat("ack"),
        )?,
        processing_ms: duration_us(c.processing_ms, DAY_MS, cat("processing_ms"))? / 1000,
        processing_jitter_ms: duration_us(
            c.processing_jitter_ms,
            DAY_MS,
            cat("processing_jitter_ms"),
        )? / 1000,
        tx_timeout_ms: positive_duration_us(
            c.tx_timeout_ms,
            DAY_MS,
            cat("tx_timeout_ms"),
            "write tx_timeout_ms = 5000",
        )? / 1000,
        tx_max_attempts: count_in(
            c.tx_max_attempts,
            1,
            MAX_TX_ATTEMPTS,
            cat("tx_max_attempts"),
            "attempts",
        )? as u8,
        lease_renewal_ms: duration_us(c.lease_renewal_ms, DAY_MS, cat("lease_renewal_ms"))? / 1000,
        // Labelled by `Consumer::with_rollouts` when the consumer has versions.
        version: 0,
    })
}

/// The inbox's cleanup from a consumer's table. A handler that keeps no
/// inbox has nothing to clean, and the keys are not refused beside it: so
/// that `--set consumer.handler=effect` can take the inbox out of a design
/// that cleans one (a protection, a sweep) without editing the file.
pub(crate) fn inbox(c: &ConsumerDto, table: &'static str) -> Result<InboxConfig, Invalid> {
    let cat = |k| path(&[table, k]);
    let retention_us = duration_us(
        c.inbox_retention_ms,
        365 * DAY_MS,
        cat("inbox_retention_ms"),
    )?;
    let max_rows = count_in(
        c.inbox_max_rows,
        0,
        MAX_INBOX_ROWS,
        cat("inbox_max_rows"),
        "rows",
    )? as u32;
    Ok(InboxConfig {
        retention_us,
        max_rows,
    })
}
