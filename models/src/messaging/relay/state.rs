//! What the relay works on: the outbox rows (durable, in the producer's
//! database), the batch in flight and its numbers (volatile), and its timers.

use super::super::msg::Event;
use sim::TimeUs;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
/// A row of the transactional outbox. The state panel shows the producer id
/// and epoch only where the relay is an idempotent or transactional producer.
pub struct OutboxRow {
    /// The event to publish.
    pub ev: Event,
    /// The relay marked it sent.
    pub sent: bool,
    /// Publish attempts, a column many relays keep for monitoring.
    pub attempts: u32,
    /// The producer id of the session that last published it (0: none).
    /// The broker hands out producer ids; here a session takes one above
    /// every id its outbox names, which is new to the broker wherever it
    /// matters: an id no row names was never used for a publish.
    #[serde(skip_serializing_if = "crate::core::shown::is_zero")]
    pub pid: u32,
    /// A transactional producer's epoch when it last published the row (0:
    /// none). A session takes the epoch above every one its rows name, as
    /// the broker's transaction coordinator bumps it at every start; an
    /// epoch no row names was never used for a publish.
    #[serde(skip_serializing_if = "crate::core::shown::is_zero")]
    pub epoch: u32,
}

/// Volatile: one row's publish the relay has out. The state panel shows the
/// delivery timeout's fields only where the relay has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct InFlight {
    /// The outbox row.
    pub row: usize,
    /// Its sequence number in this session (an idempotent producer's).
    pub seq: u32,
    /// The broker confirmed it.
    pub confirmed: bool,
    /// When it is sent again without a confirmation.
    pub deadline_us: TimeUs,
    /// When the library gives its batch up: its first send plus the
    /// delivery timeout (0: never, a relay without one).
    #[serde(skip_serializing_if = "crate::core::shown::is_zero")]
    pub expires_us: TimeUs,
    /// The library gave the batch up (`send()` failed): the row's next
    /// publish is a new record.
    #[serde(skip_serializing_if = "crate::core::shown::is_false")]
    pub given_up: bool,
}

/// Volatile: the rows the relay is publishing, with their publishes confirmed or not.
#[derive(Clone, Debug, Default)]
pub struct RelayState {
    /// The rows being published, oldest first: at most `max_in_flight`,
    /// under consecutive sequence numbers.
    pub rows: Vec<InFlight>,
    /// The process restarted with a published but unmarked row: the relay's
    /// next publish of it is a republish after a crash.
    pub unmarked_after_restart: bool,
    /// As an idempotent producer: this session's producer id (0 otherwise).
    pub pid: u32,
    /// The sequence numbers this session handed out: the rows being
    /// published have the last ones, and their retries repeat them.
    pub next_seq: u32,
    /// As a transactional producer: this session's epoch (0 otherwise); an
    /// idempotent one's, bumped after a batch was given up.
    pub epoch: u32,
    /// A batch was given up while its sequence number may be stored: no new
    /// row goes out until the epoch is bumped (Kafka's unresolved sequence).
    pub sequence_unresolved: bool,
}

/// The state panel's fields: a relay with one row out shows it as `row`,
/// (row, confirmed), as the panels of a relay publishing a row at a time
/// always have, several as a table; the producer's numbers only where the
/// relay is an idempotent or transactional producer.
impl serde::Serialize for RelayState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let one = self.rows.len() <= 1;
        let row = self.rows.first().map(|f| (f.row, f.confirmed));
        let given_up = one && self.rows.first().is_some_and(|f| f.given_up);
        let mut d = s.serialize_struct("RelayState", 8)?;
        if one {
            d.serialize_field("row", &row)?;
        }
        if given_up {
            d.serialize_field("given_up", &given_up)?;
        }
        if !one {
            d.serialize_field("rows", &self.rows)?;
        }
        d.serialize_field("unmarked_after_restart", &self.unmarked_after_restart)?;
        if self.pid != 0 {
            d.serialize_field("pid", &self.pid)?;
            d.serialize_field("next_seq", &self.next_seq)?;
        }
        if self.epoch != 0 {
            d.serialize_field("epoch", &self.epoch)?;
        }
        if self.sequence_unresolved {
            d.serialize_field("sequence_unresolved", &self.sequence_unresolved)?;
        }
        d.end()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The relay's timers.
pub enum RelayTimer {
    /// Look for the next unsent outbox row.
    Poll,
    /// A publish got no confirmation in time (the earliest one out).
    Timeout,
    /// Mark the confirmed rows sent, a transaction of its own.
    Mark,
}

impl fmt::Display for RelayTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RelayTimer::Poll => "relay poll",
            RelayTimer::Timeout => "relay publish timeout",
            RelayTimer::Mark => "relay: mark the row sent",
        })
    }
}

sim::timer_slots!(RelayTimer {
    Poll,
    Timeout,
    Mark,
});
