//! The claims system's unit tests: what a restart does to an attempt's outcome.

use super::*;
use crate::core::obs::Ending;
use crate::core::retry::RetryPolicy;
use crate::core::Op;
use crate::registry::Msg as World;
use sim::{Choices, Command, Context};

type Cmd = Command<World, Obs, ClientTimer>;

const SERVICE: ActorId = 2;
const CLAIM_ID: u32 = 4711;

/// A claims system with one claim, three attempts, and its database.
struct Claims {
    client: Client<World>,
    state: ClientState,
    storage: ClientStorage,
    choices: Choices,
}

impl Claims {
    fn new() -> Claims {
        let client = Client::new(ClientConfig::one_claim(
            SERVICE,
            CLAIM_ID,
            KeyPolicy::Stable,
            RetryPolicy::immediate(3),
        ));
        let (mut state, mut storage) = (None, None);
        client.reset_state(&mut state);
        client.reset_storage(&mut storage);
        let mut choices = Choices::new();
        choices.start_random(0, 1, false);
        Claims {
            client,
            state: state.expect("a state"),
            storage: storage.expect("a storage"),
            choices,
        }
    }

    /// The next attempt's timer fires at `now_us`.
    fn attempt(&mut self, now_us: TimeUs) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = Context::detached(now_us, 0, &mut self.choices, &mut out);
        let timer = OpTimer::next_attempt(0, CLAIM_ID);
        let (st, s) = (&mut self.state, &mut self.storage);
        self.client.on_timer(st, s, timer, &mut ctx);
        out
    }

    /// The service sheds attempt `attempt` with 503: nothing executed.
    fn shed(&mut self, now_us: TimeUs, attempt: u32) -> Vec<Cmd> {
        let reply = Msg::PayReply {
            op: Op::new(&CLAIM, CLAIM_ID),
            attempt,
            status: PayStatus::Overloaded,
            amount_eur: 0,
        };
        let mut out = Vec::new();
        let mut ctx = Context::detached(now_us, 0, &mut self.choices, &mut out);
        let (st, s) = (&mut self.state, &mut self.storage);
        self.client
            .on_msg(st, s, SERVICE, World::wrap(reply), &mut ctx);
        out
    }

    /// A crash and a restart at `now_us`: the database kept.
    fn restart(&mut self, now_us: TimeUs) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = Context::detached_restart(now_us, 0, &mut self.choices, &mut out);
        let mut fresh = Some(self.state.clone());
        self.client.reset_state(&mut fresh);
        self.state = fresh.expect("a state");
        let (st, s) = (&mut self.state, &mut self.storage);
        self.client.on_start(st, s, &mut ctx);
        out
    }
}

fn ending(out: &[Cmd]) -> Option<Ending> {
    out.iter().find_map(|c| match c {
        Command::Observe(Obs::Ended { ending, .. }) => Some(*ending),
        _ => None,
    })
}

/// Every attempt is shed with 503, which says nothing was executed;
/// the client restarts while it waits to send the second. Its database
/// recorded the first answer before the crash, so the restart changes
/// nothing it knows: the claim is given up as failed, not unknown.
#[test]
fn a_restart_during_a_backoff_keeps_a_definite_answer_definite() {
    let mut c = Claims::new();
    c.attempt(0);
    c.shed(100, 1);
    c.restart(200);
    c.attempt(300);
    c.shed(400, 2);
    c.attempt(500);
    assert_eq!(ending(&c.shed(600, 3)), Some(Ending::Failed));
}

/// The same, with the restart while the first attempt is open: its
/// connection died with the process, and whether the service paid is
/// unknown whatever the later attempts hear.
#[test]
fn a_restart_during_an_attempt_makes_its_outcome_unknown() {
    let mut c = Claims::new();
    c.attempt(0);
    c.restart(200);
    c.attempt(300);
    c.shed(400, 2);
    c.attempt(500);
    assert_eq!(ending(&c.shed(600, 3)), Some(Ending::Unknown));
}
