//! The messaging model's design warnings, read from its tables once they
//! are validated: the queue's own (`messaging/warnings.rs`), the republish
//! rules under the scenario's faults (`republish.rs`) and the relay's
//! idempotence.

use crate::core::{BuildInput, DesignWarning};
use crate::messaging::republish::{self, Stamps};
use crate::messaging::warnings::{
    self, copy_late_ms, design_warnings as queue_design_warnings, ProducerIds, Spreads,
};
use crate::messaging::{BrokerConfig, ConsumerConfig, InboxConfig, WriteMode};

/// What the design warnings read of a messaging scenario.
pub(super) struct Design<'a> {
    pub broker: &'a BrokerConfig,
    pub consumer: &'a ConsumerConfig,
    pub inbox: &'a InboxConfig,
    pub mode: WriteMode,
    pub consumers: u32,
    /// Idempotence asked for (`true` or `"kafka-default"`), and whether
    /// it is in effect (off above five in flight when left at the default).
    pub idempotence: (bool, bool),
    pub transactional: bool,
    pub max_in_flight: u32,
    pub publish_timeout_ms: u64,
    pub publish_attempts: u32,
    /// The relay library's delivery timeout, where it has one
    /// (`ProducerConfig::delivery_timeout_ms`).
    pub delivery_timeout_ms: Option<u64>,
}

impl Design<'_> {
    /// What the relay stamps on its publishes.
    fn ids(&self) -> ProducerIds {
        match (self.transactional, self.idempotence.1) {
            (true, _) => ProducerIds::Transactional,
            (false, true) => ProducerIds::Idempotent,
            (false, false) => ProducerIds::None,
        }
    }
}

/// The design warnings of a scenario whose consumers are built in (a
/// program's own dedup is its business: it gets none).
pub(super) fn design_warnings(input: &BuildInput<'_>, d: &Design<'_>) -> Vec<DesignWarning> {
    let names: Vec<String> = (1..=d.consumers).map(|i| format!("consumer-{i}")).collect();
    let mut spreads = Spreads::of(input.delays, &names, "consumer-db");
    spreads.broker_restart_ms = republish::broker_restart_ms(input.text);
    let ids = d.ids();
    // A second copy of one event, though the relay stamps its publishes: a
    // restart, or a resend after the library gave a batch up.
    let given_up = d.delivery_timeout_ms.is_some_and(|t| {
        republish::batch_given_up_in_cut(input.text, "producer", (d.publish_timeout_ms, t))
    });
    let second_copies = republish::producer_restarts(input.text) || given_up;
    let mut found = queue_design_warnings(
        d.broker,
        d.consumer,
        d.inbox,
        ("consumer", ids, second_copies),
        spreads,
    );
    found.extend(inbox_rules(input, d, &spreads));
    found.extend(republish::ack_before_commit_under_crashes(
        input.text,
        d.consumer.ack,
        ("consumer", "consumer-"),
    ));
    found.extend(republish::commit_resent_without_dedup(
        input.text,
        d.consumer,
        ("consumer", "consumer-db", &names),
        input.delays,
    ));
    found.extend(republish::ack_result_lost_drops_work(
        input.text,
        d.consumer,
        ("consumer", &names),
        input.delays,
    ));
    found.extend(warnings::idempotence_off_above_window(
        (d.idempotence.0, d.transactional),
        d.mode == WriteMode::Outbox,
        d.max_in_flight,
    ));
    if d.mode == WriteMode::Outbox && ids != ProducerIds::None {
        found.extend(republish::producer_id_expiry_below_retries(
            input.text,
            d.broker.producer_id_expiration_ms,
            (
                d.publish_timeout_ms,
                input.delays.spread_ms(&[vec!["producer", "broker"]]),
            ),
            d.delivery_timeout_ms,
        ));
    }
    found
}

/// An inbox that forgets before the producer's last copy can reach it: an
/// outbox relay republishes without end, a dual write a bounded number of
/// times, each retry a new copy at the broker. Only an inbox read on every
/// delivery is concerned.
fn inbox_rules(input: &BuildInput<'_>, d: &Design<'_>, spreads: &Spreads) -> Option<DesignWarning> {
    if !d.consumer.handler.reads_inbox_always() {
        return None;
    }
    let retention_ms = d.inbox.retention_us / sim::US_PER_MS;
    let late_ms = copy_late_ms(input.delays, "producer", spreads, d.consumer);
    match d.mode {
        WriteMode::Outbox => {
            let stamps = match (d.ids(), d.delivery_timeout_ms) {
                (ProducerIds::None, _) => Stamps::Nothing,
                (_, Some(delivery_timeout_ms)) => Stamps::PerBatch {
                    delivery_timeout_ms,
                },
                (_, None) => Stamps::PerSession,
            };
            let relay = republish::Relay {
                actor: "producer",
                stamps,
                publish_timeout_ms: d.publish_timeout_ms,
                timeout_key: "producer.publish_timeout_ms",
            };
            republish::inbox_retention_below_republish(
                input.text,
                (retention_ms, late_ms),
                &relay,
                "consumer",
            )
        }
        WriteMode::StateFirst | WriteMode::EventFirst => {
            republish::inbox_retention_below_publish_retries(
                (retention_ms, late_ms),
                (d.publish_attempts, d.publish_timeout_ms),
                "consumer",
            )
        }
        WriteMode::BrokerTransaction => None,
    }
}
