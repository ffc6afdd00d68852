//! The HTTP model's situations.
//!
//! Ids are numbered locally, `FIRST + n`: the registry gives the model its
//! `FIRST` (the ids after those of the models it lists before this one), so
//! each stays a `const` that actors report and match on, and no two models
//! share one. `COUNT` (the highest local id plus one) tells the registry
//! how many ids the model takes.

use crate::core::SituationDoc;
use sim::SituationId;

/// This model's first situation id, given by the registry.
const FIRST: SituationId = <super::Http as crate::core::ids::Registered>::FIRST_SITUATION;

/// How many ids from [`FIRST`] this model uses, gaps included.
pub(crate) const COUNT: u16 = crate::core::ids::span(ALL, FIRST);

/// A client sent a request again.
pub const REQUEST_RETRIED: SituationId = FIRST;
/// A client gave a request up into a dead letter.
pub const REQUEST_DEAD_LETTERED: SituationId = FIRST + 1;
/// A client restarted with a request pending and resumed it.
pub const REQUEST_RESUMED_AFTER_RESTART: SituationId = FIRST + 2;
/// The server answered a known Idempotency-Key from its store.
pub const KEY_REPLAYED: SituationId = FIRST + 3;
/// A replacing PUT found its body already the representation: nothing changed.
pub const PUT_CHANGED_NOTHING: SituationId = FIRST + 4;
/// A DELETE found nothing to delete (404).
pub const DELETE_FOUND_NOTHING: SituationId = FIRST + 5;
/// A conditional write was refused with 412.
pub const PRECONDITION_FAILED: SituationId = FIRST + 6;
/// A client read again after a 412.
pub const REREAD_AFTER_412: SituationId = FIRST + 7;
/// A write was computed from a version that was no longer current.
pub const STALE_WRITE: SituationId = FIRST + 8;
/// A request's write landed a second time.
pub const WRITE_REPEATED: SituationId = FIRST + 9;
/// A request came with an Idempotency-Key the server had forgotten.
pub const KEY_EXPIRED: SituationId = FIRST + 10;
/// The server refused a known Idempotency-Key whose request body's fingerprint differs (422).
pub const BODY_MISMATCH_REJECTED: SituationId = FIRST + 11;
/// A client retried a request with a body other than its first attempt's.
pub const RETRY_BODY_CHANGED: SituationId = FIRST + 12;

/// The HTTP model's situations.
pub static ALL: &[SituationDoc] = &[
    SituationDoc { id: REQUEST_RETRIED, name: "request-retried", doc: "An HTTP client sent a second or later attempt of a request." },
    SituationDoc { id: REQUEST_DEAD_LETTERED, name: "request-dead-lettered", doc: "An HTTP client gave a request up and recorded it in a dead letter a person will see." },
    SituationDoc { id: REQUEST_RESUMED_AFTER_RESTART, name: "request-resumed-after-restart", doc: "An HTTP client restarted with a request pending and resumed it from its own database." },
    SituationDoc { id: KEY_REPLAYED, name: "idempotency-key-replayed", doc: "The server knew a request's Idempotency-Key and answered with the stored response, executing nothing." },
    SituationDoc { id: PUT_CHANGED_NOTHING, name: "put-changed-nothing", doc: "A replacing PUT found the resource already as it asks, whoever wrote it: nothing changed, the ETag stays (an edit's PUT only as a repeat of its own landed write)." },
    SituationDoc { id: DELETE_FOUND_NOTHING, name: "delete-found-nothing", doc: "A DELETE found the resource already gone and answered 404." },
    SituationDoc { id: PRECONDITION_FAILED, name: "precondition-failed", doc: "A write's If-Match named an ETag that is no longer current: 412, nothing written." },
    SituationDoc { id: REREAD_AFTER_412, name: "reread-after-412", doc: "An editor read the resource again after a 412 and computed its write anew." },
    SituationDoc { id: STALE_WRITE, name: "stale-write", doc: "A write computed from an older read replaced a newer version it never saw: a lost update." },
    SituationDoc { id: WRITE_REPEATED, name: "write-repeated", doc: "A write landed for a request whose earlier execution had already changed a resource: the request took effect again (a retried POST or PATCH, a PUT that adds), or a replacing PUT set its value again over another writer's (no second effect: last writer wins), or a copy of an edit's PUT, computed from the same read, set back the value its first landing set (no second effect: the writes it replaced are lost)." },
    SituationDoc { id: KEY_EXPIRED, name: "request-after-key-expired", doc: "A request came with an Idempotency-Key whose retention had run out (server.key_retention_ms): the server took it for a new request." },
    SituationDoc { id: BODY_MISMATCH_REJECTED, name: "key-reused-with-another-body", doc: "The server knew a request's Idempotency-Key, but the body's fingerprint (server.fingerprint) differs from the one stored with it: 422 Unprocessable Content, nothing executed or replayed." },
    SituationDoc { id: RETRY_BODY_CHANGED, name: "retry-body-changed", doc: "An HTTP client retried a request with a body other than its first attempt's: another value ([[requests]] retry_value) or the same value serialised anew with its send time (client.retry_body = \"new-timestamp\")." },
];
