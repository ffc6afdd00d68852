//! Exercise 17 of idemsim's learning path: a consumer actor of your own, in
//! Rust. Edit this file, then let idemsim judge it:
//!
//! ```sh
//! cargo run --example learn -- actor
//! ```
//!
//! The consumer gets deliveries from idemsim's broker (`world.rs`): the same
//! event again when its ack was lost or the consumer crashed first, when the
//! producer's relay republished it after a crash, or when the network copied
//! a message. As it stands it books every delivery, so some events are
//! booked twice, and the grader prints the lowest failing seed, shrunk, with
//! its trace.
//!
//! Make every event be booked exactly once. One handler call is one step,
//! one transaction: a crash falls before it or after it. `Memory` is lost at
//! a crash; `Db` survives it. The reference solution is
//! `actor_solution.rs`: read it after you tried.

use crate::world::{Delivery, BROKER};
use models::{Msg, Obs};
use sim::{Actor, ActorId, Ctx, Fresh, NoTimer};

/// Your consumer.
pub struct Consumer;

/// What the consumer holds in memory: gone after a crash.
#[derive(Debug, Default)]
pub struct Memory {}

/// The consumer's database: what survives a crash.
#[derive(Debug, Default)]
pub struct Db {}

impl Actor for Consumer {
    type Msg = Msg;
    type Obs = Obs;
    type Timer = NoTimer;
    type State = Memory;
    type Storage = Db;

    fn reset(&self, state: Fresh<'_, Memory>, storage: Option<Fresh<'_, Db>>) {
        // A new process remembers nothing; a new run starts with an empty database.
        state.set(Memory::default());
        if let Some(db) = storage {
            db.set(Db::default());
        }
    }

    fn on_start(&self, _: &mut Memory, _: &mut Db, _: &mut impl Ctx<Self>) {}

    fn on_msg(
        &self,
        _memory: &mut Memory,
        _db: &mut Db,
        _: ActorId,
        msg: Msg,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(delivery) = Delivery::of(&msg) else {
            return;
        };
        // TODO: an event booked before must not be booked again.
        delivery.book(ctx);
        delivery.ack(BROKER, ctx);
    }
}
