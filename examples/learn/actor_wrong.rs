//! Two wrong answers to exercise 17 that the tests grade: each must fail
//! with a seed and a trace.

use crate::world::{Delivery, BROKER};
use models::{Msg, Obs};
use sim::{Actor, ActorId, Ctx, Fresh, NoTimer};
use std::collections::BTreeSet;

/// Books every delivery: the exercise as it starts.
pub struct NoDedup;

impl Actor for NoDedup {
    type Msg = Msg;
    type Obs = Obs;
    type Timer = NoTimer;
    type State = ();
    type Storage = ();

    fn reset(&self, state: Fresh<'_, ()>, storage: Option<Fresh<'_, ()>>) {
        state.set(());
        if let Some(db) = storage {
            db.set(());
        }
    }

    fn on_start(&self, _: &mut (), _: &mut (), _: &mut impl Ctx<Self>) {}

    fn on_msg(&self, _: &mut (), _: &mut (), _: ActorId, msg: Msg, ctx: &mut impl Ctx<Self>) {
        if let Some(d) = Delivery::of(&msg) {
            d.book(ctx);
            d.ack(BROKER, ctx);
        }
    }
}

/// Remembers booked ids in memory: a crash forgets them, and a redelivery
/// after the restart books again.
pub struct InMemory;

impl Actor for InMemory {
    type Msg = Msg;
    type Obs = Obs;
    type Timer = NoTimer;
    type State = BTreeSet<u32>;
    type Storage = ();

    fn reset(&self, state: Fresh<'_, BTreeSet<u32>>, storage: Option<Fresh<'_, ()>>) {
        state.or_default().clear();
        if let Some(db) = storage {
            db.set(());
        }
    }

    fn on_start(&self, _: &mut BTreeSet<u32>, _: &mut (), _: &mut impl Ctx<Self>) {}

    fn on_msg(
        &self,
        seen: &mut BTreeSet<u32>,
        _: &mut (),
        _: ActorId,
        msg: Msg,
        ctx: &mut impl Ctx<Self>,
    ) {
        if let Some(d) = Delivery::of(&msg) {
            if seen.insert(d.event_id) {
                d.book(ctx);
            }
            d.ack(BROKER, ctx);
        }
    }
}
