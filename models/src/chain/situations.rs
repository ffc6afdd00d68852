//! The chain's own situations; its scenarios may also name
//! every situation of the payment and messaging models whose actors it runs.
//!
//! Ids are numbered locally, `FIRST + n`: the registry gives the model its
//! `FIRST` (the ids after those of the models it lists before this one), so
//! each stays a `const` that actors report and match on, and no two models
//! share one. `COUNT` (the highest local id plus one) tells the registry
//! how many ids the model takes.

use crate::core::SituationDoc;
use crate::{messaging, payment};
use sim::SituationId;
use std::sync::OnceLock;

/// This model's first situation id, given by the registry.
const FIRST: SituationId = <super::Chain as crate::core::ids::Registered>::FIRST_SITUATION;

/// How many ids from [`FIRST`] this model uses, gaps included.
pub(crate) const COUNT: u16 = crate::core::ids::span(OWN, FIRST);

/// A "payment booked" event went out for a request that booked nothing.
pub const PUBLISHED_WITHOUT_BOOKING: SituationId = FIRST;
/// An event was published and its confirmation never arrived.
pub const PUBLISH_UNCONFIRMED: SituationId = FIRST + 1;

static OWN: &[SituationDoc] = &[
    SituationDoc { id: PUBLISHED_WITHOUT_BOOKING, name: "published-without-booking", doc: "Event first: the transaction after a published \"payment booked\" event booked nothing (the request was a duplicate, answered from the key table): the event announces a booking that does not exist." },
    SituationDoc { id: PUBLISH_UNCONFIRMED, name: "publish-unconfirmed", doc: "Event first: the broker did not confirm a request's event in time; the request was dropped unanswered." },
];

/// The chain's situations: those of the hops it reuses, then its own.
pub fn all() -> &'static [SituationDoc] {
    static ALL: OnceLock<Vec<SituationDoc>> = OnceLock::new();
    ALL.get_or_init(|| {
        [payment::situations::ALL, messaging::situations::ALL, OWN]
            .into_iter()
            .flatten()
            .map(|s| SituationDoc {
                id: s.id,
                name: s.name,
                doc: s.doc,
            })
            .collect()
    })
}
