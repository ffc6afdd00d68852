//! The HTTP client's unit tests: how it reads a DELETE's 404.

use super::*;
use crate::core::client_op::Persistence;
use crate::core::retry::Jitter;
use crate::core::retry::RetryPolicy;
use crate::registry::Msg as World;
use sim::{Choices, Command, Context};

type Cmd = Command<World, Obs, ClientTimer>;

const SERVER: ActorId = 1;

fn delete_client(delete_404: DeleteNotFound, dead_letter: bool) -> Client<World> {
    Client::new(ClientConfig {
        server: SERVER,
        persistence: Persistence {
            retry: RetryPolicy {
                max_attempts: 3,
                base_ms: 0,
                cap_ms: 0,
                multiplier: 1,
                jitter: Jitter::None,
                window_ms: 0,
            },
            timeout_ms: 10_000,
            dead_letter,
        },
        idempotency_key: false,
        if_match: false,
        conditional_writes: false,
        retry_body: RetryBody::Same,
        delete_404,
        retry_final_errors: false,
        requests: vec![RequestSpec {
            id: 1,
            action: Action::Delete,
            resource: 4711,
            value: 0,
            start_ms: 0,
            retry_value: None,
        }],
    })
}

/// A client started, its first request's first attempt sent: its state,
/// its storage and the decisions it draws from.
fn sent_first_attempt(c: &Client<World>) -> (ClientState, ClientStorage, Choices) {
    let (mut st, mut s) = (None, None);
    c.reset_state(&mut st);
    c.reset_storage(&mut s);
    let (mut st, mut s) = (st.expect("a state"), s.expect("a storage"));
    let mut choices = Choices::new();
    choices.start_random(0, 1, false);
    let mut out: Vec<Cmd> = Vec::new();
    let mut ctx = Context::detached(0, 0, &mut choices, &mut out);
    c.on_start(&mut st, &mut s, &mut ctx);
    let first = OpTimer::next_attempt(0, 1);
    c.on_timer(&mut st, &mut s, first, &mut ctx);
    assert_eq!(Cmd::sent(&out).count(), 1, "the DELETE is sent");
    (st, s, choices)
}

fn endings(out: &[Cmd]) -> Vec<Ending> {
    out.iter()
        .filter_map(|c| match c {
            Command::Observe(Obs::Ended { ending, .. }) => Some(*ending),
            _ => None,
        })
        .collect()
}

/// A client that reads a DELETE's 404 as a failure, and keeps no dead
/// letters (`dead_letter = false`), gives the request up as it gives
/// up any other: silently. It records no "failed" it does not keep,
/// which the ledger would judge as a false failure.
#[test]
fn a_404_read_as_failure_without_dead_letters_is_given_up_silently() {
    let c = delete_client(DeleteNotFound::Failed, false);
    let (mut st, mut s, mut choices) = sent_first_attempt(&c);
    let mut out: Vec<Cmd> = Vec::new();
    let mut ctx = Context::detached(1_000, 0, &mut choices, &mut out);
    let not_found = Msg::Response {
        op: c.cfg.requests[0].op(),
        attempt: 1,
        method: Method::Delete,
        status: Status::NotFound,
        resource: 4711,
        value: 0,
        etag: 2,
        replayed: false,
    };
    c.on_msg(&mut st, &mut s, SERVER, World::wrap(not_found), &mut ctx);
    assert_eq!(endings(&out), [Ending::Abandoned]);
    assert!(!Cmd::reaches(&out, sit::REQUEST_DEAD_LETTERED));

    // With dead letters, the mistake is recorded as "failed".
    let c = delete_client(DeleteNotFound::Failed, true);
    let (mut st, mut s, mut choices) = sent_first_attempt(&c);
    let mut out: Vec<Cmd> = Vec::new();
    let mut ctx = Context::detached(1_000, 0, &mut choices, &mut out);
    c.on_msg(&mut st, &mut s, SERVER, World::wrap(not_found), &mut ctx);
    assert_eq!(endings(&out), [Ending::Failed]);
    assert!(Cmd::reaches(&out, sit::REQUEST_DEAD_LETTERED));
}

/// A 422 says the key is known with another body: an earlier attempt of
/// the request was executed, with the body it sent then. The client takes
/// it for neither success nor failure: a dead letter marked unknown, and
/// no retry, which would only meet the same key.
#[test]
fn a_422_ends_the_request_unknown_in_a_dead_letter_without_a_retry() {
    let mut c = delete_client(DeleteNotFound::Done, true);
    c.cfg.idempotency_key = true;
    c.cfg.requests[0].action = Action::Create;
    c.cfg.requests[0].resource = 0;
    c.cfg.requests[0].value = 1200;
    c.cfg.requests[0].retry_value = Some(1300);
    let (mut st, mut s, mut choices) = sent_first_attempt(&c);
    let mut out: Vec<Cmd> = Vec::new();
    let mut ctx = Context::detached(1_000, 0, &mut choices, &mut out);
    let refused = Msg::Response {
        op: c.cfg.requests[0].op(),
        attempt: 1,
        method: Method::Post,
        status: Status::UnprocessableContent,
        resource: 0,
        value: 0,
        etag: 0,
        replayed: false,
    };
    c.on_msg(&mut st, &mut s, SERVER, World::wrap(refused), &mut ctx);
    assert_eq!(endings(&out), [Ending::Unknown]);
    assert!(Cmd::reaches(&out, sit::REQUEST_DEAD_LETTERED));
    assert!(
        !out.iter().any(|c| matches!(c, Command::SetTimer { .. })),
        "no next attempt: {out:?}"
    );
}
