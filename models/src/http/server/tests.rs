//! The resource server's unit tests: stale copies of an edit and retries from a new read.

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
            fingerprint: Fingerprint::None,
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
            cond: crate::http::Precondition::None,
            stamp_ms: None,
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

/// A PUT to a resource that does not exist creates it under the client's
/// id (201), in its place in id order, and POST's next id passes it; a PUT
/// to one that exists replaces it (200).
#[test]
fn a_put_creates_a_missing_resource_in_id_order_and_replaces_an_existing_one() {
    let mut c = Claims::new();
    let s = &mut c.storage;
    let missing = s.find(17);
    let (i, status) = Server::<World>::put_target(s, missing, 17);
    assert_eq!((i, status), (0, Status::Created));
    let ids: Vec<u32> = s.resources.iter().map(|r| r.id).collect();
    assert_eq!(ids, [17, 4711]);
    assert!(!s.resources[0].exists, "created only once the PUT writes");
    assert!(s.next_id > 17);
    let at = s.find(4711);
    assert_eq!(Server::<World>::put_target(s, at, 4711), (1, Status::Ok));
}

/// What each fingerprint compares with the request a key was stored for:
/// nothing, the whole body (its `sent_at` too), or the value alone.
#[test]
fn each_fingerprint_compares_what_it_names() {
    let stored = Stored {
        status: Status::Created,
        resource: 4712,
        value: 1200,
        etag: 1,
        held: false,
        body: 1200,
        stamp_ms: Some(0),
    };
    let q = |body, stamp_ms| Request {
        op: Op::new(&REQUEST, 1),
        attempt: 2,
        method: Method::Post,
        resource: 0,
        body,
        key: true,
        read: None,
        cond: crate::http::Precondition::None,
        stamp_ms,
    };
    let cases = [
        (Fingerprint::None, q(1300, Some(0)), true),
        (Fingerprint::Body, q(1200, Some(0)), true),
        (Fingerprint::Body, q(1200, Some(11_000)), false),
        (Fingerprint::Body, q(1300, Some(0)), false),
        (Fingerprint::Fields, q(1200, Some(11_000)), true),
        (Fingerprint::Fields, q(1300, Some(0)), false),
    ];
    for (fingerprint, request, matches) in cases {
        assert_eq!(
            fingerprint.matches(&stored, &request),
            matches,
            "{fingerprint:?} {request:?}"
        );
    }
}
