//! The ledger's record of one operation (or one entity): what the business
//! wanted, what landed in the outside world, and what the client was told.

use crate::core::obs::{Ending, Site, MAX_LAYERS};
use crate::core::op::Op;
use sim::TimeUs;

/// Everything the ledger knows about one operation (or one entity).
#[derive(Clone, Copy, Debug)]
pub struct OpRecord {
    /// The operation (or entity) this record is about.
    pub op: Op,
    // --- what the business wanted, at its client
    /// A client reported an intent for it.
    pub(crate) intended: bool,
    /// The payload the client asked for.
    pub payload: u32,
    /// The window the operation must end within (0: none).
    pub window_ms: u64,
    /// When the intent was reported.
    pub(crate) started_us: TimeUs,
    /// The client actor that reported it: with client groups and rollouts,
    /// the version that started the operation (`client-NAME`).
    pub started_by: Option<sim::ActorId>,
    /// Attempts the client sent.
    pub attempts: u32,
    /// The last attempt whose outcome the client recorded: it waits for no
    /// answer to this one or any before it.
    pub closed: u32,
    /// A final error (422) was answered: any later attempt retries a rejected input.
    pub rejected: bool,
    /// The payload of the attempt the client was told is done.
    pub told_done: Option<u32>,
    /// How it ended at its client, once it did.
    pub ending: Option<Ending>,
    /// When it ended.
    pub(crate) ended_us: TimeUs,
    /// Attempts sent when it ended last: a later one (a reconciliation
    /// job's re-drive) was sent after the ending, for its effect.
    pub(crate) ended_attempts: u32,
    // --- what landed in the outside world
    /// Effects that landed.
    pub effects: u32,
    /// Their payloads added up.
    pub(crate) effect_total: u64,
    /// Where they landed.
    pub site: Option<&'static Site>,
    /// When the first effect landed, and with which payload.
    pub(crate) first_effect: Option<(TimeUs, u32)>,
    /// Reversals (refunds) that took effects back where they landed.
    pub reversals: u32,
    /// Their payloads added up.
    pub reversal_total: u64,
    /// The latest attempt whose answer was produced while the outside world
    /// already held the state the operation asks for (a DELETE that found
    /// its resource gone); 0: none. Not an effect.
    pub held: u32,
    // --- an event owed by a committed state change
    /// A producer committed the state change that owes this event.
    pub committed: bool,
    /// When.
    pub(crate) committed_us: TimeUs,
    /// The entity the change is about.
    pub entity: Option<Op>,
    /// The entity's version after the change.
    pub version: u32,
    /// A broker stored the event.
    pub accepted: bool,
    /// A broker dead-lettered it.
    pub dead: bool,
    /// A set-value write of it landed.
    pub written: bool,
    /// A newer version superseded it.
    pub superseded: bool,
    // --- an entity: the newest committed write and what the consumer holds
    /// For an entity: the newest committed (version, value).
    pub newest: Option<(u32, u32)>,
    /// Whether that newest event went to a dead-letter queue.
    pub(crate) newest_dead: bool,
    /// For an entity: the (version, value) the consumers' database holds.
    pub current: Option<(u32, u32)>,
    /// For an operation a client asked for: the events about it that took
    /// effect downstream (the chain's bookings in accounting of one claim).
    /// The payment happened once, so its booking must too.
    pub announced: u32,
    /// What those events booked, their first effects' payloads added up
    /// (`books-agree` holds it to the operation's own effects).
    pub announced_total: u64,
    /// The first of those events.
    pub(crate) first_announcement: Option<Op>,
    // --- requests each layer received for this operation
    /// Requests each layer received for it, by [`Layer::index`](crate::core::obs::Layer::index).
    pub received: [u32; MAX_LAYERS],
}

impl OpRecord {
    pub(super) fn new(op: Op) -> OpRecord {
        OpRecord {
            op,
            intended: false,
            started_by: None,
            payload: 0,
            window_ms: 0,
            started_us: 0,
            attempts: 0,
            closed: 0,
            rejected: false,
            told_done: None,
            ending: None,
            ended_us: 0,
            ended_attempts: 0,
            effects: 0,
            effect_total: 0,
            site: None,
            first_effect: None,
            reversals: 0,
            reversal_total: 0,
            held: 0,
            committed: false,
            committed_us: 0,
            entity: None,
            version: 0,
            accepted: false,
            dead: false,
            written: false,
            superseded: false,
            newest: None,
            newest_dead: false,
            current: None,
            announced: 0,
            announced_total: 0,
            first_announcement: None,
            received: [0; MAX_LAYERS],
        }
    }

    /// What is left of its effects once the reversals are taken off: the
    /// net effect (negative: more was taken back than landed).
    pub fn net_total(&self) -> i128 {
        i128::from(self.effect_total) - i128::from(self.reversal_total)
    }

    /// The event took effect in some form: applied, written, or made moot by
    /// a newer version of its entity.
    pub fn handled(&self) -> bool {
        self.effects > 0 || self.written || self.superseded
    }

    /// An effect this operation owes and that nobody will ever deliver or
    /// reconcile: told done, or given up silently, or a committed event that is
    /// neither handled nor in a dead-letter queue.
    ///
    /// An operation judged by the state it asks for (a DELETE) owes nothing
    /// once that state was seen holding as one of its attempts was answered:
    /// the resource is gone, whoever removed it.
    pub fn lost(&self) -> bool {
        let client_owed = self.told_done.is_some() || self.ending == Some(Ending::Abandoned);
        let event_owed = self.committed && !self.dead;
        (client_owed && self.effects == 0 && self.held == 0) || (event_owed && !self.handled())
    }

    /// The answer the client concluded from last (the attempt it closed
    /// last, as a "done" or a "failed" is judged right after it) was
    /// produced while the state the operation asks for already held. The
    /// state is judged when the answer was made, not at the end of the run:
    /// a resource re-created since does not make a true "gone" false.
    pub(crate) fn held_when_answered(&self) -> bool {
        self.held != 0 && self.held == self.closed
    }

    /// The client no longer waits for an answer to attempt `attempt`: it
    /// recorded that attempt's outcome (a timeout too), sent a later one, or
    /// ended the operation. Work on it is work for nobody.
    ///
    /// An attempt sent after the operation ended (a reconciliation job's
    /// re-drive) is waited for by nobody's answer, but its effect is the
    /// job's point: it is work for nobody only once stale like any other.
    pub(crate) fn stopped_waiting(&self, attempt: u32) -> bool {
        (self.ending.is_some() && attempt <= self.ended_attempts)
            || attempt < self.attempts
            || (attempt > 0 && attempt <= self.closed)
    }
}
