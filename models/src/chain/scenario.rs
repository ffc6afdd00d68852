//! The chain's tables in a scenario file: one table per hop, each the table
//! of the model the hop comes from, so a chain scenario reads like a payment
//! scenario followed by a messaging one:
//!
//! - `[client]` (with `[client.retry]`), `[service]`, `[bank]` and
//!   `[[operations]]`: the payment model's tables, parsed by its loader;
//! - `[outbox]`: how the service's bookings reach the broker;
//! - `[broker]`: the messaging model's broker table;
//! - `[accounting]`: the messaging model's consumer table, for the
//!   accounting consumers and their database.
//!
//! The topology is the articles' chain, wired here once: client → service →
//! bank, service → broker → accounting-1..N → accounting-db.

use super::{BookingConfig, BookingService, Publish, ACCOUNTING_BOOKING};
use crate::core::input::{invalid, one_of, path, positive_duration_us, Invalid, LoadError};
use crate::core::{BuildInput, Built, Carries, DesignWarning, Unused};
use crate::messaging::republish;
use crate::messaging::scenario::{self as queue, BrokerDto, ConsumerDto};
use crate::messaging::{self, BrokerConfig, ConsumerConfig, InboxConfig};
use crate::messaging::{Broker, Consumer, ConsumerDb, Handler};
use crate::payment::ServiceConfig;
use crate::payment::{self, Bank, BankConfig, Client, ClientConfig, Idempotency, Mode};
use serde::Deserialize;
use sim::ActorId;

pub(crate) const TABLES: &[&str] = &[
    "client",
    "service",
    "bank",
    "operations",
    "outbox",
    "broker",
    "accounting",
];

const DAY_MS: u64 = 24 * 3600 * 1000;

// The chain's actors, in world order.
const SERVICE: ActorId = 1;
const BANK: ActorId = 2;
const BROKER: ActorId = 3;
const ACCOUNTING_DB: ActorId = 4;
const FIRST_ACCOUNTING: ActorId = 5;

#[derive(Deserialize, Debug, Default)]
#[serde(default)]
struct FileDto {
    outbox: OutboxDto,
    broker: BrokerDto,
    accounting: ConsumerDto,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
struct OutboxDto {
    write: String,
    publish_timeout_ms: u64,
}

impl Default for OutboxDto {
    fn default() -> Self {
        OutboxDto {
            write: "outbox".into(),
            publish_timeout_ms: 5_000,
        }
    }
}

/// The chain's actors from its tables: the payment hops, the booking
/// service's outbox, the broker and accounting. Each table is checked in
/// the order its errors have always come in.
pub(crate) fn build<N, W>(input: &BuildInput<'_>) -> Result<Built<N>, LoadError>
where
    N: From<Client<W>>
        + From<BookingService<W>>
        + From<Bank<W>>
        + From<Broker<W>>
        + From<Consumer<W>>
        + From<ConsumerDb<W>>,
    W: Carries<payment::Msg> + Carries<messaging::Msg>,
{
    let (client, service, bank) = payment::scenario::hops(input, SERVICE, BANK)?;
    if service.mode != Mode::Action {
        return Err(invalid(
            path(&["service", "mode"]),
            "the chain announces every booking, and only \"action\" mode books a payment",
            "remove `mode` from [service], or write mode = \"action\"",
        )
        .into());
    }
    let d: FileDto = toml::from_str(input.text)?;
    let booking = booking(&d.outbox, &service)?;
    let queue = Queue::of(&d, input.text)?;
    let hops = Hops {
        client,
        service,
        bank,
        booking,
    };
    let mut design_warnings = hops.design_warnings(input);
    design_warnings.extend(queue.design_warnings(input, &hops.booking));
    let unused = unused(&d, input.text);
    let actors = actors(hops, queue);
    Ok(Built {
        actors,
        actors_hint: " (broker.consumers sets how many accounting consumers)",
        design_warnings,
        unused,
    })
}

/// `[outbox]`: how the booking service's bookings reach the broker, as far
/// as its `[service]` settings allow.
fn booking(o: &OutboxDto, service: &ServiceConfig) -> Result<BookingConfig, Invalid> {
    let oat = |k| path(&["outbox", k]);
    let publish = one_of(
        &o.write,
        &[
            ("outbox", Publish::Outbox),
            ("event-first", Publish::EventFirst),
        ],
        oat("write"),
    )?;
    let books_on_arrival = matches!(
        service.idempotency,
        Idempotency::ClaimSameTx | Idempotency::None
    );
    if publish == Publish::EventFirst && service.queue_max > 0 {
        return Err(invalid(
            path(&["service", "queue_max"]),
            "event first runs the request once the broker confirms its event, and a queued request would not book then",
            "remove queue_max from [service], or write the event through the outbox",
        ));
    }
    if publish == Publish::EventFirst && !books_on_arrival {
        return Err(invalid(
            oat("write"),
            "event first publishes before the transaction that books on arrival, and this service books in a later step",
            "use service.idempotency = \"claim-same-tx\" or \"none\" with event first",
        ));
    }
    Ok(BookingConfig {
        publish,
        broker: BROKER,
        publish_timeout_us: positive_duration_us(
            o.publish_timeout_ms,
            DAY_MS,
            oat("publish_timeout_ms"),
            "write publish_timeout_ms = 5000",
        )?,
    })
}

/// The payment hops and the booking service's outbox.
struct Hops {
    client: ClientConfig,
    service: ServiceConfig,
    bank: BankConfig,
    booking: BookingConfig,
}

impl Hops {
    /// The payment model's design warnings for the chain's one client.
    fn design_warnings(&self, input: &BuildInput<'_>) -> Vec<DesignWarning> {
        let clients = ["client".to_string()];
        let restarts = payment::scenario::Restarts::of(input.text, &clients, input.fault_phase_us);
        payment::scenario::design_warnings(
            std::slice::from_ref(&self.client),
            &self.service,
            &self.bank,
            input.delays,
            &restarts,
            // Its bookings go on to accounting: the bank's key does not cover them.
            (&clients, true),
        )
    }
}

/// `[broker]` and `[accounting]`: the broker and the accounting consumers.
struct Queue {
    consumers: u32,
    broker: BrokerConfig,
    consumer: ConsumerConfig,
    inbox: InboxConfig,
}

impl Queue {
    fn of(d: &FileDto, text: &str) -> Result<Queue, Invalid> {
        let consumers = queue::consumer_count(&d.broker)?;
        let broker = queue::broker(
            &d.broker,
            (0..consumers).map(|i| FIRST_ACCOUNTING + i).collect(),
        )?;
        queue::refuse_program(&d.accounting, text, "accounting", "chain")?;
        let consumer = queue::consumer(&d.accounting, "accounting", BROKER, ACCOUNTING_DB)?;
        let inbox = queue::inbox(&d.accounting, "accounting")?;
        if matches!(consumer.handler, Handler::SetValue { .. }) {
            return Err(invalid(
                path(&["accounting", "handler"]),
                "accounting books every payment; a set-value handler would keep only the last one of a claim",
                "use handler = \"inbox-same-tx\" (or \"effect\", \"unique-key\", an inbox variant)",
            ));
        }
        Ok(Queue {
            consumers,
            broker,
            consumer,
            inbox,
        })
    }

    /// The accounting consumers' names.
    fn names(&self) -> Vec<String> {
        (1..=self.consumers)
            .map(|i| format!("accounting-{i}"))
            .collect()
    }

    /// The queue's design warnings, and the republish rules for the
    /// booking service's relay and the accounting consumers.
    fn design_warnings(
        &self,
        input: &BuildInput<'_>,
        booking: &BookingConfig,
    ) -> Vec<DesignWarning> {
        let (consumer, accounting) = (&self.consumer, self.names());
        let queue_spreads = queue::Spreads {
            broker_restart_ms: republish::broker_restart_ms(input.text),
            ..queue::Spreads::of(input.delays, &accounting, "accounting-db")
        };
        let mut design_warnings = queue::design_warnings(
            &self.broker,
            consumer,
            &self.inbox,
            // The booking service's relay publishes without producer ids.
            ("accounting", queue::ProducerIds::None, true),
            queue_spreads,
        );
        design_warnings.extend(republish::ack_before_commit_under_crashes(
            input.text,
            consumer.ack,
            ("accounting", "accounting-"),
        ));
        design_warnings.extend(republish::commit_resent_without_dedup(
            input.text,
            consumer,
            ("accounting", "accounting-db", &accounting),
            input.delays,
        ));
        design_warnings.extend(republish::ack_result_lost_drops_work(
            input.text,
            consumer,
            ("accounting", &accounting),
            input.delays,
        ));
        // The booking service's outbox relay republishes to accounting's inbox
        // until the broker's confirmation gets through, as the messaging relay does.
        let reads_inbox = consumer.handler.reads_inbox_always();
        if reads_inbox && booking.publish == Publish::Outbox {
            design_warnings.extend(republish::inbox_retention_below_republish(
                input.text,
                (
                    self.inbox.retention_us / sim::US_PER_MS,
                    queue::copy_late_ms(input.delays, "service", &queue_spreads, consumer),
                ),
                &republish::Relay {
                    actor: "service",
                    stamps: republish::Stamps::Nothing,
                    publish_timeout_ms: booking.publish_timeout_us / sim::US_PER_MS,
                    timeout_key: "outbox.publish_timeout_ms",
                },
                "accounting",
            ));
        }
        design_warnings
    }
}

/// The chain's actors in world order (`SERVICE`, `BANK`, ... above).
fn actors<N, W>(hops: Hops, queue: Queue) -> Vec<(String, N)>
where
    N: From<Client<W>>
        + From<BookingService<W>>
        + From<Bank<W>>
        + From<Broker<W>>
        + From<Consumer<W>>
        + From<ConsumerDb<W>>,
    W: Carries<payment::Msg> + Carries<messaging::Msg>,
{
    let mut actors = vec![
        ("client".to_string(), N::from(Client::new(hops.client))),
        (
            "service".to_string(),
            N::from(BookingService::new(hops.service, hops.booking)),
        ),
        ("bank".to_string(), N::from(Bank::new(hops.bank))),
        ("broker".to_string(), N::from(Broker::new(queue.broker))),
        (
            "accounting-db".to_string(),
            N::from(ConsumerDb::new(&ACCOUNTING_BOOKING).with_inbox(queue.inbox)),
        ),
    ];
    for i in 1..=queue.consumers {
        actors.push((
            format!("accounting-{i}"),
            N::from(Consumer::new(queue.consumer)),
        ));
    }
    actors
}

/// The keys the chain's settings leave without effect: the payment hops',
/// accounting's, and the broker's.
fn unused(d: &FileDto, text: &str) -> Vec<Unused> {
    let mut unused = payment::scenario::unused_in(text);
    unused.extend(queue::consumer_unused(&d.accounting, "accounting"));
    // Only the broker's delivery cap is the chain's to vary: its booking
    // service publishes through its outbox or first, never in a broker
    // transaction and never with a producer id.
    unused.extend(queue::broker_unused(
        &d.broker,
        true,
        Some((true, true)),
        None,
    ));
    // Its relay publishes plain messages (booking.rs): no transaction to
    // time out, no id to expire. An expiry of 0, "never", says so anyway.
    for (key, what, inert) in [
        ("transaction_timeout_ms", "in a broker transaction", None),
        ("producer_id_expiration_ms", "with a producer id", Some("0")),
    ] {
        let u = Unused::new(
            &["broker", key],
            &[],
            format!("the chain's booking service never publishes {what}: only the messaging model's producer does"),
            "remove it; a messaging-model scenario has producers that read it",
        );
        unused.push(match inert {
            Some(v) => u.unless(v),
            None => u,
        });
    }
    unused
}
