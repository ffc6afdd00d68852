//! The resource server: claims under `/claims/{id}`, each with a value and a
//! version that is its ETag, kept in durable storage. Every request is one
//! step, one transaction: the write, the stored Idempotency-Key and its
//! response commit together. Effects are observed here, where they land: a
//! write that changes a resource is an effect of the request that made it,
//! and a replacing PUT that finds the resource already as it asks changes
//! nothing, not even the ETag, whether it is a repeat or a first landing.

mod methods;

use super::msg::{Method, Msg, Request, Status};
use super::situations as sit;
use super::{RESOURCE, SERVER_LAYER};
use crate::core::dedup::{DedupStore, Lookup};
use crate::core::landings::Landings;
use crate::core::{Carries, Key, Obs, Op};
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

/// What the server compares when a request comes with an Idempotency-Key
/// it knows (the IETF draft's "idempotency fingerprint", MAY): a retry
/// whose fingerprint differs is refused with 422, not answered from the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fingerprint {
    /// Nothing: a known key is answered from the store, whatever the body.
    None,
    /// A checksum of the whole body, its timestamp field included.
    Body,
    /// The business fields only (the value): a body serialised anew with
    /// another timestamp matches, a changed value does not.
    Fields,
}

impl Fingerprint {
    /// Request `q` matches the request whose answer `stored` is.
    fn matches(self, stored: &Stored, q: &Request) -> bool {
        match self {
            Fingerprint::None => true,
            Fingerprint::Body => (stored.body, stored.stamp_ms) == (q.body, q.stamp_ms),
            Fingerprint::Fields => stored.body == q.body,
        }
    }
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
    /// What a known key's request is compared on.
    pub fingerprint: Fingerprint,
    /// The resources at the start, as (id, value), sorted by id.
    pub resources: Vec<(u32, u32)>,
}

/// One resource as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
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
    /// The body of the request it answers, for the fingerprint.
    pub body: u32,
    /// That body's timestamp field, for the fingerprint of the whole body.
    pub stamp_ms: Option<u32>,
}

/// The server's database.
#[derive(Clone, Debug, serde::Serialize)]
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

impl<W: Carries<Msg>> Server<W> {
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
                    if !self.cfg.fingerprint.matches(&stored, &q) {
                        // The draft's 422: the key stands for another
                        // request; neither executed again nor answered
                        // with that request's result.
                        ctx.reached(sit::BODY_MISMATCH_REJECTED);
                        let refused = Stored {
                            status: Status::UnprocessableContent,
                            ..stored
                        };
                        Self::respond(from, q, refused, false, ctx);
                        return;
                    }
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
            body: q.body,
            stamp_ms: q.stamp_ms,
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
mod tests;
