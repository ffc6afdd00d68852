//! The actor enum: static dispatch over every kind of actor in the catalog,
//! so the engine's hot path stays monomorphic.

use crate::ledger::{Ledger, Obs};
use crate::messaging::{
    Broker, BrokerStorage, Consumer, ConsumerDb, ConsumerDbStorage, ConsumerState, Producer,
    ProducerState, ProducerStorage,
};
use crate::msg::Msg;
use crate::payment::{
    Bank, BankStorage, Client, ClientState, ClientStorage, Service, ServiceState, ServiceStorage,
};
use sim::{Actor, ActorId, Ctx, World};

pub enum Node {
    Client(Client),
    Service(Service),
    Bank(Bank),
    Producer(Producer),
    Broker(Broker),
    Consumer(Consumer),
    ConsumerDb(ConsumerDb),
}

#[derive(Debug)]
pub enum NodeState {
    Client(ClientState),
    Service(ServiceState),
    /// The bank keeps nothing in memory worth losing.
    Bank,
    Producer(ProducerState),
    /// The broker's queue is all durable.
    Broker,
    Consumer(ConsumerState),
    ConsumerDb,
}

#[derive(Debug)]
pub enum NodeStorage {
    Client(ClientStorage),
    Service(ServiceStorage),
    Bank(BankStorage),
    Producer(ProducerStorage),
    Broker(BrokerStorage),
    /// A consumer keeps its durable data in `consumer-db`.
    Consumer,
    ConsumerDb(ConsumerDbStorage),
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
            Node::Producer(p) => reset_as!(slot, Producer, p),
            Node::Broker(b) => reset_as!(slot, Broker, b),
            Node::Consumer(_) => *slot = Some(NodeStorage::Consumer),
            Node::ConsumerDb(_) => {
                if !matches!(slot, Some(NodeStorage::ConsumerDb(_))) {
                    *slot = Some(NodeStorage::ConsumerDb(Default::default()));
                }
                let Some(NodeStorage::ConsumerDb(s)) = slot else {
                    unreachable!()
                };
                ConsumerDb::reset_storage(s);
            }
        }
    }

    fn on_start(&self, storage: &mut NodeStorage, ctx: &mut Ctx<'_, Msg, Obs>) -> NodeState {
        match (self, storage) {
            (Node::Client(c), NodeStorage::Client(s)) => NodeState::Client(c.on_start(s, ctx)),
            (Node::Service(v), NodeStorage::Service(s)) => NodeState::Service(v.on_start(s, ctx)),
            (Node::Bank(_), NodeStorage::Bank(_)) => NodeState::Bank,
            (Node::Producer(p), NodeStorage::Producer(s)) => {
                NodeState::Producer(p.on_start(s, ctx))
            }
            (Node::Broker(b), NodeStorage::Broker(s)) => {
                b.on_start(s, ctx);
                NodeState::Broker
            }
            (Node::Consumer(c), NodeStorage::Consumer) => NodeState::Consumer(c.on_start()),
            (Node::ConsumerDb(_), NodeStorage::ConsumerDb(_)) => NodeState::ConsumerDb,
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
            (Node::Producer(p), NodeState::Producer(st), NodeStorage::Producer(s)) => {
                p.on_msg(st, s, msg, ctx)
            }
            (Node::Broker(b), NodeState::Broker, NodeStorage::Broker(s)) => {
                b.on_msg(s, from, msg, ctx)
            }
            (Node::Consumer(c), NodeState::Consumer(st), NodeStorage::Consumer) => {
                c.on_msg(st, msg, ctx)
            }
            (Node::ConsumerDb(_), NodeState::ConsumerDb, NodeStorage::ConsumerDb(s)) => {
                ConsumerDb::on_msg(s, from, msg, ctx)
            }
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
            (Node::Producer(p), NodeState::Producer(st), NodeStorage::Producer(s)) => {
                p.on_timer(st, s, tag, ctx)
            }
            (Node::Broker(b), NodeState::Broker, NodeStorage::Broker(s)) => b.on_timer(s, ctx),
            (Node::Consumer(c), NodeState::Consumer(st), NodeStorage::Consumer) => {
                c.on_timer(st, tag, ctx)
            }
            (Node::ConsumerDb(_), NodeState::ConsumerDb, NodeStorage::ConsumerDb(_)) => {}
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
