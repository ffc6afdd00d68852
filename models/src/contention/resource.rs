//! The contended resource: one row with a value and a version, in durable
//! storage (the simulator's `OccServer`). A read answers the row as it
//! stands; a write is one step, one transaction: a compare-and-set lands
//! only if the row is still at the version the client read, a blind write
//! lands always. Effects are observed here, where they land.

use super::msg::Msg;
use super::situations as sit;
use super::{RESOURCE_LAYER, ROW, UPDATE};
use crate::core::{Carries, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx, NoTimer};
use std::marker::PhantomData;

/// The row as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceStorage {
    /// The row's value.
    pub value: u32,
    /// 1 for the initial row, one more for every write that lands.
    pub version: u32,
    /// The write that made the current version (none for the initial one).
    pub writer: Option<Op>,
}

impl ResourceStorage {
    /// The row before any write.
    pub const INITIAL: ResourceStorage = ResourceStorage {
        value: 0,
        version: 1,
        writer: None,
    };
}

/// The row: answers reads and applies (conditional) writes.
pub struct Resource<W> {
    wire: PhantomData<fn() -> W>,
}

impl<W> Resource<W> {
    /// The resource actor.
    pub fn new() -> Self {
        Resource { wire: PhantomData }
    }
}

impl<W> Default for Resource<W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<W: Carries<Msg>> Actor for Resource<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = NoTimer;
    type State = ();
    type Storage = ResourceStorage;

    fn reset_storage(&self, storage: &mut Option<ResourceStorage>) {
        *storage = Some(ResourceStorage::INITIAL);
    }

    fn reset_state(&self, state: &mut Option<()>) {
        *state = Some(());
    }

    fn on_start(&self, _: &mut (), _: &mut ResourceStorage, _: &mut impl Ctx<Self>) {}

    fn on_msg(
        &self,
        _: &mut (),
        s: &mut ResourceStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(&m) = msg.peek() else {
            return;
        };
        let reply = match m {
            Msg::Read { op, attempt } => Msg::ReadReply {
                op,
                attempt,
                value: s.value,
                version: s.version,
                writer: s.writer,
            },
            Msg::Write {
                op,
                attempt,
                read,
                value,
                amount,
                cas,
            } => {
                ctx.observe(Obs::Received {
                    layer: &RESOURCE_LAYER,
                    op,
                    key: Key::None,
                });
                let stale = read != s.version;
                if cas && stale {
                    ctx.reached(sit::CAS_CONFLICT);
                } else {
                    if stale {
                        ctx.reached(sit::STALE_BLIND_WRITE);
                    }
                    s.version += 1;
                    s.value = value;
                    s.writer = Some(op);
                    ctx.observe(Obs::Effect {
                        site: &UPDATE,
                        op,
                        payload: amount,
                    });
                    ctx.observe(Obs::NewVersion {
                        op,
                        entity: Op::new(&ROW, 1),
                        version: s.version,
                        read,
                    });
                }
                Msg::WriteReply {
                    op,
                    attempt,
                    ok: !(cas && stale),
                    version: s.version,
                }
            }
            Msg::ReadReply { .. } | Msg::WriteReply { .. } => return,
        };
        ctx.send(from, W::wrap(reply));
    }
}
