//! The unit tests' one-claim client: a claims system whose one claim was
//! given up with an unknown outcome, as the follow-up jobs find it. Shared
//! by the tests of `followup.rs` and `reconciliation.rs`.

use super::{Client, ClientConfig, ClientState, KeyPolicy};
use crate::core::client_op::{ClientOp, ClientStorage, OpStatus};
use crate::core::retry::RetryPolicy;
use crate::registry::Msg as World;
use sim::{Actor, ActorId, Choices};

pub(super) const SERVICE: ActorId = 2;
pub(super) const BANK: ActorId = 9;
pub(super) const CLAIM_ID: u32 = 4711;

/// A one-claim client built by `config` from the plain one-claim settings
/// (no key, one attempt), its claim given up unknown, with a choice source.
pub(super) fn given_up(
    config: impl FnOnce(ClientConfig) -> ClientConfig,
) -> (Client<World>, ClientState, ClientStorage, Choices) {
    let plain = ClientConfig::one_claim(
        SERVICE,
        CLAIM_ID,
        KeyPolicy::None,
        RetryPolicy::immediate(1),
    );
    let client = Client::new(config(plain));
    let (mut state, mut storage) = (None, None);
    client.reset_state(&mut state);
    client.reset_storage(&mut storage);
    let mut storage = storage.expect("a storage");
    storage.ops[0] = ClientOp {
        status: OpStatus::Done,
        attempts: 1,
        uncertain: true,
        ..ClientOp::NEW
    };
    let mut choices = Choices::new();
    choices.start_random(0, 1, false);
    (client, state.expect("a state"), storage, choices)
}
