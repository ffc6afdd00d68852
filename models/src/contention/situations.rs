//! The contention model's situations.
//!
//! Ids are numbered locally, `FIRST + n`: the registry gives the model its
//! `FIRST` (the ids after those of the models it lists before this one), so
//! each stays a `const` that actors report and match on, and no two models
//! share one. `COUNT` (the highest local id plus one) tells the registry
//! how many ids the model takes.

use crate::core::SituationDoc;
use sim::SituationId;

/// This model's first situation id, given by the registry.
const FIRST: SituationId = <super::Contention as crate::core::ids::Registered>::FIRST_SITUATION;

/// How many ids from [`FIRST`] this model uses, gaps included.
pub(crate) const COUNT: u16 = crate::core::ids::span(ALL, FIRST);

/// A compare-and-set found the row at another version.
pub const CAS_CONFLICT: SituationId = FIRST;
/// A client tried its write again.
pub const WRITE_RETRIED: SituationId = FIRST + 1;
/// A backoff reached its cap.
pub const BACKOFF_AT_CAP: SituationId = FIRST + 2;
/// A blind write landed over a version it never read.
pub const STALE_BLIND_WRITE: SituationId = FIRST + 3;
/// A client whose answer was lost found its own write when it read again.
pub const OWN_WRITE_FOUND: SituationId = FIRST + 4;
/// A client gave its write up into a dead letter.
pub const WRITE_DEAD_LETTERED: SituationId = FIRST + 5;
/// A client restarted with its write pending and resumed it.
pub const WRITE_RESUMED_AFTER_RESTART: SituationId = FIRST + 6;
/// A write came again under a request id the row already held.
pub const REQUEST_ID_RECOGNIZED: SituationId = FIRST + 7;
/// A blind write that had landed came again (a copy, or a retry from a
/// fresh read) and found the row at the value it sets: it changed nothing.
pub const BLIND_WRITE_CHANGED_NOTHING: SituationId = FIRST + 8;

/// The contention model's situations.
pub static ALL: &[SituationDoc] = &[
    SituationDoc { id: CAS_CONFLICT, name: "cas-conflict", doc: "A compare-and-set found the row at a newer version than its read: nothing was written, and the client backs off." },
    SituationDoc { id: WRITE_RETRIED, name: "write-retried", doc: "A client read the row again for a second or later attempt of its write, after a backoff." },
    SituationDoc { id: BACKOFF_AT_CAP, name: "backoff-at-cap", doc: "A client's exponential backoff reached its cap: from here on its waits stop growing." },
    SituationDoc { id: STALE_BLIND_WRITE, name: "stale-blind-write", doc: "A write without a condition replaced a version its read had not seen: the update that made that version is lost." },
    SituationDoc { id: OWN_WRITE_FOUND, name: "own-write-found", doc: "A client whose answer was lost read the row again and found its own write as the current version: done, nothing written twice." },
    SituationDoc { id: WRITE_DEAD_LETTERED, name: "write-dead-lettered", doc: "A client gave its write up within its retry policy and recorded it in a dead letter a person will see." },
    SituationDoc { id: REQUEST_ID_RECOGNIZED, name: "request-id-recognized", doc: "A write came again (computed from a newer read, after its answer was lost) under a request id the row already held: answered \"written\", nothing written twice." },
    SituationDoc { id: BLIND_WRITE_CHANGED_NOTHING, name: "blind-write-changed-nothing", doc: "A blind write that had landed came again and found the row at the value it sets: the write landed and left the row as it was, version too, with no second increment. Either a network copy of the landed write, or a retry computed from a fresh read after another write moved the row to exactly the value the retry computes." },
    SituationDoc { id: WRITE_RESUMED_AFTER_RESTART, name: "write-resumed-after-restart", doc: "A client restarted with a write pending and resumed it from its own database." },
];
