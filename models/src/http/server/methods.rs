//! What a request does to the resources, by its method: a POST creates, a
//! PUT replaces (or adds) and may be conditional on an ETag, a PATCH adds,
//! a DELETE removes, a GET reads; and how a write that landed is observed.

use super::{PutMode, Resource, Server, ServerStorage};
use crate::core::{Carries, Change, Obs, Op, Site};
use crate::http::msg::{Method, Msg, Precondition, Request, Status};
use crate::http::situations as sit;
use crate::http::{CREATION, DELETION, EDIT, INCREMENT, RESOURCE, WRITE};
use sim::Ctx;

/// What executing a request did: the answer, the resource it is about, and
/// whether it found the state it asks for already in place.
pub(super) struct Outcome {
    pub status: Status,
    pub at: Option<usize>,
    pub held: bool,
}

impl<W: Carries<Msg>> Server<W> {
    /// A write landed: the resource at `i` is a new version made by `op`.
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
        if !self.put_precondition_holds(s, at, q) {
            ctx.reached(sit::PRECONDITION_FAILED);
            return Outcome {
                status: Status::PreconditionFailed,
                at,
                held: false,
            };
        }
        let (i, status) = Self::put_target(s, at, id);
        let c = s.resources[i];
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
        self.write_put(s, i, q, ctx);
        Outcome {
            status,
            at: Some(i),
            held: false,
        }
    }

    /// Whether a PUT's precondition (`client.conditional_writes`) lets it
    /// through: If-Match needs the ETag current, If-None-Match: * needs no
    /// resource. One that fails still goes through where a replacing PUT
    /// finds its body already there: RFC 9110 13.1.1 lets the server answer
    /// 2xx when the change asked for "has already succeeded" (a retry whose
    /// first attempt landed), and the PUT then changes nothing.
    fn put_precondition_holds(&self, s: &ServerStorage, at: Option<usize>, q: Request) -> bool {
        let current = at.map(|i| s.resources[i]).filter(|c| c.exists);
        let holds = match q.cond {
            Precondition::None => true,
            Precondition::IfMatch(v) => current.is_some_and(|c| c.version == v),
            Precondition::IfNoneMatchAny => current.is_none(),
        };
        let reflected =
            self.cfg.put == PutMode::Replace && current.is_some_and(|c| c.value == q.body);
        holds || reflected
    }

    /// Whether a PATCH's or DELETE's precondition lets it through, on the
    /// resource at `i`, which exists: a PATCH or DELETE of nothing answers
    /// 404 before any precondition (RFC 9110 13.2.1: a server ignores the
    /// preconditions where the answer without them would not be a 2xx).
    fn precondition_holds(
        s: &ServerStorage,
        i: usize,
        q: Request,
        ctx: &mut impl Ctx<Self>,
    ) -> bool {
        let holds = match q.cond {
            Precondition::None => true,
            Precondition::IfMatch(v) => s.resources[i].version == v,
            Precondition::IfNoneMatchAny => false,
        };
        if !holds {
            ctx.reached(sit::PRECONDITION_FAILED);
        }
        holds
    }

    /// The resource a PUT to `id` writes: the one there (200 OK), or one
    /// it creates (201 Created) under the client's id, in id order.
    pub(super) fn put_target(s: &mut ServerStorage, at: Option<usize>, id: u32) -> (usize, Status) {
        match at {
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
        }
    }

    /// A PUT that writes resource `i`: its new value, its effect and the
    /// new version, with a stale write reported.
    fn write_put(&self, s: &mut ServerStorage, i: usize, q: Request, ctx: &mut impl Ctx<Self>) {
        let Request { op, body, read, .. } = q;
        let c = s.resources[i];
        let new_value = match self.cfg.put {
            PutMode::Replace => body,
            PutMode::Add if c.exists => c.value.saturating_add(body),
            PutMode::Add => body,
        };
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
    }

    /// A DELETE of the resource at `at` (where it exists): it removes it,
    /// or finds it gone, which is what a DELETE asks.
    fn delete(
        s: &mut ServerStorage,
        at: Option<usize>,
        not_found: Outcome,
        q: Request,
        ctx: &mut impl Ctx<Self>,
    ) -> Outcome {
        let Request {
            op, resource: id, ..
        } = q;
        match at {
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
        }
    }

    /// Executes `q` on the resources: what its method does, by its semantics.
    pub(super) fn execute(
        &self,
        s: &mut ServerStorage,
        q: Request,
        ctx: &mut impl Ctx<Self>,
    ) -> Outcome {
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
            Method::Patch | Method::Delete
                if at.is_some_and(|i| !Self::precondition_holds(s, i, q, ctx)) =>
            {
                Outcome {
                    status: Status::PreconditionFailed,
                    at,
                    held: false,
                }
            }
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
            Method::Delete => Self::delete(s, at, not_found, q, ctx),
        }
    }
}
