//! The contended resource: one row with a value and a version, in durable
//! storage (the simulator's `OccServer`). A read answers the row as it
//! stands; a write is one step, one transaction: a compare-and-set lands
//! only if the row is still at the version the client read, a blind write
//! lands always. Effects are observed here, where they land.

use super::msg::Msg;
use super::situations as sit;
use super::{RESOURCE_LAYER, ROW, UPDATE};
use crate::core::{Carries, Change, Key, Obs, Op};
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
    /// The request ids of the writes applied, kept with the row in the
    /// write's transaction: bit `id` for write #id. A fixed set, since a
    /// scenario has at most [`MAX_WRITES`](super::scenario::MAX_WRITES).
    pub applied: RequestIds,
    /// The writes that have landed, with or without a request id: not a
    /// column of the row but the observer's, to tell a write's repeat (a
    /// network copy, a retry) from its first landing.
    pub landed: RequestIds,
}

/// A set of write ids below [`RequestIds::CAPACITY`], stored inline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RequestIds([u64; 16]);

impl RequestIds {
    /// Ids it can hold: 0 to 1023.
    pub const CAPACITY: u32 = 16 * 64;
    const EMPTY: RequestIds = RequestIds([0; 16]);

    /// Whether write #`id` was applied under its request id.
    pub fn contains(&self, id: u32) -> bool {
        assert!(id < Self::CAPACITY, "write id {id} past the request-id set");
        self.0[(id / 64) as usize] & (1 << (id % 64)) != 0
    }

    fn insert(&mut self, id: u32) {
        assert!(id < Self::CAPACITY, "write id {id} past the request-id set");
        self.0[(id / 64) as usize] |= 1 << (id % 64);
    }

    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..Self::CAPACITY).filter(|&id| self.contains(id))
    }
}

// The ids, not 16 words of bits: what a report of the row shows.
impl std::fmt::Debug for RequestIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.ids()).finish()
    }
}

impl ResourceStorage {
    /// The row before any write.
    pub const INITIAL: ResourceStorage = ResourceStorage {
        value: 0,
        version: 1,
        writer: None,
        applied: RequestIds::EMPTY,
        landed: RequestIds::EMPTY,
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

impl<W> crate::core::Ends for Resource<W> {
    const ROLES: &'static [&'static str] = &["resource"];
    const SENDS: &'static [(&'static str, &'static str)] =
        &[("read-reply", "client"), ("write-reply", "client")];
    const ANSWERS: &'static [(&'static str, &'static str)] =
        &[("read-reply", "read"), ("write-reply", "write")];
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
                request_id,
            } => {
                ctx.observe(Obs::Received {
                    layer: &RESOURCE_LAYER,
                    op,
                    key: Key::None,
                });
                if request_id && s.applied.contains(op.id) {
                    ctx.reached(sit::REQUEST_ID_RECOGNIZED);
                    let reply = Msg::WriteReply {
                        op,
                        attempt,
                        ok: true,
                        already: true,
                        version: s.version,
                    };
                    ctx.send(from, W::wrap(reply));
                    return;
                }
                let stale = read != s.version;
                let again = s.landed.contains(op.id);
                if cas && stale {
                    ctx.reached(sit::CAS_CONFLICT);
                } else if again && s.value == value {
                    // "Set the row to 1" once more where the row is 1: like a
                    // replacing PUT's repeat, it changes nothing, and the row
                    // keeps its version. (A compare-and-set that lands always
                    // adds, so only a blind write gets here.)
                    ctx.reached(sit::BLIND_WRITE_CHANGED_NOTHING);
                } else {
                    if stale {
                        ctx.reached(sit::STALE_BLIND_WRITE);
                    }
                    s.version += 1;
                    s.value = value;
                    s.writer = Some(op);
                    if request_id {
                        s.applied.insert(op.id);
                    }
                    s.landed.insert(op.id);
                    // A stale repeat sets the value its first landing set,
                    // over writes it never saw: it adds no increment of its
                    // own, and what it destroys is theirs, which the new
                    // version below shows to no-lost-update. A repeat from a
                    // fresh read (a retry after a lost answer) adds again.
                    if !(again && stale) {
                        ctx.observe(Obs::Effect {
                            site: &UPDATE,
                            op,
                            payload: amount,
                        });
                    }
                    ctx.observe(Obs::NewVersion {
                        op,
                        entity: Op::new(&ROW, 1),
                        version: s.version,
                        value,
                        // The client wrote what it read plus `amount`.
                        change: Change::Edit {
                            read,
                            from: value.saturating_sub(amount),
                        },
                    });
                }
                Msg::WriteReply {
                    op,
                    attempt,
                    ok: !(cas && stale),
                    already: false,
                    version: s.version,
                }
            }
            Msg::ReadReply { .. } | Msg::WriteReply { .. } => return,
        };
        ctx.send(from, W::wrap(reply));
    }
}
