//! The actor enum: static dispatch over every kind of actor in the catalog,
//! so the engine's hot path stays monomorphic.

use crate::ledger::{Ledger, Obs};
use crate::msg::Msg;
use crate::payment::{
    Bank, BankStorage, Client, ClientState, ClientStorage, Service, ServiceState, ServiceStorage,
};
use sim::{Actor, ActorId, Ctx, World};

pub enum Node {
    Client(Client),
    Service(Service),
    Bank(Bank),
}

#[derive(Debug)]
pub enum NodeState {
    Client(ClientState),
    Service(ServiceState),
    /// The bank keeps nothing in memory worth losing.
    Bank,
}

#[derive(Debug)]
pub enum NodeStorage {
    Client(ClientStorage),
    Service(ServiceStorage),
    Bank(BankStorage),
}

macro_rules! reset_as {
    ($slot:expr, $variant:ident, $node:expr) => {{
        if !matches!($slot, Some(NodeStorage::$variant(_))) {
            *$slot = Some(NodeStorage::$variant(Default::default()));
        }
        let Some(NodeStorage::$variant(s)) = $slot else {
            unreachable!()
        };
        $node.reset_storage(s);
    }};
}

impl Actor for Node {
    type Msg = Msg;
    type Obs = Obs;
    type State = NodeState;
    type Storage = NodeStorage;

    fn reset_storage(&self, slot: &mut Option<NodeStorage>) {
        match self {
            Node::Client(c) => reset_as!(slot, Client, c),
            Node::Service(s) => reset_as!(slot, Service, s),
            Node::Bank(b) => reset_as!(slot, Bank, b),
        }
    }

    fn on_start(&self, storage: &mut NodeStorage, ctx: &mut Ctx<'_, Msg, Obs>) -> NodeState {
        match (self, storage) {
            (Node::Client(c), NodeStorage::Client(s)) => NodeState::Client(c.on_start(s, ctx)),
            (Node::Service(v), NodeStorage::Service(s)) => NodeState::Service(v.on_start(s, ctx)),
            (Node::Bank(_), NodeStorage::Bank(_)) => NodeState::Bank,
            _ => unreachable!("storage kind matches node kind"),
        }
    }

    fn on_msg(
        &self,
        state: &mut NodeState,
        storage: &mut NodeStorage,
        from: ActorId,
        msg: Msg,
        ctx: &mut Ctx<'_, Msg, Obs>,
    ) {
        match (self, state, storage) {
            (Node::Client(c), NodeState::Client(st), NodeStorage::Client(s)) => {
                c.on_msg(st, s, msg, ctx)
            }
            (Node::Service(v), NodeState::Service(st), NodeStorage::Service(s)) => {
                v.on_msg(st, s, from, msg, ctx)
            }
            (Node::Bank(b), NodeState::Bank, NodeStorage::Bank(s)) => b.on_msg(s, from, msg, ctx),
            _ => unreachable!("state kind matches node kind"),
        }
    }

    fn on_timer(
        &self,
        state: &mut NodeState,
        storage: &mut NodeStorage,
        tag: u32,
        ctx: &mut Ctx<'_, Msg, Obs>,
    ) {
        match (self, state, storage) {
            (Node::Client(c), NodeState::Client(st), NodeStorage::Client(s)) => {
                c.on_timer(st, s, tag, ctx)
            }
            (Node::Service(v), NodeState::Service(st), NodeStorage::Service(s)) => {
                v.on_timer(st, s, tag, ctx)
            }
            (Node::Bank(_), NodeState::Bank, NodeStorage::Bank(_)) => {}
            _ => unreachable!("state kind matches node kind"),
        }
    }
}

/// A whole world: the engine's configuration plus the actors.
pub struct System {
    pub world: World,
    pub nodes: Vec<Node>,
}

impl sim::Model for System {
    type Node = Node;
    type Oracle = Ledger;

    fn world(&self) -> &World {
        &self.world
    }

    fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    fn new_oracle(&self) -> Ledger {
        Ledger::default()
    }
}
