//! The resource server: claims under `/claims/{id}`, each with a value and a
//! version that is its ETag, kept in durable storage. Every request is one
//! step, one transaction: the write, the stored Idempotency-Key and its
//! response commit together. Effects are observed here, where they land: a
//! write that changes a resource is an effect of the request that made it,
//! and a replacing PUT that finds the resource already as it asks changes
//! nothing, not even the ETag, whether it is a repeat or a first landing.

use super::msg::{Method, Msg, Request, Status};
use super::situations as sit;
use super::{CREATION, DELETION, EDIT, INCREMENT, RESOURCE, SERVER_LAYER, WRITE};
use crate::core::dedup::{DedupStore, Lookup};
use crate::core::landings::Landings;
use crate::core::{Carries, Change, Key, Obs, Op, Site};
use sim::{Actor, ActorId, Ctx, NoTimer, TimeUs};
use std::marker::PhantomData;

/// What a PUT handler does with the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutMode {
    /// Replace the representation: naturally idempotent.
    Replace,
    /// Add the body to the value: a POST in disguise, whatever the method promises.
    Add,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// The server's configuration.
pub struct ServerConfig {
    /// Honour the Idempotency-Key header: a known key gets the stored response.
    pub keys: bool,
    /// How long a key and its response are kept; 0: forever.
    pub key_retention_us: TimeUs,
    /// Capacity of the key store, judged by `dedup-store-bounded`; 0: none.
    pub max_keys: u32,
    /// What a PUT does to the value.
    pub put: PutMode,
    /// The resources at the start, as (id, value), sorted by id.
    pub resources: Vec<(u32, u32)>,
}

/// One resource as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Its id.
    pub id: u32,
    /// Its value.
    pub value: u32,
    /// The ETag: 1 for a new resource, one more for every write that
    /// lands. A replacing PUT that finds its body already there writes
    /// nothing and keeps it (see `put`).
    pub version: u32,
    /// The request whose write made this version (none for an initial one).
    pub writer: Option<Op>,
    /// False once deleted.
    pub exists: bool,
}

/// A stored response, replayed for a known Idempotency-Key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The status answered.
    pub status: Status,
    /// The resource's id.
    pub resource: u32,
    /// Its value then.
    pub value: u32,
    /// Its ETag then.
    pub etag: u32,
    /// The request found the state it asks for already in place: a replay
    /// of this answer is, too, an answer made while it held.
    pub held: bool,
}

/// The server's database.
#[derive(Clone, Debug)]
pub struct ServerStorage {
    /// Sorted by id: initial resources, then those POST created.
    pub resources: Vec<Resource>,
    /// Idempotency-Keys and their stored responses.
    pub keys: DedupStore<Key, Stored>,
    /// The id the next POST gets.
    pub next_id: u32,
    /// Every landing of a write, as (operation id, ETag read), sorted: only
    /// to tell a request's repeat from its first landing. The ETag read is
    /// an edit's (none for a request that read nothing): an edit's PUT that
    /// lands again from a read it landed from before is a copy of that
    /// landing (the network's, or a retry's that read the same ETag), and
    /// sets the value that landing set.
    pub applied: Landings<Option<u32>>,
}

impl ServerStorage {
    fn find(&self, id: u32) -> Option<usize> {
        self.resources.binary_search_by_key(&id, |r| r.id).ok()
    }
}

/// The HTTP server: resources in a database, optional Idempotency-Key store and ETags.
pub struct Server<W> {
    /// Its configuration.
    pub cfg: ServerConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Server<W> {
    /// A server with configuration `cfg`.
    pub fn new(cfg: ServerConfig) -> Self {
        Server {
            cfg,
            wire: PhantomData,
        }
    }
}

/// What executing a request did: the answer, the resource it is about, and
/// whether it found the state it asks for already in place.
struct Outcome {
    status: Status,
    at: Option<usize>,
    held: bool,
}

impl<W: Carries<Msg>> Server<W> {
    /// A write landed: the resource at `i` is a new version made by `op`.
    #[allow(clippy::too_many_arguments)]
    fn landed(
        s: &mut ServerStorage,
        i: usize,
        op: Op,
        site: &'static Site,
        payload: u32,
        (change, sets_state): (Change, bool),
        ctx: &mut impl Ctx<Self>,
    ) {
        let r = &mut s.resources[i];
        r.version += 1;
        r.writer = Some(op);
        let (id, version, value) = (r.id, r.version, r.value);
        let read = match change {
            Change::Edit { read, .. } => Some(read),
            Change::Set | Change::Add | Change::Delete => None,
        };
        let landed = s.applied.land(op.id, read);
        if landed.again {
            ctx.reached(sit::WRITE_REPEATED);
        }
        // An edit's copy sets the value the landing it copies set, over
        // writes it never saw: no change of its own (what it destroys is
        // theirs, which the new version shows to no-lost-update), as a
        // stale copy of a blind write in the contention model. An edit
        // from a new read (a retry after a lost answer) adds again.
        let copy = read.is_some() && landed.copy;
        let adds_nothing = copy || (landed.again && sets_state);
        if !adds_nothing {
            ctx.observe(Obs::Effect { site, op, payload });
        }
        ctx.observe(Obs::NewVersion {
            op,
            entity: Op::new(&RESOURCE, id),
            version,
            value,
            change,
        });
    }

    fn post(&self, s: &mut ServerStorage, op: Op, body: u32, ctx: &mut impl Ctx<Self>) -> Outcome {
        let id = s.next_id;
        s.next_id += 1;
        s.resources.push(Resource {
            id,
            value: body,
            version: 0,
            writer: None,
            exists: true,
        });
        let i = s.resources.len() - 1;
        Self::landed(s, i, op, &CREATION, body, (Change::Set, false), ctx);
        Outcome {
            status: Status::Created,
            at: Some(i),
            held: false,
        }
    }

    fn put(&self, s: &mut ServerStorage, q: Request, ctx: &mut impl Ctx<Self>) -> Outcome {
        let Request {
            op,
            resource: id,
            body,
            read,
            ..
        } = q;
        let at = s.find(id);
        if let Some(r) = read.filter(|r| r.if_match) {
            let current = at.map(|i| s.resources[i]).filter(|c| c.exists);
            if current.is_none_or(|c| c.version != r.version) {
                ctx.reached(sit::PRECONDITION_FAILED);
                return Outcome {
                    status: Status::PreconditionFailed,
                    at,
                    held: false,
                };
            }
        }
        let (i, status) = match at {
            Some(i) if s.resources[i].exists => (i, Status::Ok),
            Some(i) => (i, Status::Created),
            None => {
                // A PUT to a resource that does not exist creates it, under the client's id.
                let i = s.resources.partition_point(|r| r.id < id);
                s.next_id = s.next_id.max(id.saturating_add(1));
                s.resources.insert(
                    i,
                    Resource {
                        id,
                        value: 0,
                        version: 0,
                        writer: None,
                        exists: false,
                    },
                );
                (i, Status::Created)
            }
        };
        let c = s.resources[i];
        let new_value = match self.cfg.put {
            PutMode::Replace => body,
            PutMode::Add if c.exists => c.value.saturating_add(body),
            PutMode::Add => body,
        };
        // A replacing PUT asks for a state, "the claim is `body`". Where the
        // representation is that already, whoever wrote it, the PUT changes
        // nothing and the ETag stays (RFC 9110 8.8.1: a strong ETag is best
        // changed only when it must be): an editor who read it read what this
        // PUT asks for, and loses nothing by writing over it. The state held
        // as this answer was made, which makes the client's "done" true, as
        // a DELETE's 404 does.
        //
        // An edit's PUT asks for a change computed from its read, not for a
        // state: landing on its own result from an older read, it replaced
        // a version it never read (two editors adding 3 to 1000 both write
        // 1003; an increment is gone), so it is still a write, unless it is
        // a repeat of its own write that landed.
        let unchanged = self.cfg.put == PutMode::Replace && c.exists && c.value == body;
        let landed_before = s.applied.any(op.id);
        if unchanged && (read.is_none() || landed_before) {
            ctx.reached(sit::PUT_CHANGED_NOTHING);
            if read.is_none() {
                ctx.observe(Obs::StateHeld {
                    op,
                    attempt: q.attempt,
                    entity: Op::new(&RESOURCE, id),
                    version: c.version,
                });
            }
            return Outcome {
                status,
                at: Some(i),
                held: read.is_none(),
            };
        }
        let latest = c.version;
        if let Some(r) = read {
            if r.version < latest && c.writer != Some(op) {
                ctx.reached(sit::STALE_WRITE);
            }
        }
        let r = &mut s.resources[i];
        r.value = new_value;
        r.exists = true;
        // An edit's effect is the change it was computed to make; a PUT's is its body.
        let (site, payload) = match read {
            Some(r) => (&EDIT, body.saturating_sub(r.value)),
            None => (&WRITE, body),
        };
        // A replacing PUT sets the resource to its body: landing again adds
        // nothing to what it did (the value is its body either way), so its
        // repeat is no second effect. What the repeat overwrote in between is
        // another writer's loss, which the new version lets no-lost-update
        // judge, as it would a slow first copy of the same request.
        let sets_state = self.cfg.put == PutMode::Replace && read.is_none();
        let change = match read {
            Some(r) => Change::Edit {
                read: r.version,
                from: r.value,
            },
            None if self.cfg.put == PutMode::Replace || !c.exists => Change::Set,
            None => Change::Add,
        };
        Self::landed(s, i, op, site, payload, (change, sets_state), ctx);
        Outcome {
            status,
            at: Some(i),
            held: false,
        }
    }

    fn execute(&self, s: &mut ServerStorage, q: Request, ctx: &mut impl Ctx<Self>) -> Outcome {
        let Request {
            op,
            resource: id,
            body,
            ..
        } = q;
        let at = s.find(id).filter(|&i| s.resources[i].exists);
        let not_found = Outcome {
            status: Status::NotFound,
            at: s.find(id),
            held: false,
        };
        match q.method {
            Method::Post => self.post(s, op, body, ctx),
            Method::Put => self.put(s, q, ctx),
            Method::Get => match at {
                Some(i) => Outcome {
                    status: Status::Ok,
                    at: Some(i),
                    held: false,
                },
                None => not_found,
            },
            Method::Patch => match at {
                Some(i) => {
                    let r = &mut s.resources[i];
                    r.value = r.value.saturating_add(body);
                    Self::landed(s, i, op, &INCREMENT, body, (Change::Add, false), ctx);
                    Outcome {
                        status: Status::Ok,
                        at: Some(i),
                        held: false,
                    }
                }
                None => not_found,
            },
            Method::Delete => match at {
                Some(i) => {
                    s.resources[i].exists = false;
                    Self::landed(s, i, op, &DELETION, id, (Change::Delete, false), ctx);
                    Outcome {
                        status: Status::NoContent,
                        at: Some(i),
                        held: false,
                    }
                }
                None => {
                    // The resource is absent as this answer is made: what a
                    // DELETE asks ("be gone") holds, whoever removed it or
                    // whether it ever existed. An observation, not an effect:
                    // it makes a "done" true and counts toward no duplicate.
                    ctx.reached(sit::DELETE_FOUND_NOTHING);
                    ctx.observe(Obs::StateHeld {
                        op,
                        attempt: q.attempt,
                        entity: Op::new(&RESOURCE, id),
                        // The deletion's version, or none if it never existed.
                        version: not_found.at.map_or(0, |i| s.resources[i].version),
                    });
                    Outcome {
                        held: true,
                        ..not_found
                    }
                }
            },
        }
    }

    /// Stores the response under the request's key, in the write's transaction.
    fn remember(&self, s: &mut ServerStorage, key: Key, stored: Stored, ctx: &mut impl Ctx<Self>) {
        let now = ctx.now_us();
        s.keys.reap(now);
        s.keys.insert(key, stored, now);
        ctx.observe(Obs::DedupStore {
            keys: s.keys.len() as u32,
            bound: self.cfg.max_keys,
        });
    }

    fn on_request(
        &self,
        s: &mut ServerStorage,
        from: ActorId,
        q: Request,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Request { op, method, .. } = q;
        let key = Msg::key_of(op, q.key);
        ctx.observe(Obs::Received {
            layer: &SERVER_LAYER,
            op,
            key,
        });
        let keyed = self.cfg.keys && key.is_some() && method != Method::Get;
        let now = ctx.now_us();
        if keyed {
            match s.keys.lookup(&key, now) {
                Lookup::Live(stored) => {
                    let stored = *stored;
                    ctx.reached(sit::KEY_REPLAYED);
                    if stored.held {
                        // Made while the state held, and answering this
                        // attempt now: the "done" it carries rests on that.
                        ctx.observe(Obs::StateHeld {
                            op,
                            attempt: q.attempt,
                            entity: Op::new(&RESOURCE, stored.resource),
                            version: stored.etag,
                        });
                    }
                    Self::respond(from, q, stored, true, ctx);
                    return;
                }
                Lookup::Expired => ctx.reached(sit::KEY_EXPIRED),
                Lookup::Absent => {}
            }
        }
        let out = self.execute(s, q, ctx);
        let r = out.at.map(|i| s.resources[i]);
        let stored = Stored {
            status: out.status,
            resource: r.map_or(q.resource, |r| r.id),
            value: r.map_or(0, |r| r.value),
            etag: r.map_or(0, |r| r.version),
            held: out.held,
        };
        // Only an executed request has a response worth replaying: a 404 or a
        // 412 changed nothing, and its retry must be free to succeed.
        if keyed && out.status.is_success() {
            self.remember(s, key, stored, ctx);
        }
        Self::respond(from, q, stored, false, ctx);
    }

    /// Answers `q` with `stored`, as executed now or replayed from the key store.
    fn respond(
        from: ActorId,
        q: Request,
        stored: Stored,
        replayed: bool,
        ctx: &mut impl Ctx<Self>,
    ) {
        let reply = Msg::Response {
            op: q.op,
            attempt: q.attempt,
            method: q.method,
            status: stored.status,
            resource: stored.resource,
            value: stored.value,
            etag: stored.etag,
            replayed,
        };
        ctx.send(from, W::wrap(reply));
    }
}

impl<W> crate::core::Ends for Server<W> {
    const ROLES: &'static [&'static str] = &["server"];
    const SENDS: &'static [(&'static str, &'static str)] = &[("response", "client")];
    const ANSWERS: &'static [(&'static str, &'static str)] = &[
        ("response", "get"),
        ("response", "post"),
        ("response", "put"),
        ("response", "patch"),
        ("response", "delete"),
    ];
}

impl<W: Carries<Msg>> Actor for Server<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = NoTimer;
    /// Everything the server keeps is in its database.
    type State = ();
    type Storage = ServerStorage;

    fn reset(&self, state: sim::Fresh<'_, ()>, storage: Option<sim::Fresh<'_, ServerStorage>>) {
        state.set(());
        let Some(s) = storage else { return };
        let s = s.or_insert_with(|| ServerStorage {
            resources: Vec::new(),
            keys: DedupStore::new(self.cfg.key_retention_us),
            next_id: 0,
            applied: Landings::new(),
        });
        s.resources.clear();
        s.resources
            .extend(self.cfg.resources.iter().map(|&(id, value)| Resource {
                id,
                value,
                version: 1,
                writer: None,
                exists: true,
            }));
        s.keys.reset(self.cfg.key_retention_us);
        // POST creates ids after every initial one.
        s.next_id = self.cfg.resources.last().map_or(1, |r| r.0 + 1);
        s.applied.clear();
    }

    fn on_start(&self, _: &mut (), _: &mut ServerStorage, _: &mut impl Ctx<Self>) {}

    fn on_msg(
        &self,
        _: &mut (),
        s: &mut ServerStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        if let Some(&Msg::Request(q)) = msg.peek() {
            self.on_request(s, from, q, ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::REQUEST;
    use crate::registry::Msg as World;
    use sim::{Choices, Command, Context};

    type Cmd = Command<World, Obs, NoTimer>;

    /// A server holding claim 4711 at 1,000, PUT replacing, no keys.
    struct Claims {
        server: Server<World>,
        storage: ServerStorage,
        choices: Choices,
    }

    impl Claims {
        fn new() -> Self {
            let server = Server::new(ServerConfig {
                keys: false,
                key_retention_us: 0,
                max_keys: 0,
                put: PutMode::Replace,
                resources: vec![(4711, 1000)],
            });
            let mut storage = None;
            server.reset_storage(&mut storage);
            let mut choices = Choices::new();
            choices.start_random(0, 1, false);
            Claims {
                server,
                storage: storage.expect("a storage"),
                choices,
            }
        }

        /// Request #`id`'s edit PUT, attempt `attempt`, computed from a GET
        /// that returned `seen` at ETag `etag`, adding `amount`, without
        /// If-Match. Answers the effects it landed and the ETag after it.
        fn edit(&mut self, id: u32, attempt: u32, etag: u32, seen: u32, amount: u32) -> (u32, u32) {
            let q = Request {
                op: Op::new(&REQUEST, id),
                attempt,
                method: Method::Put,
                resource: 4711,
                body: seen + amount,
                key: false,
                read: Some(super::super::msg::Read {
                    version: etag,
                    value: seen,
                    if_match: false,
                }),
            };
            let mut out: Vec<Cmd> = Vec::new();
            let mut ctx = Context::detached(0, 1, &mut self.choices, &mut out);
            self.server.on_msg(
                &mut (),
                &mut self.storage,
                0,
                World::wrap(Msg::Request(q)),
                &mut ctx,
            );
            let effects = out
                .iter()
                .filter(|c| matches!(c, Command::Observe(Obs::Effect { .. })))
                .count() as u32;
            (effects, self.storage.resources[0].version)
        }
    }

    /// Alice adds 200 to 1,000 (PUT 1,200 from v1); bob adds 300 on top
    /// (PUT 1,500 from v2). A network copy of alice's PUT lands last: it
    /// sets the claim back to the 1,200 her first landing set. That holds
    /// alice's 200 once, and loses bob's 300: no second edit of alice's,
    /// as a stale copy of a blind write in the contention model adds no
    /// second increment. A retry of alice's that GETs again and computes
    /// from what it saw is another matter: it adds her 200 again.
    #[test]
    fn a_stale_copy_of_an_edit_is_no_second_edit_but_a_retry_from_a_new_read_is() {
        let mut claims = Claims::new();
        assert_eq!(claims.edit(1, 1, 1, 1000, 200), (1, 2), "alice's edit");
        assert_eq!(claims.edit(2, 1, 2, 1200, 300), (1, 3), "bob's on top");
        assert_eq!(
            claims.edit(1, 1, 1, 1000, 200),
            (0, 4),
            "the copy of alice's PUT sets the claim back: no edit of its own"
        );
        assert_eq!(claims.storage.resources[0].value, 1200);
        // Alice's answer was lost: she GETs v4 (1,200) and sends 1,400;
        // carol's edit from the same v4 lands first.
        assert_eq!(claims.edit(3, 1, 4, 1200, 100), (1, 5), "carol's edit");
        assert_eq!(
            claims.edit(1, 2, 4, 1200, 200),
            (1, 6),
            "alice's retry from a new read adds her 200 again"
        );
        assert_eq!(
            claims.edit(1, 2, 4, 1200, 200),
            (0, 6),
            "its copy finds the claim as it asks: nothing changes"
        );
    }
}
