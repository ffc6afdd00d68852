//! The contended resource: one row with a value and a version, in durable
//! storage (the simulator's `OccServer`). A read answers the row as it
//! stands; a write is one step, one transaction: a compare-and-set lands
//! only if the row is still at the version the client read, a blind write
//! lands always. Effects are observed here, where they land.

use super::msg::Msg;
use super::situations as sit;
use super::{RESOURCE_LAYER, ROW, UPDATE};
use crate::core::landings::Landings;
use crate::core::{Carries, Change, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx, NoTimer};
use std::marker::PhantomData;

/// The row as stored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
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
    /// Every landing, as (write id, version read), sorted: not a column of
    /// the row but the observer's. A write's landing with a read it landed
    /// with before is a copy of that one (the network's, or a retry's that
    /// read the same version), setting the value that one set; with
    /// another read it is a new increment, computed from what it saw.
    pub landings: Landings<u32>,
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

/// The ids, as `Debug` shows them.
impl serde::Serialize for RequestIds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.ids())
    }
}

impl ResourceStorage {
    /// The row before any write.
    pub const INITIAL: ResourceStorage = ResourceStorage {
        value: 0,
        version: 1,
        writer: None,
        applied: RequestIds::EMPTY,
        landings: Landings::new(),
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

impl<W: Carries<Msg>> Resource<W> {
    /// Write `op` lands: the row takes its value (computed from version
    /// `read`, adding `amount`) and a new version, and keeps its request id.
    fn land(
        s: &mut ResourceStorage,
        op: Op,
        (read, value, amount): (u32, u32, u32),
        request_id: bool,
        ctx: &mut impl Ctx<Self>,
    ) {
        s.version += 1;
        s.value = value;
        s.writer = Some(op);
        if request_id {
            s.applied.insert(op.id);
        }
        // A copy sets the value the landing it copies set, over
        // writes it never saw: it adds no increment of its own,
        // and what it destroys is theirs, which the new version
        // below shows to no-lost-update. A retry from a fresh
        // read (after a lost answer) adds again, even where
        // writes landed between that read and the retry.
        if !s.landings.land(op.id, read).copy {
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
}

impl<W: Carries<Msg>> Actor for Resource<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = NoTimer;
    type State = ();
    type Storage = ResourceStorage;

    fn reset(&self, state: sim::Fresh<'_, ()>, storage: Option<sim::Fresh<'_, ResourceStorage>>) {
        state.set(());
        if let Some(s) = storage {
            // Reuses the landings' allocation from run to run.
            let s = s.or_insert_with(|| ResourceStorage::INITIAL);
            let mut landings = std::mem::take(&mut s.landings);
            landings.clear();
            *s = ResourceStorage {
                landings,
                ..ResourceStorage::INITIAL
            };
        }
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
                let again = s.landings.any(op.id);
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
                    Self::land(s, op, (read, value, amount), request_id, ctx);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contention::WRITE;
    use crate::registry::Msg as World;
    use sim::{Choices, Command, Context};

    type Cmd = Command<World, Obs, NoTimer>;

    /// The row, and what each write that reaches it does there.
    struct Row {
        actor: Resource<World>,
        storage: ResourceStorage,
        choices: Choices,
    }

    impl Row {
        fn new() -> Self {
            let mut choices = Choices::new();
            choices.start_random(0, 1, false);
            Row {
                actor: Resource::new(),
                storage: ResourceStorage::INITIAL,
                choices,
            }
        }

        /// Write #`id`, attempt `attempt`, blind, computed from a read of
        /// version `read` that showed `seen`: sets the row to `seen + 1`.
        /// Answers the increments it landed and the row's version after it.
        fn blind(&mut self, id: u32, attempt: u32, read: u32, seen: u32) -> (u32, u32) {
            let msg = Msg::Write {
                op: Op::new(&WRITE, id),
                attempt,
                read,
                value: seen + 1,
                amount: 1,
                cas: false,
                request_id: false,
            };
            let mut out: Vec<Cmd> = Vec::new();
            let mut ctx = Context::detached(0, 0, &mut self.choices, &mut out);
            self.actor
                .on_msg(&mut (), &mut self.storage, 1, World::wrap(msg), &mut ctx);
            let increments = out
                .iter()
                .filter(|c| matches!(c, Command::Observe(Obs::Effect { .. })))
                .count() as u32;
            (increments, self.storage.version)
        }
    }

    /// Write #1 lands and its answer is lost; #2 writes on top. #1's client
    /// reads again (v3, value 2: its own increment and #2's) and sends
    /// "set 3"; before it lands #3 and #4 write on top, the row reaching 4.
    /// The retry is a new write computed from a fresh read, not a copy of
    /// the first: it lands a second increment of #1 (and replaces #3's and
    /// #4's), so the row's 3 counts #1 twice and #2 once. A network copy of
    /// #1's first write, computed from v1, landing as late sets the row back
    /// to the 1 the first landing set: no increment of its own.
    #[test]
    fn a_blind_retry_from_a_fresh_read_adds_again_over_newer_versions() {
        let mut row = Row::new();
        assert_eq!(row.blind(1, 1, 1, 0), (1, 2), "#1 lands");
        assert_eq!(row.blind(2, 1, 2, 1), (1, 3), "#2 on top");
        assert_eq!(row.blind(3, 1, 3, 2), (1, 4), "#3 from v3");
        assert_eq!(row.blind(4, 1, 4, 3), (1, 5), "#4 from v4");
        assert_eq!(row.blind(1, 2, 3, 2), (1, 6), "#1's retry, read at v3");
        assert_eq!(row.storage.value, 3);
        // A copy of #1's first write (read at v1) lands last of all.
        assert_eq!(row.blind(1, 1, 1, 0), (0, 7), "a stale copy adds nothing");
        assert_eq!(row.storage.value, 1);
        // A copy of the retry (read at v3) likewise.
        assert_eq!(row.blind(1, 2, 3, 2), (0, 8), "the retry's copy neither");
    }
}
