//! The one list of models. It names every model's message type (a model
//! composed of others', such as the chain, adds none) and every model with
//! its new kinds of actor; from it come the world's message enum, the actor
//! enum (static dispatch through `sim::compose!`), the list the loader and
//! the command line ask, and every global number: each model's situation
//! ids, space codes and layer indices begin where the previous model's end
//! (`ids.rs`), and the design-warning rules are core's and then each
//! model's. Adding a model is a folder plus its entry here.

use crate::core::wire::ActorEnds;
use crate::core::wire::{ModelMessage, WorldMessage};
use crate::core::{Carries, Ledger, ModelSpec, Obs, SituationDoc};
use crate::{chain, contention, http, messaging, payment};
use sim::{SituationId, World};
use std::fmt;

pub use crate::core::ids::{
    layer_index, space_code, span, Declares, Registered, UNUSED_SPACE_CODES,
};

/// Gives each model of the list, in order, where its numbers begin.
macro_rules! number_models {
    ($first:path $(, $rest:path)*) => {
        impl $crate::registry::Registered for $first {
            const FIRST_SITUATION: ::sim::SituationId = 0;
            const FIRST_SPACE: u8 = 0;
            const FIRST_LAYER: u8 = 0;
        }
        number_models!(@after $first; $($rest),*);
    };
    (@after $prev:path;) => {};
    (@after $prev:path; $next:path $(, $rest:path)*) => {
        impl $crate::registry::Registered for $next {
            const FIRST_SITUATION: ::sim::SituationId =
                <$prev as $crate::registry::Registered>::FIRST_SITUATION
                    + <$prev as $crate::registry::Declares>::SITUATIONS;
            const FIRST_SPACE: u8 = <$prev as $crate::registry::Registered>::FIRST_SPACE
                + <$prev as $crate::registry::Declares>::SPACES.len() as u8;
            const FIRST_LAYER: u8 = <$prev as $crate::registry::Registered>::FIRST_LAYER
                + <$prev as $crate::registry::Declares>::LAYERS.len() as u8;
        }
        number_models!(@after $next; $($rest),*);
    };
}

macro_rules! registry {
    (
        messages { $( $variant:ident($msg:ty) ),+ $(,)? }
        models { $( $spec:path => { $( $actor:ident($kind:ty) ),* $(,)? } ),+ $(,)? }
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
            // A registry of one model (the toy in `registry/toy.rs`) matches
            // its one variant irrefutably.
            #[allow(irrefutable_let_patterns)]
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

        // The report's state panel reads what each actor holds through
        // serde, field by field: every actor kind's state and storage must
        // be `Serialize`, or the world does not compile.
        impl ::serde::Serialize for NodeState {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $( NodeState::$actor(x) => ::serde::Serialize::serialize(x, s), )* )+
                }
            }
        }

        impl ::serde::Serialize for NodeStorage {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $( NodeStorage::$actor(x) => ::serde::Serialize::serialize(x, s), )* )+
                }
            }
        }

        /// Every actor kind of every model, by its variant's name in [`Node`].
        pub const ACTOR_KINDS: &[&str] = &[ $( $( stringify!($actor), )* )+ ];

        impl Node {
            /// Its kind's name, one of [`ACTOR_KINDS`].
            pub fn kind(&self) -> &'static str {
                match self {
                    $( $( Node::$actor(_) => stringify!($actor), )* )+
                }
            }

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


        number_models!($( $spec ),+);

        const _: () = {
            let situations = 0 $( + <$spec as $crate::registry::Declares>::SITUATIONS as usize )+;
            assert!(situations <= ::sim::MAX_SITUATIONS, "more situations than a SituationSet holds");
            let layers = 0 $( + <$spec as $crate::registry::Declares>::LAYERS.len() )+;
            assert!(layers <= $crate::core::obs::MAX_LAYERS, "more layers than the ledger counts");
            $( assert!(
                $crate::core::ids::numbered_in_place::<$spec>(),
                concat!(stringify!($spec), ": a space or layer not numbered by its place in Declares"),
            ); )+
        };

        /// How many design-warning rules there are: core's and every model's.
        const RULE_COUNT: usize =
            $crate::core::design_warning::CORE_RULES.len() $( + <$spec as $crate::registry::Declares>::RULES.len() )+;

        /// Every design-warning rule by id, core's first, then each model's in
        /// the list's order: `[expect] warnings` may name these.
        pub const RULES: [&str; RULE_COUNT] = $crate::core::ids::concat(&[
            $crate::core::design_warning::CORE_RULES,
            $( <$spec as $crate::registry::Declares>::RULES, )+
        ]);

        /// Every space of every model, in the order their codes were given.
        pub fn spaces() -> Vec<&'static $crate::core::Space> {
            let mut v = Vec::new();
            $( v.extend_from_slice(<$spec as $crate::registry::Declares>::SPACES); )+
            v
        }

        /// Every layer of every model, by index.
        pub fn layers() -> Vec<&'static $crate::core::Layer> {
            let mut v = Vec::new();
            $( v.extend_from_slice(<$spec as $crate::registry::Declares>::LAYERS); )+
            v
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
            // The first model's doc of `id`, as `situations()` keeps it,
            // without building that list on every call.
            MODELS
                .iter()
                .flat_map(|m| m.situations())
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
            // A user's program as the bank (docs/protocol.md).
            ProgramBank(payment::ProgramBank<Msg>),
            // A user's program as the payment service.
            ProgramService(payment::ProgramService<Msg>),
        },
        messaging::Messaging => {
            Producer(messaging::Producer<Msg>),
            Broker(messaging::Broker<Msg>),
            Consumer(messaging::Consumer<Msg>),
            ConsumerDb(messaging::ConsumerDb<Msg>),
            // A user's program as the consumer (docs/protocol.md).
            External(messaging::ProgramConsumer<Msg>),
            // A user's program as the outbox relay.
            ProgramRelay(messaging::ProgramRelay<Msg>),
        },
        http::Http => {
            HttpClient(http::Client<Msg>),
            HttpServer(http::Server<Msg>),
            // A user's program as the HTTP server.
            ProgramServer(http::ProgramServer<Msg>),
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

/// The actors that run a user's program (docs/protocol.md), whatever their role.
impl Node {
    /// How this actor runs its program, if it runs one.
    pub fn program_mode(&mut self) -> Option<&mut crate::external::CheckMode> {
        match self {
            Node::External(e) => Some(&mut e.mode),
            Node::ProgramBank(e) => Some(&mut e.mode),
            Node::ProgramService(e) => Some(&mut e.mode),
            Node::ProgramServer(e) => Some(&mut e.mode),
            Node::ProgramRelay(e) => Some(&mut e.mode),
            _ => None,
        }
    }

    /// Whether this actor runs a user's program.
    pub fn runs_program(&self) -> bool {
        matches!(
            self,
            Node::External(_)
                | Node::ProgramBank(_)
                | Node::ProgramService(_)
                | Node::ProgramServer(_)
                | Node::ProgramRelay(_)
        )
    }
}

impl NodeStorage {
    /// The program's storage and process, if this actor runs one.
    pub fn program(&self) -> Option<&crate::external::ExternalStorage> {
        match self {
            NodeStorage::External(s)
            | NodeStorage::ProgramBank(s)
            | NodeStorage::ProgramService(s)
            | NodeStorage::ProgramServer(s)
            | NodeStorage::ProgramRelay(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod toy;

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
    /// so no two spaces may share one: a chain run holds claims and events in
    /// one ledger. The registry numbers them, so this holds by construction;
    /// the codes are pinned too, since repro files keep operations by them.
    #[test]
    fn space_codes_are_unique_and_those_repro_files_hold() {
        let all = spaces();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a.code, b.code, "{} and {} share a code", a.noun, b.noun);
            }
        }
        let codes: Vec<(&str, u8)> = all.iter().map(|s| (s.noun, s.code)).collect();
        assert_eq!(
            codes,
            [
                ("claim", 1),
                ("event", 2),
                ("entity", 3),
                ("request", 4),
                ("resource", 5),
                ("write", 8),
                ("row", 9),
            ]
        );
        assert_eq!(*all[0], payment::CLAIM);
    }

    /// Layers index the ledger's per-layer counters: one slot each.
    #[test]
    fn layer_indices_are_their_places_in_the_list() {
        let all = layers();
        let names: Vec<&str> = all.iter().map(|l| l.name).collect();
        assert_eq!(names, ["service", "bank", "consumer", "server", "resource"]);
        for (i, l) in all.iter().enumerate() {
            assert_eq!(usize::from(l.index), i, "{}", l.name);
        }
    }

    /// Each model's own situations lie in the ids the registry gave it, and
    /// the models follow one another in the list's order, so the order
    /// situations are printed in (by id) is the list's, then each model's.
    #[test]
    fn each_model_owns_the_ids_after_the_previous_ones() {
        let firsts = [
            (
                <payment::Payment as Registered>::FIRST_SITUATION,
                payment::situations::COUNT,
            ),
            (
                <messaging::Messaging as Registered>::FIRST_SITUATION,
                messaging::situations::COUNT,
            ),
            (
                <http::Http as Registered>::FIRST_SITUATION,
                http::situations::COUNT,
            ),
            (
                <chain::Chain as Registered>::FIRST_SITUATION,
                chain::situations::COUNT,
            ),
            (
                <contention::Contention as Registered>::FIRST_SITUATION,
                contention::situations::COUNT,
            ),
        ];
        assert_eq!(firsts[0].0, 0);
        for w in firsts.windows(2) {
            assert_eq!(w[1].0, w[0].0 + w[0].1);
        }
        const {
            assert!(
                payment::situations::CLIENT_RETRIED
                    < messaging::situations::RELAY_CRASH_BETWEEN_STEPS
            );
            assert!(chain::situations::PUBLISH_UNCONFIRMED < contention::situations::CAS_CONFLICT);
        }
        assert_eq!(
            situation_name(contention::situations::CAS_CONFLICT),
            "cas-conflict"
        );
    }

    /// A situation's name is the one the list of every situation gives it
    /// (found without building that list), and an id no model has reads
    /// as unknown.
    #[test]
    fn a_situation_s_name_is_the_one_the_list_gives() {
        for s in situations() {
            assert_eq!(situation_name(s.id), s.name);
        }
        let past = situations().last().map_or(0, |s| s.id + 1);
        assert_eq!(situation_name(past), "unknown-situation");
    }

    /// Every rule once; core's first, then each model's.
    #[test]
    fn rules_are_cores_then_each_models_once_each() {
        for (i, a) in RULES.iter().enumerate() {
            assert!(!RULES[i + 1..].contains(a), "{a} twice");
        }
        assert_eq!(
            RULES[..crate::core::design_warning::CORE_RULES.len()],
            *crate::core::design_warning::CORE_RULES
        );
        assert!(RULES.contains(&payment::rules::LEASE_BELOW_CALL));
        assert!(RULES.contains(&messaging::rules::VISIBILITY_BELOW_PROCESSING));
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
