//! The reference solution of exercise 17 (`cargo run --example learn --
//! actor --solution`), graded by this example's tests.
//!
//! The ids of the booked events are a table of the database, written in the
//! same step as the booking: one transaction, so a crash keeps both or
//! neither. A copy of a booked event finds its id and is only acked. (A real
//! table would be bounded by the broker's redelivery horizon: chapter 10,
//! "Cleaning the inbox".)

use crate::world::{Delivery, BROKER};
use models::{Msg, Obs};
use sim::{Actor, ActorId, Ctx, Fresh, NoTimer};
use std::collections::BTreeSet;

/// The consumer with an inbox in the booking's transaction.
pub struct Consumer;

/// Its database: the ids of the events it booked.
#[derive(Debug, Default)]
pub struct Db {
    booked: BTreeSet<u32>,
}

impl Actor for Consumer {
    type Msg = Msg;
    type Obs = Obs;
    type Timer = NoTimer;
    type State = ();
    type Storage = Db;

    fn reset(&self, state: Fresh<'_, ()>, storage: Option<Fresh<'_, Db>>) {
        state.set(());
        if let Some(db) = storage {
            db.or_default().booked.clear();
        }
    }

    fn on_start(&self, _: &mut (), _: &mut Db, _: &mut impl Ctx<Self>) {}

    fn on_msg(&self, _: &mut (), db: &mut Db, _: ActorId, msg: Msg, ctx: &mut impl Ctx<Self>) {
        let Some(delivery) = Delivery::of(&msg) else {
            return;
        };
        if db.booked.insert(delivery.event_id) {
            delivery.book(ctx);
        }
        delivery.ack(BROKER, ctx);
    }
}
