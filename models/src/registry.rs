//! The one list of models. It names every model's message type (a model
//! composed of others', such as the chain, adds none) and every model with
//! its new kinds of actor; from it come the world's message enum, the actor
//! enum (static dispatch through `sim::compose!`), and the list the loader
//! and the command line ask. Adding a model is a folder plus its entries here.

use crate::core::wire::ActorEnds;
use crate::core::wire::{ModelMessage, WorldMessage};
use crate::core::{Carries, Ledger, ModelSpec, Obs, SituationDoc};
use crate::{chain, contention, http, messaging, payment};
use sim::{SituationId, World};
use std::fmt;

macro_rules! registry {
    (
        messages { $( $variant:ident($msg:ty) ),+ $(,)? }
        models { $( $spec:expr => { $( $actor:ident($kind:ty) ),* $(,)? } ),+ $(,)? }
    ) => {
        /// A message of any model.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Msg {
            $(
                #[doc = concat!("A message of the `", stringify!($variant), "` model.")]
                $variant($msg),
            )+
        }

        $(
            impl Carries<$msg> for Msg {
                #[inline]
                fn wrap(t: $msg) -> Self {
                    Msg::$variant(t)
                }
                #[inline]
                fn peek(&self) -> Option<&$msg> {
                    match self {
                        Msg::$variant(m) => Some(m),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            }
        )+

        impl fmt::Display for Msg {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $( Msg::$variant(m) => fmt::Display::fmt(m, f), )+
                }
            }
        }

        impl sim::Message for Msg {
            #[inline]
            fn kind(&self) -> u16 {
                let mut base = 0u16;
                $(
                    if let Msg::$variant(m) = self {
                        return base + m.kind();
                    }
                    base += <$msg as ModelMessage>::KINDS.len() as u16;
                )+
                unreachable!("every message belongs to a model: {base}")
            }
        }

        impl Msg {
            /// An answer to a request.
            pub fn is_reply(&self) -> bool {
                match self {
                    $( Msg::$variant(m) => m.is_reply(), )+
                }
            }

            /// A note for the line showing this message's delivery (see
            /// [`ModelMessage::delivery_note`]); `sent` is what the step sent.
            pub fn delivery_note(&self, effect: bool, sent: &[Msg]) -> Option<&'static str> {
                match self {
                    $( Msg::$variant(m) => {
                        let same: Vec<$msg> = sent
                            .iter()
                            .filter_map(|s| Carries::<$msg>::peek(s).copied())
                            .collect();
                        m.delivery_note(effect, &same)
                    } )+
                }
            }
        }

        impl Msg {
            /// See [`ModelMessage::same_for_diff`].
            pub fn same_for_diff(&self, other: &Msg) -> bool {
                match (self, other) {
                    $( (Msg::$variant(a), Msg::$variant(b)) => a.same_for_diff(b), )+
                    #[allow(unreachable_patterns)]
                    _ => false,
                }
            }
        }

        impl WorldMessage for Msg {
            fn is_reply(&self) -> bool {
                Msg::is_reply(self)
            }

            fn delivery_note(&self, effect: bool, sent: &[Msg]) -> Option<&'static str> {
                Msg::delivery_note(self, effect, sent)
            }

            fn same_for_diff(&self, other: &Msg) -> bool {
                Msg::same_for_diff(self, other)
            }
        }

        /// Every message kind's name, in the order `sim::Message::kind` numbers them.
        pub fn message_kinds() -> Vec<&'static str> {
            let mut v = Vec::new();
            $( v.extend_from_slice(<$msg as ModelMessage>::KINDS); )+
            v
        }

        sim::compose! {
            /// An actor of any model.
            pub enum Node, NodeState, NodeStorage, NodeTimer {
                msg: Msg,
                obs: Obs,
                $( $(
                    #[doc = concat!("A `", stringify!($actor), "` actor.")]
                    $actor($kind),
                )* )+
            }
        }

        impl Node {
            /// The roles this actor has and the kinds it sends to whom (see [`crate::core::Ends`]), as configured.
            pub fn ends(&self) -> ActorEnds {
                match self {
                    $( $( Node::$actor(a) => ActorEnds::of::<$kind>(a), )* )+
                }
            }
        }

        $( $(
            impl From<$kind> for Node {
                fn from(a: $kind) -> Node {
                    Node::$actor(a)
                }
            }
        )* )+

        /// Every model, in the order `idemsim` lists them.
        pub static MODELS: &[&dyn ModelSpec<Node>] = &[ $( &$spec ),+ ];
    };
}

registry! {
    messages {
        Payment(payment::Msg),
        Messaging(messaging::Msg),
        Http(http::Msg),
        Contention(contention::Msg),
    }
    models {
        payment::Payment => {
            Client(payment::Client<Msg>),
            Service(payment::Service<Msg>),
            Bank(payment::Bank<Msg>),
        },
        messaging::Messaging => {
            Producer(messaging::Producer<Msg>),
            Broker(messaging::Broker<Msg>),
            Consumer(messaging::Consumer<Msg>),
            ConsumerDb(messaging::ConsumerDb<Msg>),
            // A user's program as the consumer (docs/protocol.md).
            External(messaging::ProgramConsumer<Msg>),
        },
        http::Http => {
            HttpClient(http::Client<Msg>),
            HttpServer(http::Server<Msg>),
        },
        // The payment and messaging kinds, joined by one new kind.
        chain::Chain => {
            BookingService(chain::BookingService<Msg>),
        },
        contention::Contention => {
            ContentionClient(contention::Client<Msg>),
            ContentionResource(contention::Resource<Msg>),
        },
    }
}

/// The model named `name`.
pub fn model(name: &str) -> Option<&'static dyn ModelSpec<Node>> {
    MODELS.iter().copied().find(|m| m.name() == name)
}

/// The names of every model.
pub fn model_names() -> Vec<&'static str> {
    MODELS.iter().map(|m| m.name()).collect()
}

/// Every situation of every model, once each.
pub fn situations() -> Vec<&'static SituationDoc> {
    let mut all: Vec<&'static SituationDoc> = Vec::new();
    for m in MODELS {
        for s in m.situations() {
            if !all.iter().any(|o| o.id == s.id) {
                all.push(s);
            }
        }
    }
    all.sort_by_key(|s| s.id);
    all
}

/// The name of situation `id`.
pub fn situation_name(id: SituationId) -> &'static str {
    situations()
        .into_iter()
        .find(|s| s.id == id)
        .map_or("unknown-situation", |s| s.name)
}

/// The names of the situations in `set`, in id order.
pub fn situation_names(set: &sim::SituationSet) -> Vec<&'static str> {
    set.iter().map(situation_name).collect()
}

/// A whole world: the engine's configuration plus the actors of one model.
pub struct System {
    /// The engine's configuration: actors' names, links, crashes, phases, limits.
    pub world: World,
    /// One actor per name in `world`.
    pub nodes: Vec<Node>,
    /// The model that built it.
    pub model: &'static dyn ModelSpec<Node>,
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
        Ledger::healing_from(self.world.fault_phase_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::Message;

    #[test]
    fn situation_ids_and_names_are_unique_across_models() {
        let all = situations();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a.id, b.id, "{} and {}", a.name, b.name);
                assert_ne!(a.name, b.name);
            }
        }
    }

    /// Spaces compare by their code alone (`core::op::Space`'s `PartialEq`),
    /// so no two spaces of the built-in models may share one: a chain run
    /// holds claims and events in one ledger.
    #[test]
    fn space_codes_are_unique_across_models() {
        let all = [
            &payment::CLAIM,
            &messaging::EVENT,
            &messaging::ENTITY,
            &http::REQUEST,
            &http::RESOURCE,
            &contention::WRITE,
            &contention::ROW,
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a.code, b.code, "{} and {} share a code", a.noun, b.noun);
                assert_ne!(a, b);
            }
            assert_eq!(*a, *a);
        }
        // The list above is written by hand; every space a model declares
        // must be on it, or two models could share a code unnoticed.
        let declared = declared_spaces(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src"
        )));
        assert_eq!(
            declared.len(),
            all.len(),
            "spaces declared in models/src: {declared:?}; add the new one to this test"
        );
    }

    /// `pub static NAME: Space` declarations under `dir`, as `file: NAME`.
    fn declared_spaces(dir: &std::path::Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("models/src is readable")
            .map(|e| e.expect("a readable entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                out.extend(declared_spaces(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a readable source file");
                for line in text.lines() {
                    let line = line.trim();
                    if let Some(rest) = line.strip_prefix("pub static ") {
                        if let Some((name, _)) = rest.split_once(": Space =") {
                            out.push(format!("{}: {name}", path.display()));
                        }
                    }
                }
            }
        }
        out
    }

    /// The hot path of the built-in models owes nothing to external programs:
    /// the program actor is no bigger than built-in actors, so the world's
    /// actor, state, storage and timer enums keep their size.
    #[test]
    fn a_program_actor_does_not_grow_the_worlds_enums() {
        use std::mem::size_of;
        type P = messaging::ProgramConsumer<Msg>;
        assert!(size_of::<P>() <= size_of::<payment::Client<Msg>>());
        assert!(size_of::<<P as sim::Actor>::Storage>() <= size_of::<messaging::BrokerStorage>());
        assert!(size_of::<<P as sim::Actor>::State>() <= size_of::<messaging::ConsumerState>());
        assert!(size_of::<<P as sim::Actor>::Timer>() <= size_of::<messaging::ConsumerTimer>());
    }

    #[test]
    fn message_kinds_number_every_model_in_turn() {
        let kinds = message_kinds();
        let transfer = Msg::Payment(payment::Msg::StatusQuery {
            op: crate::core::Op::new(&payment::CLAIM, 1),
            question: 1,
        });
        assert_eq!(kinds[usize::from(transfer.kind())], "status-query");
        let ack = Msg::Messaging(messaging::Msg::Ack { id: 1, receipt: 1 });
        assert_eq!(kinds[usize::from(ack.kind())], "ack");
    }
}
